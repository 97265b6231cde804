"""Golden files for one sheet in each format; refresh with `pytest --refresh-golden`."""

from pathlib import Path

import pytest

from roofline import api

GOLDEN = Path(__file__).parent.parent / "golden"


@pytest.mark.parametrize("fmt", ["md", "tex", "json"])
def test_decode_floor_golden(fmt, refresh_golden):
    text = api.render(api.derive("decode-floor", hardware="h100-sxm", model="llama-3.1-8b"), fmt)
    path = GOLDEN / f"decode-floor.{fmt}"
    if refresh_golden:
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), "no golden file: run pytest --refresh-golden"
    assert text == path.read_text(encoding="utf-8")


def test_json_contract():
    import json

    sheet = json.loads(api.render(api.derive("decode-floor"), "json"))
    assert {"slug", "title", "context", "results", "steps", "assumptions"} <= set(sheet)
    for name in ("weight_bytes", "t_floor", "tokens_per_s_ceiling", "kv_bytes_per_token", "t_step"):
        r = sheet["results"][name]
        assert set(r) >= {"value", "unit", "si_value", "si_unit", "latex", "expr"}
    assert sheet["results"]["t_floor"]["si_unit"] == "s"
    assert sheet["results"]["t_floor"]["unit"] == "ms"
    assert sheet["results"]["t_floor"]["si_value"] * 1000 == pytest.approx(sheet["results"]["t_floor"]["value"])

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from roofline.specs.catalog import HARDWARE_DIR, MODELS_DIR

from roofline.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list(capsys):
    code, out, _ = run(capsys, "list", "questions")
    assert code == 0 and "decode-floor" in out and "ridge-coincidence" in out
    assert "h100-sxm" in run(capsys, "list", "hardware")[1]
    assert "deepseek-v3" in run(capsys, "list", "models")[1]


def test_show_hardware_json_has_ridge_points_in_flop_per_byte(capsys):
    code, out, _ = run(capsys, "show", "hardware", "h100-sxm", "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert data["ridge_point_bf16"] == pytest.approx(989.4e12 / 3.35e12)
    assert data["memory_bandwidth"] == 3_350_000_000_000


def test_show_model_json(capsys):
    data = json.loads(run(capsys, "show", "model", "llama-3.1-70b", "--format", "json")[1])
    assert data["params_total"] == 70_553_706_496
    assert data["params_matmul"] + data["params_no_arithmetic"] == data["params_total"]
    assert data["kv_bytes_per_token_bf16"] == 327_680


def test_show_text(capsys):
    out = run(capsys, "show", "hardware", "h100-sxm")[1]
    assert "ridge_point_bf16" in out and "295 flop/B" in out
    out = run(capsys, "show", "model", "llama-3.1-70b")[1]
    assert "params_total" in out and "70,553,706,496 parameters" in out and "328 kB/token" in out


def test_show_model_prints_windows_mlp_and_checkpoint_formats(capsys):
    out = run(capsys, "show", "model", "gemma-3-27b")[1]
    assert "attention: 10 layers full context, 52 layers sliding window of 1024 tokens" in out
    assert "mlp: gated (gelu_pytorch_tanh)" in out and "language_model: read from text_config" in out
    assert "attention: 32 layers sliding window of 4096 tokens" in run(capsys, "show", "model", "mistral-7b")[1]
    data = json.loads(run(capsys, "show", "model", "gpt-oss-120b", "--format", "json")[1])
    assert data["attention_windows"] == [[18, None], [18, 128]]
    assert data["weight_formats"]["experts_routed"] == "mxfp4" and data["weight_formats"]["attention"] == "bf16"
    assert "routed experts in mxfp4" in data["checkpoint_weights"]
    assert json.loads(run(capsys, "show", "model", "llama-3.1-8b", "--format", "json")[1])["weight_formats"] is None


def test_a_quantized_checkpoint_is_computed_as_stored_without_a_warning(capsys):
    code, out, err = run(capsys, "derive", "flops-per-token", "--model", "kimi-k2", "--format", "json")
    assert code == 0 and "warning" not in err
    context = json.loads(out)["context"]
    assert context["weights"] == "fp8,router=bf16,embedding=bf16,lm_head=bf16"
    assert context["weight_formats"]["experts_routed"] == "fp8" and context["weight_formats"]["lm_head"] == "bf16"
    code, out, err = run(capsys, "derive", "flops-per-token", "--model", "kimi-k2", "--weights", "fp8", "--format", "json")
    assert code == 0 and "warning" not in err and set(json.loads(out)["context"]["weight_formats"].values()) == {"fp8"}


def test_derive_decode_floor_json_headline(capsys):
    code, out, _ = run(capsys, "derive", "decode-floor", "--hardware", "h100-sxm", "--model", "llama-3.1-8b", "--format", "json")
    results = json.loads(out)["results"]
    assert code == 0
    assert set(results) == {"weight_bytes", "t_floor", "tokens_per_s_ceiling", "kv_bytes_per_token", "t_step"}
    assert results["t_floor"]["si_value"] == pytest.approx(2 * 7_504_658_432 / 3.35e12)


def test_set_parses_units(capsys):
    a = json.loads(run(capsys, "derive", "decode-floor", "--set", "t_fixed=0.5ms", "--format", "json")[1])
    b = json.loads(run(capsys, "derive", "decode-floor", "--set", "t_fixed=500 µs", "--format", "json")[1])
    assert a["results"]["t_step"] == b["results"]["t_step"]
    assert a["context"]["inputs"]["t_fixed"]["default"] is False


def _bad_chip(tmp_path: Path) -> str:
    p = tmp_path / "chip.toml"
    p.write_text((HARDWARE_DIR / "h100-sxm.toml").read_text().replace('"3.35 TB/s"', '"3.35 Tflop/s"'))
    return str(p)


def _bad_config(tmp_path: Path) -> str:
    p = tmp_path / "config.json"
    p.write_text((MODELS_DIR / "llama-3.1-8b.json").read_text()[:-20])
    return str(p)


def _no_field(tmp_path: Path) -> str:
    data = json.loads((MODELS_DIR / "llama-3.1-8b.json").read_text())
    del data["num_hidden_layers"]
    p = tmp_path / "config.json"
    p.write_text(json.dumps(data))
    return str(p)


BAD = [
    (lambda t: ["show", "hardware", "h100-smx"], "did you mean h100-sxm"),
    (lambda t: ["show", "model", "llama-3.1-8"], "did you mean llama-3.1-8b"),
    (lambda t: ["derive", "decode-flor"], "did you mean decode-floor"),
    (lambda t: ["derive", "decode-floor", "--set", "t_fixed=5 GB"], "t_fixed: expected units convertible to s"),
    (lambda t: ["derive", "decode-floor", "--set", "t_fixed=5"], "t_fixed: expected a quantity with a unit"),
    (lambda t: ["derive", "decode-floor", "--set", "batsh=4"], "did you mean batch"),
    (lambda t: ["derive", "decode-floor", "--set", "batch"], "expected NAME=VALUE"),
    (lambda t: ["derive", "decode-floor", "--set", "batch=__import__('os').system('true')"], "batch"),
    (lambda t: ["derive", "decode-floor", "--weights", "int3"], "unknown precision"),
    (lambda t: ["derive", "decode-floor", "--hardware", _bad_chip(t)], "memory_bandwidth: expected units convertible to B/s"),
    (lambda t: ["derive", "decode-floor", "--model", _bad_config(t)], "valid JSON"),
    (lambda t: ["show", "model", _no_field(t)], "num_hidden_layers: missing required field"),
    (lambda t: ["derive", "ridge-coincidence", "--hardware", "tpu-v5e", "--weights", "fp8"], "Google TPU v5e (per chip) lists no dense fp8 peak"),
    (lambda t: ["derive", "mla-absorption", "--model", "llama-3.1-8b"], "kv_lora_rank: Llama 3.1 8B has no multi-head latent attention"),
    (lambda t: ["list", "gpus"], "invalid choice"),
]


@pytest.mark.parametrize("argv, message", BAD)
def test_bad_input_is_one_line_exit_2_no_stdout(capsys, tmp_path, argv, message):
    with pytest.raises(SystemExit) if argv(tmp_path)[0] == "list" else contextlib.nullcontext() as exc:
        code = main(argv(tmp_path))
    out, err = capsys.readouterr()
    code = exc.value.code if exc else code
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_console_script_and_module_entry_point():
    run_ = subprocess.run([sys.executable, "-m", "roofline", "show", "hardware", "nope"], capture_output=True, text=True)
    assert run_.returncode == 2 and run_.stdout == "" and run_.stderr.startswith("roofline: error:")


def test_hostile_names_from_the_command_line(capsys, tmp_path):
    hostile = r"x_{1}&%$#\input{/etc/hostname}"
    (tmp_path / "evil.json").write_text((MODELS_DIR / "llama-3.1-8b.json").read_text())
    (tmp_path / "evil.toml").write_text(f"name = {json.dumps(hostile)}\nstatus = \"U\"\nsource = \"test\"\n")
    code, out, _ = run(capsys, "derive", "decode-floor", "--model", str(tmp_path / "evil.json"), "--format", "tex")
    assert code == 0 and r"x\_\{1\}\&\%\$\#\textbackslash{}input\{/etc/hostname\}" in out and "\\input{/etc" not in out
    code, out, _ = run(capsys, "derive", "decode-floor", "--model", str(tmp_path / "evil.json"), "--format", "json")
    assert json.loads(out)["context"]["model_name"] == hostile
    code, out, err = run(capsys, "show", "hardware", hostile)
    assert code == 2 and out == "" and err.count("\n") == 1


def test_engine_option_on_derive_sweep_and_build(capsys, tmp_path, monkeypatch):
    """--engine picks the profile the engine inputs come from; the sheet prints it; an unknown one is one line and exit 2."""
    code, out, _ = run(capsys, "derive", "decode-floor", "--engine", "ideal", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["context"]["engine"] == "ideal" and data["context"]["inputs"]["eta_bw"]["value"] == 1
    _, md, _ = run(capsys, "derive", "decode-floor", "--engine", "gpt-fast")
    assert "| Engine profile | gpt-fast: " in md
    code, csv, _ = run(capsys, "sweep", "decode-floor", "t_overhead", "--over", "batch=1,2", "--engine", "ideal")
    assert code == 0 and csv.splitlines()[1].endswith(",0,")
    for argv in (["derive", "decode-floor", "--engine", "fited"], ["sweep", "decode-floor", "t_step", "--over", "batch=1", "--engine", "x"],
                 ["build", "--out", str(tmp_path / "o"), "--engine", "fited"]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and not out and err.count("\n") == 1 and "unknown engine profile" in err
    assert not (tmp_path / "o").exists()
    import roofline.build as build_mod
    seen = []
    monkeypatch.setattr(build_mod, "render_all", lambda *args, engine=None, **kwargs: seen.append(engine) or {})
    monkeypatch.setattr(build_mod, "write_atomically", lambda out, files: None)
    assert main(["build", "--out", str(tmp_path / "b"), "--engine", "ideal"]) == 0
    assert seen == ["ideal"]

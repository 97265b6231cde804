"""The optional record fields (dp, ep, mean_batch, mean_output_tokens, power, energy_per_token, excluded) and the ML.ENERGY
file that uses them: they parse exactly, a bad value is one line naming the file and the field, and the shipped file is
exactly what its importer writes."""

import ast
import importlib.util
import os
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
from roofline.specs.errors import SpecError
from roofline.specs.measurements import MEASUREMENTS_DIR, load_measurement_file

from tests.specs.test_measurements import _write

ML_ENERGY = MEASUREMENTS_DIR / "ml-energy-v3-h100.toml"
IMPORTER = MEASUREMENTS_DIR / "import_ml_energy.py"
#: the commit the shipped file was generated from, and where a mirror of github.com/ml-energy/leaderboard may be
COMMIT = "0cd52dab897c5d91a45f4d413038f3b8b4251b0f"
LEADERBOARD = Path(os.environ.get("ML_ENERGY_LEADERBOARD", "/work/.mirror/ml-energy+leaderboard/repo"))

GOOD = '''
source = "A benchmark page"
url = "https://example.org/bench"
engine = "vLLM"
engine_version = "0.11.1"
notes = ""

[common]
hardware = "h100-sxm"
pp = 1
weights = "fp8"
kv = "bf16"
math = "fp8"
batching = "continuous"

[[record]]
id = "one"
model = "qwen3-235b-a22b"
gpus = 8
tp = 8
dp = 1
ep = 8
batch = 64
mean_batch = "63.93"
input_tokens = 1
output_tokens = 879
mean_output_tokens = "879.2109375"
metric = "itl"
value = "40.342 ms"
power = "3705.5 W"
energy_per_token = "2.394 J/token"
excluded = "a host bottleneck"
locator = "Table 1, row 1"
assumed = "nothing"
'''


def _importer():
    spec = importlib.util.spec_from_file_location("import_ml_energy", IMPORTER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_new_fields_parse_exactly(tmp_path):
    (m,) = load_measurement_file(_write(tmp_path, GOOD))
    assert (m.gpus, m.tp, m.dp, m.ep, m.pp) == (8, 8, 1, 8, 1)
    assert m.mean_batch == Fraction("63.93") and m.mean_output_tokens == Fraction("879.2109375")
    assert m.power.to("W").magnitude == Fraction("3705.5")
    assert m.energy_per_token.to("J/token").magnitude == Fraction("2.394")
    assert m.excluded == "a host bottleneck"


def test_absent_fields_default_to_tensor_parallelism_and_none(tmp_path):
    text = GOOD
    for line in ('dp = 1\n', 'ep = 8\n', 'mean_batch = "63.93"\n', 'mean_output_tokens = "879.2109375"\n', 'power = "3705.5 W"\n',
                 'energy_per_token = "2.394 J/token"\n', 'excluded = "a host bottleneck"\n'):
        text = text.replace(line, "")
    (m,) = load_measurement_file(_write(tmp_path, text))
    assert (m.dp, m.ep) == (1, 1)
    assert m.mean_batch is m.mean_output_tokens is m.power is m.energy_per_token is m.excluded is None


def test_data_parallel_attention_counts_its_replicas(tmp_path):
    (m,) = load_measurement_file(_write(tmp_path, GOOD.replace("tp = 8", "tp = 4").replace("dp = 1", "dp = 2")))
    assert (m.gpus, m.tp, m.dp, m.ep) == (8, 4, 2, 8)


@pytest.mark.parametrize("old, new, field, message", [
    ('power = "3705.5 W"', 'power = "3705.5 J"', "record one.power", "convertible to W"),
    ('power = "3705.5 W"', "power = 3705.5", "record one.power", "bare number"),
    ('power = "3705.5 W"', 'power = "0 W"', "record one.power", "positive"),
    ('energy_per_token = "2.394 J/token"', 'energy_per_token = "2.394 J"', "record one.energy_per_token", "convertible to J/token"),
    ('energy_per_token = "2.394 J/token"', 'energy_per_token = "many J/token"', "record one.energy_per_token", "J/token"),
    ('mean_batch = "63.93"', 'mean_batch = "sixty"', "record one.mean_batch", "plain decimal"),
    ('mean_batch = "63.93"', "mean_batch = 63.93", "record one.mean_batch", "plain decimal"),
    ('mean_batch = "63.93"', 'mean_batch = "63.93 seqs"', "record one.mean_batch", "plain decimal"),
    ('mean_batch = "63.93"', 'mean_batch = "0"', "record one.mean_batch", "positive"),
    ('mean_batch = "63.93"', 'mean_batch = "64.5"', "record one.mean_batch", "at most the batch (64)"),
    ('mean_output_tokens = "879.2109375"', 'mean_output_tokens = "-879"', "record one.mean_output_tokens", "plain decimal"),
    ("ep = 8", "ep = 3", "record one.ep", "divides the record's 8 GPUs"),
    ("ep = 8", "ep = 0", "record one.ep", "whole number"),
    ("dp = 1", "dp = 2", "record one.gpus", "tp x pp x dp = 16 GPUs"),
    ("dp = 1", 'dp = "1"', "record one.dp", "whole number"),
    ('excluded = "a host bottleneck"', 'excluded = " "', "record one.excluded", "empty"),
    ('excluded = "a host bottleneck"', "excluded = 1", "record one.excluded", "expected text"),
])
def test_a_bad_value_is_one_line_naming_the_file_and_field(tmp_path, old, new, field, message):
    assert GOOD.count(old) == 1
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(SpecError) as err:
        load_measurement_file(path)
    text = str(err.value)
    assert "\n" not in text
    assert str(path) in text and f": {field}:" in text
    assert message in text


# --- the ML.ENERGY file and its importer ---

def test_the_ml_energy_file_loads_with_its_fields():
    ms = load_measurement_file(ML_ENERGY)
    assert len(ms) == ML_ENERGY.read_text().count("\n[[record]]\n") == 131
    assert len({m.id for m in ms}) == len(ms)
    for m in ms:
        assert m.hardware.key == "h100-sxm" and m.metric == "itl" and m.batching == "continuous" and m.pp == 1 and m.dp == 1
        assert m.tp == m.gpus and m.ep in (1, m.gpus)
        assert 0 < m.mean_batch <= m.batch and m.mean_output_tokens > 0
        assert m.output_tokens == int(m.mean_output_tokens + Fraction(1, 2))
        assert m.power is not None and m.energy_per_token is not None
        # the placeholder, or one mean prompt per task given to the importer (--prompt-tokens)
        assert ("PROMPT_UNKNOWN" in m.assumed and m.input_tokens == 1) or ("never fitted per record" in m.assumed and m.input_tokens > 1)
        assert COMMIT in m.locator
    assert sum(1 for m in ms if m.excluded) == 6
    for task in ("-arena-", "-gpqa-"):
        assert len({m.input_tokens for m in ms if task in m.id}) == 1


def test_the_importer_uses_the_standard_library_only():
    tree = ast.parse(IMPORTER.read_text(encoding="utf-8"))
    roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    roots |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
    assert roots <= {"__future__", "argparse", "json", "re", "subprocess", "sys", "collections", "decimal", "fractions"}


def test_the_importer_flags_saturation_duplicates_and_a_falling_itl():
    flags = _importer().flags

    def config(cap, itl, batch, throughput, power="500", out="400.0"):
        return {"max_num_seqs": cap, "median_itl_ms": itl, "avg_batch_size": batch, "output_throughput_tokens_per_sec": throughput,
                "avg_power_watts": power, "avg_output_len": out}

    sweep = list(enumerate([
        config(8, "10.0", "8.0", "800"), config(16, "11.0", "16.0", "1450"),
        config(32, "12.0", "32.0", "2600"), config(32, "14.0", "32.0", "2300"),   # a duplicate cap: the second is off the line
        config(64, "13.0", "64.0", "4900"), config(128, "12.5", "127.0", "4800"),  # throughput falls and the ITL with it
    ]))
    out = flags(sweep)
    assert set(out) == {3, 5}
    assert "same max_num_seqs 32" in out[3]
    assert "saturated" in out[5] and "no higher than 13.000 ms at 64" in out[5]


@pytest.mark.skipif(not (LEADERBOARD / "HEAD").exists() and not (LEADERBOARD / ".git").exists(),
                    reason="no mirror of github.com/ml-energy/leaderboard (set ML_ENERGY_LEADERBOARD)")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_shipped_file_is_exactly_what_the_importer_writes():
    ms = load_measurement_file(ML_ENERGY)
    prompts = {("lm-arena-chat" if "-arena-" in m.id else "gpqa"): m.input_tokens for m in ms if "PROMPT_UNKNOWN" not in m.assumed}
    text = _importer().render(str(LEADERBOARD), COMMIT, prompts)
    assert text.count("\n[[record]]\n") == len(ms)
    assert text == ML_ENERGY.read_text(encoding="utf-8")

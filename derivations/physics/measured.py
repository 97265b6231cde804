"""What the published measurements say, as inputs and steps the sheets cite.

The measurements dataset (specs/measurements/) gives each memory-bound decode
record an implied MBU: the step model's bytes per GPU over the measured step
and the datasheet bandwidth (`roofline validate`). Its range is stored in the
default engine profile (specs/measurements/profiles/fitted.toml, [summary]) by
`roofline calibrate --write-defaults`, and a test fails when it is stale; here it
becomes three inputs, and three steps put this sheet's bytes at those MBUs.
A sheet that takes a measured step of its own setup takes it as one input,
MEASURED_STEP (0: none given).
"""

from __future__ import annotations

from collections.abc import Callable

from ...specs.measurements import Measurement, load_held_out
from ..engine.context import Input, fitted
from ..engine.declare import Row, Step
from . import glossary as gl
from . import primitives as pr
from . import stepmodel as sm
from .validation import measured_step, record_inputs

_FROM = f"of the {len(fitted().records)} memory-bound decode records of published measurements (`roofline validate`)"

MBU_INPUTS: tuple[Input, ...] = (
    Input("measured_mbu_low", gl.U_lo, fitted().summary["mbu_low"], "1", f"lowest implied MBU {_FROM}", "fraction"),
    Input("measured_mbu_median", gl.U_med, fitted().summary["mbu_median"], "1", f"median implied MBU {_FROM}", "fraction"),
    Input("measured_mbu_high", gl.U_hi, fitted().summary["mbu_high"], "1", f"highest implied MBU {_FROM}", "fraction"),
)

#: A measured step of the setup at hand, one input for every sheet that explains or checks one (batch1-gap, model-limits):
#: `--set t_step_measured=11.3ms`. 0 (the default) where none is given: a sheet then says so, or uses its stated ratio.
#: Named as the steps it feeds are (batch1-gap's t_step_observed, the step model's t_step); its name before issue 40,
#: t_observed, still sets it.
MEASURED_STEP = Input("t_step_measured", gl.t_meas, "0 ms", "s",
                      "a measured decode step time of this setup, the engine's time per step at one token per sequence (0: none given)",
                      "nonnegative", aliases=("t_observed",))

#: The collective kernels' time per step in a trace of the setup at hand (mbu-diagnosis; `roofline diagnose` sets it from a
#: trace): 0 (the default) where none is given, and the sheet uses the step model's all-reduces.
MEASURED_COLLECTIVES = Input("t_collectives_observed", gl.t_coll_meas, "0 ms", "s",
                             "the collective kernels' time per step in a trace of this setup (0: none given, the step model's all-reduces)",
                             "nonnegative")

t_mbu_high = Step("t_step_mbu_high", pr.step_time_at_mbu(sm.bytes_gpu.s, gl.U_hi), "s",
                  "This step's bytes per GPU at the highest MBU a measured server reached: the fastest the dataset says to expect.",
                  latex=r"t_{\mathrm{MBU,high}}", title="Step at the best measured MBU")
t_mbu_median = Step("t_step_mbu_median", pr.step_time_at_mbu(sm.bytes_gpu.s, gl.U_med), "s",
                    "This step's bytes per GPU at the median MBU of the measured servers.",
                    latex=r"t_{\mathrm{MBU,med}}", title="Step at the median measured MBU")
t_mbu_low = Step("t_step_mbu_low", pr.step_time_at_mbu(sm.bytes_gpu.s, gl.U_lo), "s",
                 "This step's bytes per GPU at the lowest MBU a measured server reached.",
                 latex=r"t_{\mathrm{MBU,low}}", title="Step at the worst measured MBU")

# --- a measured step against the prediction: one record per row of a sheet's table of measurements ---
t_measured = Step("t_measured", gl.t_meas, "s", "A measured step time of this setup, as given (a table of records sets each record's).",
                  latex=r"t_{\mathrm{meas}}", title="Measured step")
error = Step("prediction_error", (sm.t_step.s - gl.t_meas) / gl.t_meas, "1",
             "The prediction against the measurement, (predicted - measured) / measured: negative means the model is too fast. "
             "Undefined until a measured step is given (a table of records gives each record's).",
             latex=r"\epsilon", title="Prediction error", signed=True,
             none="no measurement given: a measured decode step of this setup is needed to compare the prediction with it")
#: Include after the step model's t_step, with MEASURED_STEP among the sheet's inputs.
MEASURED_STEPS: tuple[Step, ...] = (t_measured, error)


def record_row(m: Measurement, label: str | None = None) -> Row:
    """A record of the measurements (fitted or held out) as a table row: its chip, model, precisions, running batch, mean context,
    layout and, for a server at load, its prompt and output lengths (validation.record_inputs), and its measured step as
    t_step_measured (validation.measured_step's rules); labelled in words (`record_label`) unless told otherwise."""
    return Row(record_label(m) if label is None else label, hardware=m.hardware.key, model=m.model.key, weights=m.weights, kv=m.kv, math=m.math,
               series=m.engine, set={**record_inputs(m), MEASURED_STEP.name: f"{measured_step(m)!r} s"})


def record_label(m: Measurement) -> str:
    """A record as a reader names it, never by its id: the engine, the GPUs (with data- and expert-parallel degrees above 1), the
    model, the batch and the request's lengths
    ("gpt-fast, 8 × A100 SXM4 80GB: Llama 3.1 70B, batch 1, 5 in, 200 out", the request's prompt and output tokens); unique in the
    dataset."""
    chip = m.hardware.name.removeprefix(f"{m.hardware.vendor} ")
    layout = "".join(f", {name} {n}" for name, n in (("DP", m.dp), ("EP", m.ep)) if n > 1)  # beyond plain tensor parallelism
    return f"{m.engine}, {m.gpus} × {chip}{layout}: {m.model.name}, batch {m.batch}, {m.input_tokens:,} in, {m.output_tokens:,} out"


def held_out_rows(keep: Callable[[Measurement], bool]) -> tuple[Row, ...]:
    """The held-out serving results (specs/measurements/held-out/, never fitted) that `keep` picks, as table rows."""
    return tuple(record_row(m) for m in load_held_out() if keep(m))


#: Include after the step model's bytes_per_gpu.
MBU_STEPS: tuple[Step, ...] = (t_mbu_high, t_mbu_median, t_mbu_low)
DISPLAY_UNITS = {**{s.name: "ms" for s in MBU_STEPS}, "t_measured": "ms", MEASURED_STEP.name: "ms", "prediction_error": "%"}

__all__ = ["DISPLAY_UNITS", "MBU_INPUTS", "MBU_STEPS", "MEASURED_STEP", "MEASURED_STEPS", "error", "held_out_rows", "record_label", "record_row",
           "t_measured"]

"""Joules per token: power over throughput, and why the denominator is the term that moves.

Takeaway: J/token = n_TP * P / Theta. The power P of each GPU is pinned
between its idle draw and the datasheet cap (TDP), a swing of at most
P_TDP/P_idle; the throughput Theta of the shared step model rises from batch 1
to the largest batch whose cache fits by Theta(B_max)/Theta(1), which at a
context of a few thousand tokens is the "about 50x" of the question and at
8K context on the default setup about half that. The floor is the cap over the
throughput at the largest batch that fits. Assumes the step model of
derivations.physics.stepmodel, the capacity steps of batch-knee, and a power input
given as a share of TDP (n/a on chips whose spec lists no TDP).
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, derivation
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import stepmodel as sm
from . import batch_knee as bk

S = Symbols(parent=bk.S)
phi = S.add("phi_power", "1", r"\phi", "board power at this batch, as a share of the TDP")
phi_idle = S.add("phi_idle", "1", r"\phi_{0}", "idle board power, as a share of the TDP")

#: power_fraction below this is unset (its default 0; symbols are positive, so the test is a comparison, not an equality): the power model
UNSET = sp.Rational(1, 10**6)
POWER = Input("power_fraction", phi, "0", "1",
              "board power each GPU draws at this batch, as a share of its TDP, overriding the power model: at most 1 (the datasheet "
              "cap, the worst case for energy per token); 0 (the default): the power model's share at the step's utilisation",
              "share")
IDLE = Input("idle_fraction", phi_idle, "0.1", "1",
             "idle board power as a share of the TDP, the least a powered GPU draws: an assumption, not a datasheet figure (measure it with nvidia-smi on an idle GPU)",
             "fraction")

power_gpu = Step("power_per_gpu", sp.Piecewise((sm.power_share.s, phi < UNSET), (phi, True)) * gl.P_tdp, "W",
                 r"What a meter reads per GPU: the power model's share of the TDP at the step's utilisation, or the power input "
                 r"$\sym{phi_power}$ where one is set; it can never exceed $\sym{P_tdp}$.", latex=r"P",
                 title="Power per GPU")
power_group = Step("power_step", sm.gpus.s * power_gpu.s, "W",
                   "Every GPU of the layout draws it; the step's tokens come from all of them.", latex=r"P_{\mathrm{GPUs}}",
                   title="Power of the GPUs serving the batch")
jpt = Step("joules_per_token", power_group.s / sm.throughput.s, "J/token",
           "Energy per token is power over throughput: watts over tokens per second.", latex=r"e", title="Energy per token")
ratio = Step("throughput_ratio", bk.throughput_fit.s / sm.throughput.s, "1",
             r"How far the denominator moves from this batch (batch 1 by default) to the largest batch whose cache fits.",
             latex=r"\Theta(B_{\max})/\Theta", title="Throughput swing")
power_idle = Step("power_idle", phi_idle * gl.P_tdp, "W", "The least a powered GPU draws: the bottom of the numerator's range.",
                  latex=r"P_{0}", title="Idle power per GPU")
power_ratio = Step("power_ratio", gl.P_tdp / power_idle.s, "1",
                   "The most the numerator can move: from idle to the datasheet cap, whatever the batch.", latex=r"P_{\mathrm{TDP}}/P_{0}",
                   title="Power swing, idle to the cap")
swing = Step("swing_over_power", ratio.s / power_ratio.s, "1",
             "Above 1 the throughput swing outweighs the widest power swing: even if this batch drew only idle power and the largest batch the full cap, "
             "the largest batch would spend less energy per token.",
             latex=r"\frac{\Theta(B_{\max})/\Theta}{P_{\mathrm{TDP}}/P_{0}}", title="Throughput swing against power swing")
floor = Step("joules_per_token_floor", sm.gpus.s * gl.P_tdp / bk.throughput_fit.s, "J/token",
             "The floor: the largest batch that fits, with every GPU at its cap. Any lower draw only lowers it.",
             latex=r"e_{\min}", title="Energy per token at the best batch")
jpt_idle = Step("joules_per_token_idle", sm.gpus.s * power_idle.s / sm.throughput.s, "J/token",
                "The sheet's batch if its GPUs drew only idle power: the least the power term can make it.", latex=r"e_{0}",
                title="Energy per token at idle power")
energy_ratio = Step("energy_ratio", jpt.s / floor.s, "1", "How much more energy a token costs at this batch and power than at the floor.",
                    latex=r"e/e_{\min}", title="Energy per token over the floor")

STEPS = (*sm.DECODE_STEP, *sm.POWER_MODEL, *sm.MEMORY_FIT, *bk.CAPACITY, power_gpu, power_group, jpt, ratio, power_idle, power_ratio, swing, floor, jpt_idle, energy_ratio)

ABOUT = 0.2  # "about 50x": within 20%
ONE = {"batch": "1"}

DERIVATION = derivation(
    "joules-per-token",
    "Joules per token: the denominator moves, the numerator is capped",
    "Joules per token is power over throughput, and the power term is the one candidates obsess over. The answer shows why the denominator "
    "moves the result by about 50x while the numerator is pinned under a datasheet cap.",
    S,
    STEPS,
    ("joules_per_token", "throughput_ratio"),
    inputs=(bk.USABLE, POWER, IDLE),
    argument=(
        "t_step", "throughput", "B_max_kv", "throughput_at_capacity", "power_step", "joules_per_token", "throughput_ratio",
        "power_ratio", "swing_over_power", "joules_per_token_floor",
    ),
    body_tables=(0, 3),
    answer=(
        "At batch {batch} a token costs {joules_per_token}: {power_step} of GPUs over {throughput}.",
        "From this batch to the largest that fits ({B_max_kv}) throughput moves {throughput_ratio} times, while power can move "
        "at most {power_ratio} times, idle to the cap: the denominator decides, down to {joules_per_token_floor}.",
    ),
    assumptions=(
        r"Throughput is the shared step model's (@decode-floor): $B q$ tokens per step over the step time, per tensor-parallel group.",
        r"Power is the power model's: each GPU draws $\sym{phi_0}$ of its TDP idle, plus $\sym{a_mem}$ at full bandwidth and $\sym{a_flop}$ at the "
        r"full peak in proportion to the step's use of each, capped at the TDP; the shares are fitted to measured H100 board power and assumed "
        r"for other chips as shares of their own TDP. The input $\sym{phi_power}$ overrides it. The energy of every GPU of the layout is charged to "
        r"its tokens; with the serving step on (an output length set) the step carries the prompts, so their prefill energy is in the energy per output "
        "token, as a meter counts it. Host, network, cooling and power conversion are left out.",
        r"The power range used is idle to TDP: the TDP from the hardware spec (its source is printed above), the idle share $\sym{phi_idle}$ an assumption. "
        "A chip whose spec lists no TDP has no cap to bound the power by, so its power steps are n/a.",
        r"The throughput swing runs from this batch (batch 1 by default) to the largest batch whose cache fits (@batch-knee): usable capacity "
        r"$\sym{f_use}$ times the datasheet figure in decimal bytes, minus all weights, over each sequence's cache, rounded down.",
        r"The question's about 50x is read as within 20% of 50, and as the throughput swing from batch 1 to the largest batch that fits; "
        "the claims say at which context it holds.",
    ),
    takeaways=(
        "At batch {batch} a token costs {joules_per_token}, with the GPUs at {power_step} and the step model delivering {throughput}.",
        "The denominator moves by {throughput_ratio} from batch {batch} to the largest batch that fits ({B_max_kv} sequences, {throughput_at_capacity}); "
        "the numerator can move by at most {power_ratio}, from idle to the cap. The throughput swing over the power swing is {swing_over_power}.",
        "The floor is {joules_per_token_floor} at the largest batch with every GPU at its cap; batch {batch} costs {energy_ratio} times that.",
        "Whether the swing is about 50x depends on the context, through the batch that fits: the claims give the verdict at the default context and at the contexts that make it true.",
    ),
    scoring=(
        "Writes energy per token as power over throughput and charges every GPU of the group to the group's tokens.",
        "Bounds the power: no higher than the datasheet TDP, no lower than idle, so the numerator moves by a small factor at most.",
        "Gets the throughput swing from the step model: batch 1 is bound by the weights, the largest batch by the cache that fits.",
        "Names the floor, the cap over the best throughput, and says it is set by memory capacity, not by the power draw.",
        "Checks the 50x against a context: a longer context fits fewer sequences and shrinks the swing.",
    ),
    limits=(
        "The power model is linear in the step's bandwidth and compute utilisation and fitted on one chip family (H100); clocks, temperature and the mix of kernels move real board power around it.",
        "Clocks throttle at the cap: a GPU pinned at its TDP may run below the peak the step model assumes.",
        "Prefill tokens, idle time between requests and the host's power are not in the per-token figure.",
        "Latency targets usually keep the batch below the largest that fits, so the practical floor is higher.",
    ),
    tables=(
        Table("Energy per token across batch (power at the cap)", tuple(
            Row("", set={"batch": str(b)}) for b in (1, 4, 16, 64, 256)
        ), ("throughput", "joules_per_token", "memory_fraction")),
        Table("The numerator's whole range at batch 1", tuple(
            Row("", set={"batch": "1", "power_fraction": f}) for f in ("0.1", "0.5", "1")
        ), ("power_step", "joules_per_token", "energy_ratio")),
        Table("The swing shrinks as the context grows (batch 1 to the largest batch)", tuple(
            Row("", set={"batch": "1", "context": f"{t} token"}) for t in (1024, 2048, 4096, 8192, 32768)
        ), ("B_max_kv", "throughput_ratio", "joules_per_token_floor", "swing_over_power")),
        Table("Across hardware and models (batch 1, 8K context)", (
            Row("", model="llama-3.1-8b", hardware="h100-sxm", set={"batch": "1", "tp": "1"}),
            Row("", model="llama-3.1-70b", hardware="h200", set={"batch": "1", "tp": "2"}),
            Row("", model="llama-3.1-70b", hardware="h100-sxm", set={"batch": "1", "tp": "8"}),
            Row("", model="llama-3.1-70b", hardware="b200", set={"batch": "1", "tp": "2"}),
            Row("", model="mixtral-8x7b", hardware="mi300x", set={"batch": "1", "tp": "1"}),
            Row("", model="llama-3.1-8b", hardware="tpu-v5p", set={"batch": "1", "tp": "1"}),
        ), ("throughput_ratio", "power_ratio", "joules_per_token", "joules_per_token_floor"),
            note="A chip whose spec lists no TDP has no power cap: its power columns are n/a, its throughput swing is not."),
    ),
    claims=(
        Claim("From batch 1 to the largest batch that fits, the denominator moves by about 50x (within 20%), at this context.",
              "throughput_ratio", "50", rel_tol=ABOUT, where=Row("", set=ONE)),
        Claim("About 50x for Llama 3.1 70B on two H200s at a 4K-token context.",
              "throughput_ratio", "50", rel_tol=ABOUT,
              where=Row("", model="llama-3.1-70b", hardware="h200", set={**ONE, "tp": "2", "context": "4096 token"})),
        Claim("About 50x for Llama 3.1 8B on one H100 SXM at a 3K-token context.",
              "throughput_ratio", "50", rel_tol=ABOUT,
              where=Row("", model="llama-3.1-8b", hardware="h100-sxm", set={**ONE, "tp": "1", "context": "3072 token"})),
        Claim("About 50x for Llama 3.1 8B on one H100 SXM at an 8K-token context.",
              "throughput_ratio", "50", rel_tol=ABOUT,
              where=Row("", model="llama-3.1-8b", hardware="h100-sxm", set={**ONE, "tp": "1", "context": "8192 token"})),
    ),
    hardware=("h200", "h100-sxm", "b200", "mi300x", "tpu-v6e"),
    models=("llama-3.1-70b", "llama-3.1-8b"),
    plots=(Plot("energy", "sweep",
                r"Energy per token against batch, at the power model's board power and at idle power: the throughput in the denominator moves it far more "
                r"than the power can, down to the floor $\sym{joules_per_token_floor}$ at the largest batch that fits, $\sym{B_max_kv}$; "
                "batches beyond it are shaded.",
                title="From batch {batch} to the largest that fits, {B_max_kv}, throughput moves energy per token {throughput_ratio} times; "
                      "power can move it at most {power_ratio} times",
                x="batch", y=("joules_per_token", "joules_per_token_idle"), span=("1", "1024"), hlines=("joules_per_token_floor",),
                vlines=("B_max_kv",), fits_up_to="B_max_kv", answer=True,
                labels={"joules_per_token": "at the modelled power", "joules_per_token_idle": "at idle power"}),),
    defaults={"tp": "2"},
    display_units={**bk.DERIVATION.display_units, "power_per_gpu": "W", "power_step": "W", "joules_per_token": "J/token", "power_idle": "W",
                   "joules_per_token_floor": "J/token", "joules_per_token_idle": "J/token"},
)

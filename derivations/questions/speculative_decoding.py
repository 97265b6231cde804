"""Speculative decoding: when a drafter pays, and the best draft length per batch.

Takeaway: a cycle drafts gamma tokens with a small model (gamma drafter steps)
and verifies them in one target step of gamma + 1 tokens per sequence; it
yields (1 - alpha^(gamma+1))/(1 - alpha) tokens per sequence on average
(Leviathan et al. 2023). The speedup over plain decode is
E * t_step / (gamma * t_draft + t_verify). At low load the target step is
memory-bound, so verifying gamma + 1 tokens costs about as much as one and the
drafter's cost decides; at high load the verification's GEMMs are
compute-bound and cost gamma + 1 times a plain step's, so the drafter tuned
at batch 1 can cost throughput at the peak batch of short chats but still
pays at 8K, where the KV reads, which verification does not multiply,
dominate the step. Context length moves the whole table. The drafter pays the
engine's per-layer overhead for its own depth (16 layers against the target's
80) and its all-reduces at its own degree, so its cost per target step is the
engine's, not a fixed fraction: the engine profile decides how far the
low-load speedup gets towards the teaser's 3x and whether the drafter left on
costs a third of the peak of short chats; a table gives both under every
shipped profile, and the claims give the verdicts under the default and the
textbook (`ideal`) profile. Every step time comes from the shared step model
(derivations.physics.stepmodel), the drafter's with the second model's primed symbols
(engine.At); the peak batch is batch-knee's capacity.
"""

from fractions import Fraction

import sympy as sp

from ..engine.context import PROFILES, Input
from ..engine.declare import Claim, Plot, Row, Step, Table, at, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr
from ..physics import stepmodel as sm
from . import batch_knee as bk

S = Symbols(parent=bk.S)

alpha, gamma = gl.alpha, gl.gamma
n_tp_d = S.add("n_tp_draft", "1", r"n_{\mathrm{TP,d}}", "tensor-parallel degree of the drafter (GPUs sharing each of its layers)")

#: draft lengths searched for the best one: far enough that the speedup has stopped rising at every acceptance the sheet
#: tabulates at the sheet's engine profile (at 0.9 the best is 9; issue 26), so a best inside the range is the optimum; on the
#: ideal profile (no overhead) a drafter is so cheap that the speedup still rises at 16, and the best is marked as at the range's top
DRAFT_LENGTHS = tuple(range(17))
#: the draft lengths the speedup table and heat map show as columns (the search goes further)
SHOWN_LENGTHS = tuple(range(9))
TARGET = "llama-3.3-70b"
DRAFTER = "llama-3.2-1b"
H100 = "h100-sxm"
LOW_LOAD = "1"  # sequences: the server at 3 a.m.
#: The textbook roofline's engine profile (no overhead): the claims are also judged under it, as interview answers quote it.
IDEAL = "ideal"
SHORT_CHATS = "1024 token"
THIRD = 0.1  # "triples" and "a third" are read within 10%

#: the acceptance rate of each later draft position: the one before it unless set (`--set acceptance=0.8,0.7,0.6` sets them in turn)
POSITION_INPUTS = tuple(
    Input(f"acceptance_{i}", rate, "0.8", "1", f"acceptance rate of the drafted token at position {i} once the ones before it were accepted "
          f"(the rate at position {i - 1} unless set; past position {len(gl.ACCEPTANCE_POSITIONS)} every position takes this one's)",
          "fraction", follows="acceptance" if i == 2 else f"acceptance_{i - 1}")
    for i, rate in enumerate(gl.ACCEPTANCE_POSITIONS[1:], start=2)
)

drafter_model = {**gl.SECOND_MODEL, gl.n_tp: n_tp_d}
t_verify = at("t_verify", sm.t_step, {gl.q: (gamma + 1) * gl.u_token},
              r"Verification is one target step in which each sequence carries its $\gamma$ drafted tokens plus the one the target adds: "
              r"the shared step model at $q = \gamma + 1$ tokens. Its weights are read once whatever $q$ is; its GEMM and attention FLOPs, "
              r"and its all-reduces, grow with $q$.",
              latex=r"t_{\mathrm{verify}}", title="Verification step (target)")
t_draft = at("t_draft", sm.t_step, {**drafter_model, gl.q: gl.u_token},
             r"One drafter step: the shared step model with the drafter's symbols (primed, from the second model), its own "
             r"tensor-parallel degree, the same batch, context and chip, one token per sequence.",
             latex=r"t_{\mathrm{draft}}", title="Drafter step")
w_draft = at("weight_bytes_draft", sm.weight_bytes, gl.SECOND_MODEL,
             "The drafter's weights streamed per step: why it is cheap, and why it is not free.", latex=r"W_{\mathrm{d}}",
             title="Drafter weight bytes per step")
cost_ratio = Step("draft_cost_ratio", t_draft.s / sm.t_step.s, "1",
                  "A drafter step as a share of a plain target step: the number the usual rule of thumb calls the drafter's cost.",
                  latex=r"c", title="Drafter cost per target step")
#: the acceptance rate at each draft position (position 1 is alpha); past the last, every position takes its rate
RATES = gl.ACCEPTANCE_POSITIONS
K = len(RATES)
tokens_at = tuple(
    Step(f"expected_tokens_g{g}", pr.expected_tokens_at(RATES, g), "1",
         f"The tokens a sequence gains per cycle of {g} drafted: it keeps drafted tokens up to the first the target rejects, then the "
         r"target adds one of its own; the token at position $i$ survives with the product of the rates up to $i$. "
         r"With one rate $\alpha$ at every position this is $(1 - \alpha^{\gamma + 1})/(1 - \alpha)$ (Leviathan et al. 2023).",
         latex=rf"\bar{{n}}_{{{g}}}", title=f"Expected tokens per cycle, {g} drafted")
    for g in range(K)
)
#: every position past the last rate takes that rate: past K drafted the count grows as a geometric tail, in closed form for any length
tail = Step("expected_tokens_tail", pr.expected_tokens_at(RATES, K)
            + sp.Mul(*RATES) * RATES[-1] * pr.expected_tokens_per_cycle(RATES[-1], sp.Max(gamma, K) - K - 1), "1",
            rf"From {K} drafted on, every position takes the last rate $\alpha_{{{K}}}$: the count at {K} drafted, and the tokens "
            rf"past it, each surviving with the product of the {K} rates times a power of $\alpha_{{{K}}}$ (a geometric sum; "
            rf"at fewer than {K} drafted, the count at {K}).",
            latex=rf"\bar{{n}}_{{\ge {K}}}", title=f"Expected tokens per cycle, {K} drafted or more")
accepted = Step("expected_tokens", pr.Pick(sp.Min(gamma, K), *(s.s for s in tokens_at), tail.s), "1",
                r"The expected tokens per cycle at the set draft length $\gamma$: its entry of the list above "
                r"($1 + \alpha + \ldots + \alpha^{\gamma}$ when every position has the same rate).",
                latex=r"\bar{n}", title="Expected tokens per cycle")
iid = Step("expected_tokens_one_rate", pr.expected_tokens_per_cycle(alpha, gamma), "1",
           r"The textbook count, one rate $\alpha$ (the first position's) at every position: $(1 - \alpha^{\gamma + 1})/(1 - \alpha)$ "
           r"(Leviathan et al. 2023). It equals $\bar{n}$ when the later positions keep the first one's rate.",
           latex=r"\bar{n}_{\alpha}", title="Expected tokens per cycle at one rate")
t_cycle = Step("t_cycle", gamma * t_draft.s + t_verify.s, "s",
               r"A cycle: $\gamma$ drafter steps one after another, then the verification.", latex=r"t_{\mathrm{cycle}}", title="Cycle time")
thr_spec = Step("throughput_spec", gl.B * accepted.s * gl.u_token / t_cycle.s, "token/s",
                r"All $B$ sequences advance $\sym{expected_tokens}$ tokens per cycle.", latex=r"\Theta_{\mathrm{spec}}",
                title="Throughput with speculation")
speedup = Step("speedup", thr_spec.s / sm.throughput.s, "1",
               r"Over plain decode at the same batch ($q = 1$ token): $\sym{expected_tokens}\,\sym{t_step}/\sym{t_cycle}$. "
               r"At $\gamma = 0$ it is exactly 1: nothing is drafted and the verification is the plain step.",
               latex=r"\sigma", title="Speedup")
speedup_mem = Step("speedup_memory_bound", accepted.s * sm.t_step.s / (gamma * t_draft.s + sm.t_step.s), "1",
                   r"The speedup if verifying $\gamma + 1$ tokens cost no more than a plain step, as it does while the target is memory-bound: "
                   r"a ceiling that the real speedup reaches only when $\sym{t_verify} = \sym{t_step}$.",
                   latex=r"\sigma_{\mathrm{mem}}", title="Speedup with a memory-bound target")
p_ratio = Step("drafter_param_ratio", gl.SECOND_MODEL[gl.P_active] / gl.P_active, "1",
               "The drafter's GEMM weights per token over the target's: the share of a target step's FLOPs one drafter step costs once both are compute-bound.",
               latex=r"P_{\mathrm{d}}/P_{\mathrm{T}}", title="Drafter FLOPs per target FLOP")
speedup_cb = Step("speedup_compute_bound", accepted.s / (gamma + 1 + gamma * p_ratio.s), "1",
                  r"The other limit: once every GEMM is compute-bound (a large batch of short contexts), a step costs its FLOPs, so verifying "
                  r"$\gamma + 1$ tokens costs $\gamma + 1$ plain steps and each drafter step $P_{\mathrm{d}}/P_{\mathrm{T}}$ of one: "
                  r"$\sigma_{\mathrm{cmp}} = \bar{n}/(\gamma + 1 + \gamma P_{\mathrm{d}}/P_{\mathrm{T}})$. Below 1 for every $\gamma > 0$ "
                  r"($\bar{n} \le \gamma + 1$): the closed form behind 'costs a third' ($\gamma = 4$, $\alpha = 0.8$).",
                  latex=r"\sigma_{\mathrm{cmp}}", title="Speedup once compute-bound")
q_verify = (gamma + 1) * gl.u_token
gemm_seq = Step("t_compute_per_sequence_verify",
                pr.compute_time(pr.tp_split(gl.kappa * gl.P_active * q_verify + gl.L_att * pr.decode_attention_flops(sm.read.s, q=q_verify)
                                            + pr.recurrent_flops_per_token() * q_verify) + pr.indexer_flops_per_token() * q_verify,
                                gl.eta_flops * gl.pi), "s",
              r"The compute time one sequence adds to a verification step: its $\gamma + 1$ tokens through the GEMMs and attention. "
              "The batch multiplies it; nothing amortises it.",
              latex=r"t_{\mathrm{cmp,seq}}", title="Compute time per sequence, verifying")
kv_seq = Step("t_kv_per_sequence", sm.kv_tok_gpu.s * gl.T / (gl.eta_bw * gl.beta), "s",
              r"The memory time one sequence adds to any step: its $T$ cached tokens read at the achieved bandwidth. The weights' time is "
              "shared by the batch and vanishes per sequence as the batch grows; this does not.",
              latex=r"t_{\mathrm{kv,seq}}", title="KV-read time per sequence")
t_never = solve("T_verify_never_compute_bound", gemm_seq, kv_seq, gl.T, "token",
                r"Past this context the cache each sequence reads takes longer than the arithmetic its $\gamma + 1$ tokens do, so a larger batch "
                r"only adds memory time: the verification step never turns compute-bound at any batch, and verifying is nearly free. "
                r"It grows linearly in $q = \gamma + 1$ but for attention's own FLOPs, which also grow with $q$ and make it a little faster than linear.",
                latex=r"T_{\mathrm{mem}}", title="Context past which verification is never compute-bound",
                none="attention alone is compute-bound per cached token here: every context turns compute-bound at a large enough batch")
per_length = tuple(
    at(f"speedup_g{g}", speedup, {gamma: g}, f"The speedup at a draft length of {g} (batch, context and acceptance as set).",
       latex=rf"\sigma_{{{g}}}", title=f"Speedup at draft length {g}")
    for g in DRAFT_LENGTHS
)
best_speedup = Step("best_speedup", sp.Max(*(s.s for s in per_length), evaluate=False), "1",  # distinct step symbols: nothing to prune
                    "The best of the draft lengths searched, at this batch and context.", latex=r"\sigma^{*}", title="Best speedup")
best_length = Step("best_draft_length", pr.best_of([s.s for s in per_length], DRAFT_LENGTHS), "1",
                   f"The shortest draft length with the best speedup, searched from {DRAFT_LENGTHS[0]} to {DRAFT_LENGTHS[-1]}: past the point "
                   "where the speedup stops rising at every acceptance the sheet tabulates (a best at the top of the range would mean a longer draft does better still).",
                   latex=r"\gamma^{*}", title="Best draft length",
                   none=r"no draft length beats plain decode here ($\sigma_{\gamma} \le 1$ for every $\gamma$): do not speculate")
best_low = at("best_draft_length_low_load", best_length, {gl.B: sp.Integer(int(LOW_LOAD))},
              "The draft length a server tuned at low load (batch 1, 3 a.m.) would keep.", latex=r"\gamma^{*}_{1}",
              title="Best draft length at low load")
best_speedup_low = at("best_speedup_low_load", best_speedup, {gl.B: sp.Integer(int(LOW_LOAD))},
                      "The speedup that draft length gives at low load.", latex=r"\sigma^{*}_{1}", title="Best speedup at low load")
left_alone = at("speedup_left_alone", speedup, {gamma: best_low.s},
                "The same drafter and draft length, left alone as the batch grows to this sheet's batch.",
                latex=r"\sigma_{\mathrm{left}}", title="Speedup with the low-load draft length")

mem_verify = at("memory_per_gpu_verify", sm.memory_gpu, {gl.q: (gamma + 1) * gl.u_token},
                r"The target's share per GPU with room for $\gamma + 1$ tokens in flight per sequence.", latex=r"M_{\mathrm{GPU}}(\gamma + 1)",
                title="Target memory per GPU while verifying")
mem_draft = at("memory_per_gpu_draft", sm.memory_gpu, {**drafter_model, gl.q: gl.u_token},
               "The drafter's weights and cache on the busiest of its GPUs.", latex=r"M_{\mathrm{d}}", title="Drafter memory per GPU")
mem_spec = Step("memory_per_gpu_spec", mem_verify.s + mem_draft.s, "B",
                "With a drafter the busiest GPU holds both shares.", latex=r"M_{\mathrm{spec}}", title="Memory per GPU with a drafter")
b_max_spec = solve("B_max_spec", mem_spec, bk.usable, gl.B, "1",
                   "The batch that fills the usable memory when the drafter runs beside the target.", latex=r"B_{\max,\mathrm{spec}}",
                   title="Largest batch with a drafter", rounds="down",
                   none="the target's and drafter's weights alone fill the usable memory at these tensor-parallel degrees: no batch fits")
b_peak_left = at("B_peak_spec_left_alone", b_max_spec, {gamma: best_low.s},
                 "The largest batch with the drafter still on at its low-load draft length.", latex=r"B_{\max,\mathrm{spec}}(\gamma^{*}_{1})",
                 title="Largest batch, drafter left alone")
peak_spec = at("throughput_peak_spec_left_alone", thr_spec, {gl.B: sp.floor(b_peak_left.s), gamma: best_low.s},
               "Speculation left on at 6 p.m., at the largest whole batch that still fits.", latex=r"\Theta_{\mathrm{peak,spec}}",
               title="Peak throughput, drafter left alone")
peak_ratio = Step("peak_throughput_ratio", peak_spec.s / bk.throughput_fit.s, "1",
                  "What the drafter left alone keeps of the server's peak throughput: below 1 it costs throughput.",
                  latex=r"\Theta_{\mathrm{peak,spec}}/\Theta_{\mathrm{peak}}", title="Share of peak throughput kept")

STEPS = (*sm.DECODE_STEP, *sm.MEMORY_FIT, *bk.CAPACITY,
         t_verify, t_draft, w_draft, cost_ratio, *tokens_at, tail, accepted, iid, t_cycle, thr_spec, speedup, speedup_mem, p_ratio, speedup_cb, gemm_seq, kv_seq, t_never,
         mem_verify, mem_draft, mem_spec, b_max_spec,
         *per_length, best_speedup, best_length, best_low, best_speedup_low, left_alone, b_peak_left, peak_spec, peak_ratio)

BUCKETS = (1, 8, 32, 64, 128, 256)

#: vLLM's acceptance per draft position for an EAGLE-3 head on Llama 3.1 8B Instruct (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B, 7 drafted,
#: MT-Bench, 80 prompts, temperature 0), as vLLM prints it ("acceptance at token i"): the share of drafts whose first i + 1 tokens
#: were all accepted (vllm/v1/spec_decode/metrics.py counts accepted tokens per position over drafts), and the mean acceptance
#: length printed beside them, the target's own token included. Source: vllm-project/vllm issue 26191 (tomasruizt, "Previous
#: AL=3.53", the reference run of PR 17504, comment 2845707371): num_drafts 4816, num_draft_tokens 33712, num_accepted_tokens 12208.
VLLM_EAGLE3_SHARES = ("0.74", "0.54", "0.41", "0.31", "0.23", "0.17", "0.13")
VLLM_EAGLE3_LENGTH = "3.53"
VLLM_EAGLE3_ACCEPTED, VLLM_EAGLE3_DRAFTED = 12208, 33712


def conditional_rates(shares: tuple[str, ...]) -> tuple[Fraction, ...]:
    """Per-position rates (each token's acceptance once the ones before it were accepted) from the shares of drafts whose
    first i tokens were all accepted, as vLLM prints them: each share over the one before it."""
    s = [Fraction(x) for x in shares]
    return tuple(s[0] if i == 0 else s[i] / s[i - 1] for i in range(len(s)))


def acceptance_set(rates: tuple[Fraction, ...]) -> dict[str, str]:
    """The inputs a row sets for one rate per position: acceptance, then acceptance_2 on (as `--set acceptance=a,b,c` does)."""
    names = ("acceptance", *(i.name for i in POSITION_INPUTS))
    return {n: f"{float(r):.6f}" for n, r in zip(names, rates, strict=False)}


VLLM_RATES = conditional_rates(VLLM_EAGLE3_SHARES)


def rate_for_length(length: str, drafted: int) -> str:
    """The one rate at every position whose expected tokens per cycle of `drafted` tokens is `length` (a published mean accepted
    length, the target's own token included), by bisection to 1e-9: the record's acceptance, not a fitted parameter."""
    want, lo, hi = Fraction(length), Fraction(0), Fraction(1)
    if not 1 <= want <= drafted + 1:
        raise ValueError(f"an accepted length of {length} is outside 1 to {drafted + 1} for {drafted} drafted")
    while hi - lo > Fraction(1, 10**9):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sum(mid**i for i in range(drafted + 1)) < want else (lo, mid)
    return f"{float((lo + hi) / 2):.6f}"


#: vLLM issue 20780 (ekagra-ranjan, 2025-07-10): Llama 3.1 8B Instruct at batch 1 with an EAGLE (EAGLE-1) head, by draft length K:
#: the mean acceptance length (the target's own token included) and TPOT, against 7.07 ms without speculation (GPU not stated;
#: the author's runs in vLLM PR 16937 are on an H100)
VLLM_EAGLE1 = {2: ("2.1", "4.37"), 3: ("2.29", "4.29"), 4: ("2.39", "4.48"), 5: ("2.43", "4.71"), 6: ("2.45", "4.94"), 7: ("2.47", "5.2")}
VLLM_PLAIN_TPOT = "7.07"
EAGLE_SETUP = {"model": "llama-3.1-8b", "hardware": H100, "second_model": "eagle"}
#: DeepSeek-V3 (and R1, the same architecture) with its own MTP module drafting one token per cycle, on one node of eight H200s
DEEPSEEK = "deepseek-v3"
MTP_SETUP = {"model": DEEPSEEK, "hardware": "h200", "second_model": "mtp"}
#: a published speedup is read within 10%, about the step model's median error on the held-out serving records (`roofline validate`)
PUBLISHED = 0.1
CONTEXTS = (1024, 8192, 32768)

DERIVATION = derivation(
    "speculative-decoding",
    "Speculative decoding: a draft length per batch bucket",
    "The same drafter that triples speed at 3 a.m. costs a third of peak throughput at 6 p.m. if left alone. "
    "The answer builds a step-time model for Llama 3.3 70B on eight H100s, derives a draft length per batch bucket, "
    "and shows why context length moves the whole table.",
    S,
    STEPS,
    ("speedup", "best_draft_length"),
    inputs=(
        bk.USABLE,
        Input("tp_draft", n_tp_d, "8", "1", "tensor-parallel degree of the drafter: the target's unless set, as vLLM runs it", "count",
              follows="tp"),
        *POSITION_INPUTS,
    ),
    plots=(Plot("speedup", "heatmap",
                r"The speedup table as a heat map: draft length $\gamma$ across, batch down; blue where drafting pays, white at 1, and "
                r"vermillion, where a cell has it, where drafting slows the server down.",
                title="At this batch the best draft length is {best_draft_length}, for a speedup of {best_speedup}; tuned at batch 1 "
                      "and left alone here, drafting gives {speedup_left_alone}",
                y=tuple(f"speedup_g{g}" for g in SHOWN_LENGTHS), table=0, log="", answer=True),),
    defaults={"tp": "8"},
    second_model=DRAFTER,
    argument=(
        "t_step", "t_verify", "t_draft", "expected_tokens", "t_cycle", "speedup",
        "T_verify_never_compute_bound", "best_speedup", "best_draft_length", "best_draft_length_low_load", "speedup_left_alone",
        "peak_throughput_ratio",
    ),
    body_tables=(0, 1),
    answer=(
        "Drafting {draft_length} tokens at an acceptance of {acceptance} speeds decode by {speedup} at this batch and context; "
        "the best draft length here is {best_draft_length}, for {best_speedup}.",
        "Tuned at batch 1 and left on at the peak batch, the drafter keeps {peak_throughput_ratio} of peak throughput: the "
        "draft length must follow the batch, and context length moves the whole table.",
        "Once every GEMM is compute-bound the speedup tends to {speedup_compute_bound} at this draft length, the closed form behind "
        "'costs a third'; past a context of {T_verify_never_compute_bound} the verification never turns compute-bound at any batch.",
    ),
    assumptions=(
        "The question's eight H100s serve one dense 70B model by tensor parallelism, and the sheet stays there (tp = 8 by default): "
        "expert parallelism and data-parallel attention (ep, dp) are layouts for MoE serving, not this question's.",
        r"Target and drafter run on the same GPUs, one after the other: $\gamma$ drafter steps, then one verification step of $\gamma + 1$ tokens per "
        "sequence. Both step times are the shared step model (weights, KV cache, compute, all-reduces, overheads per layer and per step); "
        "the drafter's uses the second model's primed symbols and its own tensor-parallel degree.",
        r"Plain decode, the baseline, is one token per sequence per step ($q = 1$ token).",
        r"The question's eight H100s are one tensor-parallel group ($\sym{n_tp} = 8$, no data-parallel replicas or expert parallelism: "
        r"$\sym{n_dp} = \sym{n_ep} = 1$); a dense 70B model has no experts to split, and the layout's other degrees stay at 1 unless set.",
        r"Each drafted token is accepted with probability $\alpha$, independently (Leviathan et al. 2023); a rejection ends the cycle and the target's own "
        "token replaces the rejected one. Real acceptance falls along the draft, so long drafts do a little worse than shown.",
        "The drafter shares the target's tokenizer (Llama 3.2 1B and Llama 3.3 70B do); the sheet does not check it.",
        "Every sequence in the batch speculates with the same draft length; the drafter catches up on accepted tokens at no extra cost.",
        "Both models run on the same engine: its profile (printed with the specs) gives both their achieved rates and overheads; the "
        "drafter pays the per-layer overhead for its own layers.",
        "Peak throughput is plain decode at the largest whole batch whose weights and caches fit the usable share of each GPU's datasheet capacity "
        "(@batch-knee's capacity steps); "
        "with the drafter on, its weights and cache and the tokens in flight lower that batch.",
    ),
    takeaways=(
        r"Plain decode takes {t_step} per step; verifying $\gamma + 1$ tokens takes {t_verify} and a drafter step {t_draft} ({draft_cost_ratio} of a target step). "
        "A cycle yields {expected_tokens} tokens per sequence for {t_cycle}: a speedup of {speedup}.",
        "At this batch the best draft length is {best_draft_length}, for a speedup of {best_speedup}; a memory-bound target would allow {speedup_memory_bound} at the set draft length.",
        "Tuned at batch 1 the server would draft {best_draft_length_low_load} tokens for {best_speedup_low_load}; left alone at this batch that gives {speedup_left_alone}, "
        "and at the peak batch it keeps {peak_throughput_ratio} of the peak throughput.",
        "The draft length must follow the batch: long drafts at low load, short ones (or none) once the verification's GEMMs are compute-bound. "
        "A longer context keeps the step memory-bound to a larger batch (the cache, not the weights, dominates), so the whole table shifts right.",
    ),
    scoring=(
        r"Writes the expected tokens per cycle as $(1 - \alpha^{\gamma + 1})/(1 - \alpha)$ and the speedup as tokens per cycle over cycle time, relative to plain decode.",
        r"Models verification as one target step of $\gamma + 1$ tokens per sequence, nearly free while memory-bound and $\gamma + 1$ times the GEMM work once compute-bound.",
        "Costs the drafter from its own bytes (weights and its own KV cache), not as a fixed fraction of the target.",
        "Derives a draft length per batch bucket and says speculation should switch off at high load.",
        "Explains why context length moves the table: the KV cache grows with context and keeps large batches memory-bound.",
        "Says what the teaser's two numbers need: an acceptance rate and a drafter cost for 'triples', a batch and context for 'a third'.",
        r"Writes the compute-bound limit $\bar{n}/(\gamma + 1 + \gamma P_{\mathrm{d}}/P_{\mathrm{T}})$: about two thirds at $\gamma = 4$, "
        r"$\alpha = 0.8$, which is 'costs a third'.",
        r"Finds the context past which verifying $q$ tokens never turns compute-bound (KV time per sequence above its GEMM time), "
        r"and says it grows linearly in $q$ (a little faster once attention's own FLOPs count).",
        "Searches the draft length until the speedup stops rising (at acceptance 0.9 the best is past 8), rather than stopping at a fixed bound.",
    ),
    limits=(
        "Acceptance is not independent of position and depends on the traffic (code accepts more than chat); measure it per workload.",
        "Drafter and target steps are not overlapped here; systems that pipeline them, or use a draft head on the target (Medusa, EAGLE), pay less per draft.",
        "Tree or multi-candidate drafting verifies more tokens per step than it accepts; that trade is not modelled.",
        "The drafter pays the engine's per-layer overhead for its own depth and its all-reduce latency at its own tensor-parallel degree on "
        "each of its steps; engines that run the whole draft loop in one CUDA graph, or draft with a head on the target (Medusa, EAGLE), pay "
        "less, and the speedup moves toward the ideal profile's. NVIDIA reports 3.55x for Llama 3.3 70B with a small drafter in TensorRT-LLM "
        "on H200 at low load (NVIDIA technical blog, Boost Llama 3.3 70B Inference Throughput 3x with NVIDIA TensorRT-LLM Speculative "
        "Decoding, 2024), at an acceptance rate it does not state.",
        "Rejected drafted tokens still occupy KV slots until they are rolled back; the memory fit counts them as in flight.",
    ),
    tables=(
        Table(r"Speedup by draft length $\gamma$ and batch (the best draft length per batch bucket)", tuple(
            Row("", set={"batch": str(b)}) for b in BUCKETS
        ), (*(f"speedup_g{g}" for g in SHOWN_LENGTHS), "best_draft_length"),
            note=r"Sheet context, acceptance and drafter. $\sigma_{\gamma}$ below 1: speculation at that length slows the server down. "
                 f"The best draft length is searched up to {DRAFT_LENGTHS[-1]}; the columns stop at {SHOWN_LENGTHS[-1]}."),
        Table(r"Context length moves the table: best draft length and speedup", tuple(
            Row("", set={"context": f"{t} token", "batch": str(b)}) for t in CONTEXTS for b in (1, 32, 128)
        ), ("t_step", "t_verify", "t_draft", "best_draft_length", "best_speedup")),
        Table("Acceptance rate: batch 1 (3 a.m.) and the peak (6 p.m.) of short chats", tuple(
            Row("", set={"acceptance": a, "context": "1024 token"}) for a in ("0.6", "0.7", "0.8", "0.9")
        ), ("best_draft_length_low_load", "best_speedup_low_load", "peak_throughput_ratio")),
        Table("The peak (6 p.m.) with the low-load draft length left on, by context", tuple(
            Row("", set={"context": f"{t} token"}) for t in (1024, 2048, 4096, 8192, 32768)
        ), ("best_draft_length_low_load", "B_max_kv", "throughput_at_capacity", "throughput_peak_spec_left_alone", "peak_throughput_ratio")),
        Table(r"The teaser's two numbers under each engine profile (short chats: context 1,024 tokens, $\alpha = 0.8$)", tuple(
            Row(name, set={"context": SHORT_CHATS, "acceptance": "0.8"}, engine=name) for name in PROFILES
        ), ("t_step", "draft_cost_ratio", "best_draft_length_low_load", "best_speedup_low_load", "peak_throughput_ratio"),
            note="Each row is the sheet's context under one shipped engine profile (specs/measurements/profiles): the triples claim needs a "
                 "low-load speedup near 3, the a-third claim a share of peak throughput near two thirds."),
        Table("A measured acceptance vector against one rate (7 drafted tokens)", (
            Row("vLLM's measured rates, position by position (EAGLE-3, Llama 3.1 8B, MT-Bench)", set={**acceptance_set(VLLM_RATES), "draft_length": "7"}),
            Row(f"one rate: the first position's ({float(VLLM_RATES[0]):.2f})", set={"acceptance": f"{float(VLLM_RATES[0]):.6f}", "draft_length": "7"}),
            Row(f"one rate: the mean of the positions' rates ({float(sum(VLLM_RATES) / len(VLLM_RATES)):.3f})",
                set={"acceptance": f"{float(sum(VLLM_RATES) / len(VLLM_RATES)):.6f}", "draft_length": "7"}),
            Row(f"one rate: accepted over drafted tokens, vLLM's acceptance rate ({VLLM_EAGLE3_ACCEPTED / VLLM_EAGLE3_DRAFTED:.3f})",
                set={"acceptance": f"{VLLM_EAGLE3_ACCEPTED / VLLM_EAGLE3_DRAFTED:.6f}", "draft_length": "7"}),
        ), ("expected_tokens", "speedup"),
            note="vLLM prints, per position, the share of drafts whose first tokens were all accepted (0.74, 0.54, 0.41, 0.31, 0.23, 0.17, "
                 "0.13) and a mean acceptance length of 3.53 (vllm-project/vllm issue 26191); each share over the one before it is the "
                 "rate the first row sets. The speedup column is this sheet's target and drafter at those rates."),
        Table("DeepSeek-V3 with its own MTP module as the drafter (eight H200s, one token drafted per cycle)", tuple(
            Row(f"batch {b}, acceptance {a}", **MTP_SETUP, set={"batch": str(b), "acceptance": a, "draft_length": "1"})
            for b in (1, 64) for a in ("0.85", "0.9")
        ), ("t_step", "t_draft", "draft_cost_ratio", "t_verify", "speedup", "best_draft_length", "best_speedup"),
            note="The MTP module is one decoder layer of DeepSeek-V3's shape (attention and MoE) with its input projection, read out "
                 "through the main model's LM head, at the target's tensor-parallel degree (num_nextn_predict_layers in config.json; "
                 "--second-model mtp). The best draft length assumes the module keeps its rate at every position; an MTP module "
                 "trained for one token ahead accepts less further out."),
        Table("Published MTP speedups against the sheet (DeepSeek-V3 architecture, eight H200s, batch 1, one token drafted)", (
            Row("DeepSeek-V3 technical report: 1.8x at 85 to 90%", **MTP_SETUP, set={"batch": "1", "acceptance": "0.875", "draft_length": "1"}),
            Row("vLLM PR 12755, DeepSeek-R1: 1.63x at 81 to 82.3%, drafter TP 1", **MTP_SETUP,
                set={"batch": "1", "acceptance": "0.8165", "draft_length": "1", "tp_draft": "1"}),
            Row("SGLang PR 3582, DeepSeek-V3: 1.76x, accepted length 1.9", **MTP_SETUP, set={"batch": "1", "acceptance": "0.9", "draft_length": "1"}),
        ), ("expected_tokens", "t_step", "t_draft", "t_verify", "speedup"),
            note="DeepSeek-V3 technical report (arXiv:2412.19437, section 5.4.3): second-token acceptance 85 to 90%, 1.8 times TPS, "
                 "setup not stated. vLLM PR 12755 (2025-02-04): DeepSeek-R1, one token drafted, acceptance 81 to 82.3%, TPOT 55.47 "
                 "against 33.99 ms at 1 request/s, target TP 8, drafter TP 1, GPU not stated. SGLang PR 3582 (2025-02-14): batch 1, "
                 "1.76x, about 1.9 tokens accepted per cycle with one token drafted, GPU not stated. Each row sets the published "
                 "acceptance (the middle of a range) and computes the speedup on eight H200s, the usual node for this model in FP8."),
        Table("EAGLE heads at batch 1: Llama 3.1 8B on one H100 against vLLM's measured speedups", tuple(
            Row(f"{k} drafted: accepted length {al}, measured {float(Fraction(VLLM_PLAIN_TPOT) / Fraction(tpot)):.2f}x", **EAGLE_SETUP,
                set={"batch": "1", "tp": "1", "draft_length": str(k), "acceptance": rate_for_length(al, k)})
            for k, (al, tpot) in VLLM_EAGLE1.items()
        ), ("expected_tokens", "t_step", "t_draft", "t_cycle", "speedup"),
            note="vLLM issue 20780 (2025-07-10): Llama 3.1 8B Instruct at batch 1 with an EAGLE head, TPOT 7.07 ms without "
                 "speculation and 4.37, 4.29, 4.48, 4.71, 4.94 and 5.2 ms at 2 to 7 drafted tokens (GPU not stated; the author's "
                 "runs in vLLM PR 16937 are on an H100). Each row sets the one rate whose expected tokens per cycle is the "
                 "published accepted length; the drafter is an EAGLE head of the target's shape (--second-model eagle)."),
        Table("Other drafters (batch 1)", (
            Row("Llama 3.2 1B, drafter TP 8", second_model=DRAFTER, set={"batch": LOW_LOAD}),
            Row("Llama 3.2 1B, drafter TP 1", second_model=DRAFTER, set={"batch": LOW_LOAD, "tp_draft": "1"}),
            Row("Llama 3.1 8B, drafter TP 8", second_model="llama-3.1-8b", set={"batch": LOW_LOAD}),
        ), ("t_draft", "draft_cost_ratio", "best_draft_length", "best_speedup")),
    ),
    claims=(
        Claim(r"Left on at the peak batch of short chats, a compute-bound verification costs a third: the compute-bound limit at $\gamma = 4$, "
              r"$\alpha = 0.8$ is two thirds.", "speedup_compute_bound", "0.6667", rel_tol=THIRD,
              where=Row(r"$\gamma = 4$, $\alpha = 0.8$", set={"draft_length": "4", "acceptance": "0.8"})),
        Claim(r"At acceptance 0.9 the best draft length at 3 a.m. is past the old search bound of 8 (context 1,024 tokens; the engine profile in use).",
              "best_draft_length_low_load", "9", rel_tol=0, at_least=True,
              where=Row(r"$\alpha = 0.9$, context 1,024", set={"acceptance": "0.9", "context": SHORT_CHATS})),
        Claim(r"The drafter triples speed at 3 a.m. (batch 1, best draft length, $\alpha = 0.8$; the engine profile in use).", "best_speedup_low_load",
              "3", rel_tol=THIRD, where=Row(r"$\alpha = 0.8$", set={"acceptance": "0.8"})),
        Claim(r"It triples speed at 3 a.m. with a weaker drafter ($\alpha = 0.7$; the engine profile in use).", "best_speedup_low_load", "3",
              rel_tol=THIRD, where=Row(r"$\alpha = 0.7$", set={"acceptance": "0.7"})),
        Claim(r"Left alone at 6 p.m. it costs a third of peak throughput (short chats: context 1,024 tokens, $\alpha = 0.8$; the engine profile in use).",
              "peak_throughput_ratio", "0.6667", rel_tol=THIRD, where=Row(r"context 1,024, $\alpha = 0.8$", set={"context": SHORT_CHATS, "acceptance": "0.8"})),
        Claim(r"Left alone at 6 p.m. it costs a third of peak throughput (context 8,192 tokens, $\alpha = 0.8$; the engine profile in use).",
              "peak_throughput_ratio", "0.6667", rel_tol=THIRD, where=Row(r"context 8,192, $\alpha = 0.8$", set={"context": "8192 token", "acceptance": "0.8"})),
        Claim(r"On the textbook roofline (the ideal engine profile: no overhead) the drafter triples speed at 3 a.m. ($\alpha = 0.8$).",
              "best_speedup_low_load", "3", rel_tol=THIRD, where=Row(r"$\alpha = 0.8$, ideal profile", set={"acceptance": "0.8"}, engine=IDEAL)),
        Claim(r"On the textbook roofline (the ideal engine profile), left alone at 6 p.m. it costs a third of peak throughput (context 1,024 tokens, "
              r"$\alpha = 0.8$).", "peak_throughput_ratio", "0.6667", rel_tol=THIRD,
              where=Row(r"context 1,024, $\alpha = 0.8$, ideal profile", set={"context": SHORT_CHATS, "acceptance": "0.8"}, engine=IDEAL)),
        Claim("vLLM's per-position acceptance for an EAGLE-3 head gives the mean acceptance length it prints beside it, 3.53 tokens per cycle "
              "(vllm-project/vllm issue 26191).", "expected_tokens", VLLM_EAGLE3_LENGTH, rel_tol=0.005,
              where=Row("vLLM's rates, 7 drafted", set={**acceptance_set(VLLM_RATES), "draft_length": "7"})),
        Claim("DeepSeek-V3's MTP module speeds decode 1.8 times at 85 to 90% acceptance (DeepSeek-V3 technical report, section 5.4.3; "
              "setup not stated, read here at batch 1 on eight H200s).", "speedup", "1.8", rel_tol=PUBLISHED,
              where=Row("DeepSeek-V3, MTP, acceptance 0.875", **MTP_SETUP, set={"batch": "1", "acceptance": "0.875", "draft_length": "1"})),
        Claim("DeepSeek-R1's MTP module in vLLM speeds decode 1.63 times at 81 to 82.3% acceptance with the drafter on one GPU "
              "(vLLM PR 12755, 1 request/s; read here at batch 1 on eight H200s).", "speedup", "1.63", rel_tol=PUBLISHED,
              where=Row("DeepSeek-R1, MTP, acceptance 0.8165, drafter TP 1", **MTP_SETUP,
                        set={"batch": "1", "acceptance": "0.8165", "draft_length": "1", "tp_draft": "1"})),
        Claim("An EAGLE head speeds Llama 3.1 8B's batch-1 decode 1.65 times at 3 drafted tokens, accepted length 2.29 (vLLM issue 20780; "
              "read here on one H100).", "speedup", f"{float(Fraction(VLLM_PLAIN_TPOT) / Fraction(VLLM_EAGLE1[3][1])):.4f}", rel_tol=PUBLISHED,
              where=Row("Llama 3.1 8B, EAGLE head, 3 drafted", **EAGLE_SETUP,
                        set={"batch": "1", "tp": "1", "draft_length": "3", "acceptance": rate_for_length(VLLM_EAGLE1[3][0], 3)})),
        Claim("DeepSeek-V3's MTP module in SGLang speeds batch-1 decode 1.76 times at about 1.9 tokens per cycle (SGLang PR 3582; read "
              "here on eight H200s).", "speedup", "1.76", rel_tol=PUBLISHED,
              where=Row("DeepSeek-V3, MTP, acceptance 0.9", **MTP_SETUP, set={"batch": "1", "acceptance": "0.9", "draft_length": "1"})),
    ),
    hardware=(H100, "h200", "b200"),
    models=(TARGET,),
    display_units={"peak_throughput_ratio": "%", **bk.DERIVATION.display_units, "t_verify": "ms", "t_draft": "ms", "t_cycle": "ms", "weight_bytes_draft": "GB", "throughput_spec": "token/s",
                   "memory_per_gpu_spec": "GB", "throughput_peak_spec_left_alone": "token/s"},
)

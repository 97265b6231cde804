"""The largest batch that meets a latency target, and what it earns.

Takeaway: the decode step is a line in batch, t(B) = t0 + B c (@batch-knee), so the largest
batch whose step meets an inter-token target is the knee inverted: B_slo = (tpot - t0) / c.
The cache may stop the batch first (B_max), and past B_cmp the GEMMs turn compute-bound and the
line is optimistic. Time to first token under load is a prefill plus a wait: a burst of b
simultaneous arrivals waits (b + 1)/2 prefills on average; Poisson arrivals at a rate lambda
make an M/D/1 queue of prefills, whose mean wait is rho t_pf / (2 (1 - rho)) with
rho = lambda t_pf, so the arrival rate that meets a TTFT target is
lambda = 2 (ttft - t_pf) / (t_pf (2 ttft - t_pf)). Little's law turns a batch into the arrival
rate it serves, lambda = B / (N t(B)); goodput is the smaller of the two rates: requests per
second that meet both targets.
"""

from __future__ import annotations

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import measured as ms
from ..physics import primitives as pr
from ..physics import stepmodel as sm
from . import batch_knee as bk

S = Symbols(parent=bk.S)
tau_slo = S.add("tau_slo", "s", r"t_{\mathrm{TPOT}}^{\mathrm{SLO}}", "the inter-token target, TPOT: the longest decode step a user accepts")
ttft_slo = S.add("ttft_slo", "s", r"t_{\mathrm{TTFT}}^{\mathrm{SLO}}", "the time-to-first-token target")
lam = S.add("lam", "1/s", r"\lambda", "requests arriving per second at one replica")
b_burst = S.add("b_burst", "1", r"b", "requests arriving at once in a burst")
c_gpu = S.add("c_gpu", "USD/s", r"c_{\mathrm{GPU}}", "price of one GPU for an hour, as the user states it")

#: The targets are inputs: a service level is a choice, not a fact. The defaults are round figures of the kind interactive
#: chat serving states (20 tokens/s per user, a first token within a second), illustrative.
INPUTS = (
    Input("tpot_slo", tau_slo, "50 ms", "s", "inter-token target, TPOT: the longest decode step a user accepts (50 ms is 20 tokens/s)"),
    Input("ttft_slo", ttft_slo, "1 s", "s", "time-to-first-token target"),
    Input("arrival_rate", lam, "2/s", "1/s", "requests arriving per second at one replica (Poisson arrivals)"),
    Input("burst", b_burst, "8", "1", "requests arriving at the same moment in a burst", "count"),
    Input("gpu_hour_price", c_gpu, "0 USD/h", "USD/h", "price of one GPU-hour, yours to state: roofline types no price as fact "
          "(0: none given)", "nonnegative"),
)

# --- the largest batch that meets the inter-token target -----------------------------------------

line = Step("t_step_line", bk.t_zero.s + gl.B * bk.c_seq.s, "s",
            r"The decode step as a line in batch (@batch-knee): its intercept $\sym{t_zero}$ (the weights, the overheads, the "
            r"collectives' latency) plus $\sym{t_per_sequence}$ for every sequence (its cache reads, its share of the prompts and "
            "of the collectives, the engine's host work).",
            latex=r"t(B)", title="The step as a line in batch")
target = Step("tpot_target", tau_slo, "s", "The inter-token target: a user sees one token a step, so the step may take no longer.",
              latex=r"t_{\mathrm{TPOT}}^{\mathrm{SLO}}", title="Inter-token target")
b_slo = solve("B_slo", line, target, gl.B, "1",
              r"The largest batch whose step meets the target: the knee's line inverted, $(t_{\mathrm{TPOT}}^{\mathrm{SLO}} - t_{0})/c$.",
              latex=r"B_{\mathrm{SLO}}", keep=(bk.t_zero, bk.c_seq), title="Largest batch within the inter-token target", rounds="down",
              none="the step's intercept alone (the weights, the overheads) is longer than the target: no batch meets it; more GPUs, a "
                   "faster chip or narrower weights first")
slo_over_cache = Step("slo_over_cache", b_slo.s / bk.b_fit.s, "1",
                      "Above 1 the cache fills before the target binds: the memory, not the latency target, caps the batch.",
                      latex=r"B_{\mathrm{SLO}}/B_{\mathrm{fit}}", title="Target batch against the batch that fits")
slo_over_compute = Step("slo_over_compute", b_slo.s / bk.b_compute.s, "1",
                        r"Above 1 the GEMMs turn compute-bound before the target batch: the line under-counts the step there, and the "
                        "batch that meets the target is smaller.",
                        latex=r"B_{\mathrm{SLO}}/B_{\mathrm{cmp}}", title="Target batch against the compute batch")
served = Step("B_served", sp.Piecewise((sp.Min(sp.floor(b_slo.s), bk.b_max.s), b_slo.s >= 1)), "1",
              r"The batch a server runs: the target's, in whole sequences, unless the cache holds fewer ($\sym{B_max_kv}$).",
              latex=r"B_{\mathrm{srv}}", title="Batch served within the target", counts="sequences", rounds="down",
              none="not one whole sequence meets the inter-token target")
t_served = Step("t_step_served", bk.t_zero.s + served.s * bk.c_seq.s, "s", "The step at that batch: at or under the target.",
                latex=r"t(B_{\mathrm{srv}})", title="Step at the served batch")
per_user = Step("tokens_per_user", gl.q / t_served.s, "token/s",
                r"What each user sees: $q$ tokens a step (the interactivity axis).",
                latex=r"\tau_{\mathrm{user}}", title="Tokens per second per user")
per_gpu = Step("tokens_per_gpu", served.s * gl.q / (t_served.s * sm.gpus.s), "token/s",
               r"What the GPUs earn: $B q$ tokens a step over the layout's $\sym{gpus}$ GPUs (the throughput axis).",
               latex=r"\Theta_{\mathrm{GPU}}", title="Tokens per second per GPU")
user_line = Step("tokens_per_user_line", gl.q / line.s, "token/s", "Each user's speed on the line at batch $B$.",
                 latex=r"\tau_{\mathrm{user}}(B)", title="Tokens per second per user on the line")
gpu_line = Step("tokens_per_gpu_line", gl.B * gl.q / (line.s * sm.gpus.s), "token/s", "The GPUs' throughput on the line at batch $B$.",
                latex=r"\Theta_{\mathrm{GPU}}(B)", title="Tokens per second per GPU on the line")
user_target = Step("tokens_per_user_target", gl.q / tau_slo, "token/s", "The slowest each user may see: one step's tokens per target.",
                   latex=r"\tau_{\mathrm{user}}^{\mathrm{SLO}}", title="Per-user speed the target asks")
gpu_time = Step("gpu_time_per_token", 1 / per_gpu.s, "s/token",
                "GPU time per output token: times your price per GPU-hour it is the cost of a token at this service level.",
                latex=r"g_{\mathrm{tok}}", title="GPU time per token")

# --- time to first token under load --------------------------------------------------------------

prefill_bytes = Step("prefill_weight_bytes_gpu", pr.tp_split(pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.E * gl.P_exp)), "B",
                     "A prefill reads every weight once (every expert: a prompt's tokens touch them all), split over the tensor-parallel GPUs.",
                     latex=r"W_{\mathrm{pf}}", title="Weight bytes a prefill reads per GPU")
prefill_flops = Step("prefill_flops_gpu", pr.tp_split(pr.gemm_flops(gl.P_active, gl.S) + pr.prefill_attention_flops()), "flop",
                     r"The prompt's $S$ tokens through every GEMM, and its causal attention, split over the tensor-parallel GPUs.",
                     latex=r"F_{\mathrm{pf}}", title="Prefill FLOPs per GPU")
t_pf = Step("t_prefill", pr.roofline_time(prefill_flops.s, prefill_bytes.s, gl.eta_flops * gl.pi, gl.eta_bw * gl.beta), "s",
            "One prompt prefilled alone at the achieved rates: the longer of its FLOPs and its weight reads.",
            latex=r"t_{\mathrm{pf}}", title="Prefill time of one prompt")
ttft_burst = Step("ttft_burst", (b_burst + 1) / 2 * t_pf.s, "s",
                  r"$b$ requests arriving at once are prefilled one after another: the $i$-th waits $i$ prefills, $(b + 1)/2$ on average "
                  "(a benchmark that starts every request together, or a traffic spike).",
                  latex=r"t_{\mathrm{TTFT}}^{\mathrm{burst}}", title="Mean TTFT of a burst")
rho = Step("prefill_utilisation", lam * t_pf.s, "1",
           r"Poisson arrivals at $\lambda$ keep the prefill server busy this share of the time; at 1 the queue grows without bound.",
           latex=r"\rho", title="Prefill utilisation")
wait = Step("wait_poisson", pr.md1_mean_wait(lam, t_pf.s), "s",
            r"Independent arrivals (production traffic) make an M/D/1 queue of prefills, each $\sym{t_prefill}$ long: the "
            r"Pollaczek-Khinchine mean wait, $\rho\, t_{\mathrm{pf}} / (2 (1 - \rho))$, below $\rho = 1$ only.",
            latex=r"t_{\mathrm{wait}}", title="Mean wait in the prefill queue",
            none="the prompts arrive faster than one replica prefills them (utilisation at or above 1): the queue grows without bound")
ttft_poisson = Step("ttft_poisson", t_pf.s + wait.s, "s", "The wait plus the prefill itself.",
                    latex=r"t_{\mathrm{TTFT}}^{\mathrm{Poisson}}", title="Mean TTFT under Poisson arrivals")
budget = Step("wait_budget", sp.Max(0, ttft_slo - t_pf.s), "s",
              "What the TTFT target leaves for waiting once the prompt's own prefill is paid: nothing where one prefill already "
              "takes longer.",
              latex=r"t_{\mathrm{wait}}^{\max}", title="Wait the TTFT target leaves")
#: the M/D/1 wait as a function of the utilisation, solved for the utilisation that fills the budget:
#: rho t / (2 (1 - rho)) = w  <=>  rho = 2 w / (t + 2 w), always below 1 (tests/derivations/questions/test_slo_goodput.py checks
#: it against the wait symbolically); the queue's own formula is undefined past rho = 1, so the root is written, not solved
rho_ttft = Step("utilisation_at_ttft_target", 2 * budget.s / (t_pf.s + 2 * budget.s), "1",
                r"The prefill utilisation whose M/D/1 mean wait fills the budget: $\rho\, t_{\mathrm{pf}}/(2(1 - \rho)) = "
                r"t_{\mathrm{wait}}^{\max}$ solved for $\rho$; below 1 whatever the budget.",
                latex=r"\rho_{\mathrm{TTFT}}", title="Prefill utilisation the TTFT target allows")
lam_ttft = Step("lambda_ttft", sp.Piecewise((rho_ttft.s / t_pf.s, budget.s > 0)), "1/s",
                "The arrival rate at that utilisation, so that the mean TTFT meets the target: past it the queue of prompts, not the "
                "prefill, makes users wait.",
                latex=r"\lambda_{\mathrm{TTFT}}", title="Arrival rate within the TTFT target",
                none="one prefill alone takes longer than the TTFT target: no arrival rate meets it (a shorter prompt, more GPUs)")

# --- Little's law and goodput --------------------------------------------------------------------

lam_tpot = Step("lambda_tpot", served.s * gl.u_token / (gl.N_out * t_served.s), "1/s",
                r"Little's law: a request holds a batch slot for its $\sym{N_out}$ decode steps, so $B_{\mathrm{srv}}$ slots serve "
                r"$B_{\mathrm{srv}} / (N_{\mathrm{out}}\, t(B_{\mathrm{srv}}))$ requests a second.",
                latex=r"\lambda_{\mathrm{TPOT}}", title="Arrival rate the served batch sustains")
concurrency = Step("concurrency_needed", lam * (ttft_poisson.s + gl.N_out / gl.u_token * t_served.s), "1",
                   r"Little's law the other way: requests in the system at the arrival rate $\lambda$, each staying its TTFT and "
                   r"$\sym{N_out}$ steps.",
                   latex=r"L", title="Requests in flight at the arrival rate")
goodput = Step("goodput_requests", sp.Min(lam_tpot.s, lam_ttft.s), "1/s",
               "Requests per second that meet both targets: the smaller of the rate the decode batch sustains and the rate the prefill "
               "queue allows.",
               latex=r"\lambda_{\mathrm{good}}", title="Goodput")
goodput_tokens = Step("goodput_tokens_per_gpu", goodput.s * gl.N_out / sm.gpus.s, "token/s",
                      "The same in output tokens per second per GPU.",
                      latex=r"\Theta_{\mathrm{good}}", title="Goodput in tokens per GPU")

cost = Step("cost_per_token", sp.Piecewise((c_gpu / goodput_tokens.s, c_gpu > 0)), "USD/token",
            "The price of a GPU-hour over the tokens a GPU delivers within both targets in that hour.",
            latex=r"c_{\mathrm{tok}}", title="Cost per token within the targets",
            none="no price given: set gpu_hour_price to the price of one GPU-hour (USD/h) to price the tokens")

STEPS = (*sm.DECODE_STEP, *sm.MEMORY_FIT, *bk.CAPACITY, bk.weights_all, bk.t_weights, bk.t_zero, bk.t_att_tok, bk.t_prompt_seq,
         bk.t_comm_seq, bk.c_seq, bk.c_gemm, bk.t_gemm_cmp, bk.b_compute, line, target, b_slo, slo_over_cache, slo_over_compute, served,
         t_served, per_user, per_gpu, user_line, gpu_line, user_target, gpu_time, prefill_bytes, prefill_flops, t_pf, ttft_burst, rho, wait, ttft_poisson, budget, rho_ttft, lam_ttft,
         lam_tpot, concurrency, goodput, goodput_tokens, cost, *ms.MEASURED_STEPS)

#: the held-out file (specs/measurements/held-out/) whose records make the published interactivity curve this sheet checks
INTERACTIVITY_CURVE = "aiconfigurator-h100-llama-3.1-70b-vllm.toml"
TARGETS = ("20 ms", "33 ms", "50 ms", "100 ms")

DERIVATION = derivation(
    "slo-goodput",
    "Serving against a latency target: the batch it allows and what it earns",
    "A service level caps the step: every user must see a token within the inter-token target, and a first token within the TTFT "
    "target. The answer inverts the step's line for the largest batch that meets the first, queues the prompts for the second, and "
    "says how many requests a second meet both.",
    S,
    STEPS,
    ("B_slo", "B_served", "tokens_per_gpu", "goodput_requests"),
    inputs=(bk.USABLE, *INPUTS, ms.MEASURED_STEP),
    defaults={"prompt_len": "1024 token", "output_len": "512 token", "context": "1280 token"},
    argument=("B_max_kv", "t_zero", "t_per_sequence", "B_slo", "B_served", "tokens_per_user", "tokens_per_gpu", "t_prefill", "ttft_burst",
              "ttft_poisson", "lambda_ttft", "lambda_tpot", "goodput_requests"),
    body_tables=(0,),
    answer=(
        "The step is {t_zero} plus {t_per_sequence} per sequence, so the largest batch within the {tpot_target} inter-token target is "
        "{B_slo}; the cache holds {B_max_kv}, and the server runs {B_served}: {tokens_per_user} for each user, {tokens_per_gpu} per GPU.",
        "A prompt prefills in {t_prefill}; at {prefill_utilisation} prefill utilisation (Poisson arrivals) the mean time to first token is {ttft_poisson}, and the TTFT target "
        "allows up to {lambda_ttft}. The decode batch sustains {lambda_tpot}: the requests per second that meet both targets are "
        "{goodput_requests}.",
    ),
    assumptions=(
        r"The serving step (@batch-knee's line with prompts in every step): $\sym{N_out}$ output tokens per request after a "
        r"$\sym{S}$-token prompt, the context at $S + N_{\mathrm{out}}/2$ on average; the step model of @decode-floor at the engine "
        "profile's rates. The targets and the arrival rate are inputs: a service level is a choice, not a fact.",
        r"The line holds while the weight GEMMs are memory-bound, up to $\sym{B_compute}$; a target batch beyond it is optimistic "
        r"(the sheet says where).",
        r"TTFT: one replica prefills one prompt at a time at the achieved rates (no chunking across prompts), first come first served. "
        r"A burst of $b$ waits $(b + 1)/2$ prefills on average; Poisson arrivals make an M/D/1 queue (deterministic prefill time), "
        r"whose mean wait is the Pollaczek-Khinchine formula. Decode steps interleaved with the prefills are not added to the wait.",
        r"Goodput counts requests that meet both targets on average; a percentile target (p99 TTFT) needs the queue's tail, "
        "longer than its mean.",
    ),
    takeaways=(
        "Inverting the line gives the batch a latency target allows: {B_slo} here; the cache or the compute may stop it first.",
        "A burst waits (b + 1)/2 prefills; Poisson traffic waits rho t_pf / (2(1 - rho)), which explodes as the prefill server fills.",
        "The requests per second that meet both targets are the smaller of what the decode batch and the prefill queue allow: "
        "{goodput_requests} here.",
    ),
    scoring=(
        r"Writes the step as a line in batch and inverts it for the target: $B_{\mathrm{SLO}} = (t_{\mathrm{TPOT}} - t_{0})/c$.",
        "Checks the cache and the compute limits beside it and says which binds.",
        r"Distinguishes a burst ($(b+1)/2$ prefills) from Poisson arrivals (M/D/1: $\rho t/(2(1-\rho))$) and says where each applies.",
        "Uses Little's law to turn a batch into a request rate, and reports the requests per second that meet both targets as the "
        "smaller of the two limits.",
    ),
    limits=(
        "Engines chunk long prompts into decode steps (vLLM, SGLang): the prefill then shares steps with decodes, the TTFT is longer "
        "than one prefill alone and the decode steps longer than the line; the serving step counts the prompts' share of every step.",
        "Mean targets, not percentiles: a p99 TTFT target needs the M/D/1 tail, far above its mean near rho = 1.",
        "One replica; a fleet divides the arrival rate among replicas (and a router's imbalance adds to the queue).",
    ),
    tables=(
        Table("What each inter-token target allows", tuple(Row(f"TPOT {t}", set={"tpot_slo": t}) for t in TARGETS),
              ("B_slo", "B_served", "tokens_per_user", "tokens_per_gpu", "lambda_tpot", "goodput_requests")),
        Table("Mean TTFT as arrivals grow", tuple(Row(f"{r} requests/s", set={"arrival_rate": f"{r}/s"}) for r in (0.5, 1, 2, 4, 8)),
              ("prefill_utilisation", "ttft_poisson", "concurrency_needed")),
        Table("Across models and chips", tuple(Row("", hardware=h, model=m) for m in ("llama-3.1-8b", "gpt-oss-120b") for h in ("h100-sxm", "b200")),
              ("B_slo", "B_served", "tokens_per_gpu", "t_prefill", "lambda_ttft", "goodput_requests")),
        Table("Against a published interactivity curve, held out of every fit", ms.held_out_rows(lambda m: m.path.name == INTERACTIVITY_CURVE),
              ("t_step", "t_measured", "prediction_error"),
              note="Each row is a record of specs/measurements/held-out/: Llama 3.1 70B in FP8 on H100s under vLLM, a closed loop of "
                   "concurrent 1024-token (or 8192-token) prompts generating 1024 tokens each, its mean TPOT measured; the serving step "
                   "(prompts in every step) predicts it at the default profile, which never saw these records. A user's speed is one "
                   "token per step and the GPUs' the batch per step over the GPUs, so the column pair is the interactivity curve."),
    ),
    models=("llama-3.1-8b", "gpt-oss-120b"),
    plots=(Plot("interactivity", "sweep",
                r"The interactivity trade as batch grows on the step's line: each user's tokens per second fall as the GPUs' rise; "
                r"past $\sym{B_slo}$ a user sees fewer than the target's.",
                title="Past a batch of {B_slo} each user sees fewer tokens per second than the target asks",
                x="batch", y=("tokens_per_user_line", "tokens_per_gpu_line"), span=("1", "1024"), vlines=("B_slo", "B_max_kv"),
                hlines=("tokens_per_user_target",), answer=True,
                labels={"tokens_per_user_line": "per user", "tokens_per_gpu_line": "per GPU", "tokens_per_user_target": "the target"}),
           Plot("held-out-curve", "scatter",
                "The serving step at the default profile against each record of a published interactivity curve it was never fitted "
                "to (Llama 3.1 70B in FP8 on H100s under vLLM, 4 to 64 concurrent requests): predicted against measured TPOT, the "
                "colour by tensor-parallel degree.",
                title="Predicted against measured TPOT on a published interactivity curve, held out of every fit",
                x="t_measured", y=("t_step",), table=3, group="tp",
                labels={"t_measured": "measured TPOT", "t_step": "predicted step"})),
    display_units={**ms.DISPLAY_UNITS, "cost_per_token": "USD/Mtoken", "gpu_hour_price": "USD/h", "c_gpu": "USD/h", "t_step_line": "ms", "tpot_target": "ms", "t_step_served": "ms", "tokens_per_user": "token/s", "tokens_per_gpu": "token/s",
                   "gpu_time_per_token": "h/Mtoken", "prefill_weight_bytes_gpu": "GB", "prefill_flops_gpu": "Tflop", "t_prefill": "ms",
                   "ttft_burst": "ms", "ttft_poisson": "ms", "ttft_target": "ms", "lambda_ttft": "1/s", "lambda_tpot": "1/s", "goodput_requests": "1/s",
                   "goodput_tokens_per_gpu": "token/s", "t_zero": "ms", "t_per_sequence": "ms", "slo_over_cache": "1", "slo_over_compute": "1"},
)

"""When splitting prefill from decode pays: the KV cache a request hands over, the prompts a colocated step carries, and
the prefill:decode ratio a service level asks.

Takeaway: a disaggregated server sends each request's cache, S (s_kv + s_idx) + s_st bytes, from the prefill GPUs to the
decode GPUs: over the scale-out network at beta_out that costs x_t = s_kv,GPU / beta_out per prompt token, against
x_c = kappa P_act / (n_TP eta pi) to recompute it, so a long prompt's cache is cheaper to send than to recompute wherever
x_t < x_c; below S = t_w / x_t a prompt's whole cache crosses the link before a prefill could even read the weights. A
colocated server carries the new prompts inside every decode step (@slo-goodput's serving line, slope c with the prompts'
share c_pre); a split one decodes on the decode-only line, slope c - c_pre, so its inter-token target allows the larger
batch (t_TPOT - t0) / (c - c_pre), while its prefill groups each take the arrival rate the TTFT target leaves after the
transfer. The ratio of prefill to decode groups that balances them is lambda_TPOT / lambda_TTFT.
"""

from __future__ import annotations

import sympy as sp

from ..engine.declare import Plot, Row, Step, Table, derivation, solve
from ..physics import glossary as gl
from ..physics import measured as ms
from ..physics import stepmodel as sm
from . import batch_knee as bk
from . import slo_goodput as sg

S = sg.S

# --- the cache a request hands over --------------------------------------------------------------

kv_request = Step("kv_bytes_request_gpu", gl.S * (sm.kv_tok_gpu.s + gl.s_idx) + gl.s_st / gl.n_tp, "B",
                  r"What one prefill GPU sends per request: the cache of the $\sym{S}$ prompt tokens it holds (its share of the KV "
                  "cache, a sparse model's indexer keys) and its share of a recurrent state.",
                  latex=r"W_{\mathrm{xfer}}", title="Cache a request hands over, per GPU")
t_xfer = Step("t_transfer", kv_request.s / gl.beta_out, "s",
              "That cache over the scale-out network (InfiniBand or RoCE, each GPU its own NIC): the prefill and decode pools sit in "
              "different nodes.",
              latex=r"t_{\mathrm{xfer}}", title="Transfer time over the scale-out network")
t_xfer_link = Step("t_transfer_scaleup", kv_request.s / gl.beta_link, "s",
                   "The same over the scale-up link, for pools inside one NVLink domain.",
                   latex=r"t_{\mathrm{xfer}}^{\mathrm{link}}", title="Transfer time over the scale-up link")
x_t = Step("transfer_per_token", (sm.kv_tok_gpu.s + gl.s_idx) / gl.beta_out, "s/token",
           "Sending one prompt token's cache over the scale-out network.", latex=r"x_{t}", title="Transfer time per prompt token")
x_c = Step("recompute_per_token", gl.kappa * gl.P_active / (gl.n_tp * gl.eta_flops * gl.pi), "s/token",
           "Recomputing one prompt token through the weight GEMMs at the achieved peak (its attention comes on top).",
           latex=r"x_{c}", title="Recompute time per prompt token")
ratio_tc = Step("transfer_over_recompute", x_t.s / x_c.s, "1",
                "Below 1, a long prompt's cache is cheaper to send than to compute again; above 1 (a thin network, a wide cache) "
                "recomputing on the decode side wins.",
                latex=r"x_{t}/x_{c}", title="Transfer over recompute, per token")
send_all = Step("transfer_all", gl.S * x_t.s, "s", r"The whole prompt's cache at that rate.", latex=r"t_{\mathrm{xfer}}(S)",
                title="The prompt's cache over the network")
s_floor = solve("S_transfer_floor", send_all, bk.t_weights, gl.S, "token",
                "The prompt length whose cache takes as long to send as a prefill takes to read the weights: a shorter prompt's cache "
                "crosses the network before any recompute could finish.",
                latex=r"S_{\mathrm{xfer}}", keep=(x_t, bk.t_weights), title="Prompt whose cache costs a weight read to send")

# --- what each layout serves ---------------------------------------------------------------------

interference = Step("t_prompt_interference", sg.served.s * bk.t_prompt_seq.s, "s",
                    r"What the prompts inside a colocated step add to it at the served batch: each sequence's share of the new prompts' "
                    "attention and cache writes (zero for the decode-only step).",
                    latex=r"t_{\mathrm{intf}}", title="Prompts' share of a colocated step")
inflation = Step("interference_share", interference.s / sg.t_served.s, "1", "That share of the colocated step.",
                 latex=r"t_{\mathrm{intf}}/t(B_{\mathrm{srv}})", title="Share of the step the prompts take")
c_decode = Step("t_per_sequence_decode", bk.c_seq.s - bk.t_prompt_seq.s, "s",
                "The decode pool's slope: a sequence's cache reads, collectives and host work, with no prompt in the step.",
                latex=r"c_{\mathrm{dec}}", title="Slope of the decode-only line")
line_dec = Step("t_step_decode_line", bk.t_zero.s + gl.B * c_decode.s, "s", "The decode pool's step as a line in batch.",
                latex=r"t_{\mathrm{dec}}(B)", title="Decode-only step as a line")
b_dec = solve("B_slo_decode", line_dec, sg.target, gl.B, "1",
              "The largest batch a decode pool runs within the inter-token target: the decode-only line inverted.",
              latex=r"B_{\mathrm{SLO}}^{\mathrm{dec}}", keep=(bk.t_zero, c_decode), title="Decode pool's batch within the target", rounds="down",
              none="the step's intercept alone is longer than the target: no batch meets it")
served_dec = Step("B_served_decode", sp.Piecewise((sp.Min(sp.floor(b_dec.s), bk.b_max.s), b_dec.s >= 1)), "1",
                  r"The decode pool's batch in whole sequences, unless the cache holds fewer.",
                  latex=r"B_{\mathrm{srv}}^{\mathrm{dec}}", title="Decode pool's served batch", counts="sequences", rounds="down",
                  none="not one whole sequence meets the inter-token target")
t_dec = Step("t_step_decode_served", bk.t_zero.s + served_dec.s * c_decode.s, "s", "The decode pool's step at that batch.",
             latex=r"t_{\mathrm{dec}}(B_{\mathrm{srv}}^{\mathrm{dec}})", title="Decode pool's step")
lam_dec = Step("lambda_decode_group", served_dec.s * gl.u_token / (gl.N_out * t_dec.s), "1/s",
               "Little's law for one decode group: the requests a second its batch serves.",
               latex=r"\lambda_{\mathrm{dec}}", title="Requests a decode group serves")
budget_dis = Step("wait_budget_split", sp.Max(0, sg.ttft_slo - sg.t_pf.s - t_xfer.s), "s",
                  "What the TTFT target leaves a split server's prefill queue: the prefill and the transfer paid first.",
                  latex=r"t_{\mathrm{wait,split}}^{\max}", title="Wait the TTFT target leaves a split server")
rho_dis = Step("utilisation_split", 2 * budget_dis.s / (sg.t_pf.s + 2 * budget_dis.s), "1",
               "The prefill group's utilisation whose M/D/1 mean wait fills that budget (as in @slo-goodput).",
               latex=r"\rho_{\mathrm{split}}", title="Prefill utilisation a split server allows")
lam_pf = Step("lambda_prefill_group", sp.Piecewise((rho_dis.s / sg.t_pf.s, budget_dis.s > 0)), "1/s",
              "The requests a second one prefill group takes within the TTFT target.",
              latex=r"\lambda_{\mathrm{pf}}", title="Requests a prefill group takes",
              none="the prefill and the transfer alone take longer than the TTFT target")
p_to_d = Step("prefill_per_decode_group", lam_dec.s / lam_pf.s, "1",
              "Prefill groups per decode group that keep both pools within their targets at the same request rate.",
              latex=r"P{:}D", title="Prefill to decode groups")
good_col = Step("goodput_per_gpu_colocated", sg.goodput.s / sm.gpus.s, "1/s",
                "A colocated server's requests a second within both targets, per GPU (@slo-goodput).",
                latex=r"\lambda_{\mathrm{col}}/n", title="Colocated goodput per GPU")
good_dis = Step("goodput_per_gpu_split", lam_dec.s / ((1 + p_to_d.s) * sm.gpus.s), "1/s",
                "A split server's: a decode group's requests over its GPUs and those of the prefill groups that feed it.",
                latex=r"\lambda_{\mathrm{split}}/n", title="Split goodput per GPU")
STEPS = (*sg.STEPS, kv_request, t_xfer, t_xfer_link, x_t, x_c, ratio_tc, send_all, s_floor, interference, inflation, c_decode,
         line_dec, b_dec, served_dec, t_dec, lam_dec, budget_dis, rho_dis, lam_pf, p_to_d, good_col, good_dis)

DERIVATION = derivation(
    "disaggregation",
    "Splitting prefill from decode: when the transfer and the lost batching pay",
    "A disaggregated server prefills on one pool of GPUs and decodes on another, sending each request's KV cache between them. "
    "The answer weighs the transfer against recomputing, the prompts a colocated step carries against a decode pool that carries "
    "none, and finds the prefill:decode ratio a service level asks.",
    S,
    STEPS,
    ("t_transfer", "transfer_over_recompute", "prefill_per_decode_group", "goodput_per_gpu_split", "goodput_per_gpu_colocated"),
    inputs=(bk.USABLE, *sg.INPUTS, ms.MEASURED_STEP),
    defaults={"prompt_len": "1024 token", "output_len": "512 token", "context": "1280 token"},
    argument=("kv_bytes_request_gpu", "t_transfer", "transfer_over_recompute", "S_transfer_floor", "t_prompt_interference",
              "B_slo_decode", "lambda_decode_group", "lambda_prefill_group", "prefill_per_decode_group", "goodput_per_gpu_colocated", "goodput_per_gpu_split"),
    body_tables=(0,),
    answer=(
        "Each request hands {kv_bytes_request_gpu} per GPU to the decode pool, {t_transfer} over the scale-out network: "
        "{transfer_over_recompute} of the time recomputing it would take, token for token.",
        "A colocated step carries {t_prompt_interference} of prompts at its served batch; a decode pool without them runs "
        "{B_slo_decode} within the inter-token target. Balanced, the split server needs {prefill_per_decode_group} prefill groups "
        "per decode group and serves {goodput_per_gpu_split} per GPU within both targets, against {goodput_per_gpu_colocated} for the "
        "colocated server.",
    ),
    assumptions=(
        r"The serving step of @slo-goodput: $\sym{N_out}$ output tokens after a $\sym{S}$-token prompt, the same targets, Poisson "
        "arrivals, one prompt prefilled at a time per group (M/D/1), the decode steps as @batch-knee's line.",
        r"A group is one tensor-parallel replica of $\sym{n_tp}$ GPUs in either pool; the cache moves GPU to GPU, each prefill GPU "
        r"sending its own share over its own NIC at $\sym{beta_out}$ (NIXL, Mooncake: RDMA), overlapped with nothing.",
        "The colocated server prefills on the same GPUs: its decode steps carry the prompts' attention and cache writes, and its "
        "prefills queue as in @slo-goodput; the time they take from decoding is not charged to the decode batch.",
    ),
    takeaways=(
        "Sending a cache costs {transfer_over_recompute} of recomputing it per token: the network is rarely what stops a split.",
        "What a split buys is a decode step with no prompts in it: a larger batch within the same inter-token target.",
        "The prefill:decode ratio is the ratio of the rates each pool serves within its target: {prefill_per_decode_group} here.",
    ),
    scoring=(
        r"Counts the handover as the prompt's KV cache per GPU over the scale-out link, and compares it per token with recomputing.",
        "Takes the colocated step's prompt share from the serving step, not from a guess, and the decode pool's batch from the "
        "decode-only line under the same target.",
        "Balances the pools by their request rates (Little's law, M/D/1) and compares requests per GPU, not tokens per step.",
    ),
    limits=(
        "Engines overlap the transfer with the prefill layer by layer; the TTFT here pays it after.",
        "Chunked prefill bounds a colocated step's prompt share by its chunk size; the serving step spreads the prompts evenly.",
        "One prefill group per queue: a real prefill pool batches prompts, which raises its rate at long prompts.",
    ),
    tables=(
        Table("Across models and chips", tuple(Row("", hardware=h, model=m) for m in ("llama-3.1-8b", "gpt-oss-120b")
                                               for h in ("h100-sxm", "b200")),
              ("t_transfer", "transfer_over_recompute", "B_slo", "B_slo_decode", "prefill_per_decode_group", "goodput_per_gpu_colocated",
               "goodput_per_gpu_split")),
        Table("As the prompt grows", tuple(Row(f"{s}-token prompt", set={"prompt_len": f"{s} token", "context": f"{s + 256} token"})
                                           for s in (256, 1024, 4096, 16384)),
              ("t_transfer", "t_prompt_interference", "prefill_per_decode_group", "goodput_per_gpu_colocated", "goodput_per_gpu_split")),
        Table("Against published disaggregated decode pools, held out of every fit", ms.held_out_rows(lambda m: m.role == "decode"),
              ("t_step", "t_measured", "prediction_error"),
              note="Each row is a record of specs/measurements/held-out/: DeepSeek-V3/R1 in FP8 on a decode pool of a disaggregated "
                   "server (TensorRT-LLM under Dynamo; eight H200s with EP8, or 32 GB200s with data-parallel attention and EP32), its "
                   "mean TPOT measured at the running batch each record derives from its own TTFT and TPOT. The decode-only step (no "
                   "prompts: they run on the prefill pool) predicts it at the default profile, which never saw these records."),
    ),
    models=("llama-3.1-8b", "gpt-oss-120b"),
    plots=(Plot("handover", "sweep",
                r"A request's handover over the scale-out network against recomputing its prompt, as the prompt grows: the transfer "
                r"grows with the cache, the prefill with the FLOPs (and first with the weights it must read).",
                title="Sending a prompt's cache takes {transfer_over_recompute} of the time recomputing it takes",
                x="prompt_len", y=("t_transfer", "t_prefill"), span=("64 token", "131072 token"), vlines=("S_transfer_floor",),
                answer=True, labels={"t_transfer": "send the cache", "t_prefill": "recompute the prompt"}),
           Plot("held-out-pools", "scatter",
                "The decode-only step at the default profile against each published disaggregated decode pool it was never fitted to "
                "(DeepSeek-V3/R1 in FP8 on H200 and GB200): predicted against measured TPOT, the colour by data-parallel attention degree.",
                title="Predicted against measured TPOT on published disaggregated decode pools, held out of every fit",
                x="t_measured", y=("t_step",), table=2, group="dp",
                labels={"t_measured": "measured TPOT", "t_step": "predicted step"})),
    display_units={"transfer_over_recompute": "%", "kv_bytes_request_gpu": "MB", "t_transfer": "ms", "t_transfer_scaleup": "ms", "transfer_per_token": "us/token",
                   "recompute_per_token": "us/token", "transfer_all": "ms", "S_transfer_floor": "token", "t_prompt_interference": "ms",
                   "t_per_sequence_decode": "us", "t_step_decode_line": "ms", "t_step_decode_served": "ms", "lambda_decode_group": "1/s",
                   "wait_budget_split": "ms", "lambda_prefill_group": "1/s", "goodput_per_gpu_colocated": "1/s",
                   "goodput_per_gpu_split": "1/s", **sg.DERIVATION.display_units},
)

"""The one step-time model, as ready-made steps every serving sheet includes.

A decode step of B sequences, q tokens each, T cached tokens each, on one of
n_TP tensor-parallel GPUs:

- weights: the GEMM weights every token uses plus the routed experts the
  batch touches (uniform top-k routing), split n_TP ways;
- KV cache: every sequence reads the tokens its attention layers read (T, or
  min(T, W) in a layer with a window or a sparse top-k: primitives.read_context);
  a GPU holds ceil(n_kv/n_TP) cached streams, so KV heads are replicated past
  their count and an MLA latent sits on every GPU; a sparse layer's indexer
  reads its small key of every cached token; a linear-attention layer reads and
  writes its fixed-size state instead;
- time: per component (weight GEMMs, attention) the roofline at achieved
  rates, max(bytes/(eta_bw*beta), FLOPs/(eta_flops*pi)), summed; plus two
  all-reduces per layer for tensor parallelism, each its bytes over the link
  plus its latency rounds (zero on one GPU), the law of rounds following the
  chip's scale-up topology (one-shot, one round whatever n, on a switch or a
  full mesh; NCCL's ring, 2(n - 1) steps, over PCIe; a bidirectional ring on a
  torus: primitives.allreduce_rounds); plus the overheads no byte count shows:
  t_layer per layer (launches, small kernels and host work grow with depth)
  and a small time t_fixed per step beside it.

eta_bw, eta_flops, t_layer, t_fixed and t_ar (the latency of one round) come
from the engine profile the context names (specs/measurements/profiles/:
`fitted` to the published measurements by default, `ideal` for the textbook
roofline, one per engine family); `--set` overrides any one of them.

A second model (a drafter, engine.At with glossary.SECOND_MODEL) pays the
per-layer overhead for its own depth and all-reduces at its own degree.

In the memory-bound regime this is the straight line t(B) = t0 + B*c.
Components are summed, not overlapped: a component-wise max, as InferSim and
BLIS do, keeps the regime change of each component visible.
"""

from __future__ import annotations

import sympy as sp

from ..engine.declare import Row, Step
from . import glossary as gl
from . import primitives as pr

prompts = Step("prompt_tokens_step", pr.prompt_tokens_per_step(), "token",
               r"A server at load replaces each finished request with a new one and runs the new prompts in the same steps as the "
               r"decodes (chunked prefill): $B/\sym{N_out}$ requests finish per step, so $B/\sym{N_out}$ prompts of $S$ tokens arrive, "
               r"less the share $\sym{h_pfx}$ the prefix cache already holds. Zero for the decode-only step of the textbook "
               r"($\sym{N_out} = 0$, the output length not set).",
               latex=r"n_{\mathrm{pre}}", meaning="prompt tokens the serving step carries beside its decodes", title="Prompt tokens per step")
#: prompt tokens each running sequence brings to a serving step (S/N of them; 0 for the decode-only step): every per-step count
#: of the serving step is B times a per-sequence term, so batch-knee's line keeps B as a factor
PROMPT_PER_SEQUENCE = gl.S * (1 - gl.h_pfx) * pr.request_rate_per_token() * gl.u_token
tokens = Step("tokens_per_step", gl.B * (gl.q + PROMPT_PER_SEQUENCE) / gl.u_token, "1",
              r"Each of the $B$ sequences adds $q$ tokens, and a server at load adds the prompt tokens: the rows every weight GEMM "
              "multiplies this step.",
              latex=r"n_{\mathrm{tok}}", meaning="tokens per step, as a count", title="Tokens per step")
gpus = Step("gpus", pr.layout_gpus(), "1",
            r"The layout: $\sym{n_dp}$ attention replicas of $\sym{n_tp}$ GPUs each, every replica serving its own $B$ sequences; the MoE layers "
            r"run over all of them, their routed experts split over $\sym{n_ep}$ GPUs. Tensor parallelism alone is $\sym{n_dp} = \sym{n_ep} = 1$.",
            latex=r"n_{\mathrm{GPU}}", meaning="GPUs the layout uses", title="GPUs in the layout")
experts = Step("experts_touched", pr.experts_touched_serving(gl.q / gl.u_token, gl.n_dp * gl.B,
                                                          pr.finish_chance(), gl.S * (1 - gl.h_pfx) / gl.u_token), "1",
               r"Under uniform top-$k$ routing a MoE layer reads every distinct expert the tokens of all $\sym{n_dp}$ replicas picked: $k_{E}$ at one "
               "token, nearly all $E$ a few dozen tokens later. A prompt joins one step whole, so at load most steps carry only "
               "the decodes and a few carry a prompt that reads nearly every expert: the expectation over steps, each "
               r"sequence finishing and handing its place to a new prompt with probability $1/\sym{N_out}$ per step. A dense model is one expert that every token uses.",
               latex=r"E_{\mathrm{read}}", meaning="routed experts read per MoE layer per step (expected)", title="Experts read per MoE layer",
               counts="experts")
params = Step("params_read", pr.params_read(experts.s), "parameter",
              "The GEMM weights every token uses (attention, dense and shared MLPs, routers, LM head), plus the experts read in each MoE layer.",
              latex=r"P_{\mathrm{read}}", meaning="GEMM weights read per step", title="Weights read per step")
weight_bytes = Step("weight_bytes", pr.mixed_weight_bytes(gl.P_base, gl.L_moe * gl.P_exp * experts.s), "B",
                    r"Every weight read crosses HBM once per step, the LM head included; the embedding is a gather of one row per token. "
                    r"The always-read weights are $\sym{b_w}$ bytes each, the routed experts $\sym{b_e}$: each in the format the sheet "
                    "computes it in.",
                    latex=r"W", meaning="weight bytes streamed per decode step", title="Weight bytes per step")
kv_tok = Step("kv_bytes_per_token", pr.kv_bytes_per_token(gl.e_kv, gl.b_kv), "B/token",
              "Each token leaves K and V (or the MLA latent) of every layer in the cache: one copy, whole model.",
              latex=r"s_{\mathrm{kv}}", title="KV-cache bytes per token")
kv_tok_gpu = Step("kv_bytes_per_token_gpu", pr.kv_bytes_per_token_per_gpu(), "B/token",
                  "What one cached token occupies on the busiest GPU: tensor parallelism splits the cached streams but never below one per GPU, "
                  "so KV heads are replicated past their count and an MLA latent is on every GPU.",
                  latex=r"s_{\mathrm{kv,GPU}}", title="KV-cache bytes per token on one GPU")
kept = Step("kept_context", pr.kept_context(), "token",
            r"What an attention layer keeps of each sequence's $T$ tokens, averaged over the $\sym{L_att}$ attention layers: all of them in a "
            r"full or sparse layer, at most $\sym{W_win}$ in each of the $\sym{L_drop}$ layers with a sliding window or a chunk; exactly $T$ "
            "without windows.",
            latex=r"T_{\mathrm{kv}}", meaning="tokens an attention layer keeps per sequence, averaged over the attention layers (windows applied)",
            title="Tokens each layer keeps")
read = Step("read_context", pr.read_context(), "token",
            r"What an attention layer reads of them per query: all it keeps, but at most $\sym{W_win}$ in each of the $\sym{L_win}$ layers "
            "with a window, a chunk or a sparse top-$k$ (DeepSeek Sparse Attention reads only the tokens its indexer picks).",
            latex=r"T_{\mathrm{read}}", meaning="tokens an attention layer reads per query, averaged over the attention layers (windows and top-k applied)",
            title="Tokens each layer reads")
kv_step = Step("kv_bytes_step", gl.B * read.s * kv_tok_gpu.s, "B",
               r"Each of the $B$ sequences reads every token its layers read, every step; batching does not amortise it.",
               latex=r"W_{\mathrm{kv}}", meaning="KV-cache bytes read per step on one GPU", title="KV-cache bytes per step")
index_step = Step("index_bytes_step", gl.B * gl.T * gl.s_idx, "B",
                  r"A sparse layer's indexer scores every cached token to pick the top-$k$: each sequence reads its whole indexer cache, "
                  r"$\sym{s_idx}$ per token, every step (on every GPU: the indexer is not split); zero without sparse attention.",
                  latex=r"W_{\mathrm{idx}}", meaning="indexer-cache bytes read per step on one GPU", title="Indexer bytes per step")
state_step = Step("state_bytes_step", 2 * gl.B * gl.s_st / gl.n_tp, "B",
                  r"A linear-attention or state-space layer keeps a fixed-size state per sequence instead of a cache: each step reads it "
                  r"and writes it back, $2\,\sym{s_st}$ per sequence whatever the context, split with the heads over the GPUs; zero for a "
                  "model whose every layer attends.",
                  latex=r"W_{\mathrm{st}}", meaning="recurrent-state bytes read and written per step on one GPU", title="Recurrent-state bytes per step")
kv_prompt = Step("kv_bytes_prompt", pr.prompt_tokens_per_step(hit=0) * kv_tok_gpu.s, "B",
                 "The prompts of a serving step write their new cache once and read the cached prefix's: a whole prompt's cache each, "
                 "zero for the decode-only step.",
                 latex=r"W_{\mathrm{kv,pre}}", meaning="KV-cache bytes the step's prompts write on one GPU", title="Prompt cache written per step")
weights_gpu = Step("weight_bytes_gpu", pr.layout_weight_bytes(experts.s), "B",
                   r"Tensor parallelism splits every weight matrix over $\sym{n_tp}$ GPUs; the always-read weights are replicated over the "
                   r"$\sym{n_dp}$ replicas, and the routed experts the whole group touches are spread over all $\sym{gpus}$ GPUs "
                   r"($E/\sym{n_ep}$ whole experts on each under expert parallelism). With one replica this is the weight bytes over $\sym{n_tp}$.",
                   latex=r"W_{\mathrm{w,GPU}}", title="Weight bytes per GPU")
permute = Step("permute_bytes_gpu", gl.L_moe * pr.moe_permute_bytes(tokens.s * gl.n_dp / gl.n_ep), "B",
               r"A MoE layer gathers each token's rows into its experts' groups and scatters the results back: its share of the group's "
               r"$\sym{tokens_per_step}\,\sym{n_dp}$ tokens, $k_{E}$ rows of $D$ each way; zero for a dense model.",
               latex=r"W_{\mathrm{perm}}", meaning="token-permutation bytes of the MoE layers per GPU", title="MoE token permutation")
bytes_gpu = Step("bytes_per_gpu", weights_gpu.s + kv_step.s + index_step.s + state_step.s + kv_prompt.s + permute.s, "B",
                 "Everything one GPU streams per step.", latex=r"W_{\mathrm{GPU}}", title="Bytes per GPU per step")
#: the routed experts' share of P_active (k_E experts per MoE layer); the rest every token multiplies in dense GEMMs
ROUTED_ACTIVE = gl.L_moe * gl.k_E * gl.P_exp
#: the GEMM FLOPs per GPU without the grouped GEMMs' padding: kappa P_act per token, linear in B (batch-knee's line; the
#: padding matters only at batches where the expert GEMMs are memory-bound)
FLOPS_GEMM_DENSE = pr.tp_split(gl.kappa * gl.P_active * gl.B * (gl.q + PROMPT_PER_SEQUENCE))
flops_gemm = Step("flops_gemm_gpu", pr.tp_split(gl.kappa * ((gl.P_active - ROUTED_ACTIVE) * tokens.s * gl.u_token
                                                            + gl.L_moe * gl.P_exp * pr.grouped_expert_rows(tokens.s * gl.n_dp, experts.s) / gl.n_dp)),
                  "flop",
                  r"Each token multiplies only its own weights (its top-$k$ experts): $\kappa P_{\mathrm{act}}$ FLOPs per token, split over the "
                  r"GPUs. The routed experts run as grouped GEMMs: each expert read computes at least one tile of $\sym{m_tile}$ rows, "
                  "so at a small batch the padding, not the tokens, sets their FLOPs.",
                  latex=r"F_{\mathrm{gemm}}", title="GEMM FLOPs per GPU")
flops_attn = Step("flops_attention_gpu", pr.tp_split(gl.B * gl.L_att * pr.decode_attention_flops(read.s)), "flop",
                  r"Each query token scores against, and sums values over, the tokens each attention layer reads of its sequence; heads split over the GPUs.",
                  latex=r"F_{\mathrm{att}}", title="Attention FLOPs per GPU")
flops_index = Step("flops_index", gl.B * gl.q * pr.indexer_flops_per_token(), "flop",
                   r"A sparse layer's indexer scores every cached token of each query before the attention reads its top $\sym{W_win}$: "
                   "it grows with the context, on every GPU (the indexer is not split); zero without sparse attention.",
                   latex=r"F_{\mathrm{idx}}", title="Indexer FLOPs per GPU")
flops_rec = Step("flops_recurrent_gpu", pr.tp_split(pr.recurrent_flops_per_token() * gl.B * gl.q), "flop",
                 r"A linear-attention or state-space layer updates its state and reads it out for every token, "
                 r"$\sym{kappa_st}$ per element whatever the context; heads split over the GPUs; zero for a model whose every layer attends.",
                 latex=r"F_{\mathrm{st}}", title="Recurrent-layer FLOPs per GPU")
flops_attn_prompt = Step("flops_attention_prompt_gpu", pr.tp_split(pr.serving_prompt_attention_flops()), "flop",
                         r"The prompts of a serving step, $B/\sym{N_out}$ of $S$ tokens each, attend causally over their own prefix: zero "
                         "for the decode-only step; heads split over the GPUs.",
                         latex=r"F_{\mathrm{att,pre}}", title="Prompt attention FLOPs per GPU")
t_memory = Step("t_memory", pr.memory_time(bytes_gpu.s, gl.eta_bw * gl.beta), "s",
                "The memory side alone: the step's bytes at the achieved bandwidth.", latex=r"t_{\mathrm{mem}}", title="Memory time")
t_compute = Step("t_compute", pr.compute_time(flops_gemm.s + flops_attn.s + flops_index.s + flops_rec.s + flops_attn_prompt.s, gl.eta_flops * gl.pi), "s",
                 "The compute side alone: the step's FLOPs at the achieved fraction of the dense peak.", latex=r"t_{\mathrm{cmp}}", title="Compute time")
t_gemm = Step("t_gemm", pr.roofline_component_time(flops_gemm.s, weights_gpu.s + permute.s), "s",
              "The weight GEMMs on the roofline: memory-bound until the batch reaches the ridge, compute-bound after.",
              latex=r"t_{\mathrm{gemm}}", title="Weight GEMMs on the roofline")
t_attn = Step("t_attention", pr.roofline_component_time(flops_attn.s, kv_step.s) + pr.roofline_component_time(flops_index.s + flops_rec.s, index_step.s + state_step.s)
              + pr.roofline_component_time(flops_attn_prompt.s, kv_prompt.s), "s",
              "Attention on the roofline, and each kernel that stands beside it on its own (a sparse layer's indexer and a recurrent "
              "layer's state update, the prompts' attention at load): decode attention's intensity does not grow with the batch, "
              "so for GQA it stays memory-bound.",
              latex=r"t_{\mathrm{att}}", title="Attention on the roofline")
ar_rounds = Step("allreduce_rounds", pr.allreduce_rounds(), "1",
                 r"A decode all-reduce carries a few kB, so its latency, not its bytes, sets its time: one round on a switched or fully "
                 r"meshed scale-up domain, where it is one-shot and flat in the GPU count; NCCL's ring of $2 (n_{\mathrm{TP}} - 1)$ steps over "
                 r"PCIe; a bidirectional ring of $2 \lfloor n_{\mathrm{TP}}/2 \rfloor$ hops on a torus. The chip's scale-up topology decides "
                 "which; zero on one GPU.",
                 latex=r"h_{\mathrm{AR}}", meaning="latency rounds of one small all-reduce", title="Latency rounds per all-reduce")
a2a_bytes = Step("alltoall_bytes", pr.alltoall_bytes(tokens.s, gl.u_token), "B",
                 r"Expert parallelism sends each token to the GPUs of its $k_{E}$ experts (dispatch) and brings the results back (combine): "
                 r"per all-to-all, each GPU sends and receives its $B q/\sym{n_tp}$ tokens' rows for the $(\sym{n_ep} - 1)/\sym{n_ep}$ of their "
                 "experts held elsewhere; zero without expert parallelism.",
                 latex=r"W_{\mathrm{a2a}}", meaning="bytes one GPU sends per direction in one all-to-all", title="All-to-all bytes per GPU")
# at ep = 1 the bytes are 0, and a zero factor absorbs a link the chip does not give (exact and compiled evaluation alike)
t_a2a = Step("t_alltoall", 2 * gl.L_moe * (a2a_bytes.s * pr.alltoall_link(tp=gpus.s, dp=sp.Integer(1)) + pr.alltoall_rounds() * gl.t_ar), "s",
             r"Two all-to-alls per MoE layer, dispatch and combine: each its bytes over the scale-up link $\sym{beta_link}$ while the layout's "
             r"$\sym{gpus}$ GPUs fit in one scale-up domain of $\sym{n_dom}$, else over the scale-out network $\sym{beta_out}$, plus one "
             r"round of latency $\sym{t_ar}$ (every GPU writes to its peers at once); zero without expert parallelism or without MoE layers.",
             latex=r"t_{\mathrm{a2a}}", title="Expert-parallel all-to-alls")
#: The all-to-alls' two parts, as COMM_BYTES and COMM_LATENCY: bytes growing with the batch, latency fixed per step.
A2A_BYTES = 2 * gl.L_moe * a2a_bytes.expr * pr.alltoall_link()
A2A_LATENCY = 2 * gl.L_moe * pr.alltoall_rounds() * gl.t_ar
#: The all-reduces' two parts: their bytes over the link (growing with the batch) and their latency (fixed per step).
COMM_BYTES = 2 * gl.L * pr.allreduce_time(pr.tp_allreduce_bytes(tokens.s, gl.u_token))
COMM_LATENCY = 2 * gl.L * ar_rounds.s * gl.t_ar
t_comm = Step("t_comm", COMM_BYTES + COMM_LATENCY, "s",
              "Tensor parallelism all-reduces the activations twice per layer (after attention and after the MLP): each carries its "
              r"bytes over the link and pays $\sym{allreduce_rounds}$ rounds of latency $\sym{t_ar}$, which at decode's few rows of "
              "activations is most of it; zero on one GPU.",
              latex=r"t_{\mathrm{comm}}", title="Tensor-parallel all-reduces")
#: The overheads no byte count shows: per layer, and per step beside it.
#: ... split into the part no batch changes (per layer and per step) and the part each sequence adds (the line's slope)
OVERHEAD_FIXED = gl.L * gl.t_layer + gl.t_fixed
OVERHEAD = OVERHEAD_FIXED + gl.B * gl.t_seq
t_overhead = Step("t_overhead", OVERHEAD, "s",
                  r"What no byte count shows: $\sym{t_layer}$ in each of the $L$ layers (kernel launches, small kernels and host work grow "
                  r"with depth), a small time $\sym{t_fixed}$ per step beside it, and $\sym{t_seq}$ for each of the $B$ sequences (scheduling, "
                  "sampling, detokenisation: the engine's host work per request). All three come from the engine profile.",
                  latex=r"t_{\mathrm{over}}", title="Overheads per step")
t_step = Step("t_step", t_gemm.s + t_attn.s + t_comm.s + t_a2a.s + t_overhead.s, "s",
              "The step: each component at the slower of its memory and compute time, the all-reduces and all-to-alls, and the overheads "
              "that no byte count shows.",
              latex=r"t_{\mathrm{step}}", title="Step time")
throughput = Step("throughput", gl.B * gl.q / t_step.s, "token/s",
                  r"All $B$ sequences advance $q$ tokens per step.", latex=r"\Theta", title="Throughput")

#: The step-time model in reading order; a sheet includes these and adds its own.
DECODE_STEP: tuple[Step, ...] = (gpus, prompts, tokens, experts, params, weight_bytes, weights_gpu, kv_tok, kv_tok_gpu, kept, read, kv_step, index_step,
                                 state_step, kv_prompt, permute, bytes_gpu,
                                 flops_gemm, flops_attn, flops_index, flops_rec, flops_attn_prompt, t_memory, t_compute, t_gemm, t_attn,
                                 ar_rounds, t_comm, a2a_bytes, t_a2a,
                                 t_overhead, t_step,
                                 throughput)
#: The step model up to the bytes one GPU streams (weights and KV), for sheets that build on the bytes before the times.
BYTES_STEPS: tuple[Step, ...] = DECODE_STEP[: DECODE_STEP.index(bytes_gpu) + 1]
#: The all-reduces alone, for sheets that take a slice of DECODE_STEP and add them.
COMM_STEPS: tuple[Step, ...] = (ar_rounds, t_comm)

ROUTED_ALL = gl.L_moe * gl.E * gl.P_exp
memory_gpu = Step("memory_per_gpu", pr.mixed_weight_bytes(pr.tp_split(gl.P_total - ROUTED_ALL), ROUTED_ALL / pr.layout_gpus())
                  + gl.B * ((kept.s + gl.q) * kv_tok_gpu.s + (gl.T + gl.q) * gl.s_idx + gl.s_st / gl.n_tp), "B",
                  r"What must be resident per GPU: the weights (the embedding included) split over $\sym{n_tp}$ and replicated over the replicas, "
                  "the routed experts spread over every GPU of the layout, and for each of its own sequences what its layers keep of the cache "
                  "plus this step's tokens (a full window holds them until it drops its oldest), the indexer's keys of every token, and the "
                  "recurrent layers' state.",
                  latex=r"M_{\mathrm{GPU}}", title="Memory needed per GPU")
memory_fraction = Step("memory_fraction", memory_gpu.s / gl.C_mem, "1",
                       "Above 1 the model and its cache do not fit: more GPUs, a smaller batch or a shorter context.",
                       latex=r"M_{\mathrm{GPU}}/C_{\mathrm{HBM}}", title="Share of HBM used")
#: Does it fit: include after DECODE_STEP.
MEMORY_FIT: tuple[Step, ...] = (memory_gpu, memory_fraction)

u_mem = Step("bandwidth_utilisation", bytes_gpu.s / (gl.beta * t_step.s), "1",
             "The share of the datasheet bandwidth the step uses: its bytes over the step time (the MBU of the step model).",
             latex=r"U_{\mathrm{mem}}", title="Bandwidth utilisation")
u_flop = Step("flop_utilisation", (flops_gemm.s + flops_attn.s + flops_index.s + flops_rec.s + flops_attn_prompt.s) / (gl.pi * t_step.s), "1",
              "The share of the dense peak the step uses: its FLOPs over the step time (the MFU of the step model).",
              latex=r"U_{\mathrm{flop}}", title="Compute utilisation")
power_share = Step("power_share_model", sp.Min(1, gl.phi_0 + gl.a_mem * u_mem.s + gl.a_flop * u_flop.s), "1",
                   r"Board power follows the work, not the clock: a powered GPU draws $\sym{phi_0}$ of its TDP doing nothing, the memory "
                   r"system adds $\sym{a_mem}$ at full bandwidth and the tensor cores $\sym{a_flop}$ at the full peak, in proportion to "
                   "the step's use of each; the TDP caps the sum. The shares are fitted to measured board power (roofline validate).",
                   latex=r"\phi_{\mathrm{model}}", title="Board power as a share of the TDP")
#: The power model after the step: what a meter reads per GPU, as a share of the TDP (joules-per-token).
POWER_MODEL: tuple[Step, ...] = (u_mem, u_flop, power_share)

#: DeepSeek-V3 decode on H800 in FP8 at a 4K context under three layouts, for the EP rows of the serving sheets' tables:
#: tensor parallelism over one node; expert parallelism with data-parallel attention over 32 GPUs; and DeepSeek's own decode
#: deployment as its profile shows it (deepseek-ai/profile-data README, "Decoding": EP128, TP1, a 4K prompt, 128 requests per GPU).
LAYOUT_ROWS: tuple[Row, ...] = tuple(
    Row("", model="deepseek-v3", hardware="h800", weights="fp8", set={**layout, "context": "4096 token"})
    for layout in ({"tp": "8", "dp": "1", "ep": "1", "batch": "16"}, {"tp": "1", "dp": "32", "ep": "32", "batch": "128"},
                   {"tp": "1", "dp": "128", "ep": "128", "batch": "128"})
)
LAYOUT_NOTE = (r"DeepSeek-V3 in FP8 on H800 at a 4K context: TP8 on one node (it does not fit), then expert parallelism with one attention "
               r"replica per GPU over 32 GPUs and over 128 (DeepSeek's decode layout, 128 sequences per GPU). $B$ counts one replica's "
               "sequences, and $\\sym{throughput}$ one replica's tokens per second: per GPU at $\\sym{n_tp} = 1$, per eight GPUs in the TP8 row. "
               "Past one node of 8 the all-to-alls cross the 50 GB/s InfiniBand NIC of each GPU.")

DISPLAY_UNITS = {"weight_bytes": "GB", "kv_bytes_per_token": "kB/token", "kv_bytes_per_token_gpu": "kB/token", "kv_bytes_step": "GB", "kv_bytes_prompt": "GB", "flops_attention_prompt_gpu": "Tflop", "kept_context": "token",
                 "read_context": "token", "index_bytes_step": "GB", "state_bytes_step": "GB",
                 "weight_bytes_gpu": "GB", "bytes_per_gpu": "GB", "flops_gemm_gpu": "Tflop", "flops_attention_gpu": "Tflop", "flops_index": "Tflop", "flops_recurrent_gpu": "Tflop",
                 "t_memory": "ms", "t_compute": "ms", "t_gemm": "ms", "t_attention": "ms", "t_comm": "ms", "t_alltoall": "ms", "alltoall_bytes": "MB", "permute_bytes_gpu": "MB", "t_overhead": "ms", "t_step": "ms",
                 "throughput": "token/s", "memory_per_gpu": "GB", "params_read": "parameter"}

__all__ = ["A2A_BYTES", "A2A_LATENCY", "BYTES_STEPS", "COMM_BYTES", "COMM_LATENCY", "COMM_STEPS", "DECODE_STEP", "DISPLAY_UNITS", "FLOPS_GEMM_DENSE", "LAYOUT_NOTE", "LAYOUT_ROWS", "MEMORY_FIT", "OVERHEAD", "OVERHEAD_FIXED", "POWER_MODEL", "PROMPT_PER_SEQUENCE"]

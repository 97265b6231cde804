"""How fast can decode possibly go, and what keeps a real server above that floor?

Takeaway: t_floor = P * b_w / beta. Every GEMM weight (LM head included)
crosses HBM once per step; a real step adds the KV cache (growing with batch
and context), bandwidth below the datasheet, and a fixed per-step latency.
Assumes one decode token per sequence per step; MoE models read their top-k
experts only (batch 1; see moe-experts for larger batches).
"""

from derivations import glossary as gl
from derivations import primitives as pr
from derivations.engine import Row, Step, Table, derivation, solve
from derivations.symbols import Symbols

S = Symbols(parent=gl.GLOSSARY)

weight_bytes = Step("weight_bytes", pr.weight_bytes(gl.P_active, gl.b_w), "B",
                    "Every GEMM weight, the LM head included, crosses HBM once per step; the embedding is a gather and reads one row per token.",
                    latex=r"W", meaning="weight bytes streamed per decode step")
t_floor = Step("t_floor", pr.memory_time(weight_bytes.s), "s",
               "At batch 1 the arithmetic is negligible, so the floor is the time to stream the weights at datasheet bandwidth.",
               latex=r"t_{\mathrm{floor}}")
ceiling = Step("tokens_per_s_ceiling", gl.q / t_floor.s, "token/s",
               "One token per sequence per floor-time: the best a single stream can do.",
               latex=r"\tau_{\max}")
kv_tok = Step("kv_bytes_per_token", pr.kv_bytes_per_token(gl.e_kv, gl.b_kv), "B/token",
              "Each token leaves K and V (or the MLA latent) of every layer in the cache.",
              latex=r"s_{\mathrm{kv}}")
kv_step = Step("kv_bytes_step", gl.B * gl.T * kv_tok.s, "B",
               "Effect 1: each of the B sequences reads its whole cache of T tokens every step.",
               latex=r"W_{\mathrm{kv}}")
bytes_gpu = Step("bytes_per_gpu", pr.tp_split(weight_bytes.s + kv_step.s), "B",
                 "Tensor parallelism splits every weight matrix and the KV heads across the GPUs.",
                 latex=r"W_{\mathrm{GPU}}")
t_mem = Step("t_mem", bytes_gpu.s / (gl.eta_bw * gl.beta), "s",
             "Effect 2: streaming kernels reach only a fraction of the datasheet bandwidth.",
             latex=r"t_{\mathrm{mem}}")
t_step = Step("t_step", t_mem.s + gl.t_fixed, "s",
              "Effect 3: launches, collectives and host work add a fixed time per step that bytes do not explain.",
              latex=r"t_{\mathrm{step}}")
throughput = Step("throughput", gl.B * gl.q / t_step.s, "token/s",
                  "All sequences advance one token per step.", latex=r"\Theta")
over_floor = Step("step_over_floor", t_step.s / t_floor.s, "1",
                  "How far the modelled step sits above the single-GPU floor.", latex=r"t_{\mathrm{step}}/t_{\mathrm{floor}}")
kv_equal = solve("T_kv_equal", weight_bytes, kv_step, gl.T, "token",
                 "The context at which the batch's KV reads cost as much as the weights: beyond it the cache, not the model, sets the floor.",
                 latex=r"T_{=}")
resident = Step("memory_per_gpu", pr.tp_split(gl.P_total * gl.b_w + gl.B * (gl.T + gl.q) * kv_tok.s), "B",
                "What must be resident per GPU: all weights (every expert, the embedding) and the cache including this step's token.",
                latex=r"M_{\mathrm{GPU}}")
fit = Step("memory_fraction", resident.s / gl.C_mem, "1",
           "Above 1 the model and its cache do not fit: more GPUs or a smaller batch or context.",
           latex=r"M_{\mathrm{GPU}}/C_{\mathrm{HBM}}")

DERIVATION = derivation(
    "decode-floor",
    "The decode floor and what sits above it",
    "Decode reads every weight once per token. The answer turns that sentence into a millisecond floor, "
    "then accounts for the three things that keep a real server above it.",
    S,
    (weight_bytes, t_floor, ceiling, kv_tok, kv_step, bytes_gpu, t_mem, t_step, throughput, over_floor, kv_equal, resident, fit),
    ("weight_bytes", "t_floor", "tokens_per_s_ceiling", "kv_bytes_per_token", "t_step"),
    assumptions=(
        "Decode: each sequence adds q = 1 token per step, and at small batch the GEMMs are memory-bound (see ridge-coincidence for where that stops).",
        "Weights streamed per step are the GEMM operands one token touches (P_act): for dense models all of them; for MoE the top-k experts (true at batch 1 only).",
        "The embedding gather (one row of D weights per token) and activations are left out: they are under 0.1% of the bytes.",
        "The floor uses datasheet bandwidth; the step time uses eta_bw of it plus a fixed per-step time, both inputs printed below.",
        "Tensor parallelism divides bytes evenly over n_TP GPUs; its all-reduces are inside t_fixed.",
    ),
    takeaways=(
        "The floor is {t_floor} per step: {weight_bytes} of weights over the datasheet bandwidth, a ceiling of {tokens_per_s_ceiling} per sequence.",
        "The KV cache costs as much as the weights once B*T reaches the weight bytes over {kv_bytes_per_token}; at this batch that is a context of {T_kv_equal}.",
        "With the printed efficiency and fixed time, the modelled step is {t_step}, {step_over_floor} times the floor.",
    ),
    scoring=(
        "Counts the bytes from the config, including the LM head, excluding the embedding gather.",
        "Uses decimal TB/s and dense datasheet figures, and says so.",
        "Names all three effects (KV growth, achieved bandwidth, fixed latency) and sizes each.",
        "Checks that the model and its cache fit before quoting a speed; splits by tensor parallelism.",
        "Knows the floor is per sequence at batch 1 and that batching amortises the weights, not the KV.",
    ),
    limits=(
        "At large batch the GEMMs turn compute-bound (ridge-coincidence) and the step stops being a byte count.",
        "MoE models read more experts as the batch grows (moe-experts); the floor here is batch 1.",
        "Tensor parallelism adds all-reduces that grow with batch and do not shrink with more GPUs.",
        "Paged KV, prefix sharing and sliding-window attention change the KV term; speculative decoding changes q.",
    ),
    tables=(
        Table("Step time as batch and context grow", (
            Row("B=1, T=8192", set={"batch": "1", "context": "8192 token"}),
            Row("B=8, T=8192", set={"batch": "8", "context": "8192 token"}),
            Row("B=32, T=8192", set={"batch": "32", "context": "8192 token"}),
            Row("B=8, T=32768", set={"batch": "8", "context": "32768 token"}),
            Row("B=64, T=32768", set={"batch": "64", "context": "32768 token"}),
        ), ("kv_bytes_step", "t_step", "throughput", "memory_fraction")),
        Table("Tensor parallelism: Llama 3.1 70B", tuple(
            Row(f"TP={n}", model="llama-3.1-70b", set={"tp": str(n)}) for n in (1, 2, 4, 8)
        ), ("t_floor", "t_step", "memory_fraction"), note="t_floor is the single-GPU floor; t_step divides the bytes over the TP group."),
    ),
    display_units={"weight_bytes": "GB", "t_floor": "ms", "tokens_per_s_ceiling": "token/s", "kv_bytes_per_token": "kB/token",
                   "kv_bytes_step": "GB", "bytes_per_gpu": "GB", "t_mem": "ms", "t_step": "ms", "throughput": "token/s",
                   "T_kv_equal": "token", "memory_per_gpu": "GB"},
)

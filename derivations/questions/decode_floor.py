"""How fast can decode possibly go, and what keeps a real server above that floor?

Takeaway: t_floor = W / beta, with W the bytes of every GEMM weight the step
reads (LM head included; for MoE the experts the batch touches). A real step
adds the KV cache (growing with batch and context), bandwidth and FLOP rates
below the datasheet, tensor-parallel all-reduces and the overheads no byte
count shows (per layer and per step); at large batch the GEMMs turn
compute-bound. The step model is the shared one of derivations.physics.stepmodel; its
achieved rates, overheads and all-reduce latency come from the engine profile
(`fitted` to published measurements of real servers by default), whose implied
MBU range the sheet cites (derivations.physics.measured).
"""

import sympy as sp

from ..engine.declare import Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import measured as ms
from ..physics import primitives as pr
from ..physics import stepmodel as sm

S = Symbols(parent=gl.GLOSSARY)

t_floor = Step("t_floor", pr.memory_time(sm.weight_bytes.s), "s",
               "This step's weights streamed once at datasheet bandwidth on one GPU, with no arithmetic, cache or overhead "
               "(at batch 1, the classic decode floor).",
               latex=r"t_{\mathrm{floor}}", title="The floor")
ceiling = Step("tokens_per_s_ceiling", gl.q / t_floor.s, "token/s",
               r"One step of $q$ tokens per sequence per floor time: the best a single stream can do.",
               latex=r"\tau_{\max}", title="Tokens per second ceiling")
floor_layout = Step("t_floor_layout", pr.memory_time(sm.weights_gpu.s), "s",
                    r"The floor of the layout at hand: every GPU streams its own weights ($\sym{weight_bytes_gpu}$) at datasheet bandwidth, all "
                    r"at once, with no cache or overhead. On one GPU it is $\sym{t_floor}$; on $\sym{n_tp}$ GPUs of one replica, "
                    r"$\sym{t_floor}/\sym{n_tp}$.",
                    latex=r"t_{\mathrm{floor,GPU}}", title="The floor of this layout")
over_floor = Step("step_over_floor", sm.t_step.s / floor_layout.s, "1",
                  "How far the modelled step sits above the floor of its own layout: the same weights on the same GPUs, streamed at "
                  "datasheet bandwidth.", latex=r"t_{\mathrm{step}}/t_{\mathrm{floor,GPU}}",
                  title="Step time over the floor of its layout")
cache_step = Step("cache_bytes_step", sm.kv_step.s + sm.index_step.s + sm.state_step.s, "B",
                  "What the batch's sequences read of their own per step: the KV cache, and where the model has them its sparse layers' "
                  "indexer keys and its recurrent layers' state.",
                  latex=r"W_{\mathrm{seq}}", title="Per-sequence bytes per step")
kv_equal = solve("T_kv_equal", sm.weights_gpu, cache_step, gl.T, "token",
                 "The context at which the batch's cache reads cost as much as the weights: beyond it the cache, not the model, sets the floor.",
                 latex=r"T_{=}", keep=(sm.weights_gpu, sm.kv_tok_gpu), title="Context where the cache costs as much as the weights",
                 none="every layer attends through a window or keeps a fixed state, and at this batch what the sequences read stays below "
                      "the weights at any context")

# --- the smallest TP degree that fits, and its floor (issue 26) -----------------------------------------
mem_whole = Step("memory_whole_model", pr.mixed_weight_bytes(gl.P_total - sm.ROUTED_ALL, sm.ROUTED_ALL) + gl.B * ((sm.kept.s + gl.q) * sm.kv_tok.s + (gl.T + gl.q) * gl.s_idx + gl.s_st), "B",
                 "Everything that must be resident, over all GPUs together: every weight (all experts, the embedding) and each sequence's cache "
                 "(with its indexer keys and recurrent state, where the model has them).",
                 latex=r"M_{\mathrm{all}}", title="Memory the setup needs, all GPUs")
mem_split = Step("memory_split", mem_whole.s / gl.n_tp, "B",
                 r"Shared evenly by $\sym{n_tp}$ GPUs (the cache too, while the KV heads outnumber the GPUs).",
                 latex=r"M_{\mathrm{all}}/n_{\mathrm{TP}}", title="Memory per GPU, split evenly")
capacity = Step("capacity_per_gpu", gl.C_mem, "B", "One GPU's datasheet capacity.", latex=r"C_{\mathrm{HBM}}", title="Capacity per GPU")
tp_fit = solve("tp_fit", mem_split, capacity, gl.n_tp, "1",
               "The GPU count at which the setup just fills every GPU's memory: fewer GPUs cannot hold it.",
               latex=r"n_{\mathrm{TP,fit}}", title="GPUs the setup fills")
tp_min = Step("tp_min", sp.Max(1, 2 ** sp.ceiling(sp.log(tp_fit.s, 2))), "1",
              "The smallest tensor-parallel degree that fits: the next power of two at or above it (TP groups are 1, 2, 4, 8 GPUs).",
              latex=r"n_{\mathrm{TP,min}}", title="Smallest TP degree that fits", counts="GPUs", rounds="up")
floor_tp_min = Step("t_floor_tp_min", sm.weight_bytes.s / (tp_min.s * gl.beta), "s",
                    r"The floor on that many GPUs: each streams its $1/n_{\mathrm{TP,min}}$ of the weights at datasheet bandwidth, all at once.",
                    latex=r"t_{\mathrm{floor}}(n_{\mathrm{TP,min}})", title="Floor at the smallest TP degree that fits")
# --- 2N against 2N_matmul --------------------------------------------------------------------------------
floor_all = Step("t_floor_all_params", pr.memory_time(pr.mixed_weight_bytes(gl.P_total - sm.ROUTED_ALL, sm.ROUTED_ALL)), "s",
                 r"The floor if every parameter were read (the '2N' count, $N = P_{\mathrm{total}}$): the embedding counted whole.",
                 latex=r"t_{\mathrm{floor}}^{2N}", title="Floor counting every parameter")
floor_gap = Step("t_floor_2n_gap", pr.memory_time((gl.P_total - gl.P_matmul) * gl.b_w), "s",
                 r"The difference between the $2N$ and $2N_{\mathrm{matmul}}$ counts in time: the parameters that are no GEMM operand (the "
                 "embedding, a gather of one row per token; the norms), streamed at datasheet bandwidth.",
                 latex=r"\Delta t_{2N}", title="Floor gap between counting every parameter and the GEMM operands")

# --- the fixed latency in its parts: what the step pays whatever its bytes (issue 26) -------------------
lat_layers = Step("t_latency_layers", gl.L * gl.t_layer, "s",
                  r"The overhead per layer, $\sym{t_layer}$ in each of the $L$ layers: kernel launches, small kernels and host work that grow "
                  "with depth.",
                  latex=r"L\,t_{\mathrm{layer}}", title="Per-layer overhead, all layers")
lat_step = Step("t_latency_step", gl.t_fixed, "s",
                "The time paid once a step beside it: scheduling, sampling, the host's work between steps.",
                latex=r"t_{\mathrm{fixed}}", title="Per-step overhead")
lat_ar = Step("t_latency_allreduce", sm.COMM_LATENCY, "s",
              r"The all-reduces' latency: two per layer, $\sym{allreduce_rounds}$ rounds of $\sym{t_ar}$ each, whatever their bytes; "
              "zero on one GPU.",
              latex=r"2 L h_{\mathrm{AR}} t_{\mathrm{AR}}", title="All-reduce latency, all layers")
lat_a2a = Step("t_latency_alltoall", sm.A2A_LATENCY, "s",
               r"Under expert parallelism the all-to-alls' latency: a dispatch and a combine in each of the $L_{\mathrm{MoE}}$ MoE layers, "
               r"one round of $\sym{t_ar}$ each; zero at $\sym{n_ep} = 1$.",
               latex=r"t_{\mathrm{lat,a2a}}", title="All-to-all latency, all MoE layers")
lat_seq = Step("t_latency_sequences", gl.B * gl.t_seq, "s",
               r"Beside the fixed latency, the engine's host work for each of the $B$ sequences ($\sym{t_seq}$ each: scheduling, sampling, "
               "detokenisation): it grows with the batch, so it is not part of the fixed latency.",
               latex=r"B\,t_{\mathrm{seq}}", title="Per-sequence overhead, all sequences")
lat_fixed = Step("t_latency_fixed", lat_layers.s + lat_step.s + lat_ar.s + lat_a2a.s, "s",
                 "The fixed latency of a step: its parts added, the time the step takes above its bytes and FLOPs at any batch.",
                 latex=r"t_{0}", title="Fixed latency per step")
lat_share = Step("share_latency_fixed", lat_fixed.s / sm.t_step.s, "1",
                 "The fixed latency's share of the modelled step.", latex=r"t_{0}/t_{\mathrm{step}}", title="Fixed latency, share of the step")

_READ = sm.DECODE_STEP.index(sm.weight_bytes) + 1
STEPS = (*sm.DECODE_STEP[:_READ], t_floor, ceiling, *sm.DECODE_STEP[_READ:], floor_layout, over_floor, cache_step, kv_equal, *sm.MEMORY_FIT, *ms.MBU_STEPS,
         mem_whole, mem_split, capacity, tp_fit, tp_min, floor_tp_min, floor_all, floor_gap, lat_layers, lat_step, lat_ar, lat_a2a, lat_fixed, lat_seq, lat_share)

DERIVATION = derivation(
    "decode-floor",
    "The decode floor and what sits above it",
    "Decode reads every weight once per token. The answer turns that sentence into a millisecond floor, "
    "then accounts for the three things that keep a real server above it.",
    S,
    STEPS,
    ("weight_bytes", "t_floor", "tokens_per_s_ceiling", "kv_bytes_per_token", "t_step"),
    argument=(
        "weight_bytes", "t_floor", "tokens_per_s_ceiling", "kv_bytes_per_token", "kv_bytes_step", "bytes_per_gpu", "t_gemm",
        "t_attention", "t_comm", "t_step", "step_over_floor", "tp_min", "t_floor_tp_min", "t_floor_2n_gap",
    ),
    body_tables=(0, 1),
    answer=(
        "A decode step streams {weight_bytes} of weights, so the floor is {t_floor} per step: one sequence decodes at most "
        "{tokens_per_s_ceiling}.",
        "Three things keep a real server above it: the KV cache ({kv_bytes_per_token}, read back by every sequence every step), "
        "streaming below the datasheet bandwidth, and time per step that no byte count shows (launches, host work, "
        "all-reduces). With them the step is {t_step}, {step_over_floor} times the floor of its layout ({t_floor_layout}: each GPU "
        "streaming its own share of the weights).",
        "The smallest tensor-parallel degree that holds the setup is {tp_min}, with a floor of {t_floor_tp_min}; counting every parameter "
        "(2N) instead of only the GEMM operands would move the floor by {t_floor_2n_gap}.",
    ),
    assumptions=(
        r"Decode: each sequence adds $q$ tokens per step ($q = 1$ for plain decode) and reads its KV cache: all $T$ tokens in a full layer, "
        r"at most $\sym{W_win}$ in a layer with a sliding window or a chunk.",
        "Weights streamed per step are the GEMM operands the batch touches: for dense models all of them; for MoE the always-used weights plus, per MoE layer, "
        r"the expected number of distinct experts the $B q$ tokens pick under uniform top-$k$ routing (top-$k$ at one token, nearly all experts at large batch).",
        r"The embedding gather (one row of $D$ weights per token) and activation traffic are left out: under 0.1% of the bytes at moderate batch.",
        r"The floor uses datasheet bandwidth on one GPU; the step uses the achieved fractions $\eta_{\mathrm{bw}}$ and $\eta_{\mathrm{flop}}$, per component "
        "(weight GEMMs, attention) the slower of memory and compute, plus the TP all-reduces and the overheads no byte count shows (a time per "
        "layer and a small time per step), all printed below. The achieved rates, the overheads and the all-reduce latency come from the "
        "engine profile the sheet prints (fitted to published measurements of real servers by default).",
        "Real servers sit further from the floor than the datasheet suggests: the memory-bound decode records of the measurements dataset "
        "reach an implied MBU of {measured_mbu_low} to {measured_mbu_high} (median {measured_mbu_median}), so this step's bytes take "
        "{t_step_mbu_high} to {t_step_mbu_low} on such servers (median {t_step_mbu_median}), against {t_step} modelled.",
        "Tensor parallelism splits weights and FLOPs evenly; KV heads split only while there are more of them than GPUs (an MLA latent is on every GPU); "
        "each layer all-reduces its activations twice over the GPU-to-GPU link (ring algorithm). Data-parallel attention replicates the "
        "always-read weights and keeps each replica's cache on its own GPUs; expert parallelism spreads the routed experts and sends each "
        "token to its experts and back, two all-to-alls per MoE layer.",
    ),
    takeaways=(
        "The floor is {t_floor} per step: {weight_bytes} of weights over the datasheet bandwidth, a ceiling of {tokens_per_s_ceiling} per sequence.",
        "The KV cache costs as much as the weights once the context reaches {T_kv_equal} at this batch; each cached token holds {kv_bytes_per_token}.",
        "With the printed efficiencies and overheads, the modelled step is {t_step}, {step_over_floor} times the floor of its layout; the weight GEMMs take {t_gemm}, "
        "attention {t_attention}, the all-reduces {t_comm} and the overheads {t_overhead}.",
        "The fixed latency, {t_latency_fixed} of the step ({share_latency_fixed}), splits into the per-layer overhead {t_latency_layers} "
        "over the layers, the per-step overhead {t_latency_step} and the all-reduces' latency {t_latency_allreduce}.",
    ),
    scoring=(
        "Counts the bytes from the config, including the LM head, excluding the embedding gather.",
        "Uses decimal TB/s and dense datasheet figures, and says so.",
        "Names all three effects (KV growth, achieved bandwidth, the overheads per layer and per step) and sizes each.",
        "Checks that the model and its cache fit before quoting a speed; splits by tensor parallelism and knows KV heads replicate past their count.",
        "Knows the floor is per sequence at batch 1, that batching amortises the weights, not the KV, and that at large batch the GEMMs turn compute-bound.",
        "For MoE, counts the experts the whole batch touches, not the top-k of one token.",
        "Finds the smallest TP degree at which the model and its cache fit, and quotes the floor there, not a single-GPU floor that cannot run.",
        r"Says what $2N$ against $2N_{\mathrm{matmul}}$ costs in milliseconds: the embedding is a gather, not a stream.",
    ),
    limits=(
        "Uniform routing is the best case for MoE at small batch; skewed routing touches fewer experts.",
        "Components are summed, not overlapped; real kernels overlap some memory and compute and lose some to tile and wave quantization.",
        r"Each all-reduce is its bytes over the link (a ring's) plus $\sym{allreduce_rounds}$ rounds of $\sym{t_ar}$, the law of rounds following "
        "the chip's scale-up topology (one-shot on a switch or a full mesh, NCCL's ring over PCIe); an engine that fuses the all-reduce into a "
        "neighbouring kernel, or overlaps it, pays less.",
        "The implied MBU range is the model's bytes over measured steps: records whose engine reads fewer bytes than counted (or more) "
        "move it, and the overheads per layer and per step are inside it.",
        r"Paged KV and prefix sharing change the KV term; chunked attention is counted as a window of its chunk (an upper bound on what "
        r"a query reads); speculative decoding changes $q$.",
    ),
    tables=(
        Table("Step time as batch and context grow", tuple(
            Row("", set={"batch": str(b), "context": f"{t} token"}) for b, t in ((1, 8192), (8, 8192), (32, 8192), (8, 32768), (64, 32768), (1024, 128))
        ), ("kv_bytes_step", "t_memory", "t_compute", "t_step", "throughput", "memory_fraction")),
        Table(r"Tensor parallelism (sheet model, $B = 8$)", tuple(
            Row("", set={"tp": str(n), "batch": "8"}) for n in (1, 2, 4, 8, 16)
        ), ("kv_bytes_per_token_gpu", "t_comm", "t_latency_allreduce", "t_latency_fixed", "t_floor_layout", "t_step", "memory_fraction"),
            note=r"$\sym{t_floor_layout}$ is the floor of the row's layout, each GPU streaming its share of the weights; $\sym{t_step}$ divides weights and FLOPs over the TP group, KV heads only while there are more of them than GPUs."),
        Table("MoE: the batch reads more than its top-k experts (Mixtral 8x7B, DeepSeek-V3)", (
            *(Row("", model="mixtral-8x7b", set={"batch": str(b)}) for b in (1, 8, 64)),
            *(Row("", model="deepseek-v3", set={"tp": "8", "batch": str(b)}) for b in (1, 64)),
        ), ("experts_touched", "weight_bytes", "t_step", "memory_fraction")),
        Table("The smallest TP degree that fits, and its floor", (
            Row("", model="llama-3.1-8b"), Row("", model="llama-3.1-70b"), Row("", model="llama-3.1-405b"),
            Row("", model="mixtral-8x7b"), Row("", model="deepseek-v3"),
        ), ("memory_whole_model", "tp_fit", "tp_min", "t_floor", "t_floor_tp_min", "t_floor_2n_gap")),
        Table("Parallelism as a layout: DeepSeek-V3 decode on H800", sm.LAYOUT_ROWS,
              ("gpus", "weight_bytes_gpu", "kv_bytes_step", "t_alltoall", "t_step", "throughput", "memory_fraction"), note=sm.LAYOUT_NOTE),
    ),
    inputs=ms.MBU_INPUTS,
    plots=(Plot("step", "stack",
                "Where the step goes as batch and context grow: the weight GEMMs, attention over the KV cache, the tensor-parallel "
                "all-reduces and the engine's overheads (per layer and per step), stacked; the tick on each bar is the floor of its "
                "weights on its layout.",
                title="The step is {t_step}, {step_over_floor} times the {t_floor_layout} floor of its layout: the weights set the floor, "
                      "the KV cache and the overheads sit on top",
                y=("t_step",), split=("t_step",), vlines=("t_floor_layout",), table=0, answer=True,
                labels={"t_gemm": "weight GEMMs", "t_attention": "attention (KV cache)", "t_comm": "all-reduces", "t_overhead": "overheads",
                        "t_floor_layout": "floor"}),),
    display_units={**sm.DISPLAY_UNITS, **ms.DISPLAY_UNITS, "t_floor": "ms", "t_floor_layout": "ms", "tokens_per_s_ceiling": "token/s", "T_kv_equal": "token",
                   "memory_whole_model": "GB", "memory_split": "GB", "capacity_per_gpu": "GB", "t_floor_tp_min": "ms", "t_floor_all_params": "ms",
                   "t_floor_2n_gap": "ms", "t_latency_layers": "ms", "t_latency_step": "ms", "t_latency_allreduce": "ms", "t_latency_fixed": "ms", "t_latency_sequences": "ms",
                   "share_latency_fixed": "%"},
)

"""Step time is a line in batch, throughput a hyperbola with a ceiling: where is the knee, and what stops the batch first?

Takeaway: while the weight GEMMs are memory-bound the shared step model is the
line t(B) = t0 + B*c, with t0 the weights at achieved bandwidth plus the
overheads per layer and per step (and the all-reduces' latency) and c each sequence's attention (its
KV reads) and share of the all-reduce bytes. Throughput
B*q/t(B) rises towards the ceiling q/c and is half of it at the knee B = t0/c.
The KV cache sets both that ceiling (c is its reads) and the largest batch that
fits, (f*C - weights)/((T + q)*s_kv) rounded down. As context grows both fall
like 1/T and their ratio tends to t0*s/(room*x): weights (plus the overheads
in bytes) against the cache room, so whether the cache fills before the knee is
mostly weights against memory. Compute caps the line once the GEMMs turn
compute-bound (B = t_w/c_gemm), lowering the ceiling to q/(c + c_gemm).
Assumes the shared step model (derivations.physics.stepmodel); the line's MoE weights
are every expert (a batch at the knee touches nearly all of them).
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, at, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr
from ..physics import stepmodel as sm

S = Symbols(parent=gl.GLOSSARY)
f_use = S.add("f_use", "1", r"f_{\mathrm{use}}", "usable share of the HBM capacity (what the server may fill with weights and cache)")

#: vLLM's default gpu_memory_utilization: activations, CUDA graphs and fragmentation take the rest.
USABLE = Input("usable_fraction", f_use, "0.9", "1",
               "share of the datasheet HBM capacity the weights and the KV cache may fill (vLLM's default gpu_memory_utilization is 0.9)", "fraction")

# --- the largest batch whose cache fits (joules-per-token uses these too) ---

usable = Step("usable_memory", f_use * gl.C_mem, "B",
              "The datasheet capacity as printed (decimal bytes), times the share the server may fill; activations, graphs and fragments hold the rest.",
              latex=r"M_{\mathrm{use}}", title="Usable memory per GPU")
weights_resident = Step("weight_bytes_resident", sm.memory_gpu.expr.xreplace({gl.B: 0}), "B",
                        r"The part of $\sym{memory_per_gpu}$ no batch changes: every weight (all experts, the embedding) resident, split over the GPUs.",
                        latex=r"W_{\mathrm{res}}", title="Weights resident per GPU")
memory_alone = Step("memory_cached_tokens", weights_resident.s + gl.T * sm.kv_tok_gpu.s, "B",
                    r"The weights and $T$ cached tokens kept in every layer: $\sym{memory_per_gpu}$ as if one cache held them all.",
                    latex=r"M(T)", title=r"Memory with $T$ cached tokens")
tokens_fit = solve("tokens_fit", memory_alone, usable, gl.T, "token",
                   "The cached tokens (each kept in every layer) the usable memory holds beside the weights, however the sequences share them: "
                   "the context a lone sequence could reach if it had all the room and no layer had a window.",
                   latex=r"T_{\mathrm{fit}}", keep=(usable, weights_resident, sm.kv_tok_gpu), title="Cached tokens that fit", rounds="down",
                   none="the weights alone fill the usable memory, leaving no room for a cache: more GPUs (a larger TP degree) or fewer bytes per weight")
#: what one sequence holds: its kept tokens and this step's in every attention layer, its indexer keys and its recurrent state
SEQUENCE_BYTES = sm.memory_gpu.expr.diff(gl.B)
b_fit = Step("B_fit", tokens_fit.s * sm.kv_tok_gpu.s / SEQUENCE_BYTES, "1",
             r"The room the cached tokens that fit take, over what each sequence holds: its layers' cache of $\sym{kept_context} + q$ tokens "
             "with this step's ($T + q$ without windows), and where the model has them its indexer keys and its recurrent state: the batch "
             "that fills the usable memory exactly.",
             latex=r"B_{\mathrm{fit}}", title="Batch that fills the memory")
memory_whole = at("memory_whole_sequences", sm.memory_gpu, {gl.B: sp.floor(b_fit.s)},
                  "The memory needed by the whole sequences that fit: a sequence whose cache does not fit whole cannot decode.",
                  latex=r"M_{\mathrm{whole}}", title="Memory of the whole sequences that fit")
b_max = solve("B_max_kv", sm.memory_gpu, memory_whole, gl.B, "1",
              r"The largest batch whose cache fits: $\sym{B_fit}$ rounded down to whole sequences.",
              latex=r"B_{\max}", keep=(b_fit,), title="Largest batch whose cache fits",
              none="not one whole sequence's cache fits beside the weights at this context: a shorter context, more GPUs (a larger TP degree), "
                   "or fewer bytes per weight or per cached token")
throughput_fit = at("throughput_at_capacity", sm.throughput, {gl.B: b_max.s},
                    "The shared step model's throughput at the largest batch that fits.", latex=r"\Theta(B_{\max})",
                    title="Throughput at the largest batch that fits")
CAPACITY: tuple[Step, ...] = (usable, weights_resident, memory_alone, tokens_fit, b_fit, memory_whole, b_max, throughput_fit)

# --- the line t(B) = t0 + B c and its knee ---

weights_all = Step("weight_bytes_all_experts_gpu", pr.layout_weight_bytes(gl.E), "B",
                   r"The line's weights: every GEMM weight, every expert included, as the layout splits them over the GPUs. A dense model reads them all at any batch; "
                   "a MoE batch reads nearly every expert long before the knee (see the experts read there).",
                   latex=r"W_{\mathrm{all}}", title="Weights the line streams per GPU")
t_weights = Step("t_weights", pr.memory_time(weights_all.s, gl.eta_bw * gl.beta), "s",
                 "Those weights at the achieved bandwidth: the GEMMs' time while they are memory-bound.",
                 latex=r"t_{w}", title="Time to stream the weights")
t_zero = Step("t_zero", t_weights.s + sm.OVERHEAD_FIXED + sm.COMM_LATENCY + sm.A2A_LATENCY, "s",
              "The part of the step no batch changes: the weights, the overheads per layer and per step and the latency of the all-reduces "
              "and all-to-alls (zero on one GPU).",
              latex=r"t_{0}", title="Intercept of the line")
t_att_tok = Step("t_attention_per_token", pr.roofline_component_time(sm.flops_attn.s / (gl.B * sm.read.s), sm.kv_step.s / (gl.B * sm.read.s)),
                 "s/token",
                 r"Attention's roofline time per sequence per token it reads: its KV reads (or, where attention is compute-bound, its FLOPs). "
                 r"It is $\sym{t_attention}$ of the decode step divided by $B \sym{read_context}$.",
                 latex=r"x", title="Attention time per cached token")
t_comm_seq = Step("t_reduce_per_sequence", sm.COMM_BYTES / gl.B + sm.A2A_BYTES / gl.B, "s",
                  "Each sequence's share of the collectives' bytes: its activation rows cross the link twice per layer (zero on one GPU), "
                  "and under expert parallelism twice per MoE layer to its experts and back; their latency is the same at any batch, so it "
                  "sits in the intercept.",
                  latex=r"y", title="All-reduce time per sequence")
t_prompt_seq = Step("t_prompt_per_sequence", pr.roofline_component_time(sm.flops_attn_prompt.s / gl.B, sm.kv_prompt.s / gl.B), "s",
                    r"At load each sequence also brings its share of the new prompts, $S/\sym{N_out}$ tokens a step: their attention over "
                    "their own prefix and the cache they write; zero for the decode-only step.",
                    latex=r"c_{\mathrm{pre}}", title="Prompt attention per sequence")
#: what one sequence's indexer keys and recurrent state add on their own roofline (zero where the model has neither; the step
#: model takes them on attention's roofline, which is the same while both are memory-bound, as they are at decode)
T_SPARSE_AND_STATE = pr.roofline_component_time(sm.flops_index.expr / gl.B + sm.flops_rec.expr / gl.B,
                                                  sm.index_step.expr / gl.B + sm.state_step.expr / gl.B)
c_seq = Step("t_per_sequence", sm.read.s * t_att_tok.s + T_SPARSE_AND_STATE + t_prompt_seq.s + t_comm_seq.s + gl.t_seq, "s",
             r"The slope of the line: what one more sequence adds to the step, its cache reads (and its indexer's and recurrent state's, "
             r"where the model has them), its share of the prompts and of the collectives and the engine's host work per sequence "
             r"$\sym{t_seq}$. Batching shares the weights, never this.",
             latex=r"c", title="Slope of the line")
ceiling = Step("throughput_ceiling", gl.q / c_seq.s, "token/s",
               r"As $B$ grows the intercept is shared by ever more sequences and throughput tends to $q/c$: the ceiling is set by the slope, "
               "that is by each sequence's cache reads.",
               latex=r"\Theta_{\max}", title="Throughput ceiling")
line = Step("throughput_line", gl.B * gl.q / (t_zero.s + gl.B * c_seq.s), "token/s",
            r"$B q$ tokens per step of $t_{0} + B c$: a hyperbola rising towards the ceiling.", latex=r"\Theta_{\mathrm{line}}",
            title="Throughput on the line")
half = Step("half_ceiling", ceiling.s / 2, "token/s", "Half the ceiling: where the knee is by definition.", latex=r"\Theta_{\max}/2",
            title="Half the ceiling")
knee = solve("B_knee", line, half, gl.B, "1",
             r"The batch where throughput reaches half its ceiling: the batch whose sequences cost as much as the intercept, $t_{0} = B c$. "
             "Below it a bigger batch almost multiplies throughput; above it each doubling adds less.",
             latex=r"B_{\mathrm{knee}}", keep=(t_zero, c_seq), title="The knee")
experts_knee = Step("experts_at_knee", pr.experts_touched(knee.s * gl.q * gl.n_dp / gl.u_token), "1",
                    r"Experts one MoE layer reads at the knee under uniform top-$k$ routing; when it is close to $E$ the line's every-expert weights are right.",
                    latex=r"E_{\mathrm{knee}}", title="Experts read at the knee")

# --- where compute caps the line ---

c_gemm = Step("t_gemm_compute_per_sequence", pr.compute_time(sm.FLOPS_GEMM_DENSE / gl.B, gl.eta_flops * gl.pi), "s",
              "What each sequence adds to the GEMMs once they are compute-bound: its own weight FLOPs at the achieved peak (and, at load, "
              "those of its share of the prompts).",
              latex=r"c_{\mathrm{gemm}}", title="GEMM compute time per sequence")
t_gemm_cmp = Step("t_gemm_compute", gl.B * c_gemm.s, "s", "The weight GEMMs' compute time for the whole batch.",
                  latex=r"t_{\mathrm{gemm}}^{\mathrm{cmp}}", title="GEMM compute time")
b_compute = solve("B_compute", t_gemm_cmp, t_weights, gl.B, "1",
                  "The batch where the weight GEMMs turn compute-bound: up to it the step is the line; past it the GEMMs add a second slope.",
                  latex=r"B_{\mathrm{cmp}}", keep=(t_weights, c_gemm), title="Batch where compute binds")
ceiling_cmp = Step("throughput_ceiling_compute", gl.q / (c_seq.s + c_gemm.s), "token/s",
                   "The ceiling once the GEMMs are compute-bound: each sequence adds its arithmetic to its cache reads. It is the true limit of the step model.",
                   latex=r"\Theta_{\max}^{\mathrm{cmp}}", title="Ceiling with compute-bound GEMMs")
kv_over_cmp = Step("kv_over_compute", c_seq.s / c_gemm.s, "1",
                   "Above 1 the cache reads (and all-reduces) cost each sequence more than its arithmetic: the cache, not the tensor cores, sets the ceiling.",
                   latex=r"c/c_{\mathrm{gemm}}", title="Cache against compute per sequence")
t_kv_cmp = solve("T_kv_compute", c_seq, c_gemm, gl.T, "token",
                 "The context beyond which each sequence's cache reads cost more than its arithmetic.",
                 latex=r"T_{\mathrm{kv}=\mathrm{cmp}}", keep=(t_att_tok, t_comm_seq, c_gemm), title="Context where the cache outweighs compute",
                 none="the all-reduces alone cost each sequence more than its GEMM arithmetic, so the per-sequence cost beats compute at every context")
knee_over_cmp = Step("knee_over_compute", knee.s / b_compute.s, "1",
                     "Above 1 the GEMMs turn compute-bound before the knee, so the step model runs below the line there.",
                     latex=r"B_{\mathrm{knee}}/B_{\mathrm{cmp}}", title="Knee against the compute batch")

# --- which limit binds as context grows ---

knee_over_fit = Step("knee_over_capacity", knee.s / b_fit.s, "1",
                     "Above 1 the cache fills before the knee: the largest batch that fits cannot reach half the ceiling.",
                     latex=r"B_{\mathrm{knee}}/B_{\mathrm{fit}}", title="Knee against the batch that fits")
frac_at_fit = Step("ceiling_share_at_capacity", throughput_fit.s / ceiling.s, "1",
                   "The share of the ceiling the largest batch that fits reaches in the step model: what the cache leaves of the hyperbola.",
                   latex=r"\Theta(B_{\max})/\Theta_{\max}", title="Share of the ceiling the cache allows")
tokens_knee = Step("tokens_knee", t_zero.s / t_att_tok.s, "token",
                   "Cached tokens whose reads cost as much as the intercept: at long context the knee holds this many cached tokens in all.",
                   latex=r"T_{\mathrm{knee}}", title="Cached tokens at the knee, long context")
ratio_long = Step("knee_over_capacity_long", tokens_knee.s / tokens_fit.s, "1",
                  r"The limit of $\sym{knee_over_capacity}$ as the context grows: both batches fall like $1/T$, so what is left is the intercept "
                  "in cached tokens against the cached tokens that fit. Above 1 the cache binds at long context.",
                  latex=r"\rho_{\infty}", title="Knee against capacity at long context")
t_trade = solve("T_trade", knee, b_fit, gl.T, "token",
                "The context where the knee and the batch that fits trade places. The ratio between them moves monotonically from its value "
                "at short context to its long-context limit, so this is the only crossing.",
                latex=r"T_{\mathrm{trade}}", keep=(t_zero, t_att_tok, t_prompt_seq, t_comm_seq, tokens_fit), title="Context where the limits trade places",
                none="the knee and the batch that fits do not cross at any positive context: one of them is the smaller at every context "
                     "(or the weights leave no room for a cache)")

STEPS = (*sm.DECODE_STEP, *sm.MEMORY_FIT, *CAPACITY, weights_all, t_weights, t_zero, t_att_tok, t_prompt_seq, t_comm_seq, c_seq, ceiling, line, half, knee,
         experts_knee, c_gemm, t_gemm_cmp, b_compute, ceiling_cmp, kv_over_cmp, t_kv_cmp, knee_over_cmp,
         knee_over_fit, frac_at_fit, tokens_knee, ratio_long, t_trade)

CONTEXTS = (512, 2048, 8192, 32768, 131072)

DERIVATION = derivation(
    "batch-knee",
    "The batch knee: a line, a hyperbola and the cache that stops it",
    "Step time is a straight line in batch size, so throughput is a hyperbola with a ceiling. The answer finds the knee in closed form "
    "and shows why the ceiling usually comes from the KV cache, not the tensor cores.",
    S,
    STEPS,
    ("B_knee", "throughput_ceiling", "B_max_kv"),
    inputs=(USABLE,),
    argument=(
        "B_max_kv", "t_zero", "t_per_sequence", "throughput_ceiling", "throughput_line", "B_knee", "B_compute",
        "throughput_ceiling_compute", "knee_over_capacity", "ceiling_share_at_capacity", "T_trade",
    ),
    body_tables=(0, 1),
    answer=(
        "The step is a line, {t_zero} plus {t_per_sequence} per sequence, so throughput climbs towards a ceiling of "
        "{throughput_ceiling} and reaches half of it at the knee, a batch of {B_knee}.",
        "At this context the cache holds {B_max_kv}, which reach {ceiling_share_at_capacity} of the ceiling; the GEMMs would "
        "turn compute-bound only at {B_compute}.",
    ),
    assumptions=(
        r"Decode with the shared step model (@decode-floor): per component the slower of memory and compute at the achieved rates, "
        r"all-reduces over the link, and the overheads no byte count shows (per layer and per step, from the engine profile). $B$ counts sequences, each adding $q$ tokens per step and reading $T$ cached tokens.",
        r"The line $t(B) = t_{0} + B c$ is the step model while the weight GEMMs are memory-bound, that is up to $\sym{B_compute}$. "
        r"Its intercept streams every GEMM weight; for a MoE model that means every expert, which a batch at the knee reads almost all of.",
        r"The slope $c$ is attention's roofline time per sequence (its KV reads, or its FLOPs where MLA attention is compute-bound) plus its share of the all-reduces' "
        r"bytes; their latency is the same at any batch and sits in the intercept with the overheads.",
        r"Capacity is the datasheet figure as printed, in decimal bytes (the H100's 80 GB is physically 80 GiB; the sheet does not use the difference), "
        r"times the usable share $\sym{f_use}$. The weights resident are all of them, every expert and the embedding, split over the GPUs; "
        r"each sequence holds $T + q$ cached tokens.",
        r"The largest batch that fits is rounded down to whole sequences; closed forms that compare it with the knee use the unrounded $\sym{B_fit}$.",
    ),
    takeaways=(
        "The step is {t_zero} plus {t_per_sequence} per sequence, so throughput climbs towards a ceiling of {throughput_ceiling} "
        "and is half of it at the knee, a batch of {B_knee}.",
        "The cache holds {B_max_kv} sequences at this context, which reach {ceiling_share_at_capacity} of the ceiling. "
        "The knee over the batch that fits is {knee_over_capacity}: above 1 the cache fills before the knee, below 1 the batch can run past it.",
        "As the context grows both fall like one over the context and the ratio tends to {knee_over_capacity_long}: weights and overheads against the room for a cache. "
        "The context where the two limits trade places: {T_trade}.",
        "Compute is the other cap. Each sequence's cache reads (and all-reduces) cost {kv_over_compute} times its arithmetic; with compute-bound GEMMs "
        "the ceiling is {throughput_ceiling_compute}, and the GEMMs turn compute-bound at a batch of {B_compute}. The claims below give the verdict at three contexts.",
    ),
    scoring=(
        r"Writes $t(B) = t_{0} + B c$ from the bytes: weights in the intercept, each sequence's KV reads in the slope.",
        r"Gets the ceiling $q/c$ and the knee $B = t_{0}/c$ in closed form, and says the knee is where throughput is half the ceiling.",
        "Says the ceiling is set by the KV cache: the slope is cache reads, so a longer context lowers the ceiling and moves the knee in.",
        "Computes the batch that fits: usable capacity minus weights over each sequence's cache, stating decimal bytes and the usable share, rounded down.",
        "Compares the two: the batch that fits against the knee, and notices both scale as one over the context, so weights against memory decides.",
        "Checks compute last: the batch where the GEMMs turn compute-bound and how little that lowers the ceiling at long context.",
    ),
    limits=(
        "Real servers mix prefill into decode steps (chunked prefill), which adds compute to the slope at short context.",
        r"Paged KV caches waste part of the last page per sequence; prefix sharing lets sequences share cache and raises the batch that fits.",
        "Uniform routing is the best case for MoE; hot experts make the weights read per step lower at small batch.",
        r"At contexts of a few tokens the slope is almost nothing on one GPU, so the knee runs off to very large batches; activations and sampling, left out here, "
        "then set the slope.",
        "Latency targets usually cap the batch before either limit: past the knee a bigger batch buys little throughput and costs each sequence time per token.",
    ),
    tables=(
        Table("Throughput climbs the hyperbola (sheet model and context)", tuple(
            Row("", set={"batch": str(b)}) for b in (1, 4, 16, 64, 256, 1024)
        ), ("t_step", "throughput", "throughput_line", "memory_fraction"),
            note=r"The step model and the line agree while the GEMMs are memory-bound (for a dense model); past $\sym{B_compute}$ the step model falls below the line."),
        Table("As context grows, the knee and the batch that fits both fall", tuple(
            Row("", set={"context": f"{t} token"}) for t in CONTEXTS
        ), ("throughput_ceiling", "B_knee", "B_max_kv", "knee_over_capacity", "ceiling_share_at_capacity")),
        Table("Which limit binds: weights against memory", (
            Row("", model="llama-3.1-8b", hardware="h100-sxm", set={"tp": "1"}),
            Row("", model="llama-3.1-70b", hardware="h200", set={"tp": "2"}),
            Row("", model="llama-3.1-70b", hardware="h100-sxm", set={"tp": "4"}),
            Row("", model="llama-3.1-70b", hardware="h100-sxm", set={"tp": "8"}),
            Row("", model="mixtral-8x7b", hardware="h100-sxm", set={"tp": "2"}),
            Row("", model="deepseek-v3", hardware="h200", set={"tp": "16"}),
        ), ("B_knee", "B_max_kv", "knee_over_capacity_long", "T_trade", "experts_at_knee"),
            note=r"Above 1, $\sym{knee_over_capacity_long}$ says the cache fills before the knee at long context; $\sym{T_trade}$ is where the order changes. "
                 "On one GPU the slope has no per-sequence term but the cache, so the knee runs off at short context and a crossing can fall below one token: "
                 "an edge of the model, not of a server."),
        Table("Expert parallelism: the knee and the batch that fits per GPU (DeepSeek-V3 on H800)", sm.LAYOUT_ROWS,
              ("gpus", "B_knee", "B_max_kv", "t_step", "throughput", "memory_fraction"), note=sm.LAYOUT_NOTE),
        Table("Where compute caps the line", tuple(
            Row("", set={"context": f"{t} token"}) for t in (128, 512, 2048, 8192, 32768)
        ), ("B_compute", "knee_over_compute", "kv_over_compute", "throughput_ceiling", "throughput_ceiling_compute")),
    ),
    claims=(
        Claim("At this context the ceiling comes from the KV cache, not the tensor cores: compute-bound GEMMs lower it by less than a quarter.",
              "throughput_ceiling_compute", "throughput_ceiling", rel_tol=0.25),
        Claim("At a 32K-token context the ceiling comes from the KV cache: compute-bound GEMMs lower it by less than a quarter.",
              "throughput_ceiling_compute", "throughput_ceiling", rel_tol=0.25, where=Row("", set={"context": "32768 token"})),
        Claim("At a 512-token context the ceiling still comes from the KV cache: compute-bound GEMMs lower it by less than a quarter.",
              "throughput_ceiling_compute", "throughput_ceiling", rel_tol=0.25, where=Row("", set={"context": "512 token"})),
    ),
    hardware=("h200", "h100-sxm", "b200", "mi300x"),
    models=("llama-3.1-70b", "llama-3.1-8b", "mixtral-8x7b"),
    plots=(Plot("throughput", "sweep",
                r"Throughput against batch: the step model and the line rise towards the ceiling $\sym{throughput_ceiling}$, reach half of it at "
                r"the knee $\sym{B_knee}$, and stop where the cache fills, $\sym{B_max_kv}$; batches beyond it are shaded.",
                title="Throughput climbs towards {throughput_ceiling}, half of it at the knee, a batch of {B_knee}; "
                      "the cache stops the batch at {B_max_kv}",
                x="batch", y=("throughput", "throughput_line"), span=("1", "4096"), hlines=("throughput_ceiling", "half_ceiling"),
                vlines=("B_knee", "B_max_kv"), log="x", fits_up_to="B_max_kv", answer=True,
                labels={"throughput": "step model", "throughput_line": r"the line, $t_{0} + B c$"}),),
    defaults={"tp": "2"},
    display_units={"ceiling_share_at_capacity": "%", **sm.DISPLAY_UNITS, "usable_memory": "GB", "memory_whole_sequences": "GB", "throughput_at_capacity": "token/s",
                   "weight_bytes_all_experts_gpu": "GB", "t_weights": "ms", "t_zero": "ms",
                   "t_attention_per_token": "ns/token", "t_reduce_per_sequence": "ms", "t_per_sequence": "ms", "throughput_ceiling": "token/s",
                   "throughput_line": "token/s", "half_ceiling": "token/s", "t_gemm_compute_per_sequence": "ms", "t_gemm_compute": "ms",
                   "throughput_ceiling_compute": "token/s", "T_kv_compute": "token", "tokens_knee": "token", "tokens_fit": "token", "memory_cached_tokens": "GB", "weight_bytes_resident": "GB", "T_trade": "token"},
)

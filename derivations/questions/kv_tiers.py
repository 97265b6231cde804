"""Where the KV cache can live: HBM, host memory over the host link, local SSD.

Takeaway: a tier below HBM trades capacity for a slower link. A decode step that reads a share f of every
sequence's cache back over the host link each step (layer by layer, overlapped with the step) takes the
longer of the step and that read; the read grows with B T and the step's line with B T too, but at HBM's
rate, so the link binds past a batch-context product B T = t_0 / (f s/(eta_l beta_host) - c), in closed
form. A stored prefix is worth fetching when its cache comes back faster than the GEMMs and attention
recompute it: per token the fetch costs s/beta_tier and the recompute a + b S (attention's share grows
with the prompt), so past S = (s/beta_tier - a)/b fetching wins at every longer prompt, and where a token's
cache comes back faster than its GEMMs recompute it, fetching wins at every length.
"""

from __future__ import annotations

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr
from ..physics import stepmodel as sm
from . import batch_knee as bk
from . import disaggregation as dg
from . import slo_goodput as sg

S = Symbols(parent=bk.S)
f_off = S.add("f_off", "1", r"f_{\mathrm{off}}", "share of each sequence's KV cache kept in host memory and read back over the host link each step",
              share=True)
eta_l = S.add("eta_link", "1", r"\eta_{\mathrm{link}}", "achieved fraction of the host link's datasheet rate for cache copies", share=True)
M_host = S.add("M_host", "B", r"M_{\mathrm{host}}", "host memory per GPU set aside for the KV cache")
beta_ssd = S.add("beta_ssd", "B/s", r"\beta_{\mathrm{SSD}}", "local NVMe read bandwidth per GPU (each GPU reads its shard from its own drive)")

INPUTS = (
    Input("offload_fraction", f_off, "0.5", "1", "share of each sequence's KV cache kept in host memory and read back over the host link each "
          "decode step (0: all in HBM)", "share"),
    Input("link_efficiency", eta_l, "0.8", "1", "achieved fraction of the host link's datasheet rate (an H100's PCIe Gen5 x16 copies reach about "
          "49 to 53 of its 64 GB/s per direction; a GB300's NVLink-C2C about 192 to 210 of 225)", "fraction"),
    Input("host_memory", M_host, "250 GB", "B", "host memory per GPU for the cache (a DGX H100 or B200: 2 TB over 8 GPUs; a GB200 or GB300: "
          "480 GB of LPDDR5X per Grace, 240 GB per GPU)", "positive"),
    Input("ssd_bandwidth", beta_ssd, "7 GB/s", "B/s", "local NVMe read bandwidth per GPU (a DGX H100 or B200 has eight U.2 drives, one per GPU; "
          "a PCIe Gen4 data-center drive reads about 7 GB/s, a Gen5 one about 13 GB/s)", "positive"),
)

link = Step("host_link_rate", eta_l * gl.beta_host, "B/s",
            "The host link's datasheet rate per direction (PCIe to the CPU's DRAM, NVLink-C2C to a Grace's LPDDR5X) at the rate copies reach.",
            latex=r"\eta_{\mathrm{link}}\beta_{\mathrm{host}}", title="Host link rate achieved")
hbm_over_link = Step("hbm_over_link", gl.eta_bw * gl.beta / link.s, "1",
                     "How many times faster HBM streams the cache than the host link brings it back, each at its achieved rate.",
                     latex=r"\eta_{\mathrm{bw}}\beta/\eta_{\mathrm{link}}\beta_{\mathrm{host}}", title="HBM over the host link")
kv_off = Step("kv_bytes_offloaded_step", f_off * sm.kv_step.s, "B",
              r"The share $\sym{f_off}$ of the cache every sequence reads each step that lives in host memory, per GPU.",
              latex=r"W_{\mathrm{off}}", title="Offloaded cache bytes per step, per GPU")
t_link = Step("t_link", kv_off.s / link.s, "s",
              "Bringing that share back over the host link, once per step.", latex=r"t_{\mathrm{link}}", title="Host-link time per step")
t_tiered = Step("t_step_tiered", sp.Max(sm.t_step.s, t_link.s), "s",
                "The step with the offloaded share streamed back layer by layer while the GPU works: the longer of the step and the link.",
                latex=r"t_{\mathrm{step}}^{\mathrm{off}}", title="Decode step with an offloaded cache")
slowdown = Step("offload_slowdown", t_tiered.s / sm.t_step.s, "1",
                "The tiered step over the step with the whole cache in HBM: 1 while the link hides behind the step.",
                latex=r"t_{\mathrm{step}}^{\mathrm{off}}/t_{\mathrm{step}}", title="Slowdown from the offloaded cache")

# --- where the link binds: the step's line against the link's ---------------------------------------

link_seq = Step("t_link_per_sequence", f_off * sm.read.s * sm.kv_tok_gpu.s / link.s, "s",
                "The link time one sequence adds to a step: its offloaded share of the context it reads.",
                latex=r"t_{\mathrm{link,seq}}", title="Host-link time per sequence")
link_line = Step("t_link_line", gl.B * link_seq.s, "s", "The link's time for the batch.", latex=r"t_{\mathrm{link}}(B)",
                 title="Host-link time, as a line in the batch")
step_line = Step("t_step_line", bk.t_zero.s + gl.B * bk.c_seq.s, "s",
                 "The decode step as @batch-knee's line: the weights, overheads and latencies once, and each sequence's cache read, "
                 "reductions and per-sequence time per sequence.",
                 latex=r"t_{\mathrm{line}}(B)", title="Decode step, as a line in the batch")
b_bound = solve("B_offload_bound", link_line, step_line, gl.B, "1",
                "The batch past which reading the offloaded share takes longer than the rest of the step: every sequence adds more link "
                "time than step time, so past it the link sets the pace.",
                latex=r"B_{\mathrm{off}}", title="Batch past which the host link binds", keep=(bk.t_zero, bk.c_seq, link_seq),
                none="the link never binds at this context and share: one sequence's offloaded read takes less time than it adds to the step")
t_bound = solve("T_offload_bound", link_line, step_line, gl.T, "token",
                "The context past which the offloaded reads outlast the step at this batch.",
                latex=r"T_{\mathrm{off}}", title="Context past which the host link binds", keep=(bk.t_zero, bk.t_comm_seq, bk.t_prompt_seq, link),
                none="the link never binds at this batch and share: the offloaded reads grow more slowly with context than the step does")
f_max = solve("f_offload_max", link_line, step_line, f_off, "1",
              "The largest share of the cache that can live on the host before the link sets the pace, at this batch and context.",
              latex=r"f_{\max}", title="Largest share on the host before the link binds", keep=(bk.t_zero, bk.c_seq, link),
              none="the link would hide behind the step even with the whole cache on the host, or binds with none of it there")

# --- what the tiers hold --------------------------------------------------------------------------

seq_bytes = Step("sequence_bytes_gpu", bk.SEQUENCE_BYTES, "B", "The memory one more sequence takes on one GPU: its cache of the kept context.",
                 latex=r"m_{\mathrm{seq}}", title="Memory per sequence, per GPU")
room = Step("hbm_room_for_cache", sp.Max(0, bk.usable.s - bk.weights_resident.s), "B",
            "The usable HBM left for caches once the weights are in (none when the weights fill it).",
            latex=r"M_{\mathrm{room}}", title="HBM left for the cache, per GPU")
b_tiered = Step("B_fit_tiered", 1 / sp.Max((1 - f_off) * seq_bytes.s / room.s, f_off * seq_bytes.s / M_host), "1",
                r"The batch the two tiers hold together: HBM keeps $1 - \sym{f_off}$ of each sequence's cache and host memory "
                r"$\sym{f_off}$; the tier that fills first sets it.",
                latex=r"B_{\mathrm{fit}}^{\mathrm{off}}", title="Batch the tiers hold",
                none="the weights fill the usable HBM and the whole cache is on the host: nothing runs")
b_gain = Step("B_fit_gain", b_tiered.s / bk.b_fit.s, "1", "The batch the tiers hold over the batch HBM alone holds.",
              latex=r"B_{\mathrm{fit}}^{\mathrm{off}}/B_{\mathrm{fit}}", title="Batch gained by the host tier")

# --- a stored prefix: fetch it back or recompute it -------------------------------------------------

#: a stored prompt's cache on one GPU is what a disaggregated server hands over: its keys and values, its indexer keys (DSA)
#: and its recurrent state (@disaggregation's request bytes), and per token its keys, values and indexer keys
prefix_bytes = dg.kv_request
CACHE_PER_TOKEN = sm.kv_tok_gpu.s + gl.s_idx
t_recompute = Step("t_recompute", pr.roofline_time(sg.prefill_flops.s, sg.prefill_bytes.s + prefix_bytes.s, gl.eta_flops * gl.pi, gl.eta_bw * gl.beta),
                   "s", "Recomputing the prompt: its prefill alone at the achieved rates, every weight read and its cache written.",
                   latex=r"t_{\mathrm{recompute}}", title="Time to recompute a prompt's cache")
t_fetch_host = Step("t_fetch_host", prefix_bytes.s / link.s, "s", "Fetching that cache back from host memory over the host link.",
                    latex=r"t_{\mathrm{fetch,host}}", title="Time to fetch it from host memory")
t_fetch_ssd = Step("t_fetch_ssd", prefix_bytes.s / beta_ssd, "s", "Fetching it from local SSD (each GPU its own shard), NVMe being the slower hop.",
                   latex=r"t_{\mathrm{fetch,SSD}}", title="Time to fetch it from SSD")
recompute_tok = Step("t_recompute_per_token", pr.compute_time(sg.prefill_flops.s, gl.eta_flops * gl.pi) / gl.S, "s/token",
                     "Once the prefill is compute-bound (a few hundred tokens and up), each prompt token costs its GEMMs and its attention over "
                     "the tokens before it: a constant plus a part that grows with the prompt.",
                     latex=r"c_{\mathrm{recompute}}", title="Recompute time per prompt token")
fetch_tok_ssd = Step("t_fetch_ssd_per_token", CACHE_PER_TOKEN / beta_ssd, "s/token", "Fetching one token's cache from SSD.",
                     latex=r"c_{\mathrm{SSD}}", title="SSD fetch time per token")
fetch_tok_host = Step("t_fetch_host_per_token", CACHE_PER_TOKEN / link.s, "s/token", "Fetching one token's cache from host memory.",
                      latex=r"c_{\mathrm{host}}", title="Host fetch time per token")
s_ssd = solve("S_fetch_recompute", recompute_tok, fetch_tok_ssd, gl.S, "token",
              "The prompt length past which fetching its cache from SSD beats recomputing it: attention's cost per token grows with the "
              "prompt, the fetch's does not.",
              latex=r"S_{\mathrm{fetch}}", title="Prompt length past which an SSD fetch beats recomputing",
              none="fetching from SSD beats recomputing at every length: a token's cache comes back faster than its GEMMs recompute it")
s_host = solve("S_fetch_recompute_host", recompute_tok, fetch_tok_host, gl.S, "token",
               "The same for a fetch from host memory.", latex=r"S_{\mathrm{fetch,host}}", title="Prompt length past which a host fetch beats recomputing",
               none="fetching from host memory beats recomputing at every length: a token's cache comes back faster than its GEMMs recompute it")
fetch_gain = Step("fetch_speedup_ssd", t_recompute.s / t_fetch_ssd.s, "1",
                  "How many times faster the prompt's cache comes back from SSD than it is recomputed (below 1, recomputing is faster).",
                  latex=r"t_{\mathrm{recompute}}/t_{\mathrm{fetch,SSD}}", title="Recompute time over SSD fetch time")

STEPS = (*sm.DECODE_STEP, *sm.MEMORY_FIT, *bk.CAPACITY, bk.weights_all, bk.t_weights, bk.t_zero, bk.t_att_tok, bk.t_comm_seq, bk.t_prompt_seq, bk.c_seq,
         link, hbm_over_link, kv_off, t_link, t_tiered, slowdown, link_seq, link_line, step_line, b_bound, t_bound, f_max,
         seq_bytes, room, b_tiered, b_gain,
         sg.prefill_bytes, sg.prefill_flops, prefix_bytes, t_recompute, t_fetch_host, t_fetch_ssd, recompute_tok, fetch_tok_ssd, fetch_tok_host,
         s_ssd, s_host, fetch_gain)

DERIVATION = derivation(
    "kv-tiers",
    "KV tiers: where the cache can live, and when reading it back sets the pace",
    "Offloading the cache trades HBM for a slower link. The answer finds the context where reading it back bounds a decode step, "
    "and the prompt length where fetching a stored prefix beats recomputing it.",
    S,
    STEPS,
    ("T_offload_bound", "fetch_speedup_ssd"),
    inputs=(bk.USABLE, *INPUTS),
    defaults={"batch": "32", "context": "32768 token", "prompt_len": "32768 token"},
    argument=("t_step", "kv_bytes_offloaded_step", "t_link", "t_step_tiered", "t_step_line", "B_offload_bound", "T_offload_bound",
              "f_offload_max", "B_fit_tiered", "t_recompute", "t_fetch_host", "t_fetch_ssd", "S_fetch_recompute", "fetch_speedup_ssd"),
    body_tables=(0, 1),
    answer=(
        "With {offload_fraction} of every sequence's cache in host memory a decode step takes {t_step_tiered} (the longer of the "
        "host link's {t_link} and the step's {t_step} with the whole cache in HBM). At this batch the link sets the pace past a context "
        "of {T_offload_bound}; at this context, past a batch of {B_offload_bound}; keep at most {f_offload_max} of the cache on the host.",
        "The two tiers hold a batch of {B_fit_tiered}, {B_fit_gain} times what HBM alone holds. A stored prompt's cache comes back "
        "from host memory in {t_fetch_host} and from SSD in {t_fetch_ssd}, against {t_recompute} to recompute it (recompute time "
        "over SSD fetch time: {fetch_speedup_ssd}).",
        "Past a prompt of {S_fetch_recompute} fetching a stored prefix from SSD beats recomputing it.",
    ),
    assumptions=(
        r"Decode as the shared step model, one node of $\sym{n_tp}$ GPUs. A share $\sym{f_off}$ of every sequence's cache lives in host memory "
        "and comes back over the host link each step, layer by layer while the GPU works on the others (LMCache's and vLLM's offloading "
        "connectors pipeline it so): the step takes the longer of the two.",
        "The crossovers use @batch-knee's line for the step: the weights and fixed costs once, and a constant time per sequence, "
        "its cache read at HBM's achieved rate among it.",
        "The host link runs at the chip file's rate per direction (PCIe Gen5 x16 is 64 GB/s; a GB200's or GB300's NVLink-C2C, 225 GB/s "
        r"per GPU) times $\sym{eta_link}$; host memory and SSD are a stated host spec (inputs), a DGX node's by default.",
        "Recomputing a prompt is its prefill alone at the achieved rates; the crossover with a fetch compares compute-bound costs per "
        "token (below a few hundred tokens the prefill is bound by its weight reads, and a fetch of so few tokens wins anyway).",
    ),
    takeaways=(
        "A tier below HBM buys batch, not speed: the link is an order of magnitude slower than HBM, so only a small share of the cache "
        "can come back each step before the link sets the pace.",
        "Past a context of {T_offload_bound} at this batch the offloaded reads outlast the step; the bound falls as batch and share grow.",
        "A stored prefix is cheaper to fetch than to recompute wherever a token's cache comes back faster than its FLOPs run; from SSD "
        "that holds past a prompt of {S_fetch_recompute}, and attention's quadratic cost only widens the gap.",
    ),
    scoring=(
        "Writes the offloaded read as the share of every sequence's cache over the link, overlapped with the step, not added to it.",
        "Finds where the link binds by comparing per-sequence slopes: the link's per sequence against the step's.",
        "Counts what each tier holds: HBM after the weights, host memory as its own capacity, the tier that fills first sets the batch.",
        "Compares fetch and recompute per token: bytes over the tier's bandwidth against FLOPs over the achieved peak, with attention's part "
        "growing with the prompt.",
    ),
    limits=(
        "Engines keep a sequence's hot blocks in HBM and fetch the cold ones ahead of use; a share that is read every step is the worst case.",
        "The link is shared with other traffic (NICs, other GPUs behind the same switch); a PCIe switch shared by two GPUs halves each one's rate.",
        "SSD reads go through the host's file system or GPUDirect Storage; small blocks and a busy drive run below the sequential rate.",
        "Writes back to the lower tier (evictions) share the link in the other direction; the sheet counts reads only.",
    ),
    claims=(
        Claim("Offloading the cache trades HBM for a slower link: HBM streams the cache an order of magnitude faster than the host link "
              "brings it back.", "hbm_over_link", "10", at_least=True, rel_tol=0.0),
    ),
    tables=(
        Table("The tiers on each chip, per GPU", tuple(Row("", hardware=h) for h in ("h100-sxm", "h200", "b200", "b300", "gb200", "mi300x", "mi355x")),
              ("hbm_room_for_cache", "host_link_rate", "hbm_over_link", "t_link", "t_step_tiered", "B_fit_tiered", "B_fit_gain"),
              note="HBM: the usable capacity less the weights. Host link: the chip file's rate per direction times the link efficiency. "
                   "Host memory and SSD are the inputs (a DGX node's by default) on every row."),
        Table("As the share on the host grows", tuple(Row(f"{f} on the host", set={"offload_fraction": f}) for f in ("0", "0.1", "0.25", "0.5", "0.75", "1")),
              ("t_link", "t_step_tiered", "offload_slowdown", "T_offload_bound", "B_fit_tiered")),
        Table("Across chips, and Llama 3.1 70B on eight GPUs", tuple(Row("", hardware=h, model=m, set={"tp": tp}) for m, tp in (
            ("llama-3.1-8b", "1"), ("llama-2-7b", "1"), ("llama-3.1-70b", "8")) for h in ("h100-sxm", "h200", "b200", "gb300")),
              ("host_link_rate", "t_link", "T_offload_bound", "t_fetch_host", "t_recompute", "S_fetch_recompute")),
    ),
    hardware=("b200", "h100-sxm", "h200", "gb300"),
    models=("llama-3.1-8b", "llama-2-7b"),
    plots=(Plot("context", "sweep",
                r"The step and the host link as the context grows, at this batch and share: past $\sym{T_offload_bound}$ the link sets the pace.",
                title="Past a context of {T_offload_bound} reading the offloaded cache back takes longer than the step",
                x="context", y=("t_step", "t_link"), span=("1024", "262144"), vlines=("T_offload_bound",), answer=True, log="xy",
                labels={"context": "context", "t_step": "decode step, whole cache in HBM", "t_link": "offloaded share over the host link"}),),
    display_units={**bk.DERIVATION.display_units, "host_link_rate": "GB/s", "kv_bytes_offloaded_step": "GB", "t_link": "ms", "t_step_tiered": "ms",
                   "t_link_per_sequence": "ms", "t_link_line": "ms", "t_step_line": "ms", "sequence_bytes_gpu": "GB", "hbm_room_for_cache": "GB",
                   "t_recompute": "ms", "t_fetch_host": "ms", "t_fetch_ssd": "ms", "t_recompute_per_token": "us/token",
                   "t_fetch_ssd_per_token": "us/token", "t_fetch_host_per_token": "us/token",
                   "offload_fraction": "%", "f_offload_max": "%"},
)

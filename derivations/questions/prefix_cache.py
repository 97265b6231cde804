"""What a prefix cache hit buys, and what holding the cache costs.

Takeaway: a hit is a prompt you never compute. With the first h S tokens of an S-token prompt in the
cache, the prefill computes (1 - h) S tokens through the GEMMs, attends them over the whole prompt, and
reads the cached prefix instead of writing it: its time falls nearly as 1 - h while the GEMMs are
compute-bound, and under Poisson arrivals the queue ahead of every prompt shrinks with it, so a hit
saves more time to first token than its own prefill. In a server at load a prompt rides in steps that
read the weights anyway, so what it costs is its FLOPs: past the hit rate where the prompts' GPU time
per request falls below the decodes', h = 1 - N t_dec(B) / (B t_gemm(S)), decode binds the server and
more hits buy no throughput. The prefixes kept for future hits sit in HBM: n of them, h S tokens each,
take the cache of n h S / T sequences from the batch.
"""

from __future__ import annotations

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, at, derivation
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import measured as ms
from ..physics import primitives as pr
from ..physics import stepmodel as sm
from . import batch_knee as bk
from . import disaggregation as dg
from . import slo_goodput as sg

S = Symbols(parent=sg.S)
n_pfx = S.add("n_pfx", "1", r"n_{\mathrm{pfx}}", "distinct prefixes the cache keeps resident for future hits")

#: The hit rate and the prefixes kept are inputs: they are properties of the traffic and of the engine's eviction, not facts.
INPUTS = (
    Input("cached_prefixes", n_pfx, "16", "1", "distinct prefixes the cache keeps resident for future hits (system prompts, live "
          "conversations), each the cached share of a prompt", "count"),
)

hit = Step("hit_rate", gl.h_pfx, "1", "The share of each prompt whose KV cache the server already holds: an input, a property of the traffic.",
           latex=r"h_{\mathrm{pfx}}", title="Prefix cache hit rate")
computed = Step("prompt_tokens_computed", (1 - gl.h_pfx) * gl.S, "token",
                r"A prompt of $S$ tokens whose first $\sym{h_pfx} S$ are cached computes the rest: the tokens its GEMMs multiply.",
                latex=r"S_{\mathrm{new}}", title="Prompt tokens computed per request")
flops_cached = Step("prefill_flops_cached_gpu", pr.tp_split(pr.gemm_flops(gl.P_active, computed.s) + pr.cached_prefill_attention_flops()), "flop",
                    r"The new tokens through every GEMM, and their causal attention over the whole prompt (the cached prefix included): "
                    r"the whole prompt's attention less the cached prefix's own, split over the tensor-parallel GPUs.",
                    latex=r"F_{\mathrm{pf}}^{h}", title="Prefill FLOPs with the prefix cached, per GPU")
bytes_cached = Step("prefill_bytes_cached_gpu", sg.prefill_bytes.s + gl.S * sm.kv_tok_gpu.s, "B",
                    "Every weight once, and the prompt's whole cache once: the new tokens' keys and values written, the cached "
                    "prefix's read back for them to attend to. A hit moves the same bytes; it saves FLOPs.",
                    latex=r"W_{\mathrm{pf}}^{h}", title="Prefill bytes with the prefix cached, per GPU")
t_pf_cached = Step("t_prefill_cached", pr.roofline_time(flops_cached.s, bytes_cached.s, gl.eta_flops * gl.pi, gl.eta_bw * gl.beta), "s",
                   "The prompt prefilled alone at the achieved rates with its prefix cached: the longer of its FLOPs and its bytes.",
                   latex=r"t_{\mathrm{pf}}^{h}", title="Prefill time with the prefix cached")
t_pf_none = at("t_prefill_no_hit", t_pf_cached, {gl.h_pfx: 0}, "The same prompt with nothing cached: every token computed, every key and value written.",
               latex=r"t_{\mathrm{pf}}^{0}", title="Prefill time with nothing cached")
saved = Step("ttft_saved", t_pf_none.s - t_pf_cached.s, "s",
             "What a hit takes off a first token when the prompt runs alone: the prefill without the cache less the prefill with it "
             "(nothing while a prefill is memory-bound: a hit saves FLOPs, not bytes).",
             latex=r"\Delta t_{\mathrm{TTFT}}", title="Time to first token a hit saves",
             none="a hit takes nothing off a first token here: the hit rate is 0, or the prefill is memory-bound even with nothing "
                  "cached (its weight reads outlast its FLOPs), and a hit saves FLOPs, not bytes")
ttft_load_cached = Step("ttft_poisson_cached", t_pf_cached.s + pr.md1_mean_wait(sg.lam, t_pf_cached.s),
                        "s", "The mean time to first token under Poisson arrivals with the prefixes cached: the shorter prefill plus the "
                        "M/D/1 wait of @slo-goodput, which shrinks with it.",
                        latex=r"t_{\mathrm{TTFT}}^{h}", title="Mean TTFT under load with the prefix cached",
                        none="the prefill server is saturated even with the prefixes cached (utilisation at or above 1): the queue grows without bound")
ttft_load_none = at("ttft_poisson_no_hit", ttft_load_cached, {gl.h_pfx: 0}, "The same with nothing cached.",
                    latex=r"t_{\mathrm{TTFT}}^{0}", title="Mean TTFT under load with nothing cached",
                    none="the prefill server is saturated without the cache (utilisation at or above 1): every hit shortens an unbounded queue")
saved_load = Step("ttft_saved_load", ttft_load_none.s - ttft_load_cached.s, "s",
                  "What a hit takes off the mean first token under load: its own prefill and the shorter queue ahead of it.",
                  latex=r"\Delta t_{\mathrm{TTFT}}^{\lambda}", title="Mean TTFT a hit saves under load")

# --- the hit rate past which decode binds --------------------------------------------------------

t_prompt_gpu = Step("t_prompt_compute", pr.compute_time(pr.tp_split(pr.gemm_flops(gl.P_active, computed.s)), gl.eta_flops * gl.pi), "s",
                    "In a server at load a prompt rides in steps that read the weights anyway (chunked prefill), so its cost is its GEMM "
                    "FLOPs at the achieved peak (its attention comes on top): what the group spends on one request's prompt.",
                    latex=r"t_{\mathrm{prompt}}(h)", title="GPU time of one prompt at load")
dec_req_hit = Step("t_decode_per_request_pool", gl.N_out * dg.t_dec.s / (dg.served_dec.s * gl.u_token), "s",
                   r"What a request's decode costs the group: its $\sym{N_out}$ steps of a decode-only step at the batch the inter-token "
                   r"target serves, each shared by that batch.",
                   latex=r"t_{\mathrm{dec}}^{\mathrm{req}}(h)", title="GPU time of one request's decode")
t_dec_req = at("t_decode_per_request", dec_req_hit, {gl.h_pfx: 0},
               "The same with no prompt in the decode steps' collectives either: a request's decode, whatever the hit rate.",
               latex=r"t_{\mathrm{dec}}^{\mathrm{req}}", title="GPU time of one request's decode, prompts apart")
t_prompt_whole = at("t_prompt_compute_whole", t_prompt_gpu, {gl.h_pfx: 0},
                    "The same for a whole prompt, nothing cached: the prompt's GPU time falls from it as 1 - h.",
                    latex=r"t_{\mathrm{prompt}}(0)", title="GPU time of a whole prompt at load")
h_star = Step("h_decode_bound", 1 - t_dec_req.s / t_prompt_whole.s, "1",
              r"The hit rate where one prompt's GPU time, $(1 - h)\,t_{\mathrm{prompt}}(0)$, falls to one request's decode: "
              r"$h^{*} = 1 - t_{\mathrm{dec}}^{\mathrm{req}}/t_{\mathrm{prompt}}(0)$. Past it the decodes take more of the server than "
              "the prompts, and more hits buy no throughput.",
              latex=r"h^{*}", title="Hit rate past which decode binds",
              none="decode binds at every hit rate: a request's decode already takes more of the server than its whole prompt")
prefill_share = Step("prefill_share", t_prompt_gpu.s / (t_prompt_gpu.s + t_dec_req.s), "1",
                     "The prompts' share of the server's GPU time per request at this hit rate: above one half, prefill binds.",
                     latex=r"s_{\mathrm{pf}}", title="Prompts' share of the GPU time")

# --- what holding the prefixes costs the batch ---------------------------------------------------

pool = Step("prefix_pool_bytes_gpu", n_pfx * gl.h_pfx * gl.S * sm.kv_tok_gpu.s, "B",
            r"The $\sym{n_pfx}$ prefixes kept for future hits, $\sym{h_pfx} S$ tokens of cache each, on one GPU.",
            latex=r"W_{\mathrm{pfx}}", title="HBM the cached prefixes hold, per GPU")
b_lost = Step("B_lost", pool.s / bk.SEQUENCE_BYTES, "1",
              "Those bytes in sequences: the batch the held prefixes take from the cache.",
              latex=r"B_{\mathrm{lost}}", title="Batch the held prefixes take")
lost_share = Step("B_lost_share", b_lost.s / bk.b_fit.s, "1", "That share of the batch the memory holds without them.",
                  latex=r"B_{\mathrm{lost}}/B_{\mathrm{fit}}", title="Share of the batch the prefixes take")

STEPS = (*sg.STEPS, dg.c_decode, hit, computed, flops_cached, bytes_cached, t_pf_cached, t_pf_none, saved, ttft_load_cached, ttft_load_none, saved_load,
         t_prompt_gpu, dg.line_dec, dg.b_dec, dg.served_dec, dg.t_dec, dec_req_hit, t_dec_req, t_prompt_whole, h_star, prefill_share, pool, b_lost, lost_share)

HIT_RATES = ("0", "0.25", "0.5", "0.75", "0.9")

DERIVATION = derivation(
    "prefix-cache",
    "A prefix cache hit: the prompt you never compute, and the batch the cache takes",
    "A prefix cache hit is a prompt you never compute. The answer turns a hit rate into saved prefill time, finds the rate past "
    "which decode binds instead, and charges the cache for the batch it takes away.",
    S,
    STEPS,
    ("prompt_tokens_computed", "ttft_saved", "prefill_share", "B_lost"),
    inputs=(bk.USABLE, *sg.INPUTS, *INPUTS, ms.MEASURED_STEP),
    defaults={"prompt_len": "8192 token", "output_len": "256 token", "context": "8320 token", "prefix_hit_rate": "0.5"},
    argument=("prompt_tokens_computed", "t_prefill_cached", "t_prefill_no_hit", "ttft_saved", "ttft_saved_load", "t_prompt_compute",
              "t_decode_per_request", "h_decode_bound", "prefill_share", "prefix_pool_bytes_gpu", "B_lost"),
    body_tables=(0,),
    answer=(
        "At a {hit_rate} hit rate a prompt computes {prompt_tokens_computed}: its prefill falls from {t_prefill_no_hit} to "
        "{t_prefill_cached}, {ttft_saved} off every first token, and {ttft_saved_load} off the mean first token under load, "
        "where the queue shrinks too.",
        "The prompts now take {prefill_share} of the server's GPU time; past a hit rate of {h_decode_bound} a prompt costs less than a "
        "request's decode ({t_decode_per_request}): decode binds, and more hits buy no throughput. The {cached_prefixes} prefixes kept "
        "for hits hold {prefix_pool_bytes_gpu} per GPU, the cache of {B_lost} sequences.",
    ),
    assumptions=(
        r"The serving setup of @slo-goodput: $S$-token prompts, $\sym{N_out}$ output tokens, the decode steps as @batch-knee's line, "
        r"one prompt prefilled at a time per replica (M/D/1 under Poisson arrivals). A hit caches the first $\sym{h_pfx} S$ tokens "
        "of a prompt; the new tokens attend over the whole prompt, reading the cached keys and values back.",
        "The crossover charges a prompt its GEMM FLOPs at the achieved peak: at load it rides in steps that read the weights anyway. "
        "Its attention over the prefix comes on top, so the crossover is a lower bound on the hit rate decode needs.",
        r"The held prefixes are $\sym{n_pfx}$ resident caches of $\sym{h_pfx} S$ tokens each; a running sequence reads its own copy "
        "of its context (no shared-prefix attention kernel), so sharing saves compute, not decode reads.",
    ),
    takeaways=(
        "A hit is a prompt you never compute: the prefill falls nearly as 1 - h while its GEMMs are compute-bound.",
        "Under load a hit saves more than its own prefill ({ttft_saved_load} against {ttft_saved} here): the queue ahead of "
        "every prompt shrinks too.",
        "Past a hit rate of {h_decode_bound} the decodes bind the server; what hits then buy is latency, not throughput.",
        "The prefixes kept for hits cost the batch {B_lost} sequences: a cache that holds many distinct prefixes trades batch for hits.",
    ),
    scoring=(
        r"Counts the computed prompt as $(1 - h) S$ tokens through the GEMMs, with its attention over the whole prompt.",
        "Prices a hit under load through the queue (M/D/1), not only the prefill it skips.",
        "Compares a prompt's GPU time with a request's decode time, not with a step, and finds the hit rate where they cross.",
        "Charges the held prefixes to the batch: bytes of cache over bytes per sequence.",
    ),
    limits=(
        "The hit rate is an input: it depends on the traffic (shared system prompts, multi-turn chats, agents) and on how the engine "
        "evicts; a larger pool of prefixes raises it and costs batch, and the sheet does not model that trade beyond the pool's bytes.",
        "Shared-prefix attention kernels (cascade or hydragen attention) read a prefix once for the sequences that share it; the "
        "decode step here reads it per sequence.",
        "Pages: an engine caches whole blocks (vLLM's 16 tokens), so a hit is rounded down to a block.",
    ),
    claims=(
        Claim("Under load a hit saves more time to first token than its own prefill: the queue ahead of every prompt shrinks too.",
              "ttft_saved_load", "ttft_saved", at_least=True, rel_tol=0.0),
    ),
    tables=(
        Table("As the hit rate grows", tuple(Row(f"hit rate {h}", set={"prefix_hit_rate": h}) for h in HIT_RATES),
              ("prompt_tokens_computed", "t_prefill_cached", "ttft_poisson_cached", "prefill_share", "B_lost")),
        Table("Across models and chips", tuple(Row("", hardware=h, model=m) for m in ("llama-3.1-8b", "gpt-oss-120b") for h in ("h100-sxm", "b200")),
              ("ttft_saved", "ttft_saved_load", "h_decode_bound", "B_lost", "B_lost_share")),
        Table("As the prompt grows", tuple(Row(f"{s}-token prompt", set={"prompt_len": f"{s} token", "context": f"{s + 128} token"})
                                           for s in (1024, 4096, 8192, 32768)),
              ("ttft_saved", "h_decode_bound", "B_lost", "B_lost_share")),
    ),
    models=("llama-3.1-8b", "gpt-oss-120b"),
    plots=(Plot("hit-rate", "sweep",
                r"A prompt's GPU time at load falls with the hit rate; a request's decode time does not: past $\sym{h_decode_bound}$ "
                r"the decodes take more of the server.",
                title="Past a hit rate of {h_decode_bound} a request's decode costs more GPU time than its prompt",
                x="prefix_hit_rate", y=("t_prompt_compute", "t_prefill_cached"), span=("0", "0.95"), vlines=("h_decode_bound",),
                hlines=("t_decode_per_request",), answer=True, log="",
                labels={"prefix_hit_rate": "prefix cache hit rate", "t_prompt_compute": "prompt at load (its FLOPs)", "t_prefill_cached": "prompt alone (its prefill)",
                        "t_decode_per_request": "one request's decode"}),),
    display_units={**sg.DERIVATION.display_units, "t_per_sequence_decode": "ms", "prompt_tokens_computed": "token",
                   "prefill_flops_cached_gpu": "Tflop", "prefill_bytes_cached_gpu": "GB", "t_prefill_cached": "ms", "t_prefill_no_hit": "ms", "ttft_poisson_no_hit": "ms", "ttft_saved": "ms",
                   "ttft_poisson_cached": "ms", "ttft_saved_load": "ms", "t_prompt_compute": "ms", "t_prompt_compute_whole": "ms", "t_decode_per_request_pool": "ms", "t_step_decode_served": "ms", "t_step_decode_line": "ms",
                   "t_decode_per_request": "ms", "prefix_pool_bytes_gpu": "GB", "hit_rate": "%", "h_decode_bound": "%", "prefill_share": "%", "B_lost_share": "%"},
)

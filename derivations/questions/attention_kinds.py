"""Full, windowed, sparse and linear attention: what one sequence keeps and reads per decode step.

Takeaway: a full-attention layer keeps and reads every cached token; a windowed one at
most its window; a sparse (DSA) one keeps every token but reads only its indexer's
top-k, after the indexer has scored all of them in its small FP8 key; a linear-attention
or Mamba-2 layer keeps a fixed-size state and reads and writes it once a step. The state
costs less than the cache full attention would read in its place past
T = 2 s_st / (s_kv L_rec / L_att); the indexer costs as many bytes as the top-k attention
at T = W s_kv / s_idx and as many FLOPs at T = L_att N (w_k + w_v) W / e_idx.
"""

from __future__ import annotations

from ..engine.declare import Claim, Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr
from ..physics import stepmodel as sm

S = Symbols(parent=gl.GLOSSARY)

kv_layer = Step("kv_bytes_per_token_layer", sm.kv_tok.s / gl.L_att, "B/token",
                r"What one attention layer caches per token: the model's $\sym{kv_bytes_per_token}$ over its $\sym{L_att}$ attention layers.",
                latex=r"s_{\mathrm{kv,layer}}", title="KV-cache bytes per token, one layer")
seq_kv = Step("kv_bytes_sequence", sm.read.s * sm.kv_tok.s, "B",
              r"The KV cache one sequence's attention reads per decode step: in every attention layer the tokens it reads, "
              r"$\sym{read_context}$ on average.",
              latex=r"W_{\mathrm{kv,seq}}", title="KV cache one sequence reads per step")
seq_idx = Step("index_bytes_sequence", gl.T * gl.s_idx, "B",
               r"A sparse layer's indexer scores all $T$ cached tokens before the attention reads its top $\sym{W_win}$: one small FP8 key "
               "per token per sparse layer; zero without sparse attention.",
               latex=r"W_{\mathrm{idx,seq}}", title="Indexer keys one sequence reads per step")
seq_state = Step("state_bytes_sequence", 2 * gl.s_st, "B",
                 r"A linear-attention or Mamba-2 layer keeps a fixed-size state instead of a cache and reads and writes it once a step, "
                 r"whatever the context: $2\,\sym{s_st}$; zero for a model whose every layer attends.",
                 latex=r"W_{\mathrm{st,seq}}", title="Recurrent state one sequence reads and writes per step")
seq_read = Step("bytes_read_per_sequence", seq_kv.s + seq_idx.s + seq_state.s, "B",
                "What one sequence reads (and writes back) of its own per decode step: the part of the step that batching never shares.",
                latex=r"W_{\mathrm{seq}}", title="Bytes one sequence reads per step")
seq_held = Step("bytes_held_per_sequence", sm.kept.s * sm.kv_tok.s + gl.T * gl.s_idx + gl.s_st, "B",
                r"What one sequence holds in HBM: the tokens its attention layers keep ($\sym{kept_context}$ on average: a sliding window "
                "drops the rest, a sparse layer keeps them all), its indexer keys and its recurrent state.",
                latex=r"M_{\mathrm{seq}}", title="Bytes one sequence holds")
full_read = Step("bytes_read_full_attention", gl.T * kv_layer.s * (gl.L_att + gl.L_rec), "B",
                 r"The same model with full attention in every mixing layer, each caching $\sym{kv_bytes_per_token_layer}$ per token: all $T$ "
                 r"tokens in each of its $\sym{L_att} + \sym{L_rec}$ layers, read every step.",
                 latex=r"W_{\mathrm{full}}", title="Bytes full attention would read")
read_share = Step("read_over_full", seq_read.s / full_read.s, "1",
                  "What the model's layer kinds read per sequence, as a share of full attention's: 1 for a model whose every layer attends "
                  "to the whole context.",
                  latex=r"W_{\mathrm{seq}}/W_{\mathrm{full}}", title="Share of full attention's bytes")
full_state = Step("kv_bytes_recurrent_as_full", gl.T * kv_layer.s * gl.L_rec, "B",
                  r"What full attention would read per sequence in the $\sym{L_rec}$ layers that keep a state instead.",
                  latex=r"W_{\mathrm{full,rec}}", title="Cache the recurrent layers replace")
t_state = solve("T_state", seq_state, full_state, gl.T, "token",
                "The context past which a recurrent layer's fixed state costs a sequence less per step than the cache full attention would "
                "read in its place: below it the state is the dearer of the two.",
                latex=r"T_{\mathrm{st}}", title="Context where the state pays for itself",
                none="every layer attends: no layer keeps a state to weigh against a cache")
topk_bytes = Step("kv_bytes_topk", gl.k_top * sm.kv_tok.s, "B",
                  r"What a sparse model's attention reads per sequence once the context passes its top-$k$: $\sym{k_top}$ tokens in every "
                  "layer, however long the context.",
                  latex=r"W_{\mathrm{kv},k}", title="KV cache a top-k attention reads")
t_index = solve("T_index", seq_idx, topk_bytes, gl.T, "token",
                "The context where a sparse layer's indexer reads as many bytes per sequence as its top-k attention: past it the pass "
                "that picks the tokens costs more than reading them.",
                latex=r"T_{\mathrm{idx}}", title="Context where the indexer's bytes match the attention's",
                none="no sparse layer: without an indexer nothing costs as much as a top-k attention at any context")
attn_flops = Step("attention_flops_topk", gl.L_att * pr.decode_attention_flops(gl.k_top), "flop",
                  r"One query token against the top $\sym{k_top}$ tokens of every attention layer.",
                  latex=r"F_{\mathrm{att},k}", title="Top-k attention FLOPs per token")
index_flops = Step("index_flops_sequence", gl.q * pr.indexer_flops_per_token(), "flop",
                   r"The indexer scoring all $T$ cached tokens for one query token, over its $\sym{e_idx}$ channels.",
                   latex=r"F_{\mathrm{idx,seq}}", title="Indexer FLOPs per token")
t_index_flops = solve("T_index_flops", index_flops, attn_flops, gl.T, "token",
                      "The context where the indexer does as many FLOPs per token as the top-k attention it feeds.",
                      latex=r"T_{\mathrm{idx,flop}}", title="Context where the indexer's FLOPs match the attention's",
                      none="no sparse layer: without an indexer nothing does as many FLOPs as a top-k attention at any context")

STEPS = (sm.kv_tok, kv_layer, sm.kept, sm.read, seq_kv, seq_idx, seq_state, seq_read, seq_held, full_read, read_share, full_state, t_state,
         topk_bytes, t_index, attn_flops, index_flops, t_index_flops)

HYBRID = "qwen3-next-80b-a3b"
SPARSE = "deepseek-v3.2"
MAMBA = "nemotron-h-56b-base-8k"
KINDS = (("llama-3.1-70b", "Llama 3.1 70B: full attention"), ("gpt-oss-120b", "gpt-oss-120b: sliding windows"),
         ("deepseek-v3", "DeepSeek-V3: MLA"), (SPARSE, "DeepSeek-V3.2: sparse MLA"), (HYBRID, "Qwen3-Next: Gated DeltaNet"),
         (MAMBA, "Nemotron-H 56B: Mamba-2"))
LONG = "131072 token"

DERIVATION = derivation(
    "attention-kinds",
    "Full, windowed, sparse and linear attention: what one sequence keeps and reads",
    "The families of 2025 and 2026 mix layer kinds: sliding windows, DeepSeek's sparse attention, Gated DeltaNet and Mamba-2 "
    "layers that keep a fixed-size state. The answer counts what one sequence reads per decode step under each kind, and "
    "solves where each pays off.",
    S,
    STEPS,
    ("bytes_read_per_sequence", "read_over_full", "bytes_held_per_sequence"),
    argument=(
        "kv_bytes_per_token", "kv_bytes_sequence", "index_bytes_sequence", "state_bytes_sequence", "bytes_read_per_sequence",
        "bytes_held_per_sequence", "bytes_read_full_attention", "read_over_full", "T_state", "T_index", "T_index_flops",
    ),
    body_tables=(0, 1),
    answer=(
        "At this context one sequence reads {bytes_read_per_sequence} of its own per decode step: {kv_bytes_sequence} of KV cache, "
        "{index_bytes_sequence} of indexer keys and {state_bytes_sequence} of recurrent state read and written back. Full attention "
        "in every layer would read {bytes_read_full_attention}: the layer kinds cut it to {read_over_full}. It holds "
        "{bytes_held_per_sequence} in HBM.",
        "A recurrent layer's fixed state costs less than the cache full attention would read in its place past a context of "
        "{T_state}; the tables give each kind's crossover, and where a sparse layer's indexer costs as much as the attention it feeds.",
    ),
    assumptions=(
        r"Decode, one sequence, $q$ tokens a step, context $T$; the bytes are the model's whole cache (one copy, no tensor parallelism; "
        r"@decode-floor splits them over GPUs).",
        r"Full attention keeps and reads all $T$ tokens in a layer; a sliding window or a chunk (Llama 4) keeps and reads at most "
        r"$\sym{W_win}$; DeepSeek Sparse Attention keeps every token and reads the top $\sym{W_win}$ (index_topk) its indexer picks.",
        r"The indexer (DeepSeek-V3.2) caches one key of index_head_dim FP8 values and one FP32 scale per token per layer (132 bytes, "
        r"vLLM's DeepseekV32IndexerCache) and scores every cached token with its index_n_heads heads: "
        r"$\sym{kappa_attn}/2$ FLOPs per channel.",
        r"A Gated DeltaNet layer (Qwen3-Next) keeps a $d_{k} \times d_{v}$ state per value head and a short convolution's last inputs; a "
        r"Mamba-2 block (Nemotron-H) a head_dim $\times$ ssm_state_size state per head and its convolution's. Both in the model's "
        r"dtype (vLLM's mamba_cache_dtype auto), read and written once a step: $2\,\sym{s_st}$.",
        r"'Full attention in every layer' gives each of the $\sym{L_att} + \sym{L_rec}$ mixing layers the cache of one of the model's "
        r"attention layers: a counterfactual of the same width, not another checkpoint.",
    ),
    takeaways=(
        "One sequence reads {bytes_read_per_sequence} per step at this context, {read_over_full} of what full attention would read.",
        "The recurrent state pays for itself past {T_state}: below that context a hybrid reads more per sequence than full attention would.",
        "A sparse layer's indexer reads as many bytes as its top-k attention at {T_index} and does as many FLOPs at {T_index_flops}; "
        "past them the selection, not the attention, grows with the context (the crossovers table gives them for DeepSeek-V3.2).",
    ),
    scoring=(
        r"Separates what a layer keeps (capacity) from what it reads per query (bandwidth): equal for full and windowed attention, "
        "not for sparse attention, which keeps everything.",
        r"Counts a recurrent layer's state per sequence, read and written every step, whatever the context, and its convolution state.",
        r"Counts the DSA indexer's own cache (132 bytes per token per layer) and its FLOPs over the whole context.",
        r"Solves the crossovers in closed form: $T_{\mathrm{st}} = 2 s_{\mathrm{st}} L_{\mathrm{att}} / (s_{\mathrm{kv}} L_{\mathrm{rec}})$, "
        r"$T_{\mathrm{idx}} = W s_{\mathrm{kv}} / s_{\mathrm{idx}}$.",
    ),
    limits=(
        "A hybrid's prefill is linear in the prompt in its recurrent layers (chunked scans), which this decode count does not show (@prefill-decode-crossover).",
        "Engines pad a recurrent state to their page size and keep a few states per sequence for prefix caching and speculation; the count is one state.",
        "The indexer's top-k gather reads scattered 576-byte latents; short reads run below the streaming bandwidth.",
    ),
    tables=(
        Table("What one sequence reads per step, by layer kind (128K context)", tuple(Row(label, model=m, set={"context": LONG}) for m, label in KINDS),
              ("kv_bytes_sequence", "index_bytes_sequence", "state_bytes_sequence", "bytes_read_per_sequence", "read_over_full"),
              note="One copy of each model's cache, BF16."),
        Table("Where each kind pays off", tuple(Row(label, model=m) for m, label in KINDS if m in (HYBRID, MAMBA, SPARSE)),
              ("T_state", "T_index", "T_index_flops")),
        Table("What one sequence holds and reads as the context grows", tuple(
            Row("", set={"context": f"{t} token"}) for t in (1024, 8192, 32768, 131072, 1048576)
        ), ("bytes_held_per_sequence", "bytes_read_per_sequence", "bytes_read_full_attention", "read_over_full")),
    ),
    claims=(
        Claim("Qwen3-Next attends in one layer of four, so at long context it reads about a quarter of full attention's bytes.",
              "read_over_full", "0.25", rel_tol=0.05, where=Row("Qwen3-Next-80B-A3B, 128K context", model=HYBRID, set={"context": LONG})),
        Claim("DeepSeek-V3.2's attention reads at most 2,048 tokens a layer, whatever the context.",
              "read_context", "2048 token", rel_tol=0, where=Row("DeepSeek-V3.2, 128K context", model=SPARSE, set={"context": LONG})),
        Claim("At 128K tokens DeepSeek-V3.2's indexer reads more bytes than the attention it feeds.",
              "index_bytes_sequence", "kv_bytes_sequence", rel_tol=0, at_least=True,
              where=Row("DeepSeek-V3.2, 128K context", model=SPARSE, set={"context": LONG})),
    ),
    models=(HYBRID, SPARSE, MAMBA),
    plots=(Plot("bytes", "sweep",
                r"Bytes one sequence reads per decode step against context, with the model's layer kinds and with full attention in every "
                r"mixing layer: the fixed state costs more at short context and less past $\sym{T_state}$.",
                title="Past {T_state} of context, the recurrent layers' fixed state reads less than full attention would",
                x="context", y=("bytes_read_per_sequence", "bytes_read_full_attention"), span=("128 token", "1048576 token"),
                vlines=("T_state",), answer=True,
                labels={"bytes_read_per_sequence": "this model's layers", "bytes_read_full_attention": "full attention in every layer"}),
           Plot("kinds", "stack",
                "What one sequence reads per step at 128K tokens, by layer kind: the KV cache, a sparse layer's indexer keys and a "
                "recurrent layer's state.",
                title="At 128K tokens the layer kind, not the model's size, sets what each sequence reads",
                y=("kv_bytes_sequence", "index_bytes_sequence", "state_bytes_sequence"), table=0,
                labels={"kv_bytes_sequence": "KV cache", "index_bytes_sequence": "indexer keys", "state_bytes_sequence": "recurrent state"})),
    display_units={"kv_bytes_per_token": "kB/token", "kv_bytes_per_token_layer": "kB/token", "kv_bytes_sequence": "GB", "index_bytes_sequence": "GB",
                   "state_bytes_sequence": "GB", "bytes_read_per_sequence": "GB", "bytes_held_per_sequence": "GB", "bytes_read_full_attention": "GB",
                   "kv_bytes_recurrent_as_full": "GB", "kept_context": "token", "read_context": "token", "T_state": "token", "T_index": "token",
                   "T_index_flops": "token", "attention_flops_topk": "Gflop", "kv_bytes_topk": "MB", "index_flops_sequence": "Gflop", "read_over_full": "%"},
)

"""FlashAttention's HBM traffic: naive, the textbook count, and K/V kept in the last-level cache.

Takeaway: per head, naive attention moves (4nd + 4n^2) elements; FlashAttention's
textbook count, K and V re-read for each of n/B query blocks, moves
2nd(1 + n/B): a ratio of 2(n + d)B/(d(n + B)), exactly 2 when B = d, the block
FlashAttention-1's rule B_r = min(ceil(M/4d), d) picks once the shared memory
per SM M holds 4d^2 elements. When K and V stay in the last-level cache (L2)
while the query blocks sweep them, HBM sees each once: 4nd, a ratio of 1 + n/d.
That holds while every query block in flight finds its head's whole K and V in
the cache. One head, one layer, one sequence; forward pass. The counts do not
depend on the chip; the block rule and the cache argument do, and on a chip
without SMs or an L2 (a TPU) they are n/a with the reason.
"""

import sympy as sp

from ..engine.context import Input
from ..engine.declare import Claim, Plot, Row, Step, Table, derivation, solve
from ..engine.symbols import Symbols
from ..physics import glossary as gl
from ..physics import primitives as pr

S = Symbols(parent=gl.GLOSSARY)
n = S.add("n", "1", "n", "sequence length of one attention call (rows of Q, K and V)")
B_q = S.add("B_q", "1", r"B_{q}", "query rows per block asked for: the K and V sweep happens once per block")

b_el = Step("bytes_per_element", gl.b_a * gl.u_token, "B",
            "$Q$, $K$, $V$, $S$, $P$ and $O$ all at the math precision.", latex=r"b", title="Bytes per element")
d_head = Step("head_width", (gl.h_k + gl.h_v) / 2, "1",
              "Mean of the key and value widths per head: $\\sym{H}$ for GQA; for MLA, whose prefill attends over materialised "
              "$K$ ($\\sym{d_nope} + \\sym{d_R}$) and $V$ ($\\sym{d_v}$), their mean. $K$ and $V$ of one head are then $2nd$ elements, whatever the split.",
              latex=r"d", title="Head width")
blk = Step("query_block_used", sp.Min(B_q, n), "1",
           "A block cannot hold more rows than the sequence has: $B = \\min(B_q, n)$.", latex=r"B", title="Query block used")
io_naive = Step("io_naive", pr.attention_io_naive(n, d_head.s, b_el.s), "B",
                "Unfused: $Q$, $K$, $V$ read and $O$ written ($4nd$), the $n \\times n$ scores $S$ written then read for the softmax, "
                "$P$ written then read for $PV$ ($4n^2$).",
                latex=r"Q_{\mathrm{naive}}", title="Naive HBM traffic")
io_text = Step("io_textbook", pr.attention_io_textbook(n, blk.s, d_head.s, b_el.s), "B",
               "FlashAttention's textbook count: $Q$ read and $O$ written once, $K$ and $V$ re-read for each of the $n/B$ query blocks; "
               "$S$ and $P$ never leave the chip. With $B \\le n$ it never falls below reading $Q$, $K$, $V$ and $O$ once.",
               latex=r"Q_{\mathrm{text}}", title="Textbook FlashAttention traffic")
io_l2 = Step("io_l2", pr.attention_io_resident(n, d_head.s, b_el.s), "B",
             "When $K$ and $V$ stay on chip while all the query blocks of a head sweep them, HBM sees each of $Q$, $K$, $V$ and $O$ once: "
             "the floor under any count.",
             latex=r"Q_{\mathrm{L2}}", title="Traffic with K and V read once")
r_text = Step("ratio_textbook", 2 * (n + d_head.s) * blk.s / (d_head.s * (n + blk.s)), "1",
              "$Q_{\\mathrm{naive}}/Q_{\\mathrm{text}}$, simplified: a function of $n$, $d$ and $B$ only (tests check it equals the ratio of the two counts).",
              latex=r"\rho_{\mathrm{text}}", title="Naive over textbook")
r_l2 = Step("ratio_l2", 1 + n / d_head.s, "1",
            "$Q_{\\mathrm{naive}}/Q_{\\mathrm{L2}}$, simplified: $1 + n/d$, growing with the sequence because the $n^2$ score traffic is gone and nothing is re-read.",
            latex=r"\rho_{\mathrm{L2}}", title="Naive over read-once")
bq_2x = Step("B_q_2x", d_head.s, "1",
             "The query block at which the textbook count is exactly half the naive one: $2nd(1 + n/B) = (4nd + 4n^2)/2$ gives $B = d$, "
             "at every sequence length (tests check it against the equation).",
             latex=r"B^{2\times}", title="Query block for exactly 2x")
smem = Step("shared_memory_per_sm", gl.M_smem, "B",
            "This chip's shared memory per SM, from its spec (binary KiB, as NVIDIA means its KB here).", latex=r"M", title="Shared memory per SM")
bc = Step("block_cols_fa1", pr.flash_block_columns(smem.s, d_head.s, b_el.s), "1",
          "FlashAttention-1 sizes its blocks from this chip's shared memory per SM: $B_c = M/(4d)$ elements (before rounding up).",
          latex=r"M/(4d)", title="FlashAttention-1 key block")
br = Step("block_rows_fa1", sp.Min(pr.flash_block_rows(smem.s, d_head.s, b_el.s), n), "1",
          "and $B_r = \\min(\\lceil M/(4d) \\rceil, d)$: the query block is capped at $d$, and at $n$ like any block.", latex=r"B_{r}", title="FlashAttention-1 query block")
smem_2x = solve("smem_2x", bc, bq_2x, gl.M_smem, "B",
                "The shared memory per SM at which that rule reaches $B_r = d$, and so the 2x: $4d^2$ elements.",
                latex=r"M^{2\times}", title="Shared memory for the 2x block")
io_fa1 = Step("io_textbook_fa1", pr.attention_io_textbook(n, br.s, d_head.s, b_el.s), "B",
              "The textbook count at FlashAttention-1's own block on this chip.", latex=r"Q_{\mathrm{FA1}}", title="Textbook traffic at FlashAttention-1's block")
r_fa1 = Step("ratio_textbook_fa1", 2 * (n + d_head.s) * br.s / (d_head.s * (n + br.s)), "1",
             "$Q_{\\mathrm{naive}}/Q_{\\mathrm{FA1}}$, the same closed form at $B = B_r$.", latex=r"\rho_{\mathrm{FA1}}", title="Naive over FlashAttention-1's textbook count")
kv_head = Step("kv_bytes_per_head", pr.attention_kv_bytes_per_head(n, d_head.s, b_el.s), "B",
               "$K$ and $V$ of one head: what must stay in the cache while its query blocks sweep it.", latex=r"W_{kv}", title="K and V of one head")
l2_size = Step("l2_size", gl.M_llc, "B",
               "The chip's last-level cache, the one that can hold $K$ and $V$ between query blocks: L2 on NVIDIA, the Infinity Cache on AMD.",
               latex=r"C", title="Last-level cache")
n_l2 = solve("n_l2_max", kv_head, l2_size, n, "1",
             "The sequence length beyond which even one head's $K$ and $V$ overflow the cache, and the traffic drifts back towards the textbook count.",
             latex=r"n_{\max}", title="Longest sequence whose head fits")
in_flight = Step("heads_in_flight", pr.attention_heads_in_flight(n, blk.s), "1",
                 "One query block per SM and the blocks of a head scheduled together: the resident blocks cover "
                 "$\\lceil \\sym{n_blk} / \\lceil n/B \\rceil \\rceil$ heads, a head partly in flight counted whole, "
                 "and no more than the layer's $\\sym{N}$ heads.",
                 latex=r"h", title="Heads in flight")
working = Step("l2_working_set", in_flight.s * kv_head.s, "B",
               "Every query block in flight needs its own head's whole $K$ and $V$ resident: $h$ heads of $2nd$ elements each, at least one head.",
               latex=r"W_{\mathrm{L2}}", title="Working set in the last-level cache")
fraction = Step("l2_fraction", working.s / l2_size.s, "1",
                "Below 1 the working set fits and $K$ and $V$ are read from HBM about once; above 1 they are re-read.",
                latex=r"W_{\mathrm{L2}}/C", title="Share of the cache the working set needs")

#: the teaser's own setting: Llama 3.1 8B, n = 8192, 128-row query blocks
TEASER = Row("", model="llama-3.1-8b", set={"seq_len": "8192", "query_block": "128"})
AT_8K = {"seq_len": "8192"}

DERIVATION = derivation(
    "flash-attention-io",
    "FlashAttention's HBM traffic: the textbook count and the real one",
    "The textbook IO count says FlashAttention re-reads K and V once per query block, which at 8K is only 2x better than naive. "
    "The answer explains why the real HBM number is 65x lower, and which cache makes the difference.",
    S,
    (b_el, d_head, blk, io_naive, io_text, io_l2, r_text, r_l2, bq_2x, smem, bc, br, smem_2x, io_fa1, r_fa1,
     kv_head, l2_size, n_l2, in_flight, working, fraction),
    ("io_naive", "io_textbook", "io_l2", "ratio_textbook", "ratio_l2"),
    inputs=(
        Input("seq_len", n, "8192", "1", "sequence length of one attention call (prefill or training)", "count"),
        Input("query_block", B_q, "128", "1",
              "query rows per block for the textbook count, clamped to $n$ (128: FlashAttention-2's forward tile at $d = 64$ and $128$); "
              "FlashAttention-1's own rule is worked out from the chip", "count"),
    ),
    argument=(
        "io_naive", "io_textbook", "io_l2", "ratio_textbook", "ratio_l2", "block_rows_fa1", "smem_2x", "kv_bytes_per_head",
        "l2_size", "n_l2_max", "l2_fraction",
    ),
    body_tables=(0, 1),
    answer=(
        "Per head at this sequence length naive attention moves {io_naive} through HBM and the textbook FlashAttention count "
        "{io_textbook}: only {ratio_textbook} times less.",
        "With K and V kept in the last-level cache between query blocks the traffic is {io_l2}, {ratio_l2} times below naive: "
        "the L2, not shared memory, makes the difference.",
    ),
    assumptions=(
        "One head of one sequence, forward pass, no causal mask; counts are in elements of the math precision ($b$ bytes each). "
        "Every head and layer is alike, so the ratios hold for the whole model.",
        "$d$ is the head width: $\\sym{H}$ for GQA models; for MLA prefill, which attends over materialised per-head $K$ "
        "($\\sym{d_nope} + \\sym{d_R}$) and $V$ ($\\sym{d_v}$), the mean of the two, so that $K$ and $V$ of a head are $2nd$ elements.",
        "Naive: three kernels ($QK^\\top$, softmax, $PV$) that write $S$ and $P$ to HBM and read them back: $4nd + 4n^2$ elements. "
        "A fused softmax would save one $n^2$ round trip; the $n^2$ terms still dominate.",
        "Textbook FlashAttention (Dao et al. 2022; the FlashAttention-2 loop order): an outer loop over query blocks keeps $Q$ and $O$ on chip, "
        "an inner loop streams all of $K$ and $V$ per block. $n/B$ counts a partial last block as a fraction; $B = \\min(B_q, n)$, "
        "so the count never falls below reading $Q$, $K$, $V$ and $O$ once.",
        "The headline textbook count uses the query_block input (default 128 rows, FlashAttention-2's forward tile at $d = 64$ and $128$); "
        "FlashAttention-1's rule $B_r = \\min(\\lceil M/(4d) \\rceil, d)$, from this chip's shared memory per SM, gives the second count "
        "$Q_{\\mathrm{FA1}}$. They agree when $B_q = d$ and the chip's shared memory holds $4d^2$ elements.",
        "Shared memory per SM comes from the hardware spec, in binary KiB as NVIDIA means its KB there (an input cannot override it: "
        "write a hardware file to try another size).",
        "Kept on chip: consecutive thread blocks work on the query blocks of the same head, so after the first block reads $K$ and $V$ from HBM "
        "the others hit in the last-level cache: L2 on NVIDIA; on AMD the Infinity Cache, the memory-side cache all XCDs share in front of HBM "
        "(the per-XCD L2 is too small for a head's $K$ and $V$ at long sequences).",
        "Heads in flight: one query block per SM (CU) at a time, blocks scheduled head by head; each block needs its head's whole $K$ and $V$. "
        "$K$ and $V$ are counted per query head (GQA heads sharing a KV head would need less).",
        "A TPU has neither SMs nor an L2: its TensorCore runs a kernel's blocks in sequence out of VMEM, a scratchpad the kernel fills itself, "
        "so the block rule and the cache argument are n/a there; the counts still hold.",
    ),
    takeaways=(
        "Per head at $n$ = {seq_len}, naive attention moves {io_naive}; the textbook FlashAttention count at $B$ = {query_block_used} "
        "query rows per block is {io_textbook}; naive over textbook is {ratio_textbook}.",
        "The textbook ratio is $2(n + d)B/(d(n + B))$, exactly 2 at $B = d$ = {B_q_2x} whatever $n$; FlashAttention-1's rule "
        "$B_r = \\min(\\lceil M/(4d) \\rceil, d)$ reaches that block once the shared memory per SM holds $4d^2$ elements, {smem_2x}.",
        "FlashAttention-1's own block on this chip: $B_r$ = {block_rows_fa1}.",
        "With $K$ and $V$ read from HBM once the traffic is {io_l2}; naive over that is {ratio_l2}, which is $1 + n/d$ and grows with the sequence.",
        "What keeps $K$ and $V$ between query blocks is the last-level cache (L2), not shared memory. "
        "The share of it the heads in flight need: {l2_fraction}.",
        "The traffic drifts back towards the textbook count once even one head's $K$ and $V$ overflow that cache, beyond $n$ = {n_l2_max}.",
    ),
    scoring=(
        "Counts naive IO with the $n^2$ score and probability matrices written and read, and sees they dominate at long sequences.",
        "Writes the textbook count as $2nd(1 + n/B)$ and gets the 2x at 8K from $B = d$, naming where $B$ comes from "
        "(shared memory per SM, FlashAttention-1's block rule).",
        "Explains the 65x: each query block re-reads $K$ and $V$, but from L2, so HBM sees them once: ratio $1 + n/d$.",
        "Sizes the L2 working set: every block in flight needs its head's whole $K$ and $V$, so heads in flight times $2nd$ elements, "
        "and says when it stops fitting.",
        "Notes that the ratio grows with $n$ and shrinks with $d$, and that the 2x textbook figure does not depend on $n$ at all when $B = d$.",
    ),
    limits=(
        "L2 hit rates are never 100%: replacement, other heads' traffic and the ordering of thread blocks all leak some $K$ and $V$ re-reads to HBM.",
        "The resident blocks can straddle one more head than counted here when a head's blocks do not line up with the SMs.",
        "A causal mask halves the score work and the $K$ and $V$ each query block reads; the ratios shift a little.",
        "At long sequences or with many heads in flight the working set outgrows L2 and the count drifts back to the textbook one; "
        "split-KV decode kernels have a different pattern altogether.",
        "Bandwidth is not only HBM: the L2 re-reads cost L2 bandwidth, which is several times HBM's but finite.",
        "The backward pass reads and writes more ($dQ$, $dK$, $dV$) and has its own count.",
    ),
    tables=(
        Table("Traffic and ratios as the sequence grows (this model's $d$; the query block set above, clamped to $n$)", tuple(
            Row("", set={"seq_len": str(k)}) for k in (64, 1024, 8192, 32768, 131072)
        ), ("query_block_used", "io_naive", "io_textbook", "io_l2", "ratio_textbook", "ratio_l2")),
        Table("Head width and query block at $n = 8192$", (
            Row("", model="llama-3.1-8b", set={**AT_8K, "query_block": "64"}),
            Row("", model="llama-3.1-8b", set={**AT_8K, "query_block": "128"}),
            Row("", model="llama-3.1-8b", set={**AT_8K, "query_block": "256"}),
            Row("", model="llama-3.2-1b", set={**AT_8K, "query_block": "64"}),
            Row("", model="llama-3.2-1b", set={**AT_8K, "query_block": "128"}),
            Row("", model="deepseek-v3", set={**AT_8K, "query_block": "128"}),
            Row("", model="deepseek-v3", set={**AT_8K, "query_block": "160"}),
        ), ("head_width", "ratio_textbook", "ratio_l2", "B_q_2x")),
        Table("FlashAttention-1's block rule on each chip (this model's $d$ and $n$)", tuple(
            Row("", hardware=h) for h in ("a100-sxm-80gb", "h100-sxm", "b200", "l4", "mi300x", "tpu-v5e")
        ), ("shared_memory_per_sm", "block_cols_fa1", "block_rows_fa1", "ratio_textbook_fa1"),
            note="Shared memory per SM from each chip's spec; none is stored for AMD, and a TPU has no SMs."),
        Table("Does the working set fit in the last-level cache? (this model, $n = 8192$)", tuple(
            Row("", hardware=h, set=AT_8K) for h in ("h100-sxm", "h200", "b200", "a100-sxm-80gb", "l4", "mi300x", "tpu-v5e")
        ), ("heads_in_flight", "l2_working_set", "l2_fraction", "n_l2_max")),
    ),
    claims=(
        Claim("The teaser's 2x: for Llama 3.1 8B at $n = 8192$ with 128-row query blocks the textbook count is 2x better than naive.",
              "ratio_textbook", "2", rel_tol=0.01, where=TEASER),
        Claim("The teaser's 65x: for Llama 3.1 8B at $n = 8192$, $K$ and $V$ read from HBM once make the traffic 65x lower than naive.",
              "ratio_l2", "65", rel_tol=0.01, where=TEASER),
        Claim("Here FlashAttention-1's block rule reaches the query block that gives exactly 2x ($B_r = d$).",
              "block_rows_fa1", "B_q_2x", rel_tol=1e-9),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("llama-3.1-8b", "llama-3.2-1b"),
    plots=(Plot("io", "sweep",
                "HBM traffic of one attention call against the sequence length (log-log): naive attention writes and reads the score "
                "matrix, the textbook FlashAttention count re-reads K and V once per query block, and with K and V resident in L2 "
                "they cross HBM once.",
                title="At $n$ = {seq_len} the textbook count is {ratio_textbook} times below naive, the L2-resident count {ratio_l2} times",
                x="seq_len", y=("io_naive", "io_textbook", "io_l2"), span=("256", "131072"), vlines=("seq_len", "n_l2_max"), answer=True,
                labels={"io_naive": "naive", "io_textbook": "textbook FlashAttention", "io_l2": "K and V resident in L2"}),),
    display_units={"shared_memory_per_sm": "KiB", "kv_bytes_per_head": "MB", "l2_size": "MB", "l2_working_set": "MB", "smem_2x": "KiB", "bytes_per_element": "B"},
)

"""FlashAttention's HBM traffic: naive, the textbook count, and K/V resident in L2.

Takeaway: per head, naive attention moves (4nd + 4n^2) elements; FlashAttention's
textbook count, K and V re-read for each of n/B_q query blocks, moves
2nd(1 + n/B_q): a ratio of 2(n + d)B_q / (d(n + B_q)), exactly 2 when B_q = d
(which FlashAttention-1's block rule gives once SRAM holds 4d^2 elements). When
K and V stay in L2 while the query blocks sweep them, HBM sees each once: 4nd,
a ratio of 1 + n/d (65 at n = 8192, d = 128). That holds while the K and V of the
heads in flight fit in L2. One head, one layer, one sequence; forward pass.
"""

import sympy as sp

from derivations import glossary as gl
from derivations import primitives as pr
from derivations.context import Input
from derivations.engine import Claim, Row, Step, Table, derivation, solve
from derivations.symbols import Symbols

S = Symbols(parent=gl.GLOSSARY)
n = S.add("n", "1", "n", "sequence length of one attention call (rows of Q, K and V)")
B_q = S.add("B_q", "1", r"B_{q}", "query rows per block: the K and V sweep happens once per block")
M_smem = S.add("M_smem", "B", r"M_{\mathrm{SM}}", "on-chip SRAM (shared memory) per SM that FlashAttention tiles into")

b_el = Step("bytes_per_element", gl.b_a * gl.u_token, "B",
            "Q, K, V, S, P and O all at the math precision.", latex=r"b")
io_naive = Step("io_naive", pr.attention_io_naive(n, gl.H, b_el.s), "B",
                "Unfused: Q, K, V read and O written (4nd), the n x n scores S written then read for the softmax, P written then read for PV (4n^2).",
                latex=r"Q_{\mathrm{naive}}")
io_text = Step("io_textbook", pr.attention_io_textbook(n, B_q, gl.H, b_el.s), "B",
               "FlashAttention's textbook count: Q read and O written once, K and V re-read for each of the n/B_q query blocks; S and P never leave the chip.",
               latex=r"Q_{\mathrm{text}}")
io_l2 = Step("io_l2", pr.attention_io_resident(n, gl.H, b_el.s), "B",
             "When K and V stay in L2 while all the query blocks of a head sweep them, HBM sees each of Q, K, V and O once.",
             latex=r"Q_{\mathrm{L2}}")
r_text = Step("ratio_textbook", 2 * (n + gl.H) * B_q / (gl.H * (n + B_q)), "1",
              "Q_naive / Q_text, simplified: a function of n, d and B_q only (tests check it equals the ratio of the two counts).",
              latex=r"\rho_{\mathrm{text}}")
r_l2 = Step("ratio_l2", 1 + n / gl.H, "1",
            "Q_naive / Q_L2, simplified: 1 + n/d, growing with the sequence because the n^2 score traffic is gone and nothing is re-read.",
            latex=r"\rho_{\mathrm{L2}}")
half = Step("io_half_naive", io_naive.s / 2, "B", "Half the naive traffic: the teaser's '2x better'.", latex=r"Q_{\mathrm{naive}}/2")
bq_2x = solve("B_q_2x", io_text, half, B_q, "1",
              "The query block at which the textbook count is exactly half the naive one: B_q = d, at every sequence length.",
              latex=r"B_{q}^{2\times}")
bc = Step("block_cols_fa1", pr.flash_block_columns(M_smem, gl.H, b_el.s), "1",
          "FlashAttention-1 sizes its blocks from the SRAM: B_c = M/(4d) elements (before rounding up).", latex=r"M/(4d)")
br = Step("block_rows_fa1", pr.flash_block_rows(M_smem, gl.H, b_el.s), "1",
          "and B_r = min(ceil(M/(4d)), d): the query block is capped at d.", latex=r"B_{r}")
smem_2x = solve("smem_2x", bc, bq_2x, M_smem, "B",
                "The SRAM per SM at which that rule reaches B_r = d, and so the 2x: 4d^2 elements.",
                latex=r"M_{\mathrm{SM}}^{2\times}")
kv_head = Step("kv_bytes_per_head", 2 * n * gl.H * b_el.s, "B",
               "K and V of one head: what must stay in L2 while its query blocks sweep it.", latex=r"W_{kv}")
l2_size = Step("l2_size", gl.M_sram, "B", "The chip's L2, the cache that can hold K and V between query blocks.", latex=r"C_{\mathrm{L2}}")
n_l2 = solve("n_l2_max", kv_head, l2_size, n, "1",
             "The sequence length beyond which even one head's K and V overflow L2, and the traffic drifts back towards the textbook count.",
             latex=r"n_{\max}")
in_flight = Step("heads_in_flight", gl.n_SM * B_q / n, "1",
                 "With one query block per SM and the blocks of a head scheduled together, this many heads sweep their K and V at once.",
                 latex=r"h_{\mathrm{flight}}")
working = Step("l2_working_set", 2 * gl.H * b_el.s * sp.Max(n, gl.n_SM * B_q), "B",
               "K and V of the heads in flight, and never less than one whole head: the L2 size below which the 65x argument fails.",
               latex=r"W_{\mathrm{L2}}")
fraction = Step("l2_fraction", working.s / l2_size.s, "1",
                "Below 1 the working set fits and K and V are read from HBM about once; above 1 they are re-read.",
                latex=r"W_{\mathrm{L2}}/C_{\mathrm{L2}}")

H100 = "h100-sxm"

DERIVATION = derivation(
    "flash-attention-io",
    "FlashAttention's HBM traffic: the textbook count and the real one",
    "The textbook IO count says FlashAttention re-reads K and V once per query block, which at 8K is only 2x better than naive. "
    "The answer explains why the real HBM number is 65x lower, and which cache makes the difference.",
    S,
    (b_el, io_naive, io_text, io_l2, r_text, r_l2, half, bq_2x, bc, br, smem_2x, kv_head, l2_size, n_l2, in_flight, working, fraction),
    ("io_naive", "io_textbook", "io_l2", "ratio_textbook", "ratio_l2"),
    inputs=(
        Input("seq_len", n, "8192", "1", "sequence length of one attention call (prefill or training)"),
        Input("query_block", B_q, "128", "1", "query rows per block (FlashAttention-2 and -3 use 128 at d = 128)"),
        Input("smem_per_sm", M_smem, "228 kB", "B", "shared memory per SM (228 kB on H100, H200 and B200; not in the hardware specs)"),
    ),
    assumptions=(
        "One head of one sequence, forward pass, no causal mask; counts are in elements of the math precision (b bytes each). Every head and layer is alike, so the ratios hold for the whole model.",
        "Naive: three kernels (QK^T, softmax, PV) that write S and P to HBM and read them back: 4nd + 4n^2 elements. A fused softmax would save one n^2 round trip; the n^2 terms still dominate.",
        "Textbook FlashAttention (Dao et al. 2022; the FlashAttention-2 loop order): an outer loop over query blocks keeps Q and O on chip, an inner loop streams all of K and V per block. n/B_q counts a partial last block as a fraction; with B_q between d/2 and n the count never exceeds naive.",
        "L2-resident: consecutive thread blocks work on the query blocks of the same head, so after the first block reads K and V from HBM the others hit in L2.",
        "Heads in flight: one query block per SM at a time; K and V of a head are counted per query head (GQA heads sharing a KV head would need less).",
    ),
    takeaways=(
        "Naive attention moves {io_naive} per head at n = {seq_len}; the textbook FlashAttention count is {io_textbook}, only {ratio_textbook} times less.",
        "The textbook ratio is 2(n + d)B_q/(d(n + B_q)), exactly 2 at B_q = {B_q_2x}: FlashAttention-1's rule B_r = min(ceil(M/4d), d) picks that once the SRAM per SM reaches {smem_2x}; with {smem_per_sm} it gives B_r = {block_rows_fa1}.",
        "With K and V resident in L2 the HBM traffic is {io_l2}, {ratio_l2} times less than naive: 1 + n/d, growing with the sequence.",
        "The cache that makes the difference is L2, not shared memory: the heads in flight need {l2_working_set} of it, {l2_fraction} of this chip's {l2_size}. Below that size, or beyond n = {n_l2_max} for a single head, the argument fails.",
    ),
    scoring=(
        "Counts naive IO with the n^2 score and probability matrices written and read, and sees they dominate at long sequences.",
        "Writes the textbook count as 2nd(1 + n/B_q) and gets the 2x at 8K from B_q = d, naming where B_q comes from (SRAM per SM, FlashAttention-1's block rule).",
        "Explains the 65x: each query block re-reads K and V, but from L2, so HBM sees them once: ratio 1 + n/d.",
        "Sizes the L2 working set (heads in flight times 2nd elements) and says when it stops fitting.",
        "Notes that the ratio grows with n and shrinks with d, and that the 2x textbook figure does not depend on n at all when B_q = d.",
    ),
    limits=(
        "L2 hit rates are never 100%: replacement, other heads' traffic and the ordering of thread blocks all leak some K and V re-reads to HBM.",
        "A causal mask halves the score work and the K and V each query block reads; the ratios shift a little.",
        "At long sequences or with many heads in flight the working set outgrows L2 and the count drifts back to the textbook one; split-KV decode kernels have a different pattern altogether.",
        "Bandwidth is not only HBM: the L2 re-reads cost L2 bandwidth, which is several times HBM's but finite.",
        "The backward pass reads and writes more (dQ, dK, dV) and has its own count.",
    ),
    tables=(
        Table("Traffic and ratios as the sequence grows (d = 128, B_q = 128)", tuple(
            Row(f"n={k}", set={"seq_len": str(k)}) for k in (1024, 2048, 8192, 32768, 131072)
        ), ("io_naive", "io_textbook", "io_l2", "ratio_textbook", "ratio_l2")),
        Table("Head dim and query block at n = 8192", (
            Row("d=128, B_q=64", set={"query_block": "64"}),
            Row("d=128, B_q=128", set={"query_block": "128"}),
            Row("d=128, B_q=256", set={"query_block": "256"}),
            Row("d=64 (Llama 3.2 1B), B_q=64", model="llama-3.2-1b", set={"query_block": "64"}),
            Row("d=64 (Llama 3.2 1B), B_q=128", model="llama-3.2-1b", set={"query_block": "128"}),
        ), ("ratio_textbook", "ratio_l2", "B_q_2x")),
        Table("FlashAttention-1's block rule and the SRAM per SM (d = 128)", tuple(
            Row(f"{m} kB per SM", set={"smem_per_sm": f"{m} kB"}) for m in (48, 100, 164, 228)
        ), ("block_cols_fa1", "block_rows_fa1", "smem_2x")),
        Table("Does the working set fit in L2? (n = 8192)", tuple(
            Row("", hardware=h) for h in ("h100-sxm", "h200", "b200", "a100-sxm-80gb", "l4")
        ), ("heads_in_flight", "l2_working_set", "l2_fraction", "n_l2_max")),
    ),
    claims=(
        Claim("At 8K the textbook count is only 2x better than naive (B_q = d = 128).", "ratio_textbook", "2", rel_tol=0.01),
        Claim("The real HBM number, with K and V resident in L2, is 65x lower than naive at 8K.", "ratio_l2", "65", rel_tol=0.01),
        Claim("FlashAttention-1's block rule with 228 kB of SRAM per SM picks the query block that gives the 2x (B_r = d).", "block_rows_fa1", "B_q_2x", rel_tol=1e-9),
        Claim("With only 100 kB of SRAM per SM the rule still reaches B_r = d (it needs 4d^2 elements).", "block_rows_fa1", "B_q_2x", rel_tol=1e-9,
              where=Row("100 kB per SM", set={"smem_per_sm": "100 kB"})),
    ),
    hardware=("h100-sxm", "h200", "b200"),
    models=("llama-3.1-8b",),
    display_units={"kv_bytes_per_head": "MB", "l2_size": "MB", "l2_working_set": "MB", "smem_2x": "kB", "bytes_per_element": "B"},
)

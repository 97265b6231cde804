#!/usr/bin/env python3
"""Regenerate specs/measurements/ml-energy-v3-h100.toml from the ML.ENERGY leaderboard repository.

    python specs/measurements/import_ml_energy.py LEADERBOARD_GIT_DIR COMMIT > specs/measurements/ml-energy-v3-h100.toml

LEADERBOARD_GIT_DIR is a clone (or bare mirror) of https://github.com/ml-energy/leaderboard; COMMIT the commit to read
(the shipped file reads 0cd52dab897c5d91a45f4d413038f3b8b4251b0f). Every file is read with `git show COMMIT:PATH`, so
the working tree does not matter. One record per H100 configuration of public/data/models/<org>__<model>__<task>.json
for the text tasks of the models roofline ships (MODELS below); B200 configurations are left out on purpose (held out
for an independent check). Numbers are copied as the JSON prints them (json's parse_float keeps the text).
`--prompt-tokens TASK=N` sets a task's mean prompt length; without it input_tokens is the placeholder 1 and the
record's `assumed` says PROMPT_UNKNOWN. The records kept but not fitted (`excluded`) follow the rules in `flags`.

Standard library only; not imported by the roofline package.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal
from fractions import Fraction

URL = "https://github.com/ml-energy/leaderboard"
MODELS_DIR = "public/data/models"
BENCHMARK = "github.com/ml-energy/benchmark at c1d6557fbf7c7c495749b0fcf649f71774eabde9"
TOOLKIT = "github.com/ml-energy/data at b37408f35fcdd08a9f5c3daf3dfedcd59a87a58b, mlenergy_data/records/runs.py"
#: text tasks the leaderboard has (image-chat, video-chat, text-to-image and text-to-video are not text decode)
TEXT_TASKS = {"lm-arena-chat": "arena", "gpqa": "gpqa", "sourcegraph-fim": "fim"}
TASK_WORDS = {
    "lm-arena-chat": "LM Arena chat (lmarena-ai/arena-human-preference-100k, 1024 requests, output capped at 4096 tokens, max-model-len 20480)",
    "gpqa": ("GPQA Diamond (198 requests, output capped at 32768 tokens, max-model-len 51200; reasoning on). Output lengths count "
             "the reasoning tokens: the client counts the server's usage completion_tokens"),
}

GENERAL = ("H100 taken as the SXM part: the leaderboard's About page (src/components/AboutPage.tsx line 112) says 'NVIDIA H100 "
           "80GB HBM3 (max power 700 W per GPU)', which only the SXM5 board is. KV cache BF16 (vLLM's default kv-cache-dtype auto; the launch config sets none). "
           "batch is the engine's cap max_num_seqs; the closed-loop client keeps it full, and mean_batch is the running batch "
           "averaged over the steady state. The median ITL is over every streamed token of the whole run (ramp-up and drain "
           "included); power and energy are steady-state.")
TP_WORDS = "Tensor parallelism over all {g} GPUs: vLLM ran --tensor-parallel-size {g} (no data-parallel-size or enable-expert-parallel in the launch config)."
ONE_GPU = "One GPU: vLLM ran --tensor-parallel-size 1 (no data-parallel-size or enable-expert-parallel in the launch config)."
EP_WORDS = ("Layout from the launch config (enable-expert-parallel true, no data-parallel-size): vLLM ran --tensor-parallel-size {g} "
            "with expert parallelism, so attention is TP {g} and the routed experts are spread over all {g} GPUs (vLLM's EP size "
            "= TP x DP); the leaderboard's tensor_parallel 1 is its toolkit's default when a config sets no tensor-parallel-size.")
FP8 = ("weights and math fp8: the FP8 checkpoint's quantized linear layers run FP8 GEMMs on Hopper; which layers the checkpoint "
       "keeps in BF16 the source does not say.")
QWEN = ("The 2507 checkpoint taken to have the shapes of the shipped qwen3-235b-a22b spec (94 layers, 128 experts top-8, 64 query "
        "and 4 KV heads of 128, hidden 4096; the 2507 releases change the context length and rope_theta, per the spec's notes); "
        "not checked against the 2507 config.json here.")
GPT_OSS = ("weights mxfp4 (the MoE experts; attention, router, embeddings and LM head stay BF16 in the checkpoint), math bf16: on "
           "Hopper vLLM dequantizes MXFP4 to BF16 GEMMs (specs/precisions.py). Launched with compilation-config cudagraph_mode "
           "PIECEWISE and reasoning_effort medium (extra_body.json).")

#: leaderboard file stem -> (shipped model, short id, weights, math, weight_precision the JSON must print, what is assumed)
MODELS: dict[str, tuple[str, str, str, str, str, str]] = {
    "meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat": (
        "llama-3.1-8b", "llama3.1-8b", "bf16", "bf16", "bfloat16", "The Instruct checkpoint has the shipped Llama 3.1 8B spec's shapes."),
    "meta-llama__Llama-3.1-70B-Instruct__lm-arena-chat": (
        "llama-3.1-70b", "llama3.1-70b", "bf16", "bf16", "bfloat16", "The Instruct checkpoint has the shipped Llama 3.1 70B spec's shapes."),
    "meta-llama__Llama-3.3-70B-Instruct__lm-arena-chat": ("llama-3.3-70b", "llama3.3-70b", "bf16", "bf16", "bfloat16", ""),
    "meta-llama__Llama-3.1-405B-Instruct-FP8__lm-arena-chat": (
        "llama-3.1-405b", "llama3.1-405b-fp8", "fp8", "fp8", "fp8", "The FP8 Instruct checkpoint has the shipped Llama 3.1 405B spec's shapes; " + FP8),
    "google__gemma-3-27b-it__lm-arena-chat": (
        "gemma-3-27b", "gemma3-27b", "bf16", "bf16", "bfloat16",
        "Text-only chat on the multimodal gemma-3-27b-it checkpoint: the vision tower is loaded but no image is sent."),
    "meta-llama__Llama-4-Maverick-17B-128E-Instruct-FP8__lm-arena-chat": (
        "llama-4-maverick", "llama4-maverick-fp8", "fp8", "fp8", "fp8",
        "The FP8 checkpoint has the shipped Llama 4 Maverick spec's shapes (taken from the BF16 Instruct config); text-only chat, "
        "the vision tower loaded but unused; " + FP8),
    "Qwen__Qwen3-235B-A22B-Instruct-2507__lm-arena-chat": ("qwen3-235b-a22b", "qwen3-235b-instruct", "bf16", "bf16", "bfloat16", QWEN),
    "Qwen__Qwen3-235B-A22B-Instruct-2507-FP8__lm-arena-chat": (
        "qwen3-235b-a22b", "qwen3-235b-instruct-fp8", "fp8", "fp8", "fp8", QWEN + " " + FP8),
    "Qwen__Qwen3-235B-A22B-Thinking-2507__gpqa": ("qwen3-235b-a22b", "qwen3-235b-thinking", "bf16", "bf16", "bfloat16", QWEN),
    "Qwen__Qwen3-235B-A22B-Thinking-2507-FP8__gpqa": (
        "qwen3-235b-a22b", "qwen3-235b-thinking-fp8", "fp8", "fp8", "fp8", QWEN + " " + FP8),
    "openai__gpt-oss-20b__gpqa": ("gpt-oss-20b", "gpt-oss-20b", "mxfp4", "bf16", "mxfp4", GPT_OSS),
    "openai__gpt-oss-120b__gpqa": ("gpt-oss-120b", "gpt-oss-120b", "mxfp4", "bf16", "mxfp4", GPT_OSS),
}
#: a sweep's running batch below this share of its cap is a cache that no longer holds the cap (rule 3)
FULL_SHARE = Fraction(95, 100)


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def read_model_file(repo: str, commit: str, stem: str) -> dict:
    return json.loads(git(repo, "show", f"{commit}:{MODELS_DIR}/{stem}.json"), parse_float=str)


def num(text: str) -> Fraction:
    """A number as the JSON prints it, exactly."""
    return Fraction(Decimal(text))


def fmt(x: Fraction, digits: int = 3) -> str:
    return f"{float(x):.{digits}f}"


def flags(configs: list[tuple[int, dict]]) -> dict[int, str]:
    """Index -> why the configuration is kept but not fitted, for one sweep (one file, one GPU count), in words.

    1. Saturation: the output throughput at this cap is no higher than at a smaller cap of the sweep (more sequences,
       no more tokens per second): the step is set by something that does not grow with the batch's GPU work.
    2. A median ITL no higher than at a smaller cap (a host bottleneck or a measurement that is not a decode step).
    3. A saturated KV cache inconsistent with its own mean batch: the running batch below 95% of the cap, and the ITL
       rising by less than half as much per added running sequence as over the sweep's step before.
    4. Two configurations with the same cap: the one farther from the line between the neighbouring caps is flagged.
    """
    out: dict[int, list[str]] = defaultdict(list)
    caps = sorted({c["max_num_seqs"] for _, c in configs})
    by_cap: dict[int, list[tuple[int, dict]]] = defaultdict(list)
    for i, c in configs:
        by_cap[c["max_num_seqs"]].append((i, c))

    def rep(cap: int) -> dict:
        """The configuration standing for a cap: the one not flagged as a duplicate (else the last)."""
        group = by_cap[cap]
        return next((c for i, c in group if not any("same max_num_seqs" in r for r in out.get(i, []))), group[-1][1])

    # 4. duplicates first, so the other rules compare against the configuration kept for a cap
    for cap, group in by_cap.items():
        if len(group) < 2:
            continue
        k = caps.index(cap)
        if 0 < k < len(caps) - 1:
            lo, hi = by_cap[caps[k - 1]][-1][1], by_cap[caps[k + 1]][0][1]
            line = num(lo["median_itl_ms"]) + (num(hi["median_itl_ms"]) - num(lo["median_itl_ms"])) * (cap - lo["max_num_seqs"]) / (
                hi["max_num_seqs"] - lo["max_num_seqs"])
            ranked = sorted(group, key=lambda ic: abs(num(ic[1]["median_itl_ms"]) - line))
            keep = ranked[0][1]
            for i, c in ranked[1:]:
                out[i].append(
                    f"one of {len(group)} configurations with the same max_num_seqs {cap} in this sweep (median ITL "
                    f"{fmt(num(c['median_itl_ms']))} ms here, {fmt(num(keep['median_itl_ms']))} ms in the other); the line between the "
                    f"neighbouring caps {lo['max_num_seqs']} and {hi['max_num_seqs']} gives {fmt(line)} ms, {fmt(abs(num(c['median_itl_ms']) - line))} ms "
                    f"from this one against {fmt(abs(num(keep['median_itl_ms']) - line))} ms from the other, so this one is the one that disagrees "
                    f"(its mean output {fmt(num(c['avg_output_len']), 1)} tokens, the other's {fmt(num(keep['avg_output_len']), 1)})")
    for i, c in configs:
        cap = c["max_num_seqs"]
        k = caps.index(cap)
        if k == 0 or any("same max_num_seqs" in r for r in out.get(i, [])):
            continue
        smaller = [rep(s) for s in caps[:k]]
        best = max(smaller, key=lambda s: num(s["output_throughput_tokens_per_sec"]))
        if num(c["output_throughput_tokens_per_sec"]) <= num(best["output_throughput_tokens_per_sec"]):
            out[i].append(
                f"saturated: output throughput {fmt(num(c['output_throughput_tokens_per_sec']), 0)} token/s at max_num_seqs {cap} is no higher "
                f"than {fmt(num(best['output_throughput_tokens_per_sec']), 0)} token/s at {best['max_num_seqs']} (mean batch "
                f"{fmt(num(c['avg_batch_size']), 1)} against {fmt(num(best['avg_batch_size']), 1)}; power {fmt(num(c['avg_power_watts']), 0)} W "
                f"against {fmt(num(best['avg_power_watts']), 0)} W): more sequences give no more tokens per second, so the step is not "
                f"set by the GPU work the batch adds" + (
                    f" (the mean batch is {fmt(100 * num(c['avg_batch_size']) / cap, 0)}% of the cap: the KV cache no longer holds it)"
                    if num(c["avg_batch_size"]) / cap < FULL_SHARE else ""))
        low = max(smaller, key=lambda s: num(s["median_itl_ms"]))
        if num(c["median_itl_ms"]) <= num(low["median_itl_ms"]):
            out[i].append(
                f"the median ITL {fmt(num(c['median_itl_ms']))} ms at max_num_seqs {cap} is no higher than {fmt(num(low['median_itl_ms']))} ms "
                f"at {low['max_num_seqs']}")
        share = num(c["avg_batch_size"]) / cap
        if k >= 2 and share < FULL_SHARE:
            p, pp = rep(caps[k - 1]), rep(caps[k - 2])
            slope = (num(c["median_itl_ms"]) - num(p["median_itl_ms"])) / (num(c["avg_batch_size"]) - num(p["avg_batch_size"]))
            before = (num(p["median_itl_ms"]) - num(pp["median_itl_ms"])) / (num(p["avg_batch_size"]) - num(pp["avg_batch_size"]))
            if slope < before / 2:
                out[i].append(
                    f"KV-cache saturation: the mean batch {fmt(num(c['avg_batch_size']), 2)} is {fmt(100 * share, 0)}% of the cap {cap}, and "
                    f"the median ITL rises {fmt(slope, 4)} ms per added running sequence from max_num_seqs {p['max_num_seqs']} "
                    f"({fmt(num(p['median_itl_ms']))} -> {fmt(num(c['median_itl_ms']))} ms for mean batch {fmt(num(p['avg_batch_size']), 2)} -> "
                    f"{fmt(num(c['avg_batch_size']), 2)}) against {fmt(before, 4)} ms over the step before: the measured ITL matches "
                    f"neither the cap nor the mean batch (preemption and recomputation)")
    return {i: "; ".join(reasons) + "." for i, reasons in out.items()}


def toml_string(text: str) -> str:
    if "\n" in text:
        return '"""\n' + text.replace("\\", "\\\\").replace('"""', '""\\"') + '"""'
    return json.dumps(text, ensure_ascii=False)


def layout(c: dict, stem: str) -> tuple[int, int, int, int]:
    """(gpus, tp, dp, ep) of the launch, checked against the leaderboard's own parallelization fields."""
    g = c["num_gpus"]
    par = c["parallelization"]
    if par["data_parallel"] != 1:
        raise SystemExit(f"{stem}: data_parallel {par['data_parallel']}: a data-parallel launch is not handled here")
    if par["expert_parallel"] > 1:
        if (par["expert_parallel"], par["tensor_parallel"]) != (g, 1):
            raise SystemExit(f"{stem}: unexpected parallelization {par} on {g} GPUs")
        return g, g, 1, g
    if par["tensor_parallel"] != g:
        raise SystemExit(f"{stem}: unexpected parallelization {par} on {g} GPUs")
    return g, g, 1, 1


def records(repo: str, commit: str, prompts: dict[str, int]) -> list[dict[str, object]]:
    recs: list[dict[str, object]] = []
    for stem, (model, short, weights, math, precision, model_words) in MODELS.items():
        data = read_model_file(repo, commit, stem)
        task = stem.rsplit("__", 1)[1]
        if data["weight_precision"] != precision or data["task"] != task:
            raise SystemExit(f"{stem}: weight_precision {data['weight_precision']!r}, task {data['task']!r}; expected {precision!r}, {task!r}")
        h100 = [(i, c) for i, c in enumerate(data["configurations"]) if c["gpu_model"] == "H100"]
        sweeps: dict[int, list[tuple[int, dict]]] = defaultdict(list)
        for i, c in h100:
            sweeps[c["num_gpus"]].append((i, c))
        excluded = {i: why for sweep in sweeps.values() for i, why in flags(sweep).items()}
        layouts = {layout(c, stem) for _, c in h100}
        seen: dict[tuple[int, int], int] = defaultdict(int)
        for i, c in h100:
            gpus, tp, dp, ep = layout(c, stem)
            cap = c["max_num_seqs"]
            same = [j for j, d in sweeps[gpus] if d["max_num_seqs"] == cap]
            seen[(gpus, cap)] += 1
            tag = "" if len(layouts) == 1 else f"-tp{tp}" + (f"-ep{ep}" if ep > 1 else "")
            run = f"-run{seen[(gpus, cap)]}" if len(same) > 1 else ""
            rid = f"mlenergy-h100-{short}-{TEXT_TASKS[task]}{tag}-b{cap}{run}"
            par = c["parallelization"]
            which = f"gpu_model H100, num_gpus {gpus}, max_num_seqs {cap}"
            if len(same) > 1:
                which += f"; configuration {seen[(gpus, cap)]} of {len(same)} with these, in the file's order"
            locator = (f"{MODELS_DIR}/{stem}.json at commit {commit}, configurations[{i}] ({which}); fields read: num_gpus, "
                       f"max_num_seqs, median_itl_ms, avg_batch_size, avg_output_len, avg_power_watts, energy_per_token_joules, "
                       f"parallelization (tensor_parallel {par['tensor_parallel']}, expert_parallel {par['expert_parallel']}, "
                       f"data_parallel {par['data_parallel']})")
            if task in prompts:
                prompt = prompts[task]
                prompt_words = (f"input_tokens {prompt} is the task's mean prompt length, the same for every record of the task (never fitted per "
                                "record): a draft of the ML.ENERGY v3.0 blog post gives 'the number of input/prompt tokens (mean 634 vs. 224)' for "
                                "Text Conversation vs. Problem Solving in its Qwen 3 32B case study (github.com/ml-energy/blog at "
                                "2bfa158da2019b365406a13e05f4fa364299b491, docs/posts/ml-energy-leaderboard-v3.0.md line 68; removed before "
                                "publication in 5e8370b); read in that order, 634 for lm-arena-chat and 224 for gpqa, and taken for every model "
                                "of the task (the chat template's tokens are not in it).")
            else:
                prompt = 1
                prompt_words = ("PROMPT_UNKNOWN: input_tokens 1 is a placeholder; the leaderboard publishes no prompt lengths "
                                "(one mean per task is to be fitted).")
            mean_out = num(c["avg_output_len"])
            layout_words = (EP_WORDS if ep > 1 else TP_WORDS if gpus > 1 else ONE_GPU).format(g=gpus)
            assumed = " ".join(w for w in (prompt_words, f"Task: {TASK_WORDS[task]}.", layout_words, model_words, GENERAL) if w)
            rec: dict[str, object] = {
                "id": rid, "model": model, "gpus": gpus, "tp": tp, "dp": dp, "ep": ep, "weights": weights, "math": math,
                "batch": cap, "mean_batch": c["avg_batch_size"], "input_tokens": prompt,
                "output_tokens": int(mean_out + Fraction(1, 2)), "mean_output_tokens": c["avg_output_len"],
                "value": f"{c['median_itl_ms']} ms", "power": f"{c['avg_power_watts']} W",
                "energy_per_token": f"{c['energy_per_token_joules']} J/token", "locator": locator, "assumed": assumed,
            }
            if i in excluded:
                rec["excluded"] = excluded[i]
            recs.append(rec)
    return recs


def left_out(repo: str, commit: str) -> list[tuple[str, int]]:
    """(file stem, H100 configurations) of the text-task files whose model roofline does not ship."""
    out = []
    for path in git(repo, "ls-tree", "-r", "--name-only", commit, MODELS_DIR).split():
        stem = path.rsplit("/", 1)[1].removesuffix(".json")
        if stem in MODELS or stem.rsplit("__", 1)[1] not in TEXT_TASKS:
            continue
        n = sum(1 for c in read_model_file(repo, commit, stem)["configurations"] if c.get("gpu_model") == "H100")
        if n:
            out.append((stem, n))
    return out


def notes(commit: str, recs: list[dict[str, object]], skipped: list[tuple[str, int]]) -> str:
    n_ex = sum(1 for r in recs if "excluded" in r)
    skipped_words = ", ".join(f"{stem.replace('__', ' ')} ({n})" for stem, n in skipped)
    return f"""One record per H100 configuration of {MODELS_DIR}/<org>__<model>__<task>.json at commit {commit} for the text tasks
(lm-arena-chat, gpqa) of the models roofline ships; image and video tasks are skipped. The B200 configurations of the same
files are deliberately not added: they are held out for an independent check of the fit.
Fields: value = median_itl_ms, a MEDIAN of the client-side inter-token latencies of every successful request over the whole
run (a chunk of n tokens streamed at once counts as n equal gaps; {TOOLKIT} lines 119-135), not a mean; batch = max_num_seqs
(vLLM's cap); mean_batch = avg_batch_size, Prometheus vllm:num_requests_running averaged over the steady state (line 532);
mean_output_tokens = avg_output_len = total output tokens / completed requests over the whole run (line 470), output_tokens
its nearest whole count; power = avg_power_watts = steady-state GPU energy / steady-state duration (line 560), where the
energy is the SUM over all the server's GPUs (Zeus; {BENCHMARK}, mlenergy/benchmark/llm/benchmark.py line 955), so power is
the total of the record's GPUs, not per GPU; energy_per_token = energy_per_token_joules = that steady-state energy / the OUTPUT
tokens streamed in the steady-state window (benchmark.py line 956).
Layout: the harness launches `vllm serve --tensor-parallel-size <num_gpus>` unless the config mentions data-parallel-size
(benchmark.py lines 1120-1130 and 1159-1170; no H100 config here does), with the config's enable-expert-parallel for Qwen3 235B
and Llama 4 Maverick (configs/vllm/<task>/<org>/<model>/H100/monolithic.config.yaml). In vLLM the EP size is TP x DP, so these
records are tp = ep = gpus, dp = 1; the leaderboard's parallelization (tensor_parallel 1, expert_parallel N) is the toolkit's
reading of the same config (runs.py lines 173-202). Server: async-scheduling, chunked prefill of 8192 tokens, 3 API servers;
all requests are sent at once (closed loop), repeated num_request_repeats times. The steady state runs from max_num_seqs first
tokens to (requests - max_num_seqs) finished. The leaderboard drops a run whose mean batch is below 85% of its cap, and every
larger cap of its sweep (runs.py line 313), so some swept caps are missing.
Prompt lengths are not published. A draft of the v3.0 blog post said 'the number of input/prompt tokens (mean 634 vs. 224)' for
Text Conversation vs. Problem Solving in its Qwen 3 32B case study, order not stated (github.com/ml-energy/blog at 2bfa158da2019b365406a13e05f4fa364299b491,
docs/posts/ml-energy-leaderboard-v3.0.md line 68; removed before publication).
Excluded ({n_ex}, kept, not fitted): a larger cap with no more output throughput than a smaller one, a median ITL no higher than at
a smaller cap, a mean batch under 95% of the cap with the ITL rising under half as fast per running sequence as the step
before, or the disagreeing one of two runs with the same cap; each record's `excluded` gives the numbers.
Left out (model not shipped; H100 configurations): {skipped_words}.
Generated by specs/measurements/import_ml_energy.py (standard library only) from the leaderboard at commit {commit}."""


FIELD_ORDER = ("id", "model", "gpus", "tp", "dp", "ep", "weights", "math", "batch", "mean_batch", "input_tokens", "output_tokens",
               "mean_output_tokens", "value", "power", "energy_per_token", "locator", "assumed", "excluded")


def render(repo: str, commit: str, prompts: dict[str, int]) -> str:
    recs = records(repo, commit, prompts)
    skipped = left_out(repo, commit)
    lines = [
        "# The ML.ENERGY Leaderboard v3.0: every H100 configuration of the text tasks of the models roofline ships.",
        f"# Generated: python specs/measurements/import_ml_energy.py LEADERBOARD_GIT_DIR {commit}"
        + "".join(f" --prompt-tokens {t}={n}" for t, n in sorted(prompts.items())),
        "# (do not edit by hand; change the script and regenerate).",
        f"source = {toml_string('The ML.ENERGY Leaderboard v3.0 (ML.ENERGY Benchmark v3.0, December 2025): per-model data files ' + MODELS_DIR + '/*.json of github.com/ml-energy/leaderboard at commit ' + commit)}",
        f"url = {toml_string(URL)}",
        'engine = "vLLM"',
        f"engine_version = {toml_string('0.11.1 (container vllm/vllm-openai:v0.11.1; github.com/ml-energy/benchmark docs/overview.md line 45 and mlenergy/benchmark/llm/benchmark.py line 136 at c1d6557)')}",
        f"notes = {toml_string(notes(commit, recs, skipped))}",
        "",
        "[common]",
        'hardware = "h100-sxm"',
        "pp = 1",
        'kv = "bf16"',
        'batching = "continuous"',
        'metric = "itl"',
    ]
    for r in recs:
        lines += ["", "[[record]]"]
        lines += [f"{k} = {r[k] if isinstance(r[k], int) else toml_string(str(r[k]))}" for k in FIELD_ORDER if k in r]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", help="path to a clone or bare mirror of github.com/ml-energy/leaderboard")
    parser.add_argument("commit", help="the 40-hex commit to read")
    parser.add_argument("-o", "--output", help="write here instead of standard output")
    parser.add_argument("--prompt-tokens", action="append", default=[], metavar="TASK=N",
                        help="a task's mean prompt length in tokens (lm-arena-chat, gpqa); without it the placeholder 1 and PROMPT_UNKNOWN")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[0-9a-f]{40}", args.commit):
        parser.error("commit: expected 40 lower-case hex digits")
    prompts: dict[str, int] = {}
    for item in args.prompt_tokens:
        task, _, n = item.partition("=")
        if task not in TASK_WORDS or not n.isdigit() or int(n) < 1:
            parser.error(f"--prompt-tokens: expected TASK=N with TASK one of {', '.join(TASK_WORDS)} and N a whole number, found {item!r}")
        prompts[task] = int(n)
    text = render(args.repo, args.commit, prompts)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The `roofline` command line. Bad input: one line on stderr, exit code 2."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

# Only light modules here (the standard library and roofline's pint-free ones): `--help`, `list` and `show` never import
# sympy, and a `derive` answered by the light path (roofline.compiled) imports neither sympy, pint nor numpy.
# Each command imports what it needs when it runs (roofline.api, and with it the engine, for a command that derives).
from .specs.catalog import hardware_names, model_names, shown_path
from .specs.errors import SpecWarning
from .specs.files import folder_option
from .specs.text import escaped
from .units.errors import RooflineError

EXIT_BAD_INPUT = 2
EXIT_STALE = 1
#: Ctrl-C: the shell's code for a process ended by SIGINT (128 + 2), after one line.
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"roofline: error: {message}\n")


#: what --engine takes (the profiles are data: specs/measurements/profiles/NAME.toml)
ENGINE_HELP = ("engine profile that supplies eta_bw, eta_flops, t_layer, t_fixed and ar_latency: fitted (default), ideal (the textbook "
               "roofline) or an engine family's (`roofline validate` lists them); --set still overrides any one")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="roofline", description="The physics of LLM inference as unit-checked derivations.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ls = sub.add_parser("list", help="list hardware, models or questions")
    ls.add_argument("what", choices=("hardware", "models", "questions", "symbols"))

    show = sub.add_parser("show", help="show a hardware or model spec with derived figures")
    show.add_argument("kind", choices=("hardware", "model"))
    show.add_argument("name", help="a shipped name or a path to your own file")
    show.add_argument("--format", choices=("text", "json"), default="text")

    derive = sub.add_parser("derive", help="print one answer sheet")
    derive.add_argument("slug", help="a sheet's slug, or a path to your own derivation file (.toml; see examples/kv-offload.toml)")
    derive.add_argument("--hardware", help="name or path (default: the sheet's defaults)")
    derive.add_argument("--model", help="name or path (default: the sheet's defaults)")
    derive.add_argument("--second-hardware", help="the chip compared with (hardware-upgrade); name or path")
    derive.add_argument("--second-model", help="the second model (speculative-decoding's drafter); name or path")
    derive.add_argument("--weights", help="weight formats: one for every component (bf16, fp16, fp8, int8, int4, int4-g128, fp4, mxfp4, "
                                         "nvfp4, mxfp8, fp6, mxfp6), COMPONENT=FORMAT pairs (experts_routed=nvfp4,attention=fp8), "
                                         "or both (fp8,experts_routed=mxfp4); default: as the model's checkpoint stores them")
    derive.add_argument("--kv", help="KV-cache precision")
    derive.add_argument("--math", help="math precision (which tensor peak); default: the weights' math")
    derive.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="set a scenario input, e.g. context=8192 or t_fixed=0.5ms")
    derive.add_argument("--engine", metavar="NAME", help=ENGINE_HELP)
    derive.add_argument("--format", choices=("md", "tex", "json"), default="md")
    derive.add_argument("--fragment", action="store_true", help="with --format tex: only the body, for \\input into your document (see tex-preamble)")
    derive.add_argument("--plots", metavar="DIR", help="also draw the sheet's plots into DIR (SVG and PDF) and link them from the md/tex output as DIR/<file>")

    ck = sub.add_parser("check", help="check a formula of your own: its unit, LaTeX, a closed form, a value")
    ck.add_argument("expr", help='a formula over glossary symbols (`roofline list symbols`), e.g. "P_active*b_w/beta"')
    ck.add_argument("--symbol", action="append", default=[], metavar="NAME=UNIT", help="declare a symbol of your own, e.g. beta_pcie=B/s")
    ck.add_argument("--expect", metavar="UNIT", help="the unit the result must come out in (any unit of that dimension, e.g. ms)")
    ck.add_argument("--solve-for", metavar="NAME", help="solve EXPR = --equals for this symbol (closed form, checked)")
    ck.add_argument("--equals", metavar="EXPR", help="the other side of the equation for --solve-for")
    ck.add_argument("--hardware", help="name or path: binds the chip's symbols (pi, beta, ...)")
    ck.add_argument("--model", help="name or path: binds the model's symbols (P_active, e_kv, ...)")
    ck.add_argument("--weights", help="weight formats, as derive takes them (b_w, b_e); default: as the checkpoint stores them")
    ck.add_argument("--kv", help="KV-cache precision (b_kv)")
    ck.add_argument("--math", help="math precision (which tensor peak pi is)")
    ck.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a scenario input (batch=8) or any symbol's value (beta_pcie=64GB/s)")
    ck.add_argument("--engine", metavar="NAME", help=ENGINE_HELP)
    ck.add_argument("--format", choices=("text", "md", "tex", "json"), default="text")
    ck.add_argument("--fragment", action="store_true", help="with --format tex: only the equation, for \\input into your document")
    ck.add_argument("--against", metavar="SLUG:RESULT",
                    help="grade EXPR (a formula, or a number with its unit such as \"4.5 ms\") against a sheet's result, e.g. decode-floor:t_floor")
    ck.add_argument("--tolerance", type=float, metavar="FRACTION",
                    help="with --against: a number within this relative error is right (default 0.05); a formula within it is an approximation (default 0.1)")

    qz = sub.add_parser("quiz", help="interview question sets drawn from the sheets, with their answer keys; --ask grades a candidate")
    qz.add_argument("--sheets", metavar="SLUG,SLUG", help="the sheets to draw from, separated by commas (default: every sheet)")
    qz.add_argument("--seed", type=int, default=1, help="the same seed gives the same set (default: 1)")
    qz.add_argument("--count", type=int, default=10, help="questions in the set (default: 10)")
    qz.add_argument("--format", choices=("md", "tex", "json", "apkg"), default="md",
                    help="md, tex or json: the paper (or, with --key, the key); apkg: an Anki deck, one card per argued step, to a file "
                         "(redirect it: > quiz.apkg)")
    qz.add_argument("--key", action="store_true", help="print the answer key instead of the question paper")
    qz.add_argument("--out", metavar="DIR", help="write the paper and the key, in Markdown, LaTeX and JSON, the Anki deck and the practice "
                                                 "page (practice.html, graded in a browser) into DIR")
    qz.add_argument("--ask", action="store_true", help="on a terminal: put each question, grade each answer, show the sheet's argument for a miss")
    qz.add_argument("--tolerance", type=float, metavar="FRACTION", help="with --ask: a number within this relative error is right (default 0.05)")

    sub.add_parser("tex-preamble", help="the \\usepackage lines and macros a --fragment needs in your document's preamble")

    sw = sub.add_parser("sweep", help="one result of a sheet over a grid of inputs, as CSV or JSON")
    sw.add_argument("slug")
    sw.add_argument("result", help="a step of the sheet, e.g. t_step (`roofline derive SLUG --format json` lists them)")
    sw.add_argument("--over", action="append", default=[], metavar="NAME=VALUES", required=True,
                    help="an input and its values: batch=1:1024:log2 (doubling), eta_bw=0.5:0.9:0.1 (a step), t_fixed=1ms:2ms:0.5ms (a step with units), "
                         "context=1024,8192 (a list); repeat for a grid")
    sw.add_argument("--hardware", action="append", help="name or path; repeat or separate with commas for several (default: the sheet's first)")
    sw.add_argument("--model", action="append", help="name or path; repeat or separate with commas for several (default: the sheet's first)")
    sw.add_argument("--second-hardware", help="the chip compared with (hardware-upgrade); name or path")
    sw.add_argument("--second-model", help="the second model (speculative-decoding's drafter); name or path")
    sw.add_argument("--weights", help="weight formats, as derive takes them; default: as the checkpoint stores them")
    sw.add_argument("--kv", help="KV-cache precision")
    sw.add_argument("--math", help="math precision")
    sw.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="fix an input that is not swept")
    sw.add_argument("--engine", metavar="NAME", help=ENGINE_HELP)
    sw.add_argument("--unit", help="the unit of the result column (default: the sheet's display unit)")
    sw.add_argument("--format", choices=("csv", "json", "jsonl"), default="csv",
                    help="csv and jsonl (JSON lines) are a row per point; json one document; all are written as they are computed")

    val = sub.add_parser("validate", help="the step model against published measurements of real servers (specs/measurements/)")
    val.add_argument("--format", choices=("md", "json"), default="md")

    cal = sub.add_parser("calibrate", help="fit an engine profile to your own benchmark result files (or to dataset records) and "
                         "report its error against the uncalibrated one; or refit the shipped engine profiles")
    what = cal.add_mutually_exclusive_group(required=True)
    what.add_argument("--from", dest="records", nargs="+", metavar="FILE_OR_RECORD",
                      help="your result files: vLLM `bench serve --save-result` JSON, SGLang bench_serving JSONL, genai-perf or AIPerf "
                           "profile_export JSON, guidellm benchmarks.json, or roofline's record TOML (gzipped or not); "
                           "or record ids of the dataset (`roofline validate` lists them)")
    what.add_argument("--write-defaults", action="store_true",
                      help="refit the fitted engine profiles (specs/measurements/profiles/) to the memory-bound records and write them")
    cal.add_argument("--hardware", help="the chip your files ran on (name or path); a result file does not say")
    cal.add_argument("--model", help="the model your files ran (name or path)")
    cal.add_argument("--weights", help="weight formats, as derive takes them; default: as the checkpoint stores them")
    cal.add_argument("--kv", help="KV-cache precision (default: as the sheets default it)")
    cal.add_argument("--math", help="math precision (default: as the sheets default it)")
    cal.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                     help="what the files do not say: tp, dp, ep (the layout, default 1), and batch, prompt_len, output_len where a file lacks them")
    cal.add_argument("--engine", metavar="NAME", help="the profile the fit starts from and the uncalibrated error is measured at (default: fitted)")
    cal.add_argument("--name", help="write the fitted profile under this name, for `--engine NAME` on every sheet")
    cal.add_argument("--to", metavar="DIR", help="the folder the profiles are written to: with --name, default your profile folder "
                     "($ROOFLINE_PROFILES, else ~/.config/roofline/profiles); with --write-defaults, default "
                     "specs/measurements/profiles/ of a source checkout (an installed package's own folder only when named here)")
    cal.add_argument("--format", choices=("md", "json"), default="md")

    dg = sub.add_parser("diagnose", help="a profiler trace's decode steps (PyTorch profiler JSON or Nsight Systems SQLite) by kernel class, "
                        "beside the step model, on the roofline, and in the mbu-diagnosis and batch1-gap buckets")
    dg.add_argument("trace", help="a PyTorch profiler trace (.json or .json.gz, as vLLM's and SGLang's profilers write) or an Nsight "
                                  "Systems SQLite export (nsys export --type sqlite)")
    dg.add_argument("--hardware", required=True, help="the chip the trace ran on (name or path)")
    dg.add_argument("--model", required=True, help="the model the trace ran (name or path)")
    dg.add_argument("--weights", help="weight formats, as derive takes them; default: as the checkpoint stores them")
    dg.add_argument("--kv", help="KV-cache precision")
    dg.add_argument("--math", help="math precision")
    dg.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="the setup the trace ran: batch, context, tp, ... as decode-floor takes them (batch=32 --set context=1005 --set tp=4)")
    dg.add_argument("--engine", metavar="NAME", help=ENGINE_HELP)
    dg.add_argument("--format", choices=("md", "json"), default="md")

    b = sub.add_parser("build", help="write every sheet to out/ (md, tex, json; --pdf too)")
    b.add_argument("--out", default="out", help="the folder to write (default: out); it is replaced as a whole, atomically")
    b.add_argument("--pdf", action="store_true", help="also compile each .tex with pdflatex")
    b.add_argument("--check", action="store_true", help="exit 1 when out/ is stale; write nothing")
    b.add_argument("--engine", metavar="NAME", help=ENGINE_HELP + " for every sheet")
    b.add_argument("--quiet", action="store_true", help="say nothing on stderr while building (the default when stderr is not a terminal)")
    return p


def _quantity_rows(facts: dict[str, Any]) -> list[str]:
    from .renderers.numbers import plain

    width = max(len(k) for k in facts)
    return [f"  {k:<{width}}  {plain(v.magnitude, v.units)}" for k, v in facts.items()]


def _json_numbers(facts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, q in facts.items():
        base = q.to_base_units().magnitude
        out[k] = int(base) if float(base).is_integer() and abs(base) < 2**53 else float(base)
    return out


def _show(kind: str, name: str, fmt: str) -> str:
    from .derivations.physics.facts import hardware_facts, model_facts
    from .specs.hardware import load_hardware
    from .specs.models import load_model

    if kind == "hardware":
        hw = load_hardware(name)
        facts = hardware_facts(hw)
        meta = {"key": hw.key, "name": hw.name, "vendor": hw.vendor, "status": hw.status, "source": hw.source, "notes": hw.notes.strip()}
        extra = {k: v for k, v in (("on_chip_memory_kind", hw.on_chip_memory_kind), ("compute_unit_kind", hw.compute_unit_kind), ("scaleup_interconnect", hw.scaleup_interconnect), ("scaleup_topology", hw.scaleup_topology)) if v}
        if hw.field_status:  # each figure's status (C primary, S secondary, D derived, U unconfirmed)
            extra["field_status"] = dict(hw.field_status) if fmt == "json" else ", ".join(f"{k} {v}" for k, v in hw.field_status.items())
    else:
        m = load_model(name)
        facts = model_facts(m)
        meta = {"key": m.key, "name": m.name, "model_type": m.model_type, "status": m.status, "source": m.source, "notes": m.notes.strip()}
        extra = {"vocab_size": m.vocab_size, "hidden_size": m.hidden_size, "num_layers": m.num_layers, "num_heads": m.num_heads,
                 "num_kv_heads": m.num_kv_heads, "tie_embeddings": m.tie_embeddings}
        if m.mla:
            extra.update({"mla_kv_rank": m.mla.kv_rank, "mla_q_rank": m.mla.q_rank, "mla_rope_dim": m.mla.rope_dim,
                          "mla_nope_dim": m.mla.nope_dim, "mla_v_dim": m.mla.v_dim})
        else:
            extra.update({"head_dim": m.head_dim, "intermediate_size": m.intermediate_size})
        if m.moe:
            extra.update({"experts": m.moe.experts, "top_k": m.moe.top_k, "shared_experts": m.moe.shared_experts,
                          "expert_ffn": m.moe.expert_ffn, "moe_layers": len(m.moe.moe_layers), "dense_layers": m.dense_layers})
        extra["mlp"] = f"{m.mlp_kind} ({m.hidden_act}): {m.mlp_matrices} weight matrices per MLP"
        extra["attention"] = _windows_line(m)
        if m.blocks:
            extra["blocks"] = f"{m.blocks} of one sublayer each; two make one of the step model's {m.num_layers} layers"
        if m.nested_in:
            extra["language_model"] = f"read from {m.nested_in}; the vision tower is not counted"
        if m.quantization:
            extra["checkpoint_weights"] = m.quantization_summary()
    if fmt == "json":
        if kind == "model":
            extra = {**extra, "attention_windows": [list(g) for g in m.attention_windows],
                     "weight_formats": dict(m.weight_formats) if m.quantization else None}
        return json.dumps({**meta, **extra, **_json_numbers(facts)}, indent=2, ensure_ascii=False)
    lines = [f"{meta['name']} ({meta['key']}), status {meta['status']}", f"source: {meta['source']}"]
    lines += [f"  {k}: {v}" for k, v in extra.items()]
    lines += _quantity_rows(facts)
    if meta["notes"]:
        lines += ["notes:", *("  " + line for line in meta["notes"].splitlines())]
    return "\n".join(lines)


#: how `roofline show model` names a kind of layer, by its type (a span in tokens where it has one)
LAYER_KIND_TEXT = {"full_attention": "full context", "sliding_attention": "sliding window of {w} tokens", "chunked_attention": "chunks of {w} tokens",
                   "sparse_attention": "sparse attention, top {w} tokens of the whole context", "linear_attention": "linear attention (a fixed-size state)",
                   "mamba": "Mamba-2 (a fixed-size state)", "mlp": "MLP only"}


def _windows_line(m: Any) -> str:
    """'10 layers full context, 52 layers sliding window of 1024 tokens' from an Architecture's layer types and spans."""
    counts: dict[tuple[str, int | None], int] = {}
    for t, w in zip(m.layer_types, m.layer_windows or (None,) * m.num_layers, strict=True):
        counts[(t, w)] = counts.get((t, w), 0) + 1
    order = sorted(counts, key=lambda k: (list(LAYER_KIND_TEXT).index(k[0]), k[1] or 0))
    unit = "block" if m.blocks else "layer"
    return ", ".join(f"{counts[k]} {unit}{'s' * (counts[k] != 1)} {LAYER_KIND_TEXT[k[0]].format(w=k[1])}" for k in order)


def _list(what: str) -> str:
    from .derivations.questions.registry import QUESTIONS
    from .specs.hardware import load_hardware
    from .specs.models import load_model

    if what == "hardware":
        return "\n".join(f"{n:<16} {load_hardware(n).name}" for n in hardware_names())
    if what == "models":
        return "\n".join(f"{n:<18} {load_model(n).name}" for n in model_names())
    if what == "symbols":
        from .derivations.physics.glossary import GLOSSARY

        return "\n".join(f"{i.name:<12} {i.unit_text:<24} {i.meaning.replace('$', '')}" for i in GLOSSARY)
    return "\n".join(f"{q.slug:<26} {q.title}" for q in QUESTIONS)


def _pairs(items: list[str], option: str, what: str) -> dict[str, str]:
    """NAME=VALUE options as a dict; one clean line for a malformed or repeated one."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise RooflineError(f"{option}: expected {what}, found {item[:40]!r}")
        if name in out:
            raise RooflineError(f"{option}: {name[:40]} given twice; give each once")
        out[name] = value.strip()
    return out


def _check(args: argparse.Namespace) -> str:
    from .formulas import check_formula, symbols
    from .renderers.check import render

    if args.against is not None:
        return _grade(args)
    if args.tolerance is not None:
        raise RooflineError("--tolerance: goes with --against SLUG:RESULT")
    if args.fragment and args.format != "tex":
        raise RooflineError(f"--fragment: a fragment is LaTeX only: use --format tex, found --format {args.format}")
    table = symbols(_pairs(args.symbol, "--symbol", "NAME=UNIT"))
    checked = check_formula(args.expr, table, expect=args.expect, solve_for=args.solve_for, equals=args.equals, hardware=args.hardware,
                            model=args.model, weights=args.weights, kv=args.kv, math=args.math, inputs=_pairs(args.set, "--set", "NAME=VALUE"),
                            engine=args.engine)
    return render(checked, args.format, fragment=args.fragment)


def _grade(args: argparse.Namespace) -> str:
    """`check ANSWER --against SLUG:RESULT`: the verdict in one line, then the details (text), or JSON."""
    from .grading.answer import grade
    from .grading.words import render

    for option, given in (("--symbol", args.symbol), ("--expect", args.expect), ("--solve-for", args.solve_for), ("--equals", args.equals),
                          ("--fragment", args.fragment)):
        if given:
            raise RooflineError(f"{option}: not with --against, which compares the answer with the sheet's own step in the sheet's symbols")
    if args.format not in ("text", "json"):
        raise RooflineError(f"--format {args.format}: --against prints text or json")
    pairs = _pairs(args.set, "--set", "NAME=VALUE")
    verdict = grade(args.expr, args.against, args.hardware, args.model, weights=args.weights, kv=args.kv, math=args.math,
                    overrides=[f"{k}={v}" for k, v in pairs.items()], tolerance=args.tolerance, engine=args.engine)
    return render(verdict, args.format)


def _quiz(args: argparse.Namespace) -> int:
    """`roofline quiz`: the paper (or key) to stdout, every file into --out, or the questions put to a candidate with --ask."""
    from . import quiz
    from . import quiz_paper as quiz_text
    from .grading import words as grade_text

    if args.ask and (args.out is not None or args.key):
        raise RooflineError(f"--ask: asks the questions at a terminal; not with {'--out' if args.out is not None else '--key'}")
    if args.tolerance is not None and not args.ask:
        raise RooflineError("--tolerance: goes with --ask")
    if args.ask and not quiz.terminal():
        raise RooflineError(f"--ask reads a candidate's answers from a terminal, and {'stdin is closed' if sys.stdin is None else 'this is not one'}; "
                            "print the question paper with `roofline quiz` and its key with `roofline quiz --key`")
    if args.format == "apkg" and args.key:
        raise RooflineError("--key: an Anki deck holds each answer on the back of its card; not with --format apkg")
    if args.format == "apkg" and args.out is None and sys.stdout is not None and sys.stdout.isatty():
        raise RooflineError("--format apkg: the deck is a binary file; redirect it (roofline quiz --format apkg > quiz.apkg) or give --out DIR")
    sheets = None if args.sheets is None else args.sheets.split(",")
    drawn = quiz.draw(args.seed, args.count, sheets)
    if args.ask:
        def read(prompt: str) -> str:
            try:
                return input(prompt)
            except EOFError:
                return ""
        quiz.ask(drawn, read, sys.stdout, quiz_text.question_text, quiz_text.argument_text, quiz_text.bound_text, grade_text.line,
                 **({} if args.tolerance is None else {"tolerance": args.tolerance}))
        return 0
    from . import practice
    from .quiz_deck import deck

    if args.out is not None:
        files: dict[str, str | bytes] = {f"{part}.{fmt}": quiz_text.render(drawn, fmt, key=part == "key")
                                         for part in ("paper", "key") for fmt in ("md", "tex")}
        files["quiz.json"] = quiz_text.render(drawn, "json", key=True)
        files["deck.apkg"] = deck(drawn)
        files[practice.PAGE] = practice.render(drawn)
        files[practice.SCRIPT] = practice.script()
        written = quiz.write_files(drawn, folder_option("--out", args.out), files)
        print(f"wrote {len(written)} files to {shown_path(args.out)}: {', '.join(p.name for p in written)}")
        return 0
    if args.format == "apkg":
        data = deck(drawn)
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    sys.stdout.write(quiz_text.render(drawn, args.format, key=args.key))
    return 0


#: A --plots folder is written into Markdown links and LaTeX \includegraphics as given: plain path characters only.
_PLOTS_FOLDER = re.compile(r"[A-Za-z0-9._/-]+")


def _plots_folder(text: str) -> str:
    from .specs.errors import SpecError

    if not _PLOTS_FOLDER.fullmatch(text):
        raise SpecError("--plots", None, f"expected a folder path of letters, digits, '.', '_', '-' and '/' (it is written into the links), found {text[:40]!r}")
    return text.rstrip("/") or text


def _write_plots(files: dict[str, bytes]) -> None:
    """Write the plot files through specs.files: all of them or none (a link where one goes is replaced, not followed)."""
    from .specs.files import replace_files

    replace_files({Path(name): data for name, data in sorted(files.items())}, option="--plots")


#: The options of the command this process runs (set once its line is parsed): a warning's advice names only one of them.
_options: frozenset[str] | None = None


def run(argv: Sequence[str] | None = None, light: bool = False) -> int:
    """The command `argv`; with `light`, a `derive` the compiled form can answer is printed from it (roofline.compiled)."""
    global _options
    parser = _parser()
    args = parser.parse_args(argv)
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    _options = frozenset(commands.choices[args.command]._option_string_actions)
    if args.command == "list":
        print(escaped(_list(args.what)))
    elif args.command == "show":
        print(escaped(_show(args.kind, args.name, args.format)))
    elif args.command == "derive":
        from . import compiled

        text = compiled.derive(args) if light else None  # the light path: no sympy or pint; None where it cannot answer
        if text is not None:
            sys.stdout.write(text)
            return 0
        from . import api

        sheet = api.derive(args.slug, args.hardware, args.model, args.weights, args.kv, args.math, args.set,
                           second_hardware=args.second_hardware, second_model=args.second_model, engine=args.engine)
        if args.plots is not None:
            folder = _plots_folder(args.plots)
            _write_plots(api.plot_files(sheet, folder))
        sys.stdout.write(api.render(sheet, args.format, fragment=args.fragment, plots=folder if args.plots is not None else None))
    elif args.command == "check":
        sys.stdout.write(_check(args))
    elif args.command == "quiz":
        return _quiz(args)
    elif args.command == "tex-preamble":
        from .renderers.latex import preamble

        sys.stdout.write(preamble())
    elif args.command == "sweep":
        from . import api

        split = lambda values: None if values is None else [n.strip() for v in values for n in v.split(",")]  # noqa: E731
        for piece in api.sweep_pieces(args.slug, args.result, args.over, split(args.hardware), split(args.model), args.weights, args.kv, args.math,
                                      args.set, second_hardware=args.second_hardware, second_model=args.second_model, fmt=args.format, unit=args.unit,
                                      engine=args.engine):
            sys.stdout.write(piece)
    elif args.command == "validate":
        from .validate import render_validate, report

        sys.stdout.write(render_validate(report(), args.format))
    elif args.command == "calibrate":
        from .calibration import calibrate_files, given, looks_like_file
        from .validate import render_calibrate, write_defaults

        files = [a for a in args.records or () if looks_like_file(a)]
        own = ("hardware", "model", "weights", "kv", "math", "name", "engine")
        if args.write_defaults or (args.records and not files):
            extra = next((f"--{k}" for k in own if getattr(args, k) is not None), "--set" if args.set else None)
            if extra is not None:
                raise RooflineError(f"{extra}: goes with --from FILE (your result files), not with "
                                    f"{'--write-defaults' if args.write_defaults else 'record ids'}")
            if args.to is not None and not args.write_defaults:
                raise RooflineError("--to: goes with --write-defaults or with --from FILE --name NAME")
            sys.stdout.write(write_defaults(folder_option("--to", args.to) if args.to is not None else None) if args.write_defaults
                             else render_calibrate(args.records, args.format))
        else:
            ids = [a for a in args.records if a not in files]
            if ids:
                raise RooflineError(f"--from: {ids[0][:60]!r} is not a file; give result files or dataset record ids, not both")
            if args.to is not None and args.name is None:
                raise RooflineError("--to: goes with --name (the folder your named profile is written to)")
            g = given(args.hardware, args.model, args.set, args.weights, args.kv, args.math)
            sys.stdout.write(calibrate_files(files, g, args.name, folder_option("--to", args.to) if args.to is not None else None,
                                             args.engine, args.format))
    elif args.command == "diagnose":
        from .diagnose import diagnose

        sys.stdout.write(diagnose(args.trace, args.hardware, args.model, args.set, args.weights, args.kv, args.math, args.engine, args.format))
    elif args.command == "build":
        from .build import build, drawn_folder, render_all, ships, stale, stale_shipped
        from .build_outputs import BOOK, BuildError
        from .out_folder import out_path

        start = time.perf_counter()
        out = out_path(args.out)
        if args.check:
            if out.exists() and not out.is_dir():
                raise BuildError(f"--out {shown_path(out)}: is a file, expected a folder")
            shipped: dict[str, bytes] | None = {} if ships(out, args.engine) else None
            files = render_all(engine=args.engine, pdf=(out / f"{BOOK}.pdf").is_file(),  # a --pdf build's site links its PDFs
                               drawn=drawn_folder(out), shipped=shipped)
            bad = stale(out, files)
            if shipped is not None:
                more, note = stale_shipped(shipped)
                bad += more
                if note:
                    _say("warning", note)
            if bad:
                _say_line(f"roofline: {shown_path(out)} is stale: {', '.join(bad)}; run `roofline build`\n")
                return EXIT_STALE
            print(f"{shown_path(out)} is up to date")
            return 0
        written = build(out, pdf=args.pdf, engine=args.engine, progress=None if args.quiet else terminal_progress())
        print(f"wrote {len(written)} files to {shown_path(out)} in {time.perf_counter() - start:.1f} s")
    return 0


def _say(kind: str, message: object) -> None:
    """One `roofline: error:` (or `warning:`) line on stderr: any character that would act on the terminal written as an escape."""
    _say_line(f"roofline: {kind}: {escaped(str(message))}\n")


def _say_line(text: str) -> None:
    """`text` on stderr; nothing where stderr is closed or cannot be written (there is nowhere else to say it)."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        try:
            stream.write(text)
        except UnicodeEncodeError:  # stderr's encoding (PYTHONIOENCODING=ascii) cannot write a character: say it in ASCII
            stream.write(text.encode("ascii", "backslashreplace").decode("ascii"))
        stream.flush()
    except (OSError, ValueError):  # closed, a broken pipe, a full disk: the line is lost, the exit code still says it
        pass


class StreamError(RooflineError):
    """stdout cannot be written (closed, a reader gone, a full disk)."""


class _Stdout:
    """sys.stdout while a command runs: a failed write is one StreamError naming stdout, not an OSError from nowhere."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _fail(self, err: OSError) -> NoReturn:
        self.failed = True
        if isinstance(err, BrokenPipeError):
            raise StreamError("stdout: its reader closed it before all the output was written (broken pipe)") from None
        raise StreamError(f"stdout: cannot write the output ({err.strerror or err})") from None

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as err:
            self._fail(err)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as err:
            self._fail(err)


def _closed_streams() -> list[str]:
    """The standard streams this process started without (`>&-`), each of whose descriptors is then opened on the null device, so
    no file roofline opens later takes its number (a closed stdout's descriptor 1 would be a written file's)."""
    closed = []
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            if getattr(sys, name) is None:
                closed.append(name)
        except OSError:
            closed.append(name)
            try:
                null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
            except OSError:
                pass
    return closed


def terminal_progress() -> Callable[[str], None] | None:
    """A progress report for long work: each line on stderr, with the seconds since it began; None when stderr is not a terminal."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return None
    start = time.perf_counter()

    def say(line: str) -> None:
        print(f"roofline: {time.perf_counter() - start:5.1f} s  {line}", file=sys.stderr, flush=True)

    return say


def _warning_sink() -> Callable[..., None]:
    """What shows a warning for one run: each text once, and a SpecWarning's advice only where it names an option this command has."""
    said: set[str] = set()

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None, line: str | None = None) -> None:
        text = str(message)
        if isinstance(message, SpecWarning) and message.flag is not None and _options is not None and message.flag not in _options:
            text = message.bare
        if text not in said:
            said.add(text)
            _say("warning", text)

    return show


def main(argv: Sequence[str] | None = None, *, light: bool | None = None) -> int:
    """The command: `argv` (default: the process's command line) run, one line on stderr for bad input.

    `light`: print a `derive` from the sheet's compiled form where it can (roofline.compiled: the same output, without
    sympy or pint). The default is on for the process's own command line (`argv` None) and off for a caller passing
    `argv`, whose process may have been changed in ways the compiled form does not see (a test's monkeypatch).
    """
    global _options
    _options = None
    closed = _closed_streams()
    if "stdout" in closed:
        _say("error", "stdout is closed, so nothing could be printed; nothing was done (give the command somewhere to write, e.g. > file)")
        return EXIT_BAD_INPUT
    real = sys.stdout
    guarded = sys.stdout = _Stdout(real)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", SpecWarning)
            warnings.showwarning = _warning_sink()
            code = run(argv, light=argv is None if light is None else light)
        guarded.flush()
        return code
    except RooflineError as err:
        _say("error", err)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _say("error", "interrupted")
        return EXIT_INTERRUPTED
    except UnicodeEncodeError as err:
        encoding = getattr(real, "encoding", None) or "?"
        _say("error", f"stdout's encoding ({encoding}) cannot write {err.object[err.start:err.end]!r}; nothing was printed. "
                      "Set PYTHONIOENCODING=utf-8 (or a UTF-8 locale)")
        return EXIT_BAD_INPUT
    except OSError as err:
        # A safety net: file-system failures the code above did not turn into a RooflineError.
        where = f"{shown_path(err.filename)}: " if isinstance(err.filename, str) else ""
        _say("error", f"{where}{err.strerror or err}")
        return EXIT_BAD_INPUT
    finally:
        if sys.stdout is guarded:
            sys.stdout = real
        if guarded.failed and real is sys.__stdout__:
            _drop_stdout(real)


def _drop_stdout(stream: Any) -> None:
    """After stdout failed: its descriptor on the null device, so the interpreter's last flush at exit has nothing to complain of."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass

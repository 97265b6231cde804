"""The `roofline` command line. Bad input: one line on stderr, exit code 2."""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from derivations.facts import hardware_facts, model_facts
from derivations.registry import DERIVATIONS
from renderers.numbers import plain
from roofline import api
from roofline.build import BuildError, build, out_path, render_all, shown_path, stale
from specs.catalog import hardware_names, model_names
from specs.hardware import SpecWarning
from units import RooflineError

EXIT_BAD_INPUT = 2
EXIT_STALE = 1


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"roofline: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="roofline", description="The physics of LLM inference as unit-checked derivations.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ls = sub.add_parser("list", help="list hardware, models or questions")
    ls.add_argument("what", choices=("hardware", "models", "questions"))

    show = sub.add_parser("show", help="show a hardware or model spec with derived figures")
    show.add_argument("kind", choices=("hardware", "model"))
    show.add_argument("name", help="a shipped name or a path to your own file")
    show.add_argument("--format", choices=("text", "json"), default="text")

    derive = sub.add_parser("derive", help="print one answer sheet")
    derive.add_argument("slug")
    derive.add_argument("--hardware", help="name or path (default: the sheet's defaults)")
    derive.add_argument("--model", help="name or path (default: the sheet's defaults)")
    derive.add_argument("--second-hardware", help="the chip compared with (hardware-upgrade); name or path")
    derive.add_argument("--second-model", help="the second model (speculative-decoding's drafter); name or path")
    derive.add_argument("--weights", help="weight precision: bf16, fp16, fp8, int8, int4, int4-g128, fp4")
    derive.add_argument("--kv", help="KV-cache precision")
    derive.add_argument("--math", help="math precision (which tensor peak); default: the weights' math")
    derive.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="set a scenario input, e.g. context=8192 or t_fixed=0.5ms")
    derive.add_argument("--format", choices=("md", "tex", "json"), default="md")

    b = sub.add_parser("build", help="write every sheet to out/ (md, tex, json; --pdf too)")
    b.add_argument("--out", default="out", help="the folder to write (default: out); it is replaced as a whole, atomically")
    b.add_argument("--pdf", action="store_true", help="also compile each .tex with pdflatex")
    b.add_argument("--check", action="store_true", help="exit 1 when out/ is stale; write nothing")
    return p


def _quantity_rows(facts: dict[str, Any]) -> list[str]:
    width = max(len(k) for k in facts)
    return [f"  {k:<{width}}  {plain(v.magnitude, v.units)}" for k, v in facts.items()]


def _json_numbers(facts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, q in facts.items():
        base = q.to_base_units().magnitude
        out[k] = int(base) if float(base).is_integer() and abs(base) < 2**53 else float(base)
    return out


def _show(kind: str, name: str, fmt: str) -> str:
    if kind == "hardware":
        hw = api.hardware(name)
        facts = hardware_facts(hw)
        meta = {"key": hw.key, "name": hw.name, "vendor": hw.vendor, "status": hw.status, "source": hw.source, "notes": hw.notes.strip()}
        extra = {k: v for k, v in (("on_chip_memory_kind", hw.on_chip_memory_kind), ("compute_unit_kind", hw.compute_unit_kind), ("scaleup_interconnect", hw.scaleup_interconnect)) if v}
    else:
        m = api.model(name)
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
    if fmt == "json":
        return json.dumps({**meta, **extra, **_json_numbers(facts)}, indent=2, ensure_ascii=False)
    lines = [f"{meta['name']} ({meta['key']}), status {meta['status']}", f"source: {meta['source']}"]
    lines += [f"  {k}: {v}" for k, v in extra.items()]
    lines += _quantity_rows(facts)
    if meta["notes"]:
        lines += ["notes:", *("  " + line for line in meta["notes"].splitlines())]
    return "\n".join(lines)


def _list(what: str) -> str:
    if what == "hardware":
        return "\n".join(f"{n:<16} {api.hardware(n).name}" for n in hardware_names())
    if what == "models":
        return "\n".join(f"{n:<18} {api.model(n).name}" for n in model_names())
    return "\n".join(f"{d.slug:<26} {d.title}" for d in DERIVATIONS)


def run(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "list":
        print(_list(args.what))
    elif args.command == "show":
        print(_show(args.kind, args.name, args.format))
    elif args.command == "derive":
        sheet = api.derive(args.slug, args.hardware, args.model, args.weights, args.kv, args.math, args.set,
                           second_hardware=args.second_hardware, second_model=args.second_model)
        sys.stdout.write(api.render(sheet, args.format))
    elif args.command == "build":
        start = time.perf_counter()
        out = out_path(args.out)
        if args.check:
            if out.exists() and not out.is_dir():
                raise BuildError(f"--out {shown_path(out)}: is a file, expected a folder")
            bad = stale(out, render_all())
            if bad:
                print(f"roofline: {shown_path(out)} is stale: {', '.join(bad)}; run `roofline build`", file=sys.stderr)
                return EXIT_STALE
            print(f"{shown_path(out)} is up to date")
            return 0
        written = build(out, pdf=args.pdf)
        print(f"wrote {len(written)} files to {shown_path(out)} in {time.perf_counter() - start:.1f} s")
    return 0


def _warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None, line: str | None = None) -> None:
    print(f"roofline: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", SpecWarning)
            warnings.showwarning = _warning_line
            return run(argv)
    except RooflineError as err:
        print(f"roofline: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except OSError as err:
        # A safety net: file-system failures the code above did not turn into a RooflineError.
        where = f"{shown_path(err.filename)}: " if isinstance(err.filename, str) else ""
        print(f"roofline: error: {where}{err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT

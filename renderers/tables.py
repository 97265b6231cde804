"""A sheet's tables laid out for reading, and cut to fit a LaTeX page.

One unit per column (in its header), a column equal on every row said once in the note, counts whole (the rounding said
once), the hardware (or model) column dropped where no value depends on it, short chip names, a grid of models against
chips where one column changes by chip, why some cells have no value said once after the rows; `split_to_fit` cuts a
table too long or too wide for the page into parts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..derivations.engine.blueprint import Blueprint, StepEntry
from ..derivations.engine.run import SolvedTable, Value
from ..units import pintless
from .numbers import Shown, display
from .printed import math_width
from .sheet_prose import Prose, join_words
from .targets import Target
from .value_text import DIMENSIONLESS, ROUNDING_WORDS, count_shown, is_count, reason_text, shown, whole

#: What a row's label says when its setup does not fit in memory.
DOES_NOT_FIT = " (does not fit)"
#: A column whose value is the same on at least this many rows moves into the table's note.
MIN_ROWS_TO_DROP_A_CONSTANT_COLUMN = 3
#: The width a LaTeX table may take before it is split into parts, in the units of `targets.math_width` (about a character
#: of small type, about 4.6 pt; the text block is 16.6 cm, 470 pt).
TABLE_WIDTH = 100
_VENDOR = re.compile(r"^(NVIDIA|AMD Instinct|AMD|Google|Intel)\s+")
_MEMORY = re.compile(r"\s+\d+\s?GB$")


def short_chip(name: str) -> str:
    """A chip's name short enough for a table column: no vendor, no memory size, no parenthetical ('NVIDIA H100 SXM5 80GB' -> 'H100 SXM5')."""
    short = _MEMORY.sub("", re.sub(r"\s*\(.*?\)", "", _VENDOR.sub("", name))).strip()
    return short or name


def _common_unit(cells: Sequence[Value | None]) -> str | None:
    """One display unit for a column whose values would otherwise show in several (ms and µs): the one most of them read best in."""
    units = [shown(c).unit.text for c in cells if c is not None and not c.missing]
    if len(set(units)) <= 1:
        return None
    best = max(dict.fromkeys(units), key=lambda u: (sum(1 for c in cells if c is not None and not c.missing and _in_range(c, u)), units.count(u)))
    return best


def _in_range(v: Value, u: str) -> bool:
    try:
        m = abs(float(pintless.convert(float(v.exact), pintless.unit(v.unit), pintless.unit(u))))  # type: ignore[arg-type]
    except (pintless.LightUnitError, TypeError, ValueError):
        return False
    return 1 <= m < 1000


def table_items(tb: SolvedTable, d: Blueprint, target: Target, p: Prose) -> list[dict[str, Any]]:
    """A table over chips and models as read: the columns no chip changes once per model; the ones a chip changes by chip,
    as a grid of models against chips when there is one such column."""
    parts = list(tb.parts) if tb.parts and all(x is not None for x in tb.parts) else None
    if parts is None or len({hw for hw, _ in parts}) < 2:
        return [_table(tb, d, target, p)]
    by_chip = [j for j in range(len(tb.columns)) if _varies_by_chip([(r[0], (r[1][j],), r[2]) for r in tb.rows], parts)]
    if not by_chip or (len(by_chip) == len(tb.columns) and len(by_chip) > 1):
        return [_table(tb, d, target, p)]
    others = [j for j in range(len(tb.columns)) if j not in by_chip]
    out = [_table(_columns(tb, others), d, target, p)] if others else []
    chip_table = _table(replace(_columns(tb, by_chip), title=tb.title + (" by chip" if others else "")), d, target, p)
    models = list(dict.fromkeys(m for _, m in parts))
    if len(by_chip) == 1 and len(models) > 1 and len(chip_table["label_headers"]) == 2:
        chip_table = _pivot(chip_table, target)
    return [*out, chip_table]


def _columns(tb: SolvedTable, keep: Sequence[int]) -> SolvedTable:
    return replace(tb, columns=tuple(tb.columns[j] for j in keep),
                   rows=tuple((label, tuple(cells[j] for j in keep), why) for label, cells, why in tb.rows))


def _varies_by_chip(rows: Sequence[tuple[str, tuple[Value | None, ...], str]], parts: Sequence[tuple[str, str]]) -> bool:
    return _depends(rows, parts)[0]


def _pivot(table: dict[str, Any], target: Target) -> dict[str, Any]:
    """A one-column table of (chip, model) rows as a grid: one row per model, one column per chip."""
    chips = list(dict.fromkeys(r["labels"][0] for r in table["rows"]))
    grid: dict[str, dict[str, str]] = {}
    reasons: dict[str, list[str]] = {}
    for r in table["rows"]:
        grid.setdefault(r["labels"][1], {})[r["labels"][0]] = r["cells"][0]
        reasons.setdefault(r["labels"][1], [])
        reasons[r["labels"][1]] += [x for x in r["reasons"] if x not in reasons[r["labels"][1]]]
    header = table["headers"][0]
    rows = [{"label": model, "labels": [model], "cells": [cells.get(c, target.text(NO_VALUE)) for c in chips], "reasons": reasons[model]}
            for model, cells in grid.items()]
    return {**table, "title": table["title"] + target.text(": ") + header, "headers": chips, "header_names": chips,
            "label_headers": [target.text("model")], "rows": rows, "whys": _whys(rows, target)}


def _table(tb: SolvedTable, d: Blueprint, target: Target, p: Prose) -> dict[str, Any]:
    """A table laid out for reading: one unit per column (in its header), a column equal on every row said once in the note,
    counts whole (the rounding said once), the hardware (or model) column dropped when no value depends on it, short chip names."""
    t = target.text
    rows_in = list(tb.rows)
    parts = list(tb.parts) if tb.parts and all(x is not None for x in tb.parts) else None
    settings = list(tb.settings or [()] * len(rows_in))
    authored = list(tb.authored or [False] * len(rows_in))
    overflows = list(tb.overflows or [False] * len(rows_in))
    keep_hw = keep_model = True
    if parts is not None:
        keep_hw, keep_model = _depends(rows_in, parts)
        if not (keep_hw and keep_model):
            key = _row_keys(parts, keep_hw, keep_model, settings)
            keep_idx = [i for i, k in enumerate(key) if k not in key[:i]]  # the first row of each key
            # a row that stands for several chips (or models) does not fit only if it fits on none of them
            overflows = [all(o for k, o in zip(key, overflows, strict=True) if k == key[i]) for i in range(len(parts))]
            rows_in = [rows_in[i] for i in keep_idx]
            parts = [parts[i] for i in keep_idx]
            settings, authored, overflows = ([x[i] for i in keep_idx] for x in (settings, authored, overflows))
    n = len(rows_in)
    steps = [d.step(c) for c, _ in tb.columns]
    keep, constants, headers, col_units, rounded = [], [], [], [], []
    for j, (_, latex) in enumerate(tb.columns):
        col = [cells[j] for _, cells, _ in rows_in]
        forced = None if steps[j].counts else _common_unit(col)
        texts = {_cell_text(c, steps[j], target, forced, with_unit=True) for c in col if c is not None and not c.missing}
        if n >= MIN_ROWS_TO_DROP_A_CONSTANT_COLUMN and len(texts) == 1 and all(c is not None and not c.missing for c in col):
            constants.append(target.inline_math(latex) + " = " + texts.pop())
            continue
        keep.append(j)
        shown_units = {_shown_in(c, forced).unit.text for c in col if c is not None and not c.missing}
        first = next((c for c in col if c is not None and not c.missing), None)
        shared = _shown_in(first, forced).unit if first is not None and len(shown_units) == 1 and shown_units != {"1"} else None
        col_units.append(shared)
        noun = steps[j].counts if steps[j].counts and shown_units == {"1"} else ""
        header_unit = target.unit(shared) if shared is not None else (t(noun) if noun else "")
        headers.append(target.inline_math(latex) + (f" ({header_unit})" if header_unit else ""))
        if steps[j].counts and any(c is not None and not c.missing and not is_count(whole(steps[j], c), c.exact) for c in col):
            rounded.append((steps[j], latex))
    note = p(tb.note)
    extra = []
    if constants:
        extra.append(t("On every row: ") + ", ".join(constants) + t("."))
    by_rounding: dict[str, list[str]] = {}
    for step, latex in rounded:
        by_rounding.setdefault(step.rounds, []).append(target.inline_math(latex))
    if by_rounding:
        extra.append(t("Whole numbers: ") + t("; ").join(join_words(symbols, target) + t(f" {ROUNDING_WORDS[how]}") for how, symbols in by_rounding.items())
                     + t("."))
    chips = sorted({hw for hw, _ in parts}) if parts is not None and keep_hw else []
    key = [(short_chip(c), c) for c in chips if short_chip(c) != c]
    if key:
        extra.append(t("Chips: ") + t("; ").join(t(f"{s}: {c}") for s, c in key) + t("."))
    note = " ".join(x for x in (note, *extra) if x)
    rows = []
    label_headers = [x for x, on in ((t("hardware"), keep_hw), (t("model"), keep_model)) if on] if parts is not None else [""]
    for i, ((label, cells, why), setting, auth, over) in enumerate(zip(rows_in, settings, authored, overflows, strict=True)):
        fits = t(DOES_NOT_FIT) if over else ""
        if parts is not None:
            hw, model = parts[i]
            labels = [x for x, on in ((t(short_chip(hw)), keep_hw), (_row_label(t(model), setting, target), keep_model)) if on]
            labels[-1] += fits
        else:
            labels = [_row_label(p(label) if auth else t(short_chip(label)), setting, target) + fits]
        rows.append({"label": " · ".join(labels) if len(labels) > 1 else labels[-1], "labels": labels,
                     "cells": [_cell_text(cells[j], steps[j], target, _unit_name(col_units[k]), with_unit=col_units[k] is None and not _dimless_count(steps[j], cells[j]))
                               for k, j in enumerate(keep)],
                     "reasons": _row_reasons(cells, why, target)})
    return {"title": p(tb.title), "note": note, "headers": headers, "label_headers": label_headers,
            "header_names": [t(tb.columns[j][0]) for j in keep], "rows": rows, "whys": _whys(rows, target)}


def _whys(rows: Sequence[dict[str, Any]], target: Target) -> list[str]:
    """Why some cells have no value, each reason once, after the rows it applies to ("$B = 8$ and $B = 16$: ..."); the
    reasons of the same rows on one line, the rows named once."""
    by_reason: dict[str, list[str]] = {}
    for r in rows:
        for reason in r["reasons"]:
            by_reason.setdefault(reason, []).append(r["label"])
    by_rows: dict[tuple[str, ...], list[str]] = {}
    for reason, labels in by_reason.items():
        by_rows.setdefault(tuple(labels), []).append(reason)
    return [join_words(list(labels), target) + target.text(": ") + target.text("; ").join(reasons) for labels, reasons in by_rows.items()]


def _unit_name(u: Any) -> str | None:
    return u.text if u is not None else None


def _dimless_count(step: StepEntry, c: Value | None) -> bool:
    return bool(step.counts) and c is not None and c.unit == "1"


def _depends(rows: Sequence[tuple[str, tuple[Value | None, ...], str]], parts: Sequence[tuple[str, str]]) -> tuple[bool, bool]:
    """(a hardware column, a model column): each only where some value differs by it; the model column when neither does."""
    def key(cells: tuple[Value | None, ...]) -> tuple[object, ...]:
        return tuple(None if c is None else (c.missing.kind if c.missing else c.exact) for c in cells)

    def varies(by: int) -> bool:
        """Whether some row differs from another that has the same model (by=0) or the same chip (by=1)."""
        groups: dict[str, set[tuple[object, ...]]] = {}
        for (_, cells, _), part in zip(rows, parts, strict=True):
            groups.setdefault(part[1 - by], set()).add(key(cells))
        return any(len(v) > 1 for v in groups.values())

    keep_hw = len({hw for hw, _ in parts}) > 1 and varies(0)
    keep_model = (len({m for _, m in parts}) > 1 and varies(1)) or not keep_hw
    return keep_hw, keep_model


def _row_keys(parts: Sequence[tuple[str, str]], keep_hw: bool, keep_model: bool, settings: Sequence[object]) -> list[tuple[object, ...]]:
    """What tells rows apart once a chip (or model) column is dropped: the kept chip and model, and the row's settings as
    (input, value) pairs (the layouts of one chip and model are different rows)."""
    return [(hw if keep_hw else "", m if keep_model else "",
             tuple((name, str(getattr(v, "exact", v))) for name, _, v in x) if isinstance(x, tuple) else ())
            for (hw, m), x in zip(parts, settings, strict=True)]


def _shown_in(c: Value, forced: str | None) -> Shown:
    if forced is None or c.exact is None:
        return shown(c)
    return display(c.exact, c.unit, forced, exact_unit=True)


#: A cell with no value (the step has none in the row's setup, or does not apply to it): a dash, the reason in the note
#: under the table (`_whys`), never a code word ("none", "n/a").
NO_VALUE = "\u2014"


def _cell_text(c: Value | None, step: StepEntry, target: Target, forced: str | None, with_unit: bool) -> str:
    if c is None or c.missing:
        return target.text(NO_VALUE)
    counted = count_shown(step, c)
    s = counted if counted is not None else _shown_in(c, forced)
    return target.quantity_text(s if with_unit else Shown(s.number, DIMENSIONLESS))


#: A table longer than this many lines is printed in parts of at most this many (a LaTeX tabular does not break across pages;
#: a row whose label wraps counts its lines).
MAX_TABLE_ROWS = 20
#: A LaTeX label column holding labels up to this wide sets them on one line; a wider one wraps them in LABEL_WRAP.
LABEL_ONE_LINE = 36
LABEL_WRAP = "5.6cm"


def split_to_fit(table: dict[str, Any], target: Target) -> list[dict[str, Any]]:
    """A table too wide for the page as parts that fit (labels repeated); one that fits stays whole.

    Also gives each label column its LaTeX column type (`label_specs`): one line where the labels are short, wrapped where not.
    A table longer than MAX_TABLE_ROWS rows is first cut into parts of at most that many rows (a LaTeX tabular does not break
    across pages); the note goes with the first part, the reasons with the last.
    """
    rows = table["rows"]
    # a row whose labels wrap takes the lines they wrap to: parts are cut by lines, not rows
    lines = [max([1] + [math.ceil(math_width(_plain(x)) / LABEL_ONE_LINE) for x in r["labels"]]) for r in rows]
    if sum(lines) > MAX_TABLE_ROWS:
        count = -(-sum(lines) // MAX_TABLE_ROWS)
        budget = -(-sum(lines) // count)
        cuts, used = [0], 0
        for i, n in enumerate(lines):
            if used and used + n > budget:
                cuts.append(i)
                used = 0
            used += n
        bounds = list(zip(cuts, [*cuts[1:], len(rows)], strict=True))
        return [part for k, (start, end) in enumerate(bounds)
                for part in split_to_fit({**table, "title": table["title"] + target.text(f" (rows {start + 1} to {end} of {len(rows)})"),
                                          "note": table["note"] if k == 0 else "", "rows": rows[start:end],
                                          "whys": table["whys"] if k == len(bounds) - 1 else []}, target)]
    label_ws = [max([math_width(_plain(r["labels"][k])) for r in table["rows"]] + [math_width(_plain(h))])
                for k, h in enumerate(table["label_headers"])]
    table = {**table, "label_specs": ["l" if w <= LABEL_ONE_LINE else rf">{{\raggedright\arraybackslash}}p{{{LABEL_WRAP}}}" for w in label_ws]}
    label_w = sum(min(w, LABEL_ONE_LINE) for w in label_ws)
    widths = [max([math_width(_plain(header))] + [math_width(_plain(r["cells"][k])) for r in table["rows"]]) + 2
              for k, header in enumerate(table["headers"])]
    if label_w + sum(widths) <= TABLE_WIDTH or len(widths) <= 1:
        return [table]
    groups, cur, used = [], [], label_w
    for k, w in enumerate(widths):
        if cur and used + w > TABLE_WIDTH:
            groups.append(cur)
            cur, used = [], label_w
        cur.append(k)
        used += w
    groups.append(cur)
    if len(groups) == 1:
        return [table]
    out = []
    for i, cols in enumerate(groups):
        out.append({**table, "title": table["title"] + target.text(f" (part {i + 1} of {len(groups)})"), "note": table["note"] if i == 0 else "",
                    "headers": [table["headers"][k] for k in cols], "header_names": [table["header_names"][k] for k in cols],
                    "rows": [{**r, "cells": [r["cells"][k] for k in cols]} for r in table["rows"]],
                    "whys": table["whys"] if i == len(groups) - 1 else []})
    return out


_TAGS = re.compile(r"<[^>]+>")


def _plain(text: str) -> str:
    """A cell's text without markup, math kept (for width estimates)."""
    return _TAGS.sub("", text).replace(r"\textbf", "").replace("$", "")


def _row_label(label: str, setting: tuple[tuple[str, str, Value], ...], target: Target) -> str:
    """A row's label: its text, then the inputs it sets as math ($B = 8$, $T = 8{,}192$ tokens)."""
    parts = [label] if label else []
    parts += [target.inline_math(f"{latex} = {target.quantity_math(shown(v))}") for _, latex, v in setting]
    return ", ".join(parts)


def _row_reasons(cells: tuple[Value | None, ...], why: str, target: Target) -> list[str]:
    """The reasons a row has no value in some cells (the cells show a dash, NO_VALUE), each once."""
    reasons = [target.text(why)] if why else []
    for c in cells:
        if c is not None and c.missing:
            text = reason_text(c.missing, target)
            if text not in reasons:
                reasons.append(text)
    return reasons

"""The printed forms of a derivation's steps: everything a sheet prints of a formula, made once per derivation.

A step's formula line, its numbers line (a `Printed` with a slot per symbol, filled with the numbers of each context),
an At step's replacements, the plain-text expression JSON carries, which symbols it shows and which sit inside a
floor or ceiling: all fixed by the derivation, none by a context. `forms_of` makes them with sympy (renderers.printer);
`Forms` is plain data that round-trips through JSON, so the light path (roofline.compiled) prints a sheet from the
stored forms without sympy. Renderers read a sheet's formulas only from here (`of(sheet)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .printed import Printed

#: bump when the forms' shape or the printer changes (part of the compiled form's cache key)
VERSION = 7


@dataclass(frozen=True)
class StepForm:
    """What a sheet prints of one step's formula (see the module docstring)."""

    #: the formula with the symbols' names (its lines: `formula.lines({})`)
    formula: Printed
    #: the formula with a slot per symbol, for the numbers line
    numbers: Printed
    #: the formula on one line, as JSON's `latex` and a family's table show it
    latex: str
    #: the formula as plain text (JSON's `expr`)
    text: str
    #: the spec-bound and input symbols the step shows where it is printed (the given table lists these)
    used: tuple[str, ...]
    #: the symbols inside a floor or ceiling (their numbers print with more figures), and the word for it
    rounded: tuple[str, ...]
    rounding: str
    #: an At step's head (the step it evaluates, primed where it reads the second chip or model), and each replacement
    #: it prints: (the replaced symbol's LaTeX, its value with a slot per symbol)
    at_head: str = ""
    at_where: tuple[tuple[str, Printed], ...] = ()
    #: the numbers line of a setup where some operands are 0 or a plain 1 (a dense model's MoE counts, a flag that is off, a
    #: batch of one), made with those values put in and the terms and factors they remove gone: by `special_key`
    special: Mapping[str, Printed] = field(default_factory=dict)

    def numbers_at(self, zeros: frozenset[str], ones: frozenset[str]) -> Printed:
        """The numbers line with the operands in `zeros` at 0 and those in `ones` at 1 put in (`special`): stored, made now
        where the form was made from its derivation (sympy), else MissingFormError (the light path: the full path prints it)."""
        key = special_key(zeros, ones)
        if key in self.special:
            return self.special[key]
        made = _MADE.get(id(self), {})
        if key in made:
            return made[key]
        source = _SOURCES.get(id(self))
        if source is None or source[0] is not self:
            raise MissingFormError(key)
        form = source[1](zeros, ones)
        _MADE.setdefault(id(self), {})[key] = form
        return form

    def to_json(self) -> dict[str, Any]:
        special = self.special  # the special lines made for a setup are stored apart, by the setups that need them (compiled)
        return {"formula": self.formula.to_json(), "numbers": self.numbers.to_json(), "latex": self.latex, "text": self.text,
                "used": list(self.used), "rounded": list(self.rounded), "rounding": self.rounding, "at_head": self.at_head,
                "at_where": [[k, v.to_json()] for k, v in self.at_where],
                "special": {k: v.to_json() for k, v in sorted(special.items())}}

    @classmethod
    def from_json(cls, data: Any) -> StepForm:
        special = data["special"]
        if not isinstance(special, dict):
            raise TypeError("expected a table of numbers forms")
        return cls(Printed.from_json(data["formula"]), Printed.from_json(data["numbers"]), _text(data["latex"]), _text(data["text"]),
                   _names(data["used"]), _names(data["rounded"]), _text(data["rounding"]), _text(data["at_head"]),
                   tuple((_text(k), Printed.from_json(v)) for k, v in data["at_where"]),
                   {_text(k): Printed.from_json(v) for k, v in special.items()})


class MissingFormError(KeyError):
    """A numbers line for a setup the stored forms were not made for: the light path leaves the sheet to the full path."""


def special_key(zeros: frozenset[str], ones: frozenset[str]) -> str:
    return "0:" + ",".join(sorted(zeros)) + "|1:" + ",".join(sorted(ones))


#: StepForms made from a derivation (the full path), by id: the form and what makes its special numbers lines; and the special
#: forms made so far, which `to_json` stores with it (the light path reads them back)
_SOURCES: dict[int, tuple[Any, Any]] = {}
_MADE: dict[int, dict[str, Printed]] = {}


@dataclass(frozen=True)
class Forms:
    """The printed forms of every step of one derivation, by step name."""

    steps: Mapping[str, StepForm]

    def __getitem__(self, name: str) -> StepForm:
        return self.steps[name]

    def with_special(self, special: Mapping[str, Mapping[str, Printed]]) -> Forms:
        """These forms with more special numbers lines (step -> key -> form): those a setup needs, made by `specials` (the
        full path) or read back from the compiled form (the light path)."""
        if not special:
            return self
        steps = dict(self.steps)
        for name, forms in special.items():
            form = steps[name]
            steps[name] = replace(form, special={**form.special, **forms})  # the setup's own lines: no source needed
        return Forms(steps)

    def to_json(self) -> dict[str, Any]:
        return {"forms": VERSION, "steps": {k: v.to_json() for k, v in self.steps.items()}}

    @classmethod
    def from_json(cls, data: Any) -> Forms:
        """Forms from `to_json`'s data; ValueError for anything else."""
        try:
            if not isinstance(data, dict) or data.get("forms") != VERSION:
                raise ValueError("not printed forms of this version")
            return cls({_text(k): StepForm.from_json(v) for k, v in data["steps"].items()})
        except (KeyError, TypeError, AttributeError, IndexError) as err:
            raise ValueError(f"malformed printed forms ({type(err).__name__})") from None


def _text(x: object) -> str:
    if not isinstance(x, str):
        raise TypeError("expected a string")
    return x


def _names(x: object) -> tuple[str, ...]:
    if not isinstance(x, list):
        raise TypeError("expected a list")
    return tuple(_text(v) for v in x)


def of(sheet: Any) -> Forms:
    """The forms a sheet prints from: those it carries (the light path's), else made from its derivation (sympy)."""
    if sheet.forms is not None:
        return sheet.forms
    return forms_of(sheet.derivation)


_FORMS: dict[int, tuple[Any, Forms]] = {}


def forms_of(d: Any) -> Forms:
    """The forms of a derivation's steps (made once per derivation object; renderers.printer prints them)."""
    hit = _FORMS.get(id(d))
    if hit is None or hit[0] is not d:
        hit = _FORMS[id(d)] = (d, _make(d))
    return hit[1]


def _make(d: Any) -> Forms:
    import sympy as sp

    from ..derivations.engine.declare import UNIT_MARKERS, At, Solve
    from ..derivations.physics import glossary as gl
    from .printer import printed, term_ranks

    names = dict(d.symbols.latex_names())
    by_name = {k.name: v for k, v in names.items()}
    ranks = term_ranks(list(names), set(d.expanded))
    twins = {**gl.SECOND_CHIP, **gl.SECOND_MODEL}
    markers = {u: sp.S.One for u in UNIT_MARKERS}
    out: dict[str, StepForm] = {}
    makers: dict[str, Any] = {}
    for s in d.steps:
        raw = sp.S.Zero if isinstance(s, At) else (s.printed if isinstance(s, Solve) and s.printed is not None else s.expr)
        shown = raw.xreplace(markers)
        # the numbers line fills a symbol a unit marker cancels (q/u_token: tokens per step as a count) without its unit
        unit_free = raw.xreplace(_unit_free(s.expr, d, tuple(markers)) if not isinstance(s, At) else {}).xreplace(markers)
        rounded_expr = sp.Tuple(*(v for _, v in s.where)) if isinstance(s, At) else shown
        floors, ceilings = rounded_expr.atoms(sp.floor), rounded_expr.atoms(sp.ceiling)
        rounding = "floor" if floors and not ceilings else "ceiling" if not floors else "floor and ceiling"
        rounded = {x.name for f in (*floors, *ceilings) for x in f.free_symbols}
        if isinstance(s, At):  # printed as the step it evaluates and its replacements, never as its expansion
            primed = any(twins.get(k) == v for k, v in s.where)
            head = names[sp.Symbol(s.of, positive=True)]
            at_head = "{" + head + "}'" if primed else head
            at_where = tuple((names[k], printed(v.xreplace(markers), ranks=ranks)) for k, v in s.where if twins.get(k) != v)
            used = {x for _, v in s.where for x in v.free_symbols} | (s.expr.free_symbols & set(twins.values()))
            formula = numbers = Printed(())
            latex, text = "", _at_text(s, twins)  # filled below, from the form: at_latex
        else:
            at_head, at_where = "", ()
            used = set(shown.free_symbols)
            formula, numbers = printed(shown, names, ranks, dots=False), printed(unit_free, ranks=ranks)
            latex, text = formula.fill({}), _plain(s.expr)
            makers[s.name] = _special_maker(unit_free, ranks, numbers)
        form = StepForm(formula=formula, numbers=numbers, latex=latex, text=text, used=tuple(sorted(x.name for x in used - set(UNIT_MARKERS))),
                        rounded=tuple(sorted(rounded)), rounding=rounding, at_head=at_head, at_where=at_where)
        out[s.name] = replace(form, latex=at_latex(form, by_name)) if isinstance(s, At) else form
        if s.name in makers:
            _SOURCES[id(out[s.name])] = (out[s.name], makers[s.name])
    return Forms(out)


def _special_maker(shown: Any, ranks: Any, generic: Printed) -> Any:
    """What makes a step's numbers line for a setup with operands at 0 or 1: the formula with those values put in (sympy drops
    the terms they zero and the factors they make 1, and evaluates what is left of a max, a min or a ceiling), printed with a
    slot per remaining symbol; the generic line where putting them in leaves no finite formula."""
    def make(zeros: frozenset[str], ones: frozenset[str]) -> Printed:
        import sympy as sp

        from .printer import printed

        values = {x: sp.S.Zero if _base(x) in zeros else sp.S.One for x in shown.free_symbols if _base(x) in zeros or _base(x) in ones}
        try:
            e = shown.xreplace(values)
            if e.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
                return generic
            return printed(e, ranks=ranks)
        except (ArithmeticError, TypeError, ValueError):
            return generic
    return make


def _base(x: Any) -> str:
    """A symbol's name without the tag of a slot filled without its unit (renderers.printer's exponent slots)."""
    from .printer import UNIT_FREE

    return x.name.removeprefix(UNIT_FREE).removesuffix(UNIT_FREE)


def _unit_free(expr: Any, d: Any, markers: tuple[Any, ...]) -> dict[Any, Any]:
    """The symbols of `expr` a unit marker cancels, each to its tag for a slot filled without its unit: a symbol of the
    marker's unit whose every appearance is a factor beside the marker's inverse power (B q/u_token: q tokens as the count
    q), so the numbers line does not print "1 token" where the formula divides the token away."""
    import sympy as sp

    from .printer import UNIT_FREE

    def unit(x: Any) -> Any:
        try:
            return d.symbols.info(x).unit
        except KeyError:
            return None

    tags = {}
    muls = list(expr.find(sp.Mul))
    for m in (m for m in markers if m in expr.free_symbols):
        for x in expr.free_symbols - set(markers):
            if unit(x) is None or unit(x) != unit(m):
                continue
            holding = [p for p in (mul.as_powers_dict() for mul in muls) if x in p]
            if holding and all(p.get(m, 0) == -p[x] for p in holding) and expr.count(x) == len(holding):
                tags[x] = sp.Symbol(x.name + UNIT_FREE, **x.assumptions0)
    return tags


def at_latex(form: StepForm, names: Mapping[str, str]) -> str:
    """An At step as `t_step|_{q = k + 1}`, its replacements filled from `names` (symbol names or numbers)."""
    subs = at_replacements(form, names)
    return form.at_head + (r"\big|_{" + subs + "}" if subs else "")


def at_replacements(form: StepForm, names: Mapping[str, str]) -> str:
    """An At step's replacements, `q = k + 1`, filled from `names`: how a family's table labels its row."""
    return r",\ ".join(f"{k} = {v.fill(names)}" for k, v in form.at_where)


def _plain(expr: Any) -> str:
    """An expression as plain text, as JSON carries it (a Piecewise's nan as "undefined")."""
    from sympy.printing.str import StrPrinter

    class _PlainPrinter(StrPrinter):
        def _print_NaN(self, expr: Any) -> str:
            return "undefined"

    return _PlainPrinter().doprint(expr)


def _at_text(s: Any, twins: Mapping[Any, Any]) -> str:
    """An At step as `of` with its replacements: `t_step[q=u_token*(gamma + 1)]`, naming a second chip or model it reads."""
    from ..derivations.physics import glossary as gl

    second = [what for what, group in (("second chip", gl.SECOND_CHIP), ("second model", gl.SECOND_MODEL))
              if any(group.get(k) == v for k, v in s.where)]
    subs = [f"{k}={_plain(v)}" for k, v in s.where if twins.get(k) != v]
    return f"{s.of}[{', '.join(second + subs)}]"


#: The plain numbers at 1 a numbers line puts in by value: a model's counts that are 1 because of what the model is (one expert
#: read by a dense model, a single expert per token), a layout's degrees (one GPU: no all-reduce, whose terms a layout of
#: several GPUs has anyway, so a stored line serves every layout of a kind) and the flags of a measurement given or not; never
#: a batch, whose 1 is the setup a reader set and is printed (and which keeps the stored lines good for every batch).
STRUCTURAL_ONES = frozenset({"E", "k_E", "experts_touched", "n_tp", "n_dp", "n_ep", "d_1shot", "d_ring", "d_torus", "measurement_given",
                             "collectives_given"})


def structural(step: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The operands of a solved step a numbers line puts in by value: those at 0 (the terms they multiply go) and the
    STRUCTURAL_ONES at 1 (the factors they are go)."""
    values = [(n, v) for n, v in step.operands.items() if not v.missing]
    return (frozenset(n for n, v in values if v.exact == 0),
            frozenset(n for n, v in values if v.exact == 1 and v.unit == "1" and n in STRUCTURAL_ONES))


def needed(sheet: Any) -> dict[str, str]:
    """The special numbers line each printed step of a solved sheet needs (step -> key), none for a step that needs the
    generic one."""
    out = {}
    for st in sheet.steps:  # every step, applying or not: a notebook prints them all
        if st.step.kind == "at" or st.value.missing:
            continue
        zeros, ones = structural(st)
        if zeros or ones:
            out[st.step.name] = special_key(zeros, ones)
    return out


def specials(d: Any, sheet: Any) -> dict[str, dict[str, Printed]]:
    """The special numbers lines a solved sheet of `d` needs, made from `d` (sympy; each made once per process)."""
    made = forms_of(d)
    out: dict[str, dict[str, Printed]] = {}
    by_name = {st.step.name: st for st in sheet.steps}
    for name, key in needed(sheet).items():
        zeros, ones = structural(by_name[name])
        out[name] = {key: made[name].numbers_at(zeros, ones)}
    return out


def specials_json(special: Mapping[str, Mapping[str, Printed]]) -> dict[str, Any]:
    return {name: {k: v.to_json() for k, v in forms.items()} for name, forms in sorted(special.items())}


def specials_from_json(data: Any) -> dict[str, dict[str, Printed]]:
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError("expected special numbers forms by step")
    return {_text(name): {_text(k): Printed.from_json(v) for k, v in forms.items()} for name, forms in data.items()}


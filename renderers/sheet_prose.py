"""A derivation's prose for one target with the sheet's values in its `{step}` placeholders (`Prose`), a value with none
said once per reason; and the joins a list is said with ('a, b and c'; 'a; b; or c')."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..derivations.engine import prose
from ..derivations.engine.numeric import Missing
from ..derivations.engine.run import Sheet, Value
from .figure_refs import step_title
from .targets import Target
from .value_text import count_noun, reason_text, shown, step_value_text


def join_words(items: Sequence[str], target: Target) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + target.text(" and ") + items[-1]


def either_words(items: Sequence[str], target: Target) -> str:
    """Alternatives that may hold commas of their own: 'a, b; c, d; or e, f'."""
    if len(items) <= 1:
        return "".join(items)
    return target.text("; ").join(items[:-1]) + target.text("; or ") + items[-1]


def lower_first(text: str) -> str:
    """A title inside a sentence or a key: lower-case first letter, unless the title opens with an acronym or a symbol (MBU,
    GEMM, KV, MoE: a capital after the first letter of the word; L2: a digit or hyphen second)."""
    word = text.split(" ")[0]
    if len(word) > 1 and word[0].isupper() and not any(c.isupper() for c in word[1:]) and word[1] not in "-0123456789":
        return text[0].lower() + text[1:]
    return text


_PLACEHOLDER_WORD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\} ([a-z]+)\b")


class Prose:
    """Renders a derivation's prose for one target, filling `{step}` placeholders with values.

    A piece of prose that reads a value with none here is not printed with a reason in a number's slot: `items` replaces
    every such piece of a list by one sentence per reason, naming what has no value ("The idle share and the collective
    share have no value here: ..."), at the place of the first.
    """

    def __init__(self, sheet: Sheet, target: Target, mark: Callable[[str, str], str] | None = None) -> None:
        """`mark(name, text)`, where given, wraps each value a placeholder is filled with (a live page's `data-fill` span)."""
        d = sheet.blueprint
        self.d, self.target, self.mark = d, target, mark
        self.latex = d.latex_names
        self.values: dict[str, Value] = {st.step.name: st.value for st in sheet.steps}
        self.texts = {name: step_value_text(d.step(name), v, target) for name, v in self.values.items() if not v.missing}
        for i in sheet.inputs:
            self.values[i.name] = i.value
            self.texts[i.name] = target.quantity_text(shown(i.value))
        self.nouns = {name: count_noun(d.step(name), v) for name, v in self.values.items() if name in d.step_names and not v.missing}

    def __call__(self, text: str) -> str:
        """Prose with no values missing (a title, a note): rendered as written."""
        text = _PLACEHOLDER_WORD.sub(self._noun_once, text)
        return prose.render(text, self.target.text, self.target.inline_math, self.latex, self._filled(text), self.target.link)

    def _noun_once(self, m: re.Match[str]) -> str:
        """'{B_flip} sequences' where the value already says '8 sequences': the noun once."""
        noun = self.nouns.get(m.group(1), "")
        if noun and m.group(2) in (noun, noun.rstrip("s"), noun + "s"):
            return "{" + m.group(1) + "}"
        return m.group(0)

    def _filled(self, text: str) -> dict[str, str]:
        out = dict(self.texts)
        for name in prose.placeholders(text):
            if name not in out:  # a value with none: said by `items`; a lone string shows the kind only
                out[name] = self.target.text(self.values[name].missing.kind if self.values[name].missing else "")
            elif self.mark is not None:
                out[name] = self.mark(name, out[name])
        return out

    def missing(self, text: str) -> list[tuple[str, Missing]]:
        return [(n, self.values[n].missing) for n in dict.fromkeys(prose.placeholders(text)) if self.values[n].missing]

    def items(self, texts: Sequence[str]) -> list[str]:
        """A list of prose items (takeaways, answer sentences): complete ones as written, the rest said once per reason."""
        out: list[str] = []
        said: dict[str, list[str]] = {}
        slot: dict[str, int] = {}
        for text in texts:
            gone = self.missing(text)
            if not gone:
                out.append(self(text))
                continue
            for name, m in gone:
                key = m.kind + "\0" + m.reason
                if key not in said:
                    said[key], slot[key] = [], len(out)
                    out.append("")
                if name not in said[key]:
                    said[key].append(name)
        for key, names in said.items():
            m = self.values[names[0]].missing
            out[slot[key]] = self.none_sentence(names, m)
        return out

    def none_sentence(self, names: Sequence[str], m: Missing) -> str:
        """'The best draft length has no value here: no draft length beats plain decode here.'"""
        t = self.target
        titles = [self(lower_first(step_title(self.d.step(n)))) if n in self.d.step_names else t.text(n) for n in names]
        verb = "have" if len(names) > 1 else "has"
        what = "no value here" if m.kind == "none" else "do not apply here" if len(names) > 1 else "does not apply here"
        head = join_words(titles, t)
        head = head[:1].upper() + head[1:] if head[:1].isalpha() else head
        reason = reason_text(m, t).rstrip(". ")
        return head + t.text(f" {verb if m.kind == 'none' else ''}".rstrip() + f" {what}: ") + reason + t.text(".")

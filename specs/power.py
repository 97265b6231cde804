"""The power model's shares: `specs/measurements/power/power.toml`.

Board power of one GPU as a share of its TDP, P/P_TDP = min(1, idle + memory * U_mem + compute * U_flop), with U_mem and
U_flop the step's use of the datasheet bandwidth and dense peak (derivations.physics.stepmodel.POWER_MODEL). The three shares are
fitted to measured board power by `roofline calibrate --write-defaults` (derivations.physics.fitting.fit_power) and stored with
the family of chips they were measured on, the records and the provenance. A chip outside every measured family uses the
default family's shares of its own TDP, and the sheet says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path

from .catalog import SPECS_DIR, parse_toml, read_text, shown_path
from .errors import SpecError, shown, suggest
from .quantities import parse_quantity

POWER_FILE = SPECS_DIR / "measurements" / "power" / "power.toml"
#: the shares a family stores -> what each is
POWER_SHARES = {
    "idle_share": "board power of a powered GPU doing nothing, as a share of the TDP",
    "memory_share": "board power the memory system adds at full datasheet bandwidth, as a share of the TDP",
    "compute_share": "board power the tensor cores add at the full dense peak, as a share of the TDP",
}
FAMILY_FIELDS = {"name": True, "chips": True, "provenance": True, "records": False, "median_error": False, **dict.fromkeys(POWER_SHARES, True)}


@dataclass(frozen=True)
class PowerFamily:
    """One family of chips with its fitted power shares (exact, as written) and where they come from."""

    name: str
    chips: tuple[str, ...]
    shares: Mapping[str, Fraction]
    provenance: str
    records: tuple[str, ...]
    median_error: str | None


@dataclass(frozen=True)
class PowerModel:
    path: Path
    source: str
    #: the family whose shares a chip of no measured family uses
    default: str
    families: tuple[PowerFamily, ...]

    def family_of(self, chip: str) -> tuple[PowerFamily, bool]:
        """The family a chip belongs to and whether it was measured in it (False: the default family's shares, assumed)."""
        for f in self.families:
            if chip in f.chips:
                return f, True
        return next(f for f in self.families if f.name == self.default), False


def _text(v: object, where: str, name: str) -> str:
    if not isinstance(v, str) or not v.strip() or len(v) > 4000:
        raise SpecError(where, name, f"expected text, found {shown(v)}")
    return v.strip()


def parse_power(data: Mapping[str, object], path: Path) -> PowerModel:
    where = shown_path(path)
    known = {"source": True, "default": True, "family": True}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise SpecError(where, unknown[0][:60], f"unknown field{suggest(unknown[0], known)}; known: {', '.join(known)}")
    for k in known:
        if k not in data:
            raise SpecError(where, k, "missing required field")
    raw = data["family"]
    if not isinstance(raw, list) or not raw:
        raise SpecError(where, "family", f"expected one or more [[family]] tables, found {shown(raw)}")
    families = []
    for i, fam in enumerate(raw):
        label = f"family[{i}]"
        if not isinstance(fam, Mapping):
            raise SpecError(where, label, f"expected a table, found {shown(fam)}")
        extra = sorted(set(fam) - set(FAMILY_FIELDS))
        if extra:
            raise SpecError(where, f"{label}.{extra[0][:60]}", f"unknown field{suggest(extra[0], FAMILY_FIELDS)}; known: {', '.join(FAMILY_FIELDS)}")
        for k, required in FAMILY_FIELDS.items():
            if required and k not in fam:
                raise SpecError(where, f"{label}.{k}", "missing required field")
        chips = fam["chips"]
        if not isinstance(chips, list) or not chips or not all(isinstance(c, str) and c.strip() for c in chips):
            raise SpecError(where, f"{label}.chips", f"expected a list of chip names, found {shown(chips)}")
        shares = {}
        for k in POWER_SHARES:
            text = _text(fam[k], where, f"{label}.{k}")
            m = Fraction(parse_quantity(text, "1", where, f"{label}.{k}", allow_zero=True).to("1").magnitude)
            if not 0 <= m <= 1:
                raise SpecError(where, f"{label}.{k}", f"expected a share of the TDP between 0 and 1, found {shown(text)}")
            shares[k] = m
        if shares["idle_share"] >= 1:
            raise SpecError(where, f"{label}.idle_share", "an idle draw at the TDP leaves no room for work")
        ids = fam.get("records", [])
        if not isinstance(ids, list) or not all(isinstance(x, str) and x.strip() for x in ids):
            raise SpecError(where, f"{label}.records", f"expected a list of record ids, found {shown(ids)}")
        err = fam.get("median_error")
        families.append(PowerFamily(_text(fam["name"], where, f"{label}.name"), tuple(chips), shares,
                                    _text(fam["provenance"], where, f"{label}.provenance"), tuple(ids),
                                    None if err is None else _text(err, where, f"{label}.median_error")))
    default = _text(data["default"], where, "default")
    names = [f.name for f in families]
    if default not in names:
        raise SpecError(where, "default", f"no family named {shown(default)}{suggest(default, names)}; families: {', '.join(names)}")
    return PowerModel(path, _text(data["source"], where, "source"), default, tuple(families))


@cache
def load_power(path: Path = POWER_FILE) -> PowerModel:
    """The power model's shares, validated (one line naming the file and field on any fault)."""
    return parse_power(parse_toml(read_text(path), path), path)


__all__ = ["POWER_FILE", "POWER_SHARES", "PowerFamily", "PowerModel", "load_power", "parse_power"]

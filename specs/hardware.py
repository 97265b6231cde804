"""Accelerator specs: one TOML file per chip, every value a string with its unit.

Only dense peaks are stored (a 2:4-sparsity headline is half useless for
inference and is stored nowhere). Every field's dimension is checked at load.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pint

from .catalog import HARDWARE_DIR, hardware_names, parse_toml, read_text, resolve
from .errors import SpecError, SpecWarning, shown, suggest
from .precisions import MATH_PRECISIONS
from .quantities import parse_quantity
from .text import check as check_text
from .text import check_name

#: field -> (unit it must convert to, required). Text fields have unit None.
FIELDS: dict[str, tuple[str | None, bool]] = {
    "name": (None, True),
    "vendor": (None, True),
    "status": (None, True),
    "source": (None, True),
    "notes": (None, True),
    "memory_capacity": ("B", True),
    "memory_bandwidth": ("B/s", True),
    "on_chip_memory": ("B", False),
    "on_chip_memory_kind": (None, False),
    "compute_units": ("1", False),
    "compute_unit_kind": (None, False),
    "shared_memory_per_sm": ("B", False),
    "tdp": ("W", False),
    "sustained_peak_bf16": ("flop/s", False),
    "scaleup_bandwidth_per_direction": ("B/s", False),
    "scaleup_interconnect": (None, False),
    "scaleup_topology": (None, False),
    "scaleup_domain": ("1", False),
    "scaleout_bandwidth_per_direction": ("B/s", False),
    "host_link_bandwidth_per_direction": ("B/s", False),
    "host_link": (None, False),
    "peak_dense": ("flop/s", True),
    "field_status": (None, False),
}
STATUSES = ("C", "S", "U")
#: A stored figure's status (the optional [field_status] table, field -> status): read in a primary source (C), in a
#: secondary one reproducing it (S), derived by arithmetic from stated figures (D, the notes say how), unconfirmed (U).
FIELD_STATUSES = ("C", "S", "D", "U")
#: How the GPUs of one scale-up domain reach each other (it decides an all-reduce's latency law):
#: "switch" (every GPU one hop from every other through a switch: NVSwitch), "mesh" (a direct link to every peer: an
#: 8-GPU Infinity Fabric mesh), "torus" (neighbour links only: TPU ICI), "pcie" (no scale-up link; through the host's PCIe).
TOPOLOGIES = ("switch", "mesh", "torus", "pcie")
MAX_TEXT = 4000
#: Text fields that may span lines (the rest are one line: a name, a vendor, a kind).
MULTI_LINE_FIELDS = ("source", "notes")


@dataclass(frozen=True)
class Hardware:
    """One accelerator, as its TOML file describes it (quantities in base units)."""

    key: str
    path: Path
    name: str
    vendor: str
    status: str
    source: str
    notes: str
    memory_capacity: pint.Quantity
    memory_bandwidth: pint.Quantity
    peak_dense: Mapping[str, pint.Quantity]
    on_chip_memory: pint.Quantity | None = None
    on_chip_memory_kind: str | None = None
    compute_units: int | None = None
    compute_unit_kind: str | None = None
    #: the most shared memory one SM (CU) can give its thread blocks, binary KiB as NVIDIA prints "KB" here
    shared_memory_per_sm: pint.Quantity | None = None
    tdp: pint.Quantity | None = None
    #: a dense BF16 peak measured under sustained load (the clock throttled), where a source gives one for this chip
    sustained_peak_bf16: pint.Quantity | None = None
    scaleup_bandwidth_per_direction: pint.Quantity | None = None
    scaleup_interconnect: str | None = None
    #: one of TOPOLOGIES
    scaleup_topology: str | None = None
    #: GPUs one scale-up domain connects (an NVSwitch node of 8, an NVL72 rack of 72): an expert-parallel group up to this
    #: size exchanges its tokens over the scale-up link, a larger one over the scale-out network
    scaleup_domain: int | None = None
    #: the scale-out network (InfiniBand, RoCE) per GPU, per direction: its NIC's line rate
    scaleout_bandwidth_per_direction: pint.Quantity | None = None
    #: the link to host memory (PCIe to the CPU's DRAM, NVLink-C2C to a Grace's LPDDR5X), per accelerator, per direction
    host_link_bandwidth_per_direction: pint.Quantity | None = None
    #: what that link is, in words
    host_link: str | None = None
    #: each stored figure's status where the file gives one (FIELD_STATUSES; "peak_dense.fp8" for a peak); `status` is the file's
    field_status: Mapping[str, str] | None = None

    def peak(self, math: str) -> pint.Quantity:
        """Dense tensor peak for math precision `math`."""
        if math not in self.peak_dense:
            raise SpecError(self.path, f"peak_dense.{math}", f"{self.name} lists no dense {math} peak; it lists {', '.join(self.peak_dense)}")
        return self.peak_dense[math]

    def require(self, field: str) -> pint.Quantity:
        """An optional field a derivation needs; a SpecError naming it when absent."""
        value = getattr(self, field)
        if value is None:
            raise SpecError(self.path, field, f"this question needs {field}, which {self.name}'s spec does not give")
        return value


#: A user's figure further than this factor from every shipped chip's gets a warning (a unit slip, "Tflop/s" for "Pflop/s").
PLAUSIBLE_FACTOR = 100


def load_hardware(name_or_path: str | Path) -> Hardware:
    """Load and validate a shipped accelerator by name, or a user's TOML file by path.

    A user's file whose bandwidth, capacity or BF16 peak is more than
    PLAUSIBLE_FACTOR away from every shipped chip's loads with a SpecWarning.
    """
    path = resolve(name_or_path, "hardware", HARDWARE_DIR, ".toml", hardware_names(), "hardware")
    hw = _read(path)
    if path.parent.resolve() != HARDWARE_DIR.resolve():
        for message in implausible(hw):
            warnings.warn(SpecWarning(message), stacklevel=2)
    return hw


def _read(path: Path) -> Hardware:
    return parse_hardware(parse_toml(read_text(path), path), path)


@cache
def _shipped_ranges() -> dict[str, tuple[float, float]]:
    chips = [_read(HARDWARE_DIR / f"{n}.toml") for n in hardware_names()]
    figures = {"memory_bandwidth": [c.memory_bandwidth for c in chips], "memory_capacity": [c.memory_capacity for c in chips],
               "peak_dense.bf16": [c.peak("bf16") for c in chips]}
    return {k: (min(float(q.magnitude) for q in v), max(float(q.magnitude) for q in v)) for k, v in figures.items()}


def implausible(hw: Hardware) -> list[str]:
    """One line per figure more than PLAUSIBLE_FACTOR outside the shipped chips' range."""
    out = []
    for field, q in (("memory_bandwidth", hw.memory_bandwidth), ("memory_capacity", hw.memory_capacity), ("peak_dense.bf16", hw.peak("bf16"))):
        lo, hi = _shipped_ranges()[field]
        x = float(q.magnitude)
        if x < lo / PLAUSIBLE_FACTOR or x > hi * PLAUSIBLE_FACTOR:
            out.append(f"{hw.path}: {field}: {q:~P} is more than {PLAUSIBLE_FACTOR}x outside every shipped chip's "
                       f"({lo:.3g} to {hi:.3g} {q.units:~P}); check the unit")
    return out


def parse_hardware(data: Mapping[str, object], path: Path) -> Hardware:
    """Validate a parsed TOML mapping into a Hardware."""
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        field = unknown[0]
        raise SpecError(path, field[:60], f"unknown field{suggest(field, FIELDS)}; known fields: {', '.join(FIELDS)}")
    values: dict[str, object] = {}
    for field, (expected, required) in FIELDS.items():
        if field not in data:
            if required:
                raise SpecError(path, field, f"missing required field ({_describe(field, expected)})")
            continue
        raw = data[field]
        if field == "peak_dense":
            values[field] = _parse_peaks(raw, path)
        elif field == "field_status":
            values[field] = raw  # checked below, against the fields the file stores
        elif expected is None:
            if not isinstance(raw, str) or len(raw) > MAX_TEXT:
                raise SpecError(path, field, f"expected text, found {shown(raw)}")
            values[field] = check_text(raw, path, field, multiline=field in MULTI_LINE_FIELDS)
            if field == "name":
                check_name(raw, path, field, "the chip's name")
        elif expected == "1":
            q = parse_quantity(raw, "1", path, field)
            if q.magnitude != int(q.magnitude):
                raise SpecError(path, field, f"expected a whole number, found {shown(raw)}")
            values[field] = int(q.magnitude)
        else:
            values[field] = parse_quantity(raw, expected, path, field)
    if values["status"] not in STATUSES:
        raise SpecError(path, "status", f"expected one of {', '.join(STATUSES)}, found {shown(values['status'])}")
    if "scaleup_topology" in values and values["scaleup_topology"] not in TOPOLOGIES:
        raise SpecError(path, "scaleup_topology", f"expected one of {', '.join(TOPOLOGIES)}, found {shown(values['scaleup_topology'])}")
    if "field_status" in values:
        values["field_status"] = _field_status(values["field_status"], values, path)
    return Hardware(key=path.stem, path=path, **values)


def _field_status(raw: object, values: Mapping[str, object], path: Path) -> dict[str, str]:
    """The [field_status] table: each key a fact the file stores ("memory_bandwidth", "peak_dense.fp8", "scaleup_topology"),
    each value one of FIELD_STATUSES."""
    if not isinstance(raw, Mapping):
        raise SpecError(path, "field_status", f"expected a table of field = status, found {shown(raw)}")
    stored = {f for f in FIELDS if f in values and f not in ("name", "vendor", "status", "source", "notes", "peak_dense", "field_status")}
    stored |= {f"peak_dense.{p}" for p in values["peak_dense"]}  # type: ignore[attr-defined]
    out = {}
    for field, status in raw.items():
        if field not in stored:
            raise SpecError(path, f"field_status.{str(field)[:40]}", f"not a figure this file stores{suggest(str(field), sorted(stored))}")
        if status not in FIELD_STATUSES:
            raise SpecError(path, f"field_status.{field}", f"expected one of {', '.join(FIELD_STATUSES)}, found {shown(status)}")
        out[field] = status
    return out


def _parse_peaks(raw: object, path: Path) -> dict[str, pint.Quantity]:
    if not isinstance(raw, Mapping):
        raise SpecError(path, "peak_dense", f"expected a table of dense peaks per precision, found {shown(raw)}")
    peaks = {}
    for precision, value in raw.items():
        if precision not in MATH_PRECISIONS:
            raise SpecError(path, f"peak_dense.{str(precision)[:40]}", f"unknown precision{suggest(str(precision), MATH_PRECISIONS)}; known: {', '.join(MATH_PRECISIONS)}")
        peaks[precision] = parse_quantity(value, "flop/s", path, f"peak_dense.{precision}")
    if "bf16" not in peaks:
        raise SpecError(path, "peak_dense.bf16", "missing required field (dense BF16 peak, e.g. \"989.4 Tflop/s\")")
    return peaks


def _describe(field: str, expected: str | None) -> str:
    if field == "peak_dense":
        return "a [peak_dense] table with at least bf16"
    return "text" if expected is None else f"a quantity in {expected}"

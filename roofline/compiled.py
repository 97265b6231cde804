"""The light path of `roofline derive`: a shipped sheet printed from its compiled form, without importing sympy or pint.

A sheet is a function of its context, and everything in it that no context changes is compiled once, by the full path
(sympy builds and checks the derivation, pint reads the specs), and stored as data in the cache folder
(derivations.engine.store: JSON, nothing that loading can execute):

- per sheet: its blueprint (derivations.engine.blueprint), its numeric plan (derivations.engine.numeric: every step as exprjson data,
  compiled again to code here, through the same whitelist), the printed forms of its formulas (renderers.forms) and its
  inputs' defaults;
- the catalog: every shipped chip and model as the sheets read them (derivations.engine.setup.SpecData: the value of every
  symbol each binds, in the symbol's unit), the engine profiles, and where each spec-bound symbol takes its value
  (derivations.engine.setup.Bindings);
- per sheet and per kind of setup (its structural values: derivations.engine.run.structure): which steps are identities.

Every entry is keyed by the digest of every file of roofline's packages (code, specs, templates), the installed
versions of the libraries that made it and the Python version (`base_key`): any change to any of them is a miss.

`derive` then evaluates and renders the sheet with the same code the full path runs (derivations.engine.run.solve, the
renderers), so its output is the full path's byte for byte (tests/cli/test_compiled.py runs both). It answers only what
it can answer as the full path would: a shipped sheet, shipped chips and models, inputs its parser reads exactly as
pint does, a setup whose identities are stored, and no warning or error to give. Anything else (a path, an unknown name,
a value outside an input's domain, a quantized checkpoint's warning, a miss in the cache) returns None, and the full
path runs: it gives the error or the warning, and stores what the next run needs.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import sys
import warnings
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import LAYERS
from .derivations.engine import store
from .derivations.engine.blueprint import Blueprint, Row, by_name
from .derivations.engine.codegen import PlanError
from .derivations.engine.numeric import Missing, Plan
from .derivations.engine.run import Identity, Sheet, UnreadError, headline_grid, read_input, solve
from .derivations.engine.setup import Bindings, ProfileData, Setup, SpecData, make_setup, row_formats, with_changes
from .specs.errors import SpecError, SpecWarning

#: bump when an entry's shape or the recipe of its key changes
FORMAT = 1
#: the packages whose every file (code, specs, templates) a compiled form is made from
PACKAGES = (*LAYERS, "roofline")
#: the distributions the full path imports, whose versions shape what it compiles (sympy prints the formulas, pint reads the
#: specs); tests/cli/test_compiled.py checks this list against what a derive imports
DISTRIBUTIONS = ("sympy", "mpmath", "pint", "flexcache", "flexparser", "platformdirs", "typing_extensions", "numpy", "jinja2", "markupsafe")


class MissError(Exception):
    """The light path cannot answer this run as the full path would: the full path runs."""


# --- keys and entries -----------------------------------------------------------------------------------------------

_BASE: list[str] = []


def base_key() -> str:
    """What every compiled entry is made from: the bytes of every file of roofline's packages, the installed versions of
    the libraries a derive imports, the Python version (computed once per process)."""
    if not _BASE:
        recipe = {"format": FORMAT, "sources": sources_digest(), "versions": versions(), "python": [sys.version, sys.implementation.cache_tag]}
        _BASE.append(hashlib.sha256(json.dumps(recipe, sort_keys=True, default=repr).encode()).hexdigest())
    return _BASE[0]


#: The package's shipped entries (derivations.engine.store.SHIPPED, which a test may point elsewhere): never a source.
_SHIPPED_SOURCE = Path(store.__file__).resolve().parents[1] / "compiled"


def sources_digest() -> str:
    """The digest of every file of roofline's packages (names, sizes and bytes), byte-compiled files left out."""
    h = hashlib.sha256()
    for name in PACKAGES:
        package = "roofline" if name == "roofline" else f"roofline.{name}"
        for root in importlib.import_module(package).__path__:  # each package's __init__ is light
            for folder, dirs, files in os.walk(root):
                # the shipped entries are made from these sources, not part of them (derivations.engine.store.SHIPPED);
                # installed, the layers are folders inside roofline/, each walked under its own name (as in a checkout)
                dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not (d == "compiled" and Path(folder, d).resolve() == _SHIPPED_SOURCE)
                                 and not (name == "roofline" and folder == root and d in PACKAGES))
                for file in sorted(files):
                    if file.endswith((".pyc", ".pyo")):
                        continue
                    path = os.path.join(folder, file)
                    with open(path, "rb") as f:
                        data = f.read()
                    h.update(f"{name}/{os.path.relpath(path, root)}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
                    h.update(data)
    return h.hexdigest()


def _normal(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def versions() -> dict[str, list[str]]:
    """The installed versions of DISTRIBUTIONS, from the dist-info (or egg-info) folder names on sys.path, in path order
    (the first is the one imported)."""
    wanted = {_normal(n): n for n in DISTRIBUTIONS}
    found: dict[str, list[str]] = {n: [] for n in DISTRIBUTIONS}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except (OSError, ValueError):  # a zip file, a missing folder
            continue
        for folder in names:
            stem, _, suffix = folder.rpartition(".")
            if suffix not in ("dist-info", "egg-info"):
                continue
            name, _, version = stem.partition("-")
            if _normal(name) in wanted:
                found[wanted[_normal(name)]].append(version)  # in path order; not where (a clone elsewhere shares the shipped entries)
    return found


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(["compiled", base_key(), *parts], sort_keys=True, default=repr).encode()).hexdigest()


def _what(parts: tuple[object, ...]) -> str:
    """What an entry holds, as its header names it (derivations.engine.store): the kind of entry and its sheet's slug (or kind of file)."""
    return " ".join(["compiled", *(str(p) for p in parts[:2])])


def _get(*parts: object) -> Any:
    """The entry stored for `parts` (None: a miss, derivations.engine.store)."""
    return store.load_json(_key(*parts), _what(parts))


def _put(value: Any, *parts: object) -> None:
    store.store_json(_key(*parts), value, _what(parts))


def _load(*parts: object) -> Any:
    data = _get(*parts)
    if data is None:
        raise MissError(f"no stored {parts[0]}")
    return data


def _stored(*parts: object) -> bool:
    return _get(*parts) is not None


# --- plain data to JSON and back -------------------------------------------------------------------------------------


def _number(x: Fraction) -> list[int]:
    return [x.numerator, x.denominator]


def _value_json(v: Fraction | Missing) -> Any:
    if isinstance(v, Missing):
        err = v.error
        return {"na": v.reason, "error": None if err is None else [err.where, err.field, err.message]}
    return _number(v)


#: The magnitudes a stored number may have (the exact evaluation's range, derivations.engine.sheet.VALUE_LIMIT), or zero.
_SMALLEST, _LARGEST = Fraction(1, 10**300), Fraction(10**300)


def _fraction(numerator: Any, denominator: Any) -> Fraction:
    """A stored number, checked as a file's would be: whole parts, a positive denominator, zero or a magnitude from 1e-300
    to 1e300; ValueError for anything else (a miss)."""
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (numerator, denominator)) or denominator <= 0:
        raise ValueError("not a stored number")
    x = Fraction(numerator, denominator)
    if x and not _SMALLEST <= abs(x) <= _LARGEST:
        raise ValueError("a stored number out of range")
    return x


def _value(data: Any) -> Fraction | Missing:
    if isinstance(data, dict):
        err = data["error"]
        return Missing("n/a", str(data["na"]), None if err is None else SpecError(err[0], err[1], err[2]))
    if not isinstance(data, list) or len(data) != 2:
        raise ValueError("not a stored number")
    return _fraction(data[0], data[1])


def _values(data: Mapping[str, Any]) -> dict[str, Fraction | Missing]:
    return {str(k): _value(v) for k, v in data.items()}


def spec_json(s: SpecData) -> dict[str, Any]:
    return {"key": s.key, "name": s.name, "path": s.path, "status": s.status, "source": s.source,
            "values": {k: _value_json(v) for k, v in s.values.items()}, "peaks": {k: _value_json(v) for k, v in s.peaks.items()},
            "model_type": s.model_type, "quantization": s.quantization, "experts": s.experts, "checkpoint_warning": s.checkpoint_warning,
            "stored_weights": [list(f) for f in s.stored_weights], "components": dict(s.components), "max_context": s.max_context}


def spec(data: Mapping[str, Any]) -> SpecData:
    return SpecData(str(data["key"]), str(data["name"]), str(data["path"]), str(data["status"]), str(data["source"]), _values(data["values"]),
                    _values(data["peaks"]), str(data["model_type"]), data["quantization"], data["experts"], data["checkpoint_warning"],
                    tuple((str(c), str(f)) for c, f in data["stored_weights"]), {str(c): int(n) for c, n in data["components"].items()},
                    int(data["max_context"]))


def engine_json(e: ProfileData) -> dict[str, Any]:
    return {"name": e.name, "description": e.description, "values": [list(v) for v in e.values],
            "parsed": {k: _number(v) for k, v in e.parsed.items()}, "provenance": e.provenance, "path": e.path,
            "summary": [list(v) for v in e.summary], "records": e.records}


def engine(data: Mapping[str, Any]) -> ProfileData:
    return ProfileData(str(data["name"]), str(data["description"]), tuple((str(k), str(v)) for k, v in data["values"]),
                  {str(k): _fraction(v[0], v[1]) for k, v in data["parsed"].items()}, str(data["provenance"]), str(data["path"]),
                  tuple((str(k), str(v)) for k, v in data["summary"]), int(data["records"]))


def _identity_json(i: Identity) -> dict[str, Any]:
    number = i.number
    return {"symbol": i.symbol, "nan": i.nan, "number": None if number is None else _number(number) if isinstance(number, Fraction) else float(number)}


def _identity(data: Mapping[str, Any]) -> Identity:
    n = data["number"]
    number = None if n is None else _fraction(n[0], n[1]) if isinstance(n, list) else _finite(n)
    return Identity(str(data["symbol"]), number, bool(data["nan"]))


def _finite(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        raise ValueError("not a stored number")
    return float(x)


def _numbers_signature(needed: Mapping[str, str]) -> list[Any]:
    """What identifies the special numbers lines a sheet's setup needs: each step's key (renderers.forms.needed)."""
    return sorted(needed.items())


def _signature(structural: Mapping[str, Fraction], not_here: frozenset[str]) -> list[Any]:
    return [sorted((k, _number(v)) for k, v in structural.items()), sorted(not_here)]


# --- what the full path stores, and reads back --------------------------------------------------------------------------


def forms(d: Any) -> Any:
    """The printed forms of a shipped sheet's formulas (renderers.forms): stored ones where the compiled form has them, else
    made now (sympy)."""
    from .renderers.forms import Forms, forms_of

    if store.directory() is not None:
        data = _get("sheet", d.slug)
        if isinstance(data, dict):
            try:
                stored = Forms.from_json(_checked_forms(data["forms"]))
                if data["blueprint"]["slug"] == d.slug and set(stored.steps) == {s.name for s in d.steps}:
                    return stored
            except _READ_ERRORS:
                pass
    return forms_of(d)


def identities(d: Any) -> Any:
    """What a shipped sheet's steps reduce to in a setup of a given structure (derivations.engine.run.Identities): stored where
    the compiled form has it, else found now (derivations.engine.sheet.identity_finder: sympy)."""
    from .derivations.engine.sheet import identity_finder

    find = identity_finder(d)

    def stored_or_found(structural: Mapping[str, Fraction], not_here: frozenset[str]) -> Mapping[str, Identity]:
        if store.directory() is not None:
            data = _get("identities", d.slug, _signature(structural, not_here))
            if isinstance(data, dict):
                try:
                    return {str(k): _identity(v) for k, v in data.items()}
                except _READ_ERRORS:
                    pass
        return find(structural, not_here)

    return stored_or_found


def remember(d: Any, ctx: Any = None, special: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Store what the light path needs to print `d` (a shipped sheet's Derivation), its catalog, the identities of every
    kind of setup this process has solved it for, and the chips and models of your own files that `ctx` (its Context)
    reads; what is stored already is left as it is. Nothing happens when the cache is off."""
    if store.directory() is None:
        return
    if ctx is not None:
        _remember_files(ctx)
    from .derivations.engine.planning import plan_of
    from .derivations.engine.sheet import defaults_of, identities_known
    from .renderers.forms import forms_of

    if not _stored("sheet", d.slug):
        _put({"blueprint": d.blueprint.to_json(), "plan": plan_of(d).to_json(), "forms": forms_of(d).to_json(),
              "defaults": {k: _number(v) for k, v in defaults_of(d).items()}}, "sheet", d.slug)
    if special:  # the special numbers lines of this kind of setup (renderers.forms.needed), keyed by which it needs
        from .renderers.forms import specials_json

        parts = ("numbers", d.slug, _numbers_signature({n: next(iter(f)) for n, f in special.items()}))
        if not _stored(*parts):
            _put(specials_json(special), *parts)
    for signature, found in identities_known(d):
        parts = ("identities", d.slug, _signature(*signature))
        if not _stored(*parts):
            _put({n: _identity_json(i) for n, i in found.items()}, *parts)
    if not _stored("catalog"):
        _put(catalog_json(), "catalog")


def special_lines(slug: str, wanted: Mapping[str, tuple[frozenset[str], frozenset[str]]]) -> dict[str, dict[str, Any]]:
    """The special numbers lines (step -> key -> printed form) of a shipped sheet that `wanted` names (step -> its zeros and
    ones), as `remember` stores a setup's: stored where a derive or a build stored them, else made from the sheet's derivation
    (sympy) and stored (a live page carries them for the models a reader may pick: roofline/live.py)."""
    from .renderers.forms import forms_of, special_key, specials_from_json, specials_json

    parts = ("numbers", slug, _numbers_signature({n: special_key(*zo) for n, zo in wanted.items()}))
    if store.directory() is not None:
        data = _get(*parts)
        if data is not None:
            try:
                return specials_from_json(data)
            except _READ_ERRORS:
                pass
    from .derivations.questions import registry

    made = forms_of(registry.get(slug))
    out = {n: {special_key(*zo): made[n].numbers_at(*zo)} for n, zo in wanted.items()}
    if store.directory() is not None:
        _put(specials_json(out), *parts)
    return out


def identities_at(slug: str, structural: Mapping[str, Fraction], not_here: frozenset[str]) -> Mapping[str, Identity]:
    """What a shipped sheet's steps reduce to in a setup of this structure (`identities`' answer, by slug): stored, else found
    from its derivation (sympy) and stored as `remember` stores them."""
    parts = ("identities", slug, _signature(structural, not_here))
    if store.directory() is not None:
        data = _get(*parts)
        if isinstance(data, dict):
            try:
                return {str(k): _identity(v) for k, v in data.items()}
            except _READ_ERRORS:
                pass
    from .derivations.questions import registry

    found = identities(registry.get(slug))(structural, not_here)
    if store.directory() is not None:
        _put({n: _identity_json(i) for n, i in found.items()}, *parts)
    return found


def _remember_files(ctx: Any) -> None:
    """The chips and models of a context that are your own files, as the sheets read them, each keyed by its file's bytes."""
    from .derivations.engine.sheet import spec_data
    from .specs.catalog import HARDWARE_DIR, MODELS_DIR
    from .specs.hardware import Hardware, implausible

    for spec_obj in (ctx.hardware, ctx.model, ctx.second_hardware, ctx.second_model):
        if spec_obj is None:
            continue
        hardware = isinstance(spec_obj, Hardware)
        if Path(spec_obj.path).resolve().parent == (HARDWARE_DIR if hardware else MODELS_DIR).resolve():
            continue  # a shipped spec: the catalog's
        k = _file_key("hardware" if hardware else "models", str(spec_obj.path))
        what = f"compiled file {'hardware' if hardware else 'models'}"
        if k is not None and store.load_json(k, what) is None:
            store.store_json(k, {"spec": spec_json(spec_data(spec_obj)), "warnings": implausible(spec_obj) if hardware else []}, what)


def _file_key(kind: str, text: str) -> str | None:
    """The key of a spec file of your own, as the light path finds it: the path as given and as resolved, the bytes of the
    file (and of a model's metadata TOML beside it); None where it cannot be read as a regular file."""
    path = Path(text)
    parts: list[object] = [kind, text, os.path.realpath(text)]
    for candidate, required in ((path, True), (path.with_suffix(".toml"), False)) if kind == "models" else ((path, True),):
        digest = _digest(candidate)
        if digest is None and required:
            return None
        parts.append(digest or "absent")
    return _key("file", *parts)


def _digest(path: Path) -> str | None:
    """The sha256 of a spec file's text as the full path reads it (specs.catalog.read_text: a regular file, within the
    size limit); None where that read fails (absent, a FIFO, larger)."""
    from .specs.catalog import read_text

    try:
        return hashlib.sha256(read_text(path).encode()).hexdigest()
    except SpecError:
        return None


def _mtp_modules() -> dict[str, Any]:
    """The MTP module and EAGLE head of every shipped model that has one, by the name a second model gives it (`NAME:mtp`)."""
    from .derivations.engine.sheet import spec_data
    from .specs.catalog import model_names
    from .specs.models import DRAFTERS, load_model

    out = {}
    for n in model_names():
        for suffix, build in DRAFTERS:
            try:
                out[f"{n}{suffix}"] = spec_json(spec_data(build(load_model(n))))
            except SpecError:
                continue  # no such drafter for this model: `--second-model mtp` or `eagle` is the full path's to refuse
    return out


def _drafter_name(name: str, target: SpecData) -> str:
    """A second model's catalog name: `mtp` and `eagle` are the target's own MTP module and EAGLE head (specs.models.load_drafter)."""
    from .specs.models import DRAFTERS

    return f"{target.key}:{name}" if name in {suffix[1:] for suffix, _ in DRAFTERS} else name


def catalog_json() -> dict[str, Any]:
    """Every shipped chip, model and engine profile as the sheets read them, and the bindings (the full path: pint)."""
    from .derivations.engine.context import profiles
    from .derivations.engine.sheet import bindings, engine_data, spec_data
    from .specs.catalog import hardware_names, model_names
    from .specs.hardware import load_hardware
    from .specs.measurements import DEFAULT_PROFILE
    from .specs.models import load_model
    from .specs.precisions import PRECISIONS

    b = bindings()
    names = [*PRECISIONS, "int4-g128"]
    return {
        "parts": dict(b.parts), "twins": {k: list(v) for k, v in b.twins.items()},
        "precisions": {role: {n: {k: _value_json(v) for k, v in table[n].items()} for n in names} for role, table in b.precisions.items()},
        "constants": {k: _value_json(v) for k, v in b.constants.items()},
        "hardware": {n: spec_json(spec_data(load_hardware(n))) for n in hardware_names()},
        "models": {**{n: spec_json(spec_data(load_model(n))) for n in model_names()}, **_mtp_modules()},
        "engines": {n: engine_json(engine_data(p)) for n, p in profiles().items()}, "default_engine": DEFAULT_PROFILE,
    }


# --- a build's sheets --------------------------------------------------------------------------------------------------


def _built_key(slug: str, engine: str | None) -> str:
    """A sheet as a build made it (its default context, under `engine`), with the figures' drawing setup (matplotlib's
    version and the font files it finds: what a drawn figure's cache key holds beside its data)."""
    from .renderers.plot_draw import drawing_setup

    return _key("built", slug, engine, drawing_setup())


def _drawn_key(slug: str, engine: str | None) -> str:
    """A sheet as a build made it, with the data digest of each figure (whatever machine drew it)."""
    return _key("built figures", slug, engine)


def remember_built(slug: str, engine: str | None, plots: Mapping[str, str], digests: Mapping[str, str]) -> None:
    """A build made `slug`'s sheet on the full path (checked against the exact evaluation) and drew its figures: store the
    cache keys of the figures' files, so that the next build with the same code makes the sheet on the light path; and
    the figures' data digests, so that a build elsewhere can take them from the files a build wrote (`built`'s `drawn`)."""
    if store.directory() is not None:
        store.store_json(_built_key(slug, engine), {"plots": dict(plots)}, f"compiled built {slug}", record=False)  # this machine's
        store.store_json(_drawn_key(slug, engine), {"plots": dict(digests)}, f"compiled built figures {slug}")


def built(slug: str, engine: str | None, drawn: Path | None = None) -> tuple[Sheet, dict[str, bytes]] | None:
    """A shipped sheet on its default context (`engine` the profile of a build, None the default) and its figures' files,
    from its compiled form and the files a build of it with the same code drew (`remember_built`): from this machine's
    cache, else from the folder `drawn` (the committed `out/`) where each file there draws exactly the data of the figure
    (its digest); the full path's sheet byte for byte, checked then, made now without sympy; None where any of it is not stored."""
    from types import SimpleNamespace

    if store.directory() is None:
        return None
    elsewhere = _drawn_figures(slug, engine, drawn)  # read first whatever happens: it is what a build ships (store.recording)
    files = _built_figures(slug, engine) or elsewhere
    if files is None:
        return None
    args = SimpleNamespace(slug=slug, hardware=None, model=None, weights=None, kv=None, math=None, set=[], engine=engine,
                           second_hardware=None, second_model=None)
    try:  # a stored entry that is not what this code writes is a miss, wherever reading it fails
        sheet, _ = _sheet(args, *_read(slug))
    except _READ_ERRORS:
        return None
    return sheet, files


def _built_figures(slug: str, engine: str | None) -> dict[str, bytes] | None:
    """The figures' files this machine drew for the sheet (renderers.plots: each bound to its cache key), or None."""
    from .renderers.plots import whole_file

    entry = store.load_json(_built_key(slug, engine), f"compiled built {slug}", record=False)  # bound to this machine's drawing setup
    if not isinstance(entry, dict) or not isinstance(entry.get("plots"), dict):
        return None
    files = {}
    for name, k in entry["plots"].items():
        data = store.load_bytes(k) if isinstance(k, str) else None
        if data is None or not whole_file(data, str(name)):
            return None
        files[str(name)] = data
    return files


def _drawn_figures(slug: str, engine: str | None, folder: Path | None) -> dict[str, bytes] | None:
    """The figures' files as a build wrote them into `folder`, each drawing the figure's data (its digest), or None."""
    from .renderers.plots import PLOTS_DIR, digest_of, whole_file

    entry = store.load_json(_drawn_key(slug, engine), f"compiled built figures {slug}")
    if folder is None or not isinstance(entry, dict) or not isinstance(entry.get("plots"), dict):
        return None
    files = {}
    for name, digest in entry["plots"].items():
        path = folder / str(name)
        if not isinstance(digest, str) or path.parent.resolve() != (folder / PLOTS_DIR).resolve():  # a figure's file, never a path elsewhere
            return None
        data = store.read_entry(path, ours=False)
        if data is None or digest_of(data) != digest or not whole_file(data, str(name)):
            return None
        files[str(name)] = data
    return files


# --- the light path --------------------------------------------------------------------------------------------------


class _Catalog:
    """The stored catalog, read back on use; a spec of your own file is found by its bytes (`_file_key`), with the warnings
    the full path gives when it loads it (in `warnings`, to be given once the sheet is printed)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.bindings = Bindings(dict(data["parts"]), {k: (v[0], v[1]) for k, v in data["twins"].items()},
                                 {role: {n: _values(t) for n, t in table.items()} for role, table in data["precisions"].items()},
                                 _values(data["constants"]))
        self._data = data
        self.default_engine = str(data["default_engine"])
        self._specs: dict[tuple[str, str], SpecData] = {}
        self._engines: dict[str, ProfileData] = {}
        self.warnings: list[str] = []

    def spec(self, kind: str, name: str) -> SpecData:
        """A chip ("hardware") or model ("models"): a shipped one by name, your own file by path (stored by the full path
        when it read it); MissError for an unknown name or a file not stored (the full path says, or reads it)."""
        if (kind, name) not in self._specs:
            if "/" in name or name.endswith((".toml", ".json")):  # a path, as specs.catalog.resolve reads it
                k = _file_key(kind, name)
                stored = None if k is None else store.load_json(k, f"compiled file {kind}")
                if not isinstance(stored, dict):
                    raise MissError(f"no stored {kind} file {name!r}")
                data = stored["spec"]
                self.warnings += [str(w) for w in stored["warnings"]]
            else:
                data = self._data[kind].get(name)
            if data is None:
                raise MissError(f"no shipped {kind} {name!r}")
            self._specs[(kind, name)] = spec(data)
        return self._specs[(kind, name)]

    def engine_names(self) -> tuple[str, ...]:
        """The shipped engine profiles' names, in the catalog's order."""
        return tuple(self._data["engines"])

    def engine(self, name: str) -> ProfileData:
        if name not in self._engines:
            data = self._data["engines"].get(name)
            if data is None:
                raise MissError(f"no engine profile {name!r}")
            self._engines[name] = engine(data)
        return self._engines[name]


def derive(args: Any) -> str | None:
    """The output of `roofline derive` for the parsed command line `args`, printed from the compiled form; None where the
    light path cannot answer as the full path would (see the module docstring)."""
    if args.plots is not None or not isinstance(args.slug, str) or args.slug.endswith(".toml") or "/" in args.slug:
        return None
    if store.directory() is None:
        return None
    try:  # a stored entry that is not what this code writes is a miss, wherever reading or using it fails: the full path runs
        return _derive(args, *_read(args.slug))
    except _READ_ERRORS:
        return None


#: What reading (and using) a stored entry may raise where the entry is not what this code writes: each is a miss. A sheet
#: is made from stored data by the same code as on the full path, so a well-formed entry with impossible values (a zero
#: denominator, a value out of range) fails there, as a miss; the full path then gives the sheet, or the real error.
_READ_ERRORS = (MissError, SpecError, PlanError, KeyError, ValueError, TypeError, IndexError, AttributeError, ArithmeticError, RecursionError,
                NameError, SyntaxError, MemoryError)


def _read(slug: str) -> tuple[Any, ...]:
    from .renderers.forms import Forms

    data = _load("sheet", slug)
    if not isinstance(data, dict):
        raise MissError("not a stored sheet")
    blueprint = Blueprint.from_json(_checked_blueprint(data["blueprint"]))
    if blueprint.slug != slug:
        raise MissError("a stored sheet of another slug")
    return (blueprint, Plan.from_json(data["plan"]), Forms.from_json(_checked_forms(data["forms"])),
            {str(k): _fraction(v[0], v[1]) for k, v in data["defaults"].items()}, _Catalog(_load("catalog")))


def stored_plan(slug: str) -> tuple[Plan, dict[str, Fraction]] | None:
    """The stored numeric plan of a shipped sheet and its inputs' defaults (what a live page carries: roofline/live.py), or
    None where no well-formed entry is stored."""
    try:
        _blueprint, plan, _forms, defaults, _catalog = _read(slug)
    except (*_READ_ERRORS, OSError):
        return None
    return plan, defaults


def _strings(data: Any) -> list[str]:
    """Every string in parsed JSON, keys included."""
    out, stack = [], [data]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def _checked_blueprint(data: Any) -> Any:
    """A stored blueprint whose math passes the checks a derivation file's does (derivations.engine.prose): every symbol's and step's
    LaTeX, and the math of every prose string; ValueError (a miss) for any other."""
    from .derivations.engine import prose

    try:
        for entry in (*data["symbols"], *data["steps"]):
            prose.check_math(entry["latex"], "cache")
        for text in _strings(data):
            if "$" in text:
                prose.check_prose_math(text, "cache")
    except prose.ProseError as err:
        raise ValueError(str(err)) from None
    return data


def _checked_forms(data: Any) -> Any:
    """Stored printed forms whose every piece passes derivations.engine.prose.check_form; ValueError (a miss) for any other."""
    from .derivations.engine import prose

    try:
        for text in _strings(data):
            prose.check_form(text, "cache")
    except prose.ProseError as err:
        raise ValueError(str(err)) from None
    return data


def _derive(args: Any, bp: Blueprint, plan: Plan, forms: Any, defaults: dict[str, Fraction], cat: _Catalog) -> str:
    from .renderers import FORMATS

    if args.fragment and args.format != "tex":
        raise MissError("a fragment is LaTeX only: the full path says")
    sheet, given = _sheet(args, bp, plan, forms, defaults, cat)
    text = FORMATS[args.format](sheet, **({"fragment": True} if args.fragment else {}))
    for message in given:  # the warnings the full path gives, once the sheet is sure to be printed here
        warnings.warn(SpecWarning(message), stacklevel=2)
    return text


def _sheet(args: Any, bp: Blueprint, plan: Plan, forms: Any, defaults: dict[str, Fraction], cat: _Catalog) -> tuple[Sheet, list[str]]:
    """The sheet `roofline derive` prints for `args`, and the warnings the full path gives for it, in its order (a chip
    file's as it loads, then a quantized checkpoint's); MissError where the full path would answer otherwise."""
    from .derivations.physics import conventions
    from .specs.precisions import MATH_PRECISIONS, precision
    from .specs.weight_formats import default_math, resolve_weights

    # `is None`, never `or`: an empty name is not the default (the full path refuses it, through specs.text.check_name)
    hw = cat.spec("hardware", bp.hardware[0] if args.hardware is None else args.hardware)
    model = cat.spec("models", bp.models[0] if args.model is None else args.model)
    warn = model.checkpoint_warning if args.model is not None and args.weights is None else None
    if args.math is not None and args.math not in MATH_PRECISIONS:
        raise MissError("a storage format as the math")
    weights = resolve_weights(args.weights, model.stored_weights, model.components, conventions.DEFAULT_WEIGHTS)
    math = precision(default_math(weights, tuple(k for k, v in hw.peaks.items() if isinstance(v, Fraction)))[0] if args.math is None else args.math, "--math")
    kv = precision(conventions.DEFAULT_KV if args.kv is None else args.kv, "--kv")
    if isinstance(hw.peaks.get(math.math), Missing | None):
        raise MissError("no peak at the math precision")
    second = {}
    for what, given, default in (("hardware", args.second_hardware, bp.second_hardware), ("models", args.second_model, bp.second_model)):
        if given is not None and default is None:
            raise MissError("a second chip or model the sheet has no use for")
        name = given if given is not None else default
        second[what] = None if name is None else cat.spec(what, _drafter_name(name, model) if what == "models" else name)
    if second["hardware"] is not None and isinstance(second["hardware"].peaks.get(math.math), Missing | None):
        raise MissError("no peak on the second chip")
    overrides = _overrides(bp, args.set)
    s = make_setup(cat.bindings, hw, model, weights, kv, math, overrides, args.math is None, second["hardware"], second["models"],
                   cat.engine(cat.default_engine if args.engine is None else args.engine))
    hardware_names = bp.hardware if args.hardware is None else (args.hardware,)
    model_names = bp.models if args.model is None else (args.model,)
    grid = headline_grid(hardware_names, model_names)

    def identities(structural: Mapping[str, Fraction], not_here: frozenset[str]) -> dict[str, Identity]:
        found = _load("identities", args.slug, _signature(structural, not_here))
        return {str(k): _identity(v) for k, v in found.items()}

    def resolve(base: Setup, row: Row) -> Setup:
        return _resolve(cat, bp, base, row)

    sheet = solve(bp, plan, cat.bindings, s, defaults, resolve, grid, identities)
    from .renderers.forms import needed, specials_from_json

    wanted = needed(sheet)
    if wanted:  # the numbers lines this setup's zeros and ones simplify, as the full path stored them (MissError: it prints them)
        forms = forms.with_special(specials_from_json(_load("numbers", args.slug, _numbers_signature(wanted))))
    return replace(sheet, forms=forms), [*cat.warnings, *([warn] if warn is not None else [])]


def _resolve(cat: _Catalog, bp: Blueprint, s: Setup, row: Row) -> Setup:
    """The setup a table row describes (roofline.api.resolve_row, on plain data)."""
    changes: dict[str, Any] = {}
    if row.set:
        named = by_name(bp.inputs)
        try:
            changes["overrides"] = {**s.overrides, **{named[n].name: read_input(named[n], v) for n, v in row.set.items()}}
        except UnreadError:
            raise MissError("a row's value the full path reads otherwise") from None
    return _row_parts(cat, s, row, changes)


def _row_parts(cat: _Catalog, s: Setup, row: Row, changes: dict[str, Any] | None = None) -> Setup:
    """`s` with a row's chip, model, formats, second chip or model and engine profile, and `changes` (the row's inputs)."""
    from .derivations.physics import conventions
    from .specs.precisions import precision

    changes = dict(changes or {})
    if row.hardware:
        changes["hardware"] = cat.spec("hardware", row.hardware)
    if row.model:
        changes["model"] = cat.spec("models", row.model)
    if row.kv:
        changes["kv"] = precision(row.kv)
    if row.second_hardware:
        changes["second_hardware"] = cat.spec("hardware", row.second_hardware)
    if row.second_model:
        changes["second_model"] = cat.spec("models", _drafter_name(row.second_model, changes.get("model", s.model)))
    if row.engine:
        changes["engine"] = cat.engine(row.engine)
    if row.hardware or row.model:  # the formats follow the row's model, on its chip (row_formats reads no bound value: made once, below)
        s = replace(s, **{k: changes[k] for k in ("hardware", "model") if k in changes})
    changes.update(row_formats(s, conventions.DEFAULT_WEIGHTS, row.weights or None, row.math or None))
    return with_changes(cat.bindings, s, **changes)


@lru_cache(maxsize=1)
def shipped_catalog() -> _Catalog:
    """The shipped chips, models, profiles and bindings as plain data: the stored catalog, else made (the full path)."""
    return _Catalog(_load("catalog") if _stored("catalog") else catalog_json())


def row_setup(s: Setup, row: Row) -> Setup:
    """`s` as a table row would change it: the row's shipped chip, model and formats (a live page's choices,
    roofline/live.py); a RooflineError where no such setup exists, MissError for a spec the catalog does not hold (a
    target's drafter that it does not have)."""
    return _row_parts(shipped_catalog(), s, row)


def _overrides(bp: Blueprint, pairs: list[str]) -> dict[str, Fraction]:
    """`--set NAME=VALUE` pairs as magnitudes in each input's unit, read as the full path reads them; MissError for anything
    it would refuse (it says why)."""
    named = by_name(bp.inputs)  # an older name (InputEntry.aliases) sets its input, as on the full path
    out: dict[str, Fraction] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or name not in named or named[name].name in out:
            raise MissError("a --set the full path refuses, or an input set twice")
        try:
            out[named[name].name] = read_input(named[name], value)
        except UnreadError:
            raise MissError("a value the full path refuses, or reads otherwise") from None
    return out


__all__ = ["DISTRIBUTIONS", "FORMAT", "PACKAGES", "base_key", "catalog_json", "derive", "remember", "sources_digest", "versions"]

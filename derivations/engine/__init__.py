"""The derivation engine: how a sheet is declared, compiled and run, whatever it is about.

declare (steps, closed-form solves, a Derivation, checked for units; with expansion, closed_forms and
declaration_checks) -> compile (blueprint: the plain-data sheet; planning: the numeric plan; renderers.forms: the
printed forms) -> run (run: a compiled sheet evaluated for one setup, without sympy or pint; numeric: the plan, and
codegen: its code) -> check (sheet: the exact evaluation with sympy, and the full path that
checks the run against it). Beside them: context (what a sheet is evaluated for), symbols, prose, the formula language,
exprjson, sweep, and the caches (cache, store) with their bounds (bounded).

This package imports nothing on import: the light path of `roofline derive` loads only the modules it needs.
"""

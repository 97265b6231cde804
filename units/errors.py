"""The project's base error and the unit-mismatch error (lowest layer)."""


class RooflineError(Exception):
    """Base of every error roofline raises on purpose."""


class UnitMismatchError(RooflineError, TypeError):
    """Two quantities that must share a unit do not, or a result has the wrong unit."""

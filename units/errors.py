"""The project's base error and the unit-mismatch error (lowest layer)."""


class RooflineError(Exception):
    """Base of every error roofline raises on purpose: its text is one line naming the input, file or field.

    >>> import roofline
    >>> try:
    ...     roofline.derive("decode-flor")
    ... except roofline.RooflineError as err:
    ...     print(err)
    question 'decode-flor': unknown question (did you mean decode-floor, decode-op-ranking?); `roofline list questions` lists them
    """


class UnitMismatchError(RooflineError, TypeError):
    """Two quantities that must share a unit do not, or a result has the wrong unit."""

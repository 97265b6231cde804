"""The project's base error and the unit-mismatch error (lowest layer)."""


def _rebuild(cls: type[BaseException], args: tuple[object, ...], state: dict[str, object]) -> BaseException:
    err = cls.__new__(cls)
    BaseException.__init__(err, *args)
    err.__dict__.update(state)
    return err


class RooflineError(Exception):
    """Base of every error roofline raises on purpose: its text is one line naming the input, file or field.

    >>> import roofline
    >>> try:
    ...     roofline.derive("decode-flor")
    ... except roofline.RooflineError as err:
    ...     print(err)
    question 'decode-flor': unknown question (did you mean decode-floor, decode-op-ranking?); `roofline list questions` lists them
    """

    def __reduce__(self) -> tuple[object, ...]:
        # Subclasses take other constructor arguments than their message (SpecError(where, field, message)): rebuild from the
        # message and the attributes, so an error pickled in a child process (derivations.engine.bounded) reads back as itself.
        return _rebuild, (type(self), self.args, dict(self.__dict__))


#: The units roofline's registry defines (units/definitions.txt), as a line names them: a name outside them is not a unit here,
#: whatever other registries hold (pint's own knows parsecs; no roofline quantity is a length).
KNOWN_UNITS = "s, min, h, B, b, flop, token, parameter, W, J, Hz, USD and %, with prefixes such as m, u, n, k, M, G, T, Ki, Mi, Gi"


def unknown_unit(name: str) -> str:
    """'parsec' is not one of roofline's units ...: the one text for a unit name the registry does not define."""
    return f"{name!r} is not one of roofline's units: {KNOWN_UNITS}"


class UnitMismatchError(RooflineError, TypeError):
    """Two quantities that must share a unit do not, or a result has the wrong unit."""

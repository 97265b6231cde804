"""roofline: the physics of LLM inference as unit-checked sympy derivations."""

__version__ = "0.1.0"

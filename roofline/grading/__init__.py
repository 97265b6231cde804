"""Grading an answer against a sheet (`roofline check ANSWER --against SLUG:RESULT`, `roofline.grade`).

values: the time limits on every sympy call, the identities that hold for one architecture, the step to grade and the
context's exact values, an expression at a point and random points inside the inputs' domains, a number answer read
with its unit; verdict: the verdict as data, with the known slips it names; formula: a formula's working state at each
level of comparison, the step split into additive terms, and where an approximation stops holding; compare: the verdict
on a candidate's formula or number against the engine's own step (exact, an approximation with where it stops holding,
or a named slip), and what bounds a time; words: a verdict as text or JSON; answer: the front door that builds the
sheet's context and calls compare. Each module imports only modules listed before it.
"""

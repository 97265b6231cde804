"""Grading an answer against a sheet (`roofline check ANSWER --against SLUG:RESULT`, `roofline.grade`).

compare: the verdict, as data (a candidate's formula or number against the engine's own step: exact, an approximation
with where it stops holding, or a named slip); words: a verdict as text or JSON; answer: the front door that builds the
sheet's context and calls compare.
"""

"""The physics every sheet shares: the glossary of symbols, the primitives, the one step model, the conventions, and
the published measurements the step model is checked against (measured, validation) and fitted to (fitting,
leave_one_out)."""

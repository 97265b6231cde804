"""Tests of derivations/engine/."""

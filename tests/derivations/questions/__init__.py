"""Tests of derivations/questions/."""

"""Tests of derivations/physics/."""

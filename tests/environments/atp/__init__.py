"""Tests of environments/atp."""

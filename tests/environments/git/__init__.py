"""Tests of environments/git."""

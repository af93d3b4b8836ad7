"""Tests of environments/sandbox."""

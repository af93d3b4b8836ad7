"""Tests of environments/os."""

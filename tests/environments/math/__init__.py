"""Tests of environments/math."""

"""Shared helpers of the tests (no tests here)."""

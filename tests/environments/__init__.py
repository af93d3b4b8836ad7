"""Tests of environments."""

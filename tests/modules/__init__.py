"""Tests of modules."""

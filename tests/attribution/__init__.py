"""Tests of attribution."""

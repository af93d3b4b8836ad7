"""Tests of environments/small."""

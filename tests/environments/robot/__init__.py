"""Tests of environments/robot."""

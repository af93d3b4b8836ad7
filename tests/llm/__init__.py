"""Tests of llm."""

"""The test suite, one folder per layer of the code; shared helpers in tests/helpers."""

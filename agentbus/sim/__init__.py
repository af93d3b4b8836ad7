"""The simulated LLM: a noisy oracle with known skills behind a real OpenAI-compatible server."""

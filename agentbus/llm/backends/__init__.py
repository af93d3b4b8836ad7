"""LLM backends, found by name through the ``agentbus.backends`` entry points."""

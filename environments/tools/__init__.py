"""Function calling against a catalogue of simulated APIs (StableToolBench-style).

Each task is a user query answered by calling typed APIs (weather, finance,
music, travel) and reporting what they returned; the API backend is seeded,
so the same call always returns the same response. Tasks come in single-tool,
same-category multi-tool and multi-step (one call's output feeds the next)
kinds, with MMAU's self-correction variants: a transient error to retry, or a
wrong earlier call to correct. The outcome is the pass rate: the final answer
states every fact the ground-truth calls return.
"""

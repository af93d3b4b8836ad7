"""Counterfactual replay: a finished episode run again with one call answered differently.

:mod:`agentbus.replay.calls` replays the recorded prefix and repairs one call,
:mod:`agentbus.replay.search` finds the decisive step of an episode, and
:mod:`agentbus.replay.truth` reads the simulator's own mistakes to check it.
The application layer (``agentbus/app/blame.py``) builds the episodes.
"""

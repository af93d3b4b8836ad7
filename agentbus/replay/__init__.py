"""Counterfactual replay: a finished episode run again with one call answered differently.

:mod:`agentbus.replay.calls` replays the recorded prefix and repairs one call,
:mod:`agentbus.replay.search` finds the decisive step of an episode, and
:mod:`agentbus.replay.truth` reads the simulator's own mistakes to check it.
The application layer (``agentbus/app/blame.py``) builds the episodes.
"""

from agentbus.replay.calls import Call, CallLog, Intervention, NotReplayable, ReplayLLM
from agentbus.replay.search import Replay, Verdict, decisive_step, replay

__all__ = [
    "Call",
    "CallLog",
    "Intervention",
    "NotReplayable",
    "Replay",
    "ReplayLLM",
    "Verdict",
    "decisive_step",
    "replay",
]

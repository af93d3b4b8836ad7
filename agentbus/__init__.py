"""agentbus: an async, event-driven multi-agent framework for modular attribution.

The core (this package) knows nothing about concrete modules, environments or
estimators; those plug in through :mod:`agentbus.registry`.
"""

from agentbus.actor import Actor, ActorContext, on
from agentbus.bus import Bus
from agentbus.environment import Environment, Task
from agentbus.episode import Episode, EpisodeSpec
from agentbus.events import Event, EventHub
from agentbus.messages import (
    ActionProposed,
    EpisodeEnded,
    Feedback,
    Message,
    Observation,
    Plan,
    Reflection,
    TaskStarted,
    Thought,
)
from agentbus.outcome import Outcome
from agentbus.runtime import Runtime

__all__ = [
    "ActionProposed",
    "Actor",
    "ActorContext",
    "Bus",
    "Environment",
    "Episode",
    "EpisodeEnded",
    "EpisodeSpec",
    "Event",
    "EventHub",
    "Feedback",
    "Message",
    "Observation",
    "Outcome",
    "Plan",
    "Reflection",
    "Runtime",
    "Task",
    "TaskStarted",
    "Thought",
    "on",
]
__version__ = "0.1.0"

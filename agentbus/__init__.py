"""agentbus: an async, event-driven multi-agent framework for modular attribution.

The core (this package) knows nothing about concrete modules, environments or
attribution; plugins come in through :mod:`agentbus.registry`. Everything a
plugin author needs is importable from here, so plugins never reach into
internal modules (``tests/test_layering.py`` holds the built-in ones to that):

- a module (an actor filling a slot): :class:`Actor`, :func:`on`, the messages,
  :class:`LLM`, :class:`ChatMessage`, :class:`SamplingParams`, :class:`ToolCall`
  (function calling: ``SamplingParams.tools`` in, ``Completion.tool_calls`` out);
- an environment: :class:`Environment`, :class:`Task`, :class:`TaskSource`,
  :class:`EnvSetup`, :class:`Score`, :data:`DEFAULT_RUN_TASKS`;
- a simulated expert: :class:`Expert`, :class:`ExpertQuery`, :class:`Upstream`,
  :class:`Verdict`, :data:`ROLES`, :data:`ROLE_SKILLS`, :func:`skill_role`,
  :func:`task_spread`;
- an LLM backend: :class:`Backend`, :class:`BackendContext`, :class:`ModelSpec`,
  :class:`EndpointLimits`, :class:`Completion`, :class:`UpstreamError`;
- errors: :class:`UserError` (bad input, one line), :class:`InfraError`.

docs/plugins.md shows the smallest complete example of each. The engine room
(:class:`Bus`, :class:`EventHub`, :class:`Runtime`, :class:`Episode`) is exported
too, for embedding the runtime in a program.
"""

import structlog as _structlog

from agentbus import logs as _logs
from agentbus import registry
from agentbus.actor import Actor, ActorContext, on
from agentbus.bus import Bus
from agentbus.environment import (
    DEFAULT_RUN_TASKS,
    Environment,
    EnvSetup,
    Score,
    Task,
    TaskSource,
)
from agentbus.episode import Episode, EpisodeSpec
from agentbus.errors import InfraError, UserError
from agentbus.events import Event, EventHub
from agentbus.inputs import json_loads, read_bounded, read_text
from agentbus.llm.backends.base import Backend, BackendContext
from agentbus.llm.config import EndpointLimits
from agentbus.llm.queueing import waiting_for_slot
from agentbus.llm.retry import UpstreamError
from agentbus.llm.spec import ModelSpec
from agentbus.llm.tools import read_tool_calls, split_tool_calls
from agentbus.llm.types import LLM, ChatMessage, Completion, SamplingParams, ToolCall
from agentbus.messages import (
    ActionProposed,
    Feedback,
    Message,
    Observation,
    Plan,
    Reflection,
    StopEpisode,
    TaskStarted,
    Thought,
)
from agentbus.outcome import Outcome
from agentbus.runtime import Runtime
from agentbus.sim.expert import (
    ROLE_SKILLS,
    ROLES,
    Expert,
    ExpertQuery,
    Upstream,
    Verdict,
    skill_role,
    task_spread,
)
from agentbus.variants import OFF

# A program that embeds agentbus without setting up logging would otherwise get
# structlog's default: every debug line on stdout, unredacted. Warnings and up
# go to stderr through the redacting processor instead; a program that
# configures structlog itself (before or after this import) keeps its own.
if not _structlog.is_configured():
    _logs.configure("warning")


def __getattr__(name: str) -> object:
    """``agentbus.load`` is imported on first use, so ``import agentbus`` never pulls in pandas."""
    if name == "load":
        from agentbus.export import load

        return load
    raise AttributeError(f"module 'agentbus' has no attribute {name!r}")


__all__ = [
    "DEFAULT_RUN_TASKS",
    "LLM",
    "OFF",
    "ROLES",
    "ROLE_SKILLS",
    "ActionProposed",
    "Actor",
    "ActorContext",
    "Backend",
    "BackendContext",
    "Bus",
    "ChatMessage",
    "Completion",
    "EndpointLimits",
    "EnvSetup",
    "Environment",
    "Episode",
    "EpisodeSpec",
    "Event",
    "EventHub",
    "Expert",
    "ExpertQuery",
    "Feedback",
    "InfraError",
    "Message",
    "ModelSpec",
    "Observation",
    "Outcome",
    "Plan",
    "Reflection",
    "Runtime",
    "SamplingParams",
    "Score",
    "StopEpisode",
    "Task",
    "TaskSource",
    "TaskStarted",
    "Thought",
    "ToolCall",
    "Upstream",
    "UpstreamError",
    "UserError",
    "Verdict",
    "json_loads",
    "on",
    "read_bounded",
    "read_text",
    "read_tool_calls",
    "registry",
    "skill_role",
    "split_tool_calls",
    "task_spread",
    "waiting_for_slot",
]
__version__ = "0.1.0"

"""agentbus: an async, event-driven multi-agent framework for modular attribution.

The core (this package) knows nothing about concrete modules, environments or
attribution; plugins come in through :mod:`agentbus.core.registry`. Everything a
plugin author needs is importable from here, so plugins never reach into
internal modules (``tests/docs/test_layering.py`` holds the built-in ones to that):

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

from agentbus.safepath import drop_start_dir as _drop_start_dir

_drop_start_dir()  # before anything else is imported: `python -m` put the cwd first

import importlib as _importlib  # noqa: E402
from typing import TYPE_CHECKING  # noqa: E402

import structlog as _structlog  # noqa: E402

from agentbus.core import logs as _logs  # noqa: E402
from agentbus.core import registry  # noqa: E402

if TYPE_CHECKING:
    from agentbus.core.actor import Actor, ActorContext, on
    from agentbus.core.bus import Bus
    from agentbus.core.environment import (
        DEFAULT_RUN_TASKS,
        Environment,
        EnvSetup,
        Score,
        Task,
        TaskSource,
    )
    from agentbus.core.episode import Episode, EpisodeSpec
    from agentbus.core.errors import InfraError, UserError
    from agentbus.core.events import Event, EventHub
    from agentbus.core.inputs import json_loads, read_bounded, read_text
    from agentbus.core.messages import (
        ActionFormat,
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
    from agentbus.core.outcome import Outcome
    from agentbus.core.variants import OFF
    from agentbus.envkit.expert import (
        STEP_ROLES,
        CheckedExpert,
        ExpertKit,
        Moment,
        RoleAnswer,
        SituationMemo,
        answer_by_verdict,
        judged,
    )
    from agentbus.envkit.history import PastRound, last_action, read_rounds, rounds_so_far
    from agentbus.envkit.prompt import GUIDE_KEYS, action_fence, env_guide, prompt_sections
    from agentbus.envkit.rounds import RoundsExpert, RoundSituation, Writer, role_answers
    from agentbus.envkit.tasks import TaskIndex, generated_count
    from agentbus.executors.runtime import Runtime
    from agentbus.llm.backends.base import Backend, BackendContext
    from agentbus.llm.config import EndpointLimits
    from agentbus.llm.queueing import waiting_for_slot
    from agentbus.llm.retry import UpstreamError
    from agentbus.llm.spec import ModelSpec
    from agentbus.llm.tools import read_tool_calls, split_tool_calls
    from agentbus.llm.types import LLM, ChatMessage, Completion, SamplingParams, ToolCall
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

#: where each public name lives. They are imported on first use (PEP 562), so a
#: process that needs one of them (a math worker needs UserError) does not pay
#: for importing the whole runtime: about 0.6 s of every worker's start.
_EXPORTS: dict[str, str] = {
    "Actor": "agentbus.core.actor",
    "ActorContext": "agentbus.core.actor",
    "on": "agentbus.core.actor",
    "Bus": "agentbus.core.bus",
    "DEFAULT_RUN_TASKS": "agentbus.core.environment",
    "Environment": "agentbus.core.environment",
    "EnvSetup": "agentbus.core.environment",
    "Score": "agentbus.core.environment",
    "Task": "agentbus.core.environment",
    "TaskSource": "agentbus.core.environment",
    "CheckedExpert": "agentbus.envkit.expert",
    "ExpertKit": "agentbus.envkit.expert",
    "RoleAnswer": "agentbus.envkit.expert",
    "SituationMemo": "agentbus.envkit.expert",
    "answer_by_verdict": "agentbus.envkit.expert",
    "judged": "agentbus.envkit.expert",
    "Moment": "agentbus.envkit.expert",
    "STEP_ROLES": "agentbus.envkit.expert",
    "PastRound": "agentbus.envkit.history",
    "last_action": "agentbus.envkit.history",
    "read_rounds": "agentbus.envkit.history",
    "rounds_so_far": "agentbus.envkit.history",
    "RoundsExpert": "agentbus.envkit.rounds",
    "RoundSituation": "agentbus.envkit.rounds",
    "Writer": "agentbus.envkit.rounds",
    "role_answers": "agentbus.envkit.rounds",
    "GUIDE_KEYS": "agentbus.envkit.prompt",
    "action_fence": "agentbus.envkit.prompt",
    "env_guide": "agentbus.envkit.prompt",
    "prompt_sections": "agentbus.envkit.prompt",
    "TaskIndex": "agentbus.envkit.tasks",
    "generated_count": "agentbus.envkit.tasks",
    "Episode": "agentbus.core.episode",
    "EpisodeSpec": "agentbus.core.episode",
    "InfraError": "agentbus.core.errors",
    "UserError": "agentbus.core.errors",
    "Event": "agentbus.core.events",
    "EventHub": "agentbus.core.events",
    "json_loads": "agentbus.core.inputs",
    "read_bounded": "agentbus.core.inputs",
    "read_text": "agentbus.core.inputs",
    "Backend": "agentbus.llm.backends.base",
    "BackendContext": "agentbus.llm.backends.base",
    "EndpointLimits": "agentbus.llm.config",
    "waiting_for_slot": "agentbus.llm.queueing",
    "UpstreamError": "agentbus.llm.retry",
    "ModelSpec": "agentbus.llm.spec",
    "read_tool_calls": "agentbus.llm.tools",
    "split_tool_calls": "agentbus.llm.tools",
    "LLM": "agentbus.llm.types",
    "ChatMessage": "agentbus.llm.types",
    "Completion": "agentbus.llm.types",
    "SamplingParams": "agentbus.llm.types",
    "ToolCall": "agentbus.llm.types",
    "ActionFormat": "agentbus.core.messages",
    "ActionProposed": "agentbus.core.messages",
    "Feedback": "agentbus.core.messages",
    "Message": "agentbus.core.messages",
    "Observation": "agentbus.core.messages",
    "Plan": "agentbus.core.messages",
    "Reflection": "agentbus.core.messages",
    "StopEpisode": "agentbus.core.messages",
    "TaskStarted": "agentbus.core.messages",
    "Thought": "agentbus.core.messages",
    "Outcome": "agentbus.core.outcome",
    "Runtime": "agentbus.executors.runtime",
    "ROLE_SKILLS": "agentbus.sim.expert",
    "ROLES": "agentbus.sim.expert",
    "Expert": "agentbus.sim.expert",
    "ExpertQuery": "agentbus.sim.expert",
    "Upstream": "agentbus.sim.expert",
    "Verdict": "agentbus.sim.expert",
    "skill_role": "agentbus.sim.expert",
    "task_spread": "agentbus.sim.expert",
    "OFF": "agentbus.core.variants",
    "load": "agentbus.runs.frames",
}

# A program that embeds agentbus without setting up logging would otherwise get
# structlog's default: every debug line on stdout, unredacted. Warnings and up
# go to stderr through the redacting processor instead; a program that
# configures structlog itself (before or after this import) keeps its own.
if not _structlog.is_configured():
    _logs.configure("warning")


def __getattr__(name: str) -> object:
    """A public name, imported on first use (``agentbus.load`` too, so pandas only when asked)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentbus' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "DEFAULT_RUN_TASKS",
    "GUIDE_KEYS",
    "LLM",
    "OFF",
    "ROLES",
    "ROLE_SKILLS",
    "STEP_ROLES",
    "ActionFormat",
    "ActionProposed",
    "Actor",
    "ActorContext",
    "Backend",
    "BackendContext",
    "Bus",
    "ChatMessage",
    "CheckedExpert",
    "Completion",
    "EndpointLimits",
    "EnvSetup",
    "Environment",
    "Episode",
    "EpisodeSpec",
    "Event",
    "EventHub",
    "Expert",
    "ExpertKit",
    "ExpertQuery",
    "Feedback",
    "InfraError",
    "Message",
    "ModelSpec",
    "Moment",
    "Observation",
    "Outcome",
    "PastRound",
    "Plan",
    "Reflection",
    "RoleAnswer",
    "RoundSituation",
    "RoundsExpert",
    "Runtime",
    "SamplingParams",
    "Score",
    "SituationMemo",
    "StopEpisode",
    "Task",
    "TaskIndex",
    "TaskSource",
    "TaskStarted",
    "Thought",
    "ToolCall",
    "Upstream",
    "UpstreamError",
    "UserError",
    "Verdict",
    "Writer",
    "action_fence",
    "answer_by_verdict",
    "env_guide",
    "generated_count",
    "json_loads",
    "judged",
    "last_action",
    "on",
    "prompt_sections",
    "read_bounded",
    "read_rounds",
    "read_text",
    "read_tool_calls",
    "registry",
    "role_answers",
    "rounds_so_far",
    "skill_role",
    "split_tool_calls",
    "task_spread",
    "waiting_for_slot",
]
__version__ = "0.1.0"

"""The environment adapter interface and the task model.

An environment is an async adapter: ``reset(task)`` shows the initial state,
``step(action)`` applies one action and answers with feedback, ``score()``
turns the final state into a reward in [0, 1]. The episode runs it as an actor
on the bus, so an episode is a conversation of actors rather than a fixed loop.
Environments must be safe to run thousands at once: no global mutable state,
and blocking work (sympy, subprocesses) off the event loop with timeouts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from agentbus.core.errors import UserError
from agentbus.core.messages import ActionFormat, ActionProposed, Feedback, Observation
from agentbus.core.outcome import ErrorKind

#: How many tasks a run's generators make unless ``--tasks`` says otherwise.
#: Lives here, not in the run config, so the standalone simulator
#: (``python -m agentbus.sim.serve``) makes the same tasks from the same flags
#: without importing the application layer.
DEFAULT_RUN_TASKS = 30


def check_count(count: int, flag: str = "--tasks") -> int:
    """The one rule for a task count (``--tasks``, ``--limit``): at least 1, said in one line."""
    if count < 1:
        raise UserError(f"{flag} must be at least 1 (got {count})")
    return count


class Task(BaseModel):
    """One problem. ``hidden`` holds the solution: never shown to the agent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    env: str
    instruction: str
    data: dict[str, Any] = Field(default_factory=dict)
    hidden: dict[str, Any] = Field(default_factory=dict)


class TaskSource(BaseModel):
    """Where an environment's tasks come from: a dataset file or its generator."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: Path | None = None
    #: a second file some environments need (math: the knowledge-point file)
    knowledge: Path | None = None
    #: how many tasks a generator makes (ignored for datasets)
    count: int = 50
    seed: int = 0
    #: keep only the first ``limit`` tasks
    limit: int | None = None


@dataclass
class EnvSetup:
    """The tasks of a run and a factory making one environment per episode.

    Resources every episode shares read-only (a search index, a parsed
    dataset) are built once in :meth:`Environment.setup` and captured by
    ``factory``.
    """

    tasks: list[Task]
    factory: Callable[[], Environment]


class Score(BaseModel):
    """An environment's verdict on the episode."""

    reward: float = 0.0
    success: bool = False
    details: dict[str, Any] = Field(default_factory=dict)
    #: set when the agent's own behaviour ended the episode (an external agent that
    #: crashed, timed out or gave no result): one of ``AGENT_ENDINGS``, so the
    #: episode still counts, under its own kind rather than as a wrong answer
    ending: ErrorKind | None = None
    #: what the record's ``reason`` says with an ``ending`` (the agent's failure)
    reason: str | None = None


class Environment(ABC):
    """Base class of environment adapters (one instance per episode)."""

    name: ClassVar[str] = "environment"
    #: the round limit the environment asks for, unless the run overrides it
    default_max_steps: ClassVar[int] = 10
    #: how this environment's actions are written; the action parser reads them that
    #: way. The default ``command`` keeps the prose test (an answer made only of
    #: sentences is no action), which is right wherever an action cannot read like a
    #: sentence; an environment whose actions can (a proof script, a free-text answer)
    #: says ``proof`` or ``answer`` so honest actions are not refused as prose.
    action_format: ClassVar[ActionFormat] = "command"

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        """Load or generate the tasks and prepare shared resources.

        Raise :class:`agentbus.core.errors.UserError` for a missing or malformed file.
        """
        raise NotImplementedError(f"environment {cls.name!r} has no task loader")

    def guide(self, task: Task) -> dict[str, str]:
        """Per-role prompt specialisation, sent to the modules in ``TaskStarted.guide``.

        Keys: ``system`` (the domain), ``planning``, ``reasoning``, ``action``
        (including the exact action syntax) and ``reflection``.
        """
        return {}

    @abstractmethod
    async def reset(self, task: Task) -> Observation:
        """Start ``task`` and describe the initial state."""

    @abstractmethod
    async def step(self, action: ActionProposed) -> Feedback:
        """Apply one (already parsed, valid) action and describe the result."""

    @abstractmethod
    async def score(self) -> Score:
        """Judge the final state."""

    async def close(self) -> None:
        """Release resources (processes, sandboxes). Called once per episode."""
        return None

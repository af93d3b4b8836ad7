"""Typed, immutable messages exchanged on an episode's bus.

Every message carries the episode it belongs to, the actor that sent it and a
per-bus monotonic sequence number. Actors build messages with only their
payload fields; the bus stamps ``episode_id``, ``sender`` and ``seq`` when the
message is published, so a handler can never forge another actor's identity.
Modules define their own message types by subclassing :class:`Message` (or one
of the core types, so that handlers for the base type receive them too).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Message(BaseModel):
    """Base of every bus message: frozen, validated, cheap to copy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    episode_id: str = ""
    sender: str = ""
    seq: int = 0


#: How an environment's actions are written, so the action parser reads them that way
#: (:attr:`agentbus.core.environment.Environment.action_format`). ``proof`` (a Coq, Lean or
#: Isabelle script) and ``answer`` (free text) may read like sentences: ``Proof. intros
#: a c H1 H2. lia. Qed.`` is one. ``command`` (``calculator: 2*3``, ``click[Buy]``),
#: ``shell``, ``git`` and ``tool_call`` cannot, so an answer of sentences is no action.
ActionFormat = Literal["command", "shell", "git", "tool_call", "proof", "answer"]


class TaskStarted(Message):
    """The episode began: the instruction every module may read."""

    task_id: str
    instruction: str
    env: str
    max_steps: int = 10
    info: dict[str, Any] = Field(default_factory=dict)
    #: the environment's per-role prompt specialisation (see Environment.guide)
    guide: dict[str, str] = Field(default_factory=dict)
    #: how the environment's actions are written (see :data:`ActionFormat`)
    action_format: ActionFormat = "command"


class Observation(Message):
    """What the environment shows after a reset (the initial state)."""

    text: str
    data: dict[str, Any] = Field(default_factory=dict)


class Plan(Message):
    """A high-level plan for the whole task."""

    text: str
    steps: list[str] = Field(default_factory=list)


class Thought(Message):
    """One round of reasoning: what to do next and why."""

    text: str
    round: int = 0


class ActionProposed(Message):
    """A concrete action for the environment, in the environment's syntax."""

    text: str
    round: int = 0
    valid: bool = True
    parse_error: str | None = None


class Feedback(Message):
    """The environment's answer to one action."""

    text: str
    round: int = 0
    done: bool = False
    success: bool | None = None
    reward: float = 0.0
    valid: bool = True
    needs_reflection: bool = False
    data: dict[str, Any] = Field(default_factory=dict)


class Reflection(Message):
    """A critique of the last failed step, fed to the next round's reasoning."""

    text: str
    round: int = 0


class StopEpisode(Message):
    """A request to stop the episode, published by the environment actor (or the episode).

    Named for what it asks, so it is not mistaken for the ``episode.ended``
    event (:data:`agentbus.core.events.EPISODE_ENDED`), which reports the outcome
    once the episode is over.
    """

    reason: str = "done"


__all__ = [
    "ActionProposed",
    "Feedback",
    "Message",
    "Observation",
    "Plan",
    "Reflection",
    "StopEpisode",
    "TaskStarted",
    "Thought",
]

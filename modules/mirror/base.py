"""What MIRROR's agents share: the task view, prompts, critiques and memories.

Prompts follow the shape of docs/prompt-contract.md: a system message whose
first line names the role the simulator draws the answer with (``planning``,
``action``, ``reasoning``, ``reflection`` module) and says which MIRROR agent
is speaking, then ``## `` sections in the user message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, ClassVar

from agentbus import Actor, ChatMessage, Message, Observation, TaskStarted, on
from modules.mirror.messages import Critique, MemoryContents, Recall, Review

#: how many times a draft may be revised after its critique (bounded revisions)
MAX_REVISIONS = 2
#: attempts at the whole task (long-term memory carries the failed ones)
MAX_ATTEMPTS = 3
#: tries per subtask before the attempt counts as failed
MAX_TRIES = 3
#: how long an agent waits for a critic or a memory (an LLM call, maybe queued)
REQUEST_TIMEOUT_S = 600.0

_SCORE = re.compile(r"score\s*[:=]?\s*(\d+(?:\.\d+)?)\s*(?:/\s*10)?", re.IGNORECASE)


def parse_score(text: str) -> float | None:
    """The first ``Score: N`` (1-10) in a critique, or None."""
    found = _SCORE.search(text)
    if found is None:
        return None
    value = float(found.group(1))
    return value if 1.0 <= value <= 10.0 else None


def sections(items: Iterable[tuple[str, str]]) -> str:
    return "\n\n".join(f"## {title}\n{body.strip()}" for title, body in items if body.strip())


class MirrorActor(Actor):
    """Keeps the task, its first observation and the tool schemas; asks its model."""

    #: the PRAF role the simulator draws this agent's answers with
    role: ClassVar[str] = "other"
    #: which MIRROR agent this is, in words (the system prompt's first line)
    agent: ClassVar[str] = ""
    instructions: ClassVar[str] = ""

    def __init__(self) -> None:
        self.task = ""
        self.task_id = ""
        self.system = ""
        self.observation = ""
        self.tools: list[dict[str, Any]] = []

    @on(TaskStarted)
    async def started(self, msg: TaskStarted) -> None:
        self.task, self.task_id = msg.instruction, msg.task_id
        self.system = msg.guide.get("system", "")

    @on(Observation)
    async def observed(self, msg: Observation) -> Message | None:
        if not self.observation:
            self.observation = msg.text
            self.tools = list(msg.data.get("tools", []))
        return await self.begin()

    async def begin(self) -> Message | None:
        """Called once the first observation is in (the planner starts the task)."""
        return None

    def messages(self, items: Iterable[tuple[str, str]], request: str) -> list[ChatMessage]:
        system = (
            f"You are the {self.role} module of an LLM agent: {self.agent}.\n{self.instructions}"
        )
        if self.system:
            system += f"\n{self.system}"
        user = sections([("Task", self.task), *items])
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": f"{user}\n\n{request}"},
        ]

    async def ask(self, items: Iterable[tuple[str, str]], request: str) -> str:
        completion = await self.llm.complete(self.messages(items, request))
        return completion.text.strip()

    def has(self, msg_type: type[Message]) -> bool:
        """Whether a component handling ``msg_type`` is in this episode (not off)."""
        return self.ctx.bus.handles(msg_type)

    async def critique(self, review: Review) -> Critique | None:
        """The critic's verdict on a draft, or None when that critic is off."""
        if not self.has(type(review)):
            return None
        reply = await self.request(review, timeout=REQUEST_TIMEOUT_S)
        return reply if isinstance(reply, Critique) else None

    async def recall(self, query: Recall) -> list[str]:
        """A memory's notes, or [] when that memory is off."""
        if not self.has(type(query)):
            return []
        reply = await self.request(query, timeout=REQUEST_TIMEOUT_S)
        return list(reply.notes) if isinstance(reply, MemoryContents) else []

    async def note(self, msg: Message) -> None:
        """Hand a memory something to keep (nothing happens when it is off)."""
        if self.has(type(msg)):
            await self.publish(msg)


def numbered_steps(plan: str) -> list[str]:
    """The plan's numbered lines (``1. ...``), or its non-empty lines when none are numbered."""
    steps = [m.group(1).strip() for m in re.finditer(r"^\s*\d+[.)]\s*(.+)$", plan, re.MULTILINE)]
    return steps or [line.strip() for line in plan.splitlines() if line.strip()][:6]


class Gate:
    """Intra-reflection: score a draft, revise it while it scores below theta, at most N times."""

    def __init__(self, actor: MirrorActor, theta: float) -> None:
        self.actor = actor
        self.theta = theta
        self.critiques: list[Critique] = []

    async def run(
        self,
        draft: str,
        review: Any,
        revise: Any,
    ) -> tuple[str, bool]:
        """(final draft, passed): ``review(draft)`` is the request, ``revise(draft, c)`` redoes it.

        Passed is True when the critic is off (nothing judged it), when its
        answer has no score (nothing to act on), or when the score reaches theta.
        """
        for revision in range(MAX_REVISIONS + 1):
            critique = await self.actor.critique(review(draft))
            if critique is None:
                return draft, True
            self.critiques.append(critique)
            if critique.score is None or critique.score >= self.theta:
                return draft, True
            if revision == MAX_REVISIONS:
                break
            draft = await revise(draft, critique)
        return draft, False

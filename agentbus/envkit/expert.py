"""The scaffold of a simulated expert (:class:`agentbus.Expert`).

Every expert does the same four things around its own knowledge of the
domain: it indexes the run's tasks and finds the one a prompt is about; it
reads the prompt into a *situation* (the history replayed to the current
state), remembered because the simulator asks about one prompt several
times; it judges the upstream messages the prompt shows (plan, thought,
reflection) and says how hard the step is; and it writes the answer the
simulator's verdict calls for: a malformed one, the right one, or a
plausible mistake. :class:`ExpertKit` holds all but the domain knowledge.

Mistakes draw from the simulator's random stream, so the order of draws is
part of an expert's behaviour: :func:`answer_by_verdict` draws only for a wrong answer,
exactly as the hand-written experts did.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from agentbus.core.environment import Task
from agentbus.envkit.prompt import prompt_sections
from agentbus.envkit.tasks import TaskIndex
from agentbus.llm.types import ChatMessage
from agentbus.sim.expert import ExpertQuery, Upstream, Verdict

S = TypeVar("S")

#: situations an expert remembers (oldest out first)
MEMO = 256


def judged(
    difficulty: float,
    plan: bool | None = None,
    thought: bool | None = None,
    reflection: bool | None = None,
) -> Upstream:
    """What the expert tells the simulator about a step: upstream quality and difficulty.

    ``None`` means the prompt does not show that message; ``difficulty`` is in
    logits taken off every model's chance alike.
    """
    return Upstream(plan=plan, thought=thought, reflection=reflection, difficulty=difficulty)


class SituationMemo(Generic[S]):
    """Situations by key, the oldest dropped first once ``size`` are held."""

    def __init__(self, size: int = MEMO) -> None:
        self.size = size
        self._seen: OrderedDict[Hashable, S] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], S]) -> S:
        sit = self._seen.get(key)
        if sit is None:
            sit = make()
            self._seen[key] = sit
            if len(self._seen) > self.size:
                self._seen.popitem(last=False)
        return sit


@dataclass(frozen=True)
class RoleAnswer(Generic[S]):
    """How one role answers: a fixed malformed text, the right text, a wrong one."""

    malformed: str
    right: Callable[[S], str]
    wrong: Callable[[S, random.Random], str]


def answer_by_verdict(verdict: Verdict, sit: S, rng: random.Random, how: RoleAnswer[S]) -> str:
    """The answer ``verdict`` calls for; only a wrong answer draws from ``rng``."""
    if verdict.malformed:
        return how.malformed
    return how.right(sit) if verdict.correct else how.wrong(sit, rng)


class ExpertKit(Generic[S]):
    """Base of an expert: task index, situation memo and the per-role answers.

    A subclass sets ``env`` (the environment's registered name), implements
    :meth:`understand` (prompt -> situation), :meth:`assess` (see :func:`judged`)
    and :meth:`act` (the action role), and lists in ``answers`` how the other
    roles answer. ``read_sections`` reads the prompt; override it where the
    environment's prompt is read differently.
    """

    env: str = ""
    #: how planning, reasoning and reflection answer (a role not listed gets ``idle``)
    answers: ClassVar[Mapping[str, RoleAnswer[Any]]] = {}
    #: the answer of a role the environment has no use for
    idle: ClassVar[str] = ""

    def __init__(self) -> None:
        self.tasks = TaskIndex(self.env)
        self._memo: SituationMemo[S] = SituationMemo()

    @staticmethod
    def read_sections(text: str) -> dict[str, str]:
        return prompt_sections(text)

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        self.tasks.add(tasks)

    def find_task(self, messages: Sequence[ChatMessage]) -> Task | None:
        return self.tasks.find(messages, self.read_sections)

    def understand(self, task: Task, user: str) -> S:
        """The situation a prompt's user message shows for ``task``."""
        raise NotImplementedError(f"{type(self).__name__}.understand")

    def situation(self, query: ExpertQuery) -> S:
        return self._memo.get(
            (query.task.id, query.user), lambda: self.understand(query.task, query.user)
        )

    def act(self, sit: S, verdict: Verdict, rng: random.Random) -> str:
        """The action module's answer (its own rule: it reads the current thought)."""
        raise NotImplementedError(f"{type(self).__name__}.act")

    def respond(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        sit = self.situation(query)
        if query.role == "action":
            return self.act(sit, verdict, rng)
        how = self.answers.get(query.role)
        return self.idle if how is None else answer_by_verdict(verdict, sit, rng, how)

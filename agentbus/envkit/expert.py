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
from typing import Any, ClassVar, Generic, Literal, TypeVar

from agentbus.core import registry
from agentbus.core.environment import Task
from agentbus.envkit.prompt import prompt_sections
from agentbus.envkit.tasks import TaskIndex
from agentbus.llm.types import ChatMessage
from agentbus.sim.expert import ExpertQuery, Upstream, Verdict

S = TypeVar("S")

#: situations an expert remembers (oldest out first)
MEMO = 256

#: the roles whose prompt shows upstream messages worth judging
STEP_ROLES = ("reasoning", "action", "reflection")

#: when a proposal is judged: ``now`` (the current thought, in the current
#: state), ``last`` (the last round's thought, in the state before that round)
#: or ``advice`` (the latest reflection, in the state it was written for)
Moment = Literal["now", "last", "advice"]


def judged(
    difficulty: float,
    plan: bool | None = None,
    thought: bool | None = None,
    reflection: bool | None = None,
) -> Upstream:
    """What the expert tells the simulator about a step: upstream quality and difficulty.

    ``None`` means the prompt does not show that message (or it is not
    judged). ``difficulty`` is in logits taken off every model's chance
    alike: positive makes the step harder, negative easier, 0 leaves each
    model at its profile's skill (``agentbus/sim/model.py``).
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
    :meth:`understand` (prompt -> situation), ``assess`` (see :func:`judged`;
    :class:`CheckedExpert` builds it from three checks) and :meth:`act` (the
    action role), and lists in ``answers`` how the other roles answer.
    ``read_sections`` reads the prompt; override it where the environment's
    prompt is read differently.
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


class CheckedExpert(ExpertKit[S]):
    """An expert whose ``assess`` is built from three checks: the kit's default judging.

    A subclass fills in :meth:`plan_good`, :meth:`proposal_good` (a thought
    or a reflection, at a :data:`Moment`) and the step's difficulty
    (``difficulties`` per role, or :meth:`difficulty_of`); a check left out
    means "not judged" (the simulator then reads nothing into that message).
    An expert with a rule of its own subclasses :class:`ExpertKit` and writes
    ``assess`` itself.
    """

    #: each role's difficulty in logits (positive = harder, see :func:`judged`); others 0
    difficulties: ClassVar[Mapping[str, float]] = {}

    def difficulty_of(self, query: ExpertQuery) -> float:
        """How hard this step is for every model alike (default: ``difficulties`` by role)."""
        return self.difficulties.get(query.role, 0.0)

    def plan_good(self, sit: S, plan: str) -> bool | None:
        """Whether ``plan`` is a good plan in ``sit`` (None: not judged)."""
        return None

    def proposal_good(self, sit: S, text: str, moment: Moment) -> bool | None:
        """Whether the action ``text`` proposes is right at ``moment`` (None: not judged)."""
        return None

    def sections_of(self, sit: S, query: ExpertQuery) -> Mapping[str, str]:
        """The prompt's ``## `` sections (a situation that keeps them says so)."""
        return self.read_sections(query.user)

    def last_thought(self, sit: S) -> str | None:
        """The last finished round's thought, which a reflection is about (None: no rounds)."""
        return None

    def assess(self, query: ExpertQuery) -> Upstream:
        """Judge what the prompt shows, from the checks above.

        The plan when the prompt shows one; for the action role the current
        thought (``now``); for reflection the last round's thought (``last``);
        for reasoning the latest reflection (``advice``). Planning is judged
        by its difficulty alone.
        """
        difficulty = self.difficulty_of(query)
        if query.role not in STEP_ROLES:
            return judged(difficulty)
        sit = self.situation(query)
        parts = self.sections_of(sit, query)
        plan = self.plan_good(sit, parts["Plan"]) if parts.get("Plan") else None
        thought: bool | None = None
        reflection: bool | None = None
        if query.role == "action" and parts.get("Current thought"):
            thought = self.proposal_good(sit, parts["Current thought"], "now")
        if query.role == "reflection":
            last = self.last_thought(sit)
            if last:
                thought = self.proposal_good(sit, last, "last")
        if query.role == "reasoning" and parts.get("Latest reflection"):
            reflection = self.proposal_good(sit, parts["Latest reflection"], "advice")
        return judged(difficulty, plan=plan, thought=thought, reflection=reflection)


def expert_problem(env: str) -> str | None:
    """Why ``sim:`` models cannot play ``env``'s tasks, in one line (None: they can).

    Without an expert the simulator cannot recognise a single task: every
    answer is a guess, every value 0.00, and the run would exit 0. So a run
    on ``sim:`` models checks first that ``env`` has an expert, and that an
    :class:`ExpertKit` registered for it indexes ``env``'s tasks (its ``env``
    is the same name: a typo there has the same effect).
    """
    known = sorted(registry.names("experts"))
    if env not in known:
        return (
            f"no simulated expert for environment {env!r}, so sim: models cannot play its "
            f"tasks; environments with one: {', '.join(known) or 'none'} (register one under "
            "agentbus.experts: docs/write-an-environment.md)"
        )
    cls = registry.get("experts", env)
    if isinstance(cls, type) and issubclass(cls, ExpertKit) and cls.env != env:
        return (
            f"the simulated expert registered for {env!r} ({cls.__name__}) sets env = "
            f"{cls.env!r}, so it finds none of {env!r}'s tasks; set env = {env!r}"
        )
    return None

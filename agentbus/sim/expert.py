"""The contract between the simulator and each environment's expert.

The simulator is generic: it knows skill profiles, how upstream quality moves
the chance of a correct answer, serving speed and faults. What a correct (or
a realistically wrong) answer *looks like* for a task is the environment's
knowledge, so each environment ships an :class:`Expert` next to its task
loader and registers it under the ``agentbus.experts`` entry-point group with
the environment's name.

One request is answered in four steps:

1. the simulator detects the role from the system prompt (the phrase
   ``"<role> module"``, role one of :data:`ROLES` or :data:`ROLE_SKILLS`,
   else ``"other"``);
2. it asks every expert ``find_task(prompt)``; the first task found wins
   (tasks reach an expert through :meth:`Expert.add_tasks`);
3. the expert judges the upstream content the prompt carries
   (:meth:`Expert.assess`: is the plan / latest thought / reflection good?)
   and says how hard the task is (a logit penalty, the same for every model);
4. the simulator draws ``correct`` and ``malformed`` from the model's skill
   profile and that assessment, and the expert writes the answer text
   (:meth:`Expert.respond`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from agentbus.core.environment import Task
from agentbus.llm.types import ChatMessage

ROLES: tuple[str, ...] = ("planning", "reasoning", "action", "reflection")

#: roles of other agents' modules, and the profile skill each one's answers are
#: drawn with (a profile has one skill per entry of :data:`ROLES`). MMAU's
#: two-stage agent: its planner plans (planning skill); its solver picks and
#: writes each next step from the plan and the history, which is what the
#: reasoning skill measures (a weak model leans on a good plan, a strong one
#: barely needs it), so it is drawn with that. Experts receive the role as
#: written ("solver"), since its answer has its own format (a step and an action).
ROLE_SKILLS: dict[str, str] = {"planner": "planning", "solver": "reasoning"}


def skill_role(role: str) -> str:
    """The profile skill (one of :data:`ROLES`, or ``other``) that ``role`` is drawn with."""
    return ROLE_SKILLS.get(role, role)


Role = Literal["planning", "reasoning", "action", "reflection", "other"]


@dataclass(frozen=True)
class Upstream:
    """Quality of what the prompt shows from other modules; None = not present."""

    plan: bool | None = None
    thought: bool | None = None
    reflection: bool | None = None
    #: how hard this step of this task is, in logits subtracted from every model's
    #: chance alike (0 = as the profile says); the environment's expert knows its tasks
    difficulty: float = 0.0


def task_spread(task_id: str, sd: float, salt: str = "") -> float:
    """A task's own share of its difficulty: a fixed normal draw (mean 0, ``sd``) from its id.

    Experts add it to what they know of a task's difficulty (its level, its
    kind), so that tasks of one level are not all equally hard. It depends on
    the id alone, so every coalition and every model sees the task alike.
    """
    return random.Random(f"difficulty:{salt}:{task_id}").gauss(0.0, sd) if sd > 0 else 0.0


@dataclass(frozen=True)
class ExpertQuery:
    """One chat request, recognised: its role, its task and the raw prompt."""

    role: str
    task: Task
    messages: Sequence[ChatMessage]

    @property
    def system(self) -> str:
        return "\n".join(m["content"] for m in self.messages if m["role"] == "system")

    @property
    def user(self) -> str:
        return "\n".join(m["content"] for m in self.messages if m["role"] != "system")


@dataclass(frozen=True)
class Verdict:
    """What the simulator decided this answer will be."""

    correct: bool
    malformed: bool = False


@runtime_checkable
class Expert(Protocol):
    """An environment's knowledge of its tasks' solutions, for the simulator."""

    #: the environment's registered name
    env: str

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        """Make these tasks recognisable (called with every task set a run loads)."""

    def find_task(self, messages: Sequence[ChatMessage]) -> Task | None:
        """The task this prompt is about, or None when it is not one of ours."""

    def assess(self, query: ExpertQuery) -> Upstream:
        """Judge the upstream content (plan, latest thought, reflection) in the prompt."""

    def respond(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        """Write the answer: a correct step, a realistic mistake, or broken formatting."""

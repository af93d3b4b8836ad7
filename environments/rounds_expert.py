"""The expert scaffold of the environments whose experts replay a history of rounds.

The navigation, shopping, ticket and robot experts read a prompt into a
*situation*: its ``## `` sections (``parts``), the state the history's
rounds lead to, and the last round (``last``). They judge upstream messages
the same way: a plan by the environment's own test, and a proposal (the
current thought, the last round's thought, the latest reflection) by whether
it is right in the state it was written for. Only what "right" means and how
hard a step is differ; :class:`RoundsExpert` holds the rest, on top of
:class:`agentbus.ExpertKit` (task index, situation memo, answers by verdict).

Judging draws nothing from the simulator's random stream, so the order of
the checks here does not change any answer.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Literal, Protocol, TypeVar

from agentbus import ExpertKit, ExpertQuery, RoleAnswer, Upstream, judged
from environments.bracket_prompt import PastRound

#: the roles whose prompt shows upstream messages worth judging
STEP_ROLES = ("reasoning", "action", "reflection")

#: when a proposal is judged: ``now`` (the current thought, in the current
#: state), ``last`` (the last round's thought, in the state before that round)
#: or ``advice`` (the latest reflection, in the state it was written for)
Moment = Literal["now", "last", "advice"]


class RoundSituation(Protocol):
    """What :meth:`RoundsExpert.assess` reads of a situation."""

    @property
    def parts(self) -> Mapping[str, str]: ...

    @property
    def last(self) -> PastRound | None: ...


R = TypeVar("R", bound=RoundSituation)
S = TypeVar("S")
S_in = TypeVar("S_in", contravariant=True)


class Writer(Protocol[S_in]):
    """A writer module: the right and a wrong text per role, from the situation."""

    def plan_text(self, sit: S_in, /) -> str: ...
    def wrong_plan(self, sit: S_in, rng: random.Random, /) -> str: ...
    def thought_text(self, sit: S_in, /) -> str: ...
    def wrong_thought(self, sit: S_in, rng: random.Random, /) -> str: ...
    def reflection_text(self, sit: S_in, /) -> str: ...
    def wrong_reflection(self, sit: S_in, rng: random.Random, /) -> str: ...


def role_answers(
    writer: Writer[S], *, planning: str, reasoning: str, reflection: str
) -> dict[str, RoleAnswer[S]]:
    """The planning, reasoning and reflection answers of a writer module.

    The keyword texts are each role's malformed answer; the writer's
    ``*_text`` functions write the right answer and its ``wrong_*`` ones a
    plausible mistake.
    """
    return {
        "planning": RoleAnswer(planning, writer.plan_text, writer.wrong_plan),
        "reasoning": RoleAnswer(reasoning, writer.thought_text, writer.wrong_thought),
        "reflection": RoleAnswer(reflection, writer.reflection_text, writer.wrong_reflection),
    }


class RoundsExpert(ExpertKit[R]):
    """An expert whose situation replays rounds; it judges upstream messages for the simulator.

    A subclass says how hard a step is (:meth:`difficulty`), whether a plan
    is good (:meth:`plan_good`) and whether the action a text proposes is
    right at a :data:`Moment` (:meth:`proposal_good`).
    """

    def difficulty(self, query: ExpertQuery) -> float:
        """How hard this step is for every model alike, in logits."""
        raise NotImplementedError(f"{type(self).__name__}.difficulty")

    def plan_good(self, sit: R, plan: str) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.plan_good")

    def proposal_good(self, sit: R, text: str, moment: Moment) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.proposal_good")

    def assess(self, query: ExpertQuery) -> Upstream:
        difficulty = self.difficulty(query)
        if query.role not in STEP_ROLES:
            return judged(difficulty)
        sit = self.situation(query)
        parts = sit.parts
        plan = self.plan_good(sit, parts["Plan"]) if parts.get("Plan") else None
        thought: bool | None = None
        reflection: bool | None = None
        if query.role == "action" and parts.get("Current thought"):
            thought = self.proposal_good(sit, parts["Current thought"], "now")
        if query.role == "reflection" and sit.last is not None and sit.last.thought:
            thought = self.proposal_good(sit, sit.last.thought, "last")
        if query.role == "reasoning" and parts.get("Latest reflection"):
            reflection = self.proposal_good(sit, parts["Latest reflection"], "advice")
        return judged(difficulty, plan=plan, thought=thought, reflection=reflection)

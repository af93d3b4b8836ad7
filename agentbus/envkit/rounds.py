"""The expert scaffold of an environment of many rounds.

Such an expert (the built-in navigation, shopping, ticket and robot ones;
``examples/rounds_demo``) reads a prompt into a *situation*: its ``## ``
sections (``parts``), the state the history's rounds lead to
(:mod:`agentbus.envkit.history`), and the last round (``last``). It judges
upstream messages with the kit's default ``assess`` (:class:`CheckedExpert`): a
plan by the environment's own test, and a proposal (the current thought, the
last round's thought, the latest reflection) by whether it is right in the
state it was written for. Only what "right" means and how hard a step is
differ; :class:`RoundsExpert` says where a situation keeps its sections and
its last round, and asks a subclass for the rest.

Judging draws nothing from the simulator's random stream, so the order of
the checks does not change any answer.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Protocol, TypeVar

from agentbus.envkit.expert import CheckedExpert, Moment, RoleAnswer
from agentbus.envkit.history import PastRound
from agentbus.sim.expert import ExpertQuery


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


class RoundsExpert(CheckedExpert[R]):
    """An expert whose situation replays rounds, judged by the kit's default ``assess``.

    A subclass says how hard a step is (:meth:`difficulty`), whether a plan
    is good (:meth:`plan_good`) and whether the action a text proposes is
    right at a :data:`~agentbus.envkit.expert.Moment` (:meth:`proposal_good`);
    all three are required here (the plain kit treats a missing one as "not
    judged").
    """

    def difficulty(self, query: ExpertQuery) -> float:
        """How hard this step is for every model alike, in logits (positive = harder)."""
        raise NotImplementedError(f"{type(self).__name__}.difficulty")

    def difficulty_of(self, query: ExpertQuery) -> float:
        return self.difficulty(query)

    def plan_good(self, sit: R, plan: str) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.plan_good")

    def proposal_good(self, sit: R, text: str, moment: Moment) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.proposal_good")

    def sections_of(self, sit: R, query: ExpertQuery) -> Mapping[str, str]:
        return sit.parts

    def last_thought(self, sit: R) -> str | None:
        return sit.last.thought if sit.last is not None else None

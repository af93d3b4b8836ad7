"""The simulated expert for the navigation environment (``agentbus.Expert``).

It replays the history to know which requirements are in force, knows the
exact optimum for them, judges the plan (is its route the optimum for the
core requirements?), the current thought and the latest reflection (is the
route they propose optimal for the requirements in force?), and writes the
answers. A correct reasoner trusts a plan's route whenever it still meets
the requirements in force, even if it is longer than needed, and a correct
actor carries out any well-formed route the thought proposes: a feasible
route is accepted at once, so planning and reasoning decide the outcome.
"""

from __future__ import annotations

import random

from agentbus import ExpertQuery, Moment, RoundsExpert, Task, Verdict, role_answers
from environments.navigation import writer
from environments.navigation.prompt import proposed_action
from environments.navigation.situation import Situation, understand
from environments.navigation.tasks import ENV
from environments.navigation.writer import fence, own_mistake, propose

#: difficulty in logits per role, the same for every model
DIFFICULTY: dict[str, float] = {"planning": 0.7, "reasoning": 1.0, "action": -0.8}


class NavigationExpert(RoundsExpert[Situation]):
    """Knows each itinerary task's requirements to come and the exact optima."""

    env = ENV

    def understand(self, task: Task, user: str) -> Situation:
        return understand(task, user)

    answers = role_answers(
        writer,
        planning="Plan: visit some nice places and come back.",
        reasoning="There are many places in this city; let me think about the map.",
        reflection="Something was off with the route.",
    )
    idle = "I will plan the shortest route that meets the requirements."

    def difficulty(self, query: ExpertQuery) -> float:
        return DIFFICULTY.get(query.role, 0.0)

    def plan_good(self, sit: Situation, plan: str) -> bool:
        return writer.plan_good(sit)

    def proposal_good(self, sit: Situation, text: str, moment: Moment) -> bool:
        """Is the proposed route optimal for the requirements in force at ``moment``?"""
        route = sit.route_of(proposed_action(text))
        if moment == "last":
            return sit.good(route, sit.before_last)
        return sit.good(route, sit.after_flagged if moment == "advice" else None)

    def act(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
        proposed = sit.route_of(proposed_action(sit.parts.get("Current thought", "")))
        if verdict.correct:
            action = propose(proposed if proposed is not None else sit.optimum)
        elif proposed is not None and not sit.good(proposed):
            action = propose(proposed)  # misled by a wrong thought
        else:
            action = own_mistake(sit, proposed or sit.optimum, rng)
        if verdict.malformed:
            return "I would go to the places in the order above and then return."
        return fence(action)

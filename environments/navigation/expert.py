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

from agentbus import ExpertKit, ExpertQuery, RoleAnswer, Task, Upstream, Verdict, judged
from environments.navigation.prompt import proposed_action
from environments.navigation.situation import Situation, understand
from environments.navigation.tasks import ENV
from environments.navigation.writer import (
    fence,
    own_mistake,
    plan_good,
    plan_text,
    propose,
    reflection_text,
    thought_text,
    wrong_plan,
    wrong_reflection,
    wrong_thought,
)

#: difficulty in logits per role, the same for every model
DIFFICULTY: dict[str, float] = {"planning": 0.7, "reasoning": 1.0, "action": -0.8}


class NavigationExpert(ExpertKit[Situation]):
    """Knows each itinerary task's requirements to come and the exact optima."""

    env = ENV

    def understand(self, task: Task, user: str) -> Situation:
        return understand(task, user)

    answers = {
        "planning": RoleAnswer(
            "Plan: visit some nice places and come back.", plan_text, wrong_plan
        ),
        "reasoning": RoleAnswer(
            "There are many places in this city; let me think about the map.",
            thought_text,
            wrong_thought,
        ),
        "reflection": RoleAnswer(
            "Something was off with the route.", reflection_text, wrong_reflection
        ),
    }
    idle = "I will plan the shortest route that meets the requirements."

    def assess(self, query: ExpertQuery) -> Upstream:
        difficulty = DIFFICULTY.get(query.role, 0.0)
        if query.role not in ("reasoning", "action", "reflection"):
            return judged(difficulty)
        sit = self.situation(query)
        plan = plan_good(sit) if sit.parts.get("Plan") else None
        thought: bool | None = None
        reflection: bool | None = None
        if query.role == "action" and sit.parts.get("Current thought"):
            thought = sit.good(sit.route_of(proposed_action(sit.parts["Current thought"])))
        if query.role == "reflection" and sit.last is not None and sit.last.thought:
            route = sit.route_of(proposed_action(sit.last.thought))
            thought = sit.good(route, sit.before_last)
        if query.role == "reasoning" and sit.parts.get("Latest reflection"):
            route = sit.route_of(proposed_action(sit.parts["Latest reflection"]))
            reflection = sit.good(route, sit.after_flagged)
        return judged(difficulty, plan=plan, thought=thought, reflection=reflection)

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

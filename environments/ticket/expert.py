"""The simulated expert for the ticket environment (``agentbus.Expert``).

It replays the history to know what has been looked up, knows the optimum,
judges the plan (does it look up both travellers' flights and calendars?),
the current thought and the latest reflection (is their action a missing
lookup or the optimal booking?), and writes the answers. A correct reasoner
follows the plan's lookups: a plan that skips the calendars makes it book
the best pair it can see, which often clashes with a meeting. A correct
actor carries out any well-formed action the thought proposes.
"""

from __future__ import annotations

import random

from agentbus import ExpertKit, ExpertQuery, RoleAnswer, Task, Upstream, Verdict, judged
from environments.ticket.prompt import proposed_action
from environments.ticket.situation import Situation, understand
from environments.ticket.tasks import ENV
from environments.ticket.writer import (
    fence,
    own_mistake,
    plan_good,
    plan_text,
    reflection_text,
    thought_text,
    wrong_plan,
    wrong_reflection,
    wrong_thought,
)

#: difficulty in logits per role, the same for every model
DIFFICULTY: dict[str, float] = {"planning": -0.5, "reasoning": -1.3, "action": -0.8}
#: extra reasoning difficulty when the two cheapest fares are not the best booking
#: (the trade-off between fares, the arrival gap and the calendars must be worked out)
TRADE_OFF = 0.6


def trade_off(task: Task) -> bool:
    """Whether the cheapest fare of each traveller is not the optimal booking."""
    cheapest = [min(t["flights"], key=lambda f: (f[3], f[0]))[0] for t in task.data["travellers"]]
    return cheapest != list(task.hidden["optimum"])


class TicketExpert(ExpertKit[Situation]):
    """Knows each ticket task's optimal booking."""

    env = ENV

    def understand(self, task: Task, user: str) -> Situation:
        return understand(task, user)

    answers = {
        "planning": RoleAnswer("Plan: find flights and book them.", plan_text, wrong_plan),
        "reasoning": RoleAnswer(
            "Two travellers, many flights; let me think about the schedule.",
            thought_text,
            wrong_thought,
        ),
        "reflection": RoleAnswer("Something went wrong.", reflection_text, wrong_reflection),
    }
    idle = "I will compare the flights and book the cheapest combination."

    def assess(self, query: ExpertQuery) -> Upstream:
        difficulty = DIFFICULTY.get(query.role, 0.0)
        if query.role == "reasoning" and trade_off(query.task):
            difficulty += TRADE_OFF
        if query.role not in ("reasoning", "action", "reflection"):
            return judged(difficulty)
        sit = self.situation(query)
        plan = plan_good(sit) if sit.parts.get("Plan") else None
        thought: bool | None = None
        reflection: bool | None = None
        if query.role == "action" and sit.parts.get("Current thought"):
            thought = sit.good(proposed_action(sit.parts["Current thought"]))
        if query.role == "reflection" and sit.last is not None and sit.last.thought:
            thought = sit.good(proposed_action(sit.last.thought), sit.seen_before_last)
        if query.role == "reasoning" and sit.parts.get("Latest reflection"):
            reflection = sit.good(proposed_action(sit.parts["Latest reflection"]))
        return judged(difficulty, plan=plan, thought=thought, reflection=reflection)

    def act(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
        proposed = proposed_action(sit.parts.get("Current thought", ""))
        if verdict.correct:
            action = proposed or sit.next_good()
        elif proposed is not None and not sit.good(proposed):
            action = proposed  # misled by a wrong thought
        else:
            action = own_mistake(sit, proposed or sit.next_good(), rng)
        if verdict.malformed:
            return "First the flights, then we will see what fits best."
        return fence(action)

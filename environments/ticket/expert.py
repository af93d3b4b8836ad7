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

from agentbus import ExpertQuery, Moment, RoundsExpert, Task, Verdict, role_answers
from environments.ticket import writer
from environments.ticket.prompt import proposed_action
from environments.ticket.situation import Situation, understand
from environments.ticket.tasks import ENV
from environments.ticket.writer import fence, own_mistake

#: difficulty in logits per role, the same for every model
DIFFICULTY: dict[str, float] = {"planning": -0.5, "reasoning": -1.3, "action": -0.8}
#: extra reasoning difficulty when the two cheapest fares are not the best booking
#: (the trade-off between fares, the arrival gap and the calendars must be worked out)
TRADE_OFF = 0.6


def trade_off(task: Task) -> bool:
    """Whether the cheapest fare of each traveller is not the optimal booking."""
    cheapest = [min(t["flights"], key=lambda f: (f[3], f[0]))[0] for t in task.data["travellers"]]
    return cheapest != list(task.hidden["optimum"])


class TicketExpert(RoundsExpert[Situation]):
    """Knows each ticket task's optimal booking."""

    env = ENV

    def understand(self, task: Task, user: str) -> Situation:
        return understand(task, user)

    answers = role_answers(
        writer,
        planning="Plan: find flights and book them.",
        reasoning="Two travellers, many flights; let me think about the schedule.",
        reflection="Something went wrong.",
    )
    idle = "I will compare the flights and book the cheapest combination."

    def difficulty(self, query: ExpertQuery) -> float:
        difficulty = DIFFICULTY.get(query.role, 0.0)
        if query.role == "reasoning" and trade_off(query.task):
            difficulty += TRADE_OFF
        return difficulty

    def plan_good(self, sit: Situation, plan: str) -> bool:
        return writer.plan_good(sit)

    def proposal_good(self, sit: Situation, text: str, moment: Moment) -> bool:
        """Is the action ``text`` proposes a missing lookup or the optimal booking?"""
        seen = sit.seen_before_last if moment == "last" else None
        return sit.good(proposed_action(text), seen)

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

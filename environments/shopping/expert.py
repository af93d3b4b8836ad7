"""The simulated expert for the shopping environment (``agentbus.Expert``).

It finds the task by the ``## Task`` section, replays the history on the
shared catalogue to know the current page, and knows the good next actions
(:mod:`~environments.shopping.policy`). It judges the plan (does it name the
type, every attribute and option value, and the budget?), the current
thought and the latest reflection (is the action they propose a good one?),
and writes answers for each role.

A correct action module carries out the thought's action whenever the page
accepts it, even a misguided one (only reasoning can catch strategy), and
writes the right action when the thought proposes nothing usable. That, and
plans that steer every round's reasoning, is why planning and reasoning
carry most of the value here, as CapaBench reports for online shopping.
"""

from __future__ import annotations

import random

from agentbus import ExpertQuery, Moment, RoundsExpert, Task, Verdict, role_answers
from environments.shopping import writer
from environments.shopping.catalogue import normalise
from environments.shopping.prompt import proposed_action
from environments.shopping.session import parse
from environments.shopping.situation import Situation, understand
from environments.shopping.task import ENV
from environments.shopping.tasks import goal_of
from environments.shopping.writer import fence, malformed_answer, own_mistake

#: reasoning difficulty in logits, the same for every model (see ``ShoppingExpert.difficulty``):
#: per unit of task hardness, and the offset that makes the easiest tasks easy
HARDNESS_STEP = 1.1
EASE = 1.2
#: the checklist a plan must get right grows with the task's hardness
PLAN_STEP = 0.7
PLAN_EASE = 1.0
#: copying a bracketed label from a clear thought is easier than the average action
ACTION_EASE = 0.8


def hardness(task: Task) -> int:
    """0 (two attributes, one option, plain words) to 3 (three, two, context-rich)."""
    goal = goal_of(task)
    rich = task.data.get("phrasing") == "rich"
    return max(0, len(goal.attributes) - 2) + max(0, len(goal.options) - 1) + int(rich)


class ShoppingExpert(RoundsExpert[Situation]):
    """Knows each shopping task's goal and the shortest route to a perfect purchase."""

    env = ENV

    def understand(self, task: Task, user: str) -> Situation:
        return understand(task, user)

    answers = role_answers(
        writer,
        planning="Plan: find the product and buy it.",
        reasoning="Let me look at the page again; there are several things on it.",
        reflection="Something went wrong in the last step.",
    )
    idle = "I will look for the product the customer described."

    def difficulty(self, query: ExpertQuery) -> float:
        """How hard this step is: a third attribute, a second option group and a
        context-rich instruction each make the plan's checklist and every
        browsing decision harder to get right; copying an action is easy."""
        if query.role == "action":
            return -ACTION_EASE
        if query.role == "planning":
            return PLAN_STEP * hardness(query.task) - PLAN_EASE
        if query.role != "reasoning":
            return 0.0
        return HARDNESS_STEP * hardness(query.task) - EASE

    def plan_good(self, sit: Situation, plan: str) -> bool:
        return writer.plan_good(sit, plan)

    def proposal_good(self, sit: Situation, text: str, moment: Moment) -> bool:
        """Is the action ``text`` proposes a good one on the page it was written for?"""
        action = proposed_action(text)
        if moment == "last":
            return sit.judge(action, sit.before_last)
        return sit.judge(action, (sit.after_flagged or sit.state) if moment == "advice" else None)

    def act(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
        proposed = proposed_action(sit.parts.get("Current thought", ""))
        usable = proposed is not None and self._accepted(sit, proposed)
        best = sit.good()[0]
        if verdict.correct:
            action = proposed if usable and proposed else best
        elif usable and proposed and not sit.judge(proposed):
            action = proposed  # misled by a wrong thought
        else:
            action = own_mistake(sit, proposed if usable and proposed else best, rng)
        if verdict.malformed:
            return malformed_answer(action)
        return fence(action)

    @staticmethod
    def _accepted(sit: Situation, action: str) -> bool:
        """Whether the current page would accept ``action`` (a search bar, an exact label)."""
        parsed = parse(action)
        if isinstance(parsed, str):
            return False
        if parsed.verb == "search":
            return sit.state.page == "search" and bool(normalise(parsed.arg))
        want = normalise(parsed.arg)
        return sum(normalise(c.label) == want for c in sit.session.clickables()) == 1

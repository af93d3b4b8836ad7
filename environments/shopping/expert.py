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

from agentbus import ExpertKit, ExpertQuery, RoleAnswer, Task, Upstream, Verdict, judged
from environments.shopping.catalogue import normalise
from environments.shopping.prompt import proposed_action
from environments.shopping.session import parse
from environments.shopping.situation import Situation, understand
from environments.shopping.tasks import ENV, goal_of
from environments.shopping.writer import (
    fence,
    malformed_answer,
    own_mistake,
    plan_good,
    plan_text,
    reflection_text,
    thought_text,
    wrong_plan,
    wrong_reflection,
    wrong_thought,
)

#: reasoning difficulty in logits, the same for every model (see ``_difficulty``):
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


class ShoppingExpert(ExpertKit[Situation]):
    """Knows each shopping task's goal and the shortest route to a perfect purchase."""

    env = ENV

    def understand(self, task: Task, user: str) -> Situation:
        return understand(task, user)

    answers = {
        "planning": RoleAnswer("Plan: find the product and buy it.", plan_text, wrong_plan),
        "reasoning": RoleAnswer(
            "Let me look at the page again; there are several things on it.",
            thought_text,
            wrong_thought,
        ),
        "reflection": RoleAnswer(
            "Something went wrong in the last step.", reflection_text, wrong_reflection
        ),
    }
    idle = "I will look for the product the customer described."

    @staticmethod
    def _difficulty(query: ExpertQuery) -> float:
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

    def assess(self, query: ExpertQuery) -> Upstream:
        difficulty = self._difficulty(query)
        if query.role not in ("reasoning", "action", "reflection"):
            return judged(difficulty)
        sit = self.situation(query)
        plan_txt = sit.parts.get("Plan")
        plan = plan_good(sit, plan_txt) if plan_txt else None
        thought: bool | None = None
        reflection: bool | None = None
        if query.role == "action" and sit.parts.get("Current thought"):
            thought = sit.judge(proposed_action(sit.parts["Current thought"]))
        if query.role == "reflection" and sit.last is not None and sit.last.thought:
            thought = sit.judge(proposed_action(sit.last.thought), sit.before_last)
        if query.role == "reasoning" and sit.parts.get("Latest reflection"):
            said = proposed_action(sit.parts["Latest reflection"])
            reflection = sit.judge(said, sit.after_flagged or sit.state)
        return judged(difficulty, plan=plan, thought=thought, reflection=reflection)

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

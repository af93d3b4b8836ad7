"""The tally environment's simulated expert, on the environment kit's scaffold.

:class:`agentbus.ExpertKit` finds a prompt's task, remembers situations and
answers the free-text roles by the simulator's verdict; this file adds only
what is the domain's: what a right and a wrong plan, thought and action look
like, and how to judge the ones a prompt shows. The simulator turns that
judgement into each model's chance of being right (agentbus/sim/model.py).

The rule that truth.py computes exactly: a plan is good when it names every
number; a thought is good when it states the right total; anything else,
malformed answers included, is bad. The action is right when its verdict is
correct and well formed.
"""

from __future__ import annotations

import random

from tally_tasks import ENV

from agentbus import (
    ExpertKit,
    ExpertQuery,
    RoleAnswer,
    Task,
    Upstream,
    Verdict,
    action_fence,
    judged,
    prompt_sections,
)

#: difficulty in logits per role, the same for every model and task
DIFFICULTY: dict[str, float] = {"planning": 0.0, "reasoning": 0.5, "action": 0.0}


class Situation:
    """A tally prompt as the expert reads it: the numbers and the sections shown."""

    def __init__(self, task: Task, user: str) -> None:
        self.numbers: list[int] = list(task.data["numbers"])
        self.total = int(task.hidden["total"])
        self.parts = prompt_sections(user)

    def plan_line(self) -> str:
        return "Plan: add " + " + ".join(map(str, self.numbers)) + "."

    def thought_line(self, total: int) -> str:
        return f"The total is {total}."

    def wrong_total(self, rng: random.Random) -> int:
        return self.total + rng.choice((-10, -2, -1, 1, 2, 10))


def plan_text(sit: Situation) -> str:
    return sit.plan_line()


def wrong_plan(sit: Situation, rng: random.Random) -> str:
    dropped = rng.randrange(len(sit.numbers))  # leaves one number out
    kept = [n for i, n in enumerate(sit.numbers) if i != dropped]
    return "Plan: add " + " + ".join(map(str, kept)) + "."


def thought_text(sit: Situation) -> str:
    return sit.thought_line(sit.total)


def wrong_thought(sit: Situation, rng: random.Random) -> str:
    return sit.thought_line(sit.wrong_total(rng))


def reflection_text(sit: Situation) -> str:
    return f"The numbers add up to {sit.total}; check every one of them."


def wrong_reflection(sit: Situation, rng: random.Random) -> str:
    return "The answer looked fine; nothing to change."


class TallyExpert(ExpertKit[Situation]):
    """Knows every tally task's total."""

    env = ENV
    answers = {
        "planning": RoleAnswer("I am not sure how to start.", plan_text, wrong_plan),
        "reasoning": RoleAnswer("These are several numbers.", thought_text, wrong_thought),
        "reflection": RoleAnswer("Something went wrong.", reflection_text, wrong_reflection),
    }
    idle = "Add the numbers."

    def understand(self, task: Task, user: str) -> Situation:
        return Situation(task, user)

    def assess(self, query: ExpertQuery) -> Upstream:
        difficulty = DIFFICULTY.get(query.role, 0.0)
        if query.role not in ("reasoning", "action"):
            return judged(difficulty)
        sit = self.situation(query)
        plan = sit.parts.get("Plan")
        thought = sit.parts.get("Current thought") if query.role == "action" else None
        return judged(
            difficulty,
            plan=None if plan is None else sit.plan_line() in plan,
            thought=None if thought is None else sit.thought_line(sit.total) in thought,
        )

    def act(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
        total = sit.total if verdict.correct else sit.wrong_total(rng)
        if verdict.malformed:
            return action_fence("the total of the numbers above")
        return action_fence(str(total))

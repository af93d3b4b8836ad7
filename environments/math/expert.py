"""The simulated expert for the math environment (``agentbus.sim.expert.Expert``).

It knows each task's worked solution: for generated tasks the calculator
inputs in order, the method and a plausible wrong method; for CapaBench's
files the boxed answer and the knowledge point. From the prompt's history it
works out which solution steps are already done, judges the upstream plan,
thought and reflection against that state, and writes per role either the
right next move, a realistic mistake (a wrong method, a wrong intermediate, a
premature wrong answer, a wasted search), or broken formatting.

What it knows of a task and how it reads the history is in
:mod:`environments.math.solution`; this module decides the answers.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from agentbus import (
    ROLE_SKILLS,
    ExpertKit,
    ExpertQuery,
    Task,
    Upstream,
    Verdict,
    skill_role,
    task_spread,
)
from agentbus import action_fence as fence
from agentbus import prompt_sections as sections
from environments.math.solution import (
    NO_ACTION,
    PROSE_ACTION,
    Solution,
    Step,
    contains,
    rounds,
    squash,
)
from environments.skill import felt

ENV = "math"
#: logit penalty of a task by its level (1-5), for every role and every model alike
LEVEL_DIFFICULTY: dict[int, float] = {1: 1.0, 2: 1.75, 3: 2.5, 4: 3.25, 5: 4.0}
#: standard deviation of a task's own part of the penalty (fixed per task id)
TASK_SPREAD = 1.8
#: added for dataset (CapaBench) problems, see :func:`difficulty`
DATASET_OFFSET = -0.9
#: the spread of a dataset problem's own part (its level says more about it)
DATASET_SPREAD = 1.1


def difficulty(task: Task) -> float:
    """How hard ``task`` is for any model, in logits (see :data:`LEVEL_DIFFICULTY`).

    Problems differ: some are easy for every model and some hard for every
    model, which is what keeps a weak agent from failing everything and a
    strong one from solving everything. The per-task part is a fixed draw
    from the task id, so every coalition sees the same task equally hard.
    """
    level = task.data.get("level") or 3
    generated = "steps" in task.hidden
    own = task_spread(task.id, TASK_SPREAD if generated else DATASET_SPREAD, ENV)
    # CapaBench's problems need more calculator steps than generated ones of the
    # same level (their steps come from the worked solution), which already makes
    # them harder; the offset keeps both sets on the same scale of solve rates
    offset = 0.0 if generated else DATASET_OFFSET
    return LEVEL_DIFFICULTY.get(int(level), LEVEL_DIFFICULTY[3]) + own + offset


class MathExpert(ExpertKit[Solution]):
    """Knows the solutions of the math tasks it was given and plays them at any skill."""

    env = ENV

    def __init__(self) -> None:
        super().__init__()
        self._solutions: dict[str, Solution] = {}
        self._difficulty: dict[str, float] = {}

    def solution(self, task: Task) -> Solution:
        sol = self._solutions.get(task.id)
        if sol is None:
            sol = self._solutions[task.id] = Solution.of(task)
        return sol

    def difficulty(self, task: Task) -> float:
        hard = self._difficulty.get(task.id)
        if hard is None:
            hard = self._difficulty[task.id] = difficulty(task)
        return hard

    # --- judging -------------------------------------------------------------------------
    def assess(self, query: ExpertQuery) -> Upstream:
        # MMAU's planner is judged as a planner; its solver as the reasoning step it
        # takes (the plan it reads is what moves it), see agentbus.sim.expert.ROLE_SKILLS
        if query.role in ROLE_SKILLS:
            query = replace(query, role=skill_role(query.role))
        hard = felt(self.difficulty(query.task), query.role)
        if query.role not in ("reasoning", "action", "reflection"):
            return Upstream(difficulty=hard)
        sol = self.solution(query.task)
        parts = sections(query.user)
        history = rounds(parts.get("History", ""))
        plan_text = parts.get("Plan")
        plan = None
        if plan_text:
            plan = sol.mentions_method(plan_text) or (
                bool(sol.steps) and squash(sol.steps[0]) in squash(plan_text)
            )
        thought: bool | None = None
        reflection: bool | None = None
        if query.role == "action" and parts.get("Current thought"):
            thought = sol.good_move(parts["Current thought"], history)
        if query.role == "reflection":
            last = rounds(parts.get("Last step", ""))
            if last and last[-1].thought:
                before = history[:-1] if history else []
                thought = sol.good_move(last[-1].thought, before)
        if query.role == "reasoning" and parts.get("Latest reflection"):
            text = parts["Latest reflection"]
            reflection = (
                sol.mentions_method(text)
                or contains(squash(text), squash(sol.answer))
                or any(squash(s) in squash(text) for s in sol.steps)
            ) and not contains(squash(text), squash(sol.wrong_answer))
        return Upstream(plan=plan, thought=thought, reflection=reflection, difficulty=hard)

    # --- writing -------------------------------------------------------------------------
    def respond(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        sol = self.solution(query.task)
        parts = sections(query.user)
        history = rounds(parts.get("History", ""))
        if query.role in ("planning", "planner"):
            return self._plan(sol, verdict, rng)
        if query.role == "solver":
            return self._solve(sol, history, verdict, rng)
        if query.role == "reasoning":
            return self._reason(sol, history, verdict, rng)
        if query.role == "action":
            return self._act(sol, history, verdict, rng)
        if query.role == "reflection":
            return self._reflect(sol, history, parts, verdict, rng)
        return "I will work through the problem one computation at a time."

    def _plan(self, sol: Solution, verdict: Verdict, rng: random.Random) -> str:
        if verdict.malformed:
            return "Let me read the problem carefully first and see what it is asking."
        if verdict.correct:
            lines = [f"1. Recognise the method: {sol.method}."]
            for k, step in enumerate(sol.steps, 2):
                lines.append(f"{k}. Compute `{step}` with the calculator.")
            lines.append(f"{len(lines) + 1}. Submit the result with the answer action.")
            return "\n".join(lines)
        lines = [f"1. Approach: {sol.wrong_method}."]
        for k, step in enumerate(sol.wrong_steps, 2):
            lines.append(f"{k}. Compute `{step}`.")
        lines.append(f"{len(lines) + 1}. Submit that value as the answer.")
        return "\n".join(lines)

    def _reason(
        self, sol: Solution, history: Sequence[Step], verdict: Verdict, rng: random.Random
    ) -> str:
        if verdict.malformed:
            return "There are several quantities in this problem; I need to think about them more."
        step = sol.next_step(history)
        if verdict.correct:
            if step is not None:
                return (
                    f"Following {sol.method.split(':')[0]}, the next step is to compute "
                    f"`{step}` with the calculator."
                )
            return (
                f"The computations are done, so the final answer is `{sol.answer}`. "
                "I will submit it."
            )
        if sol.wrong_steps and rng.random() < 0.5:
            wrong = sol.wrong_steps[rng.randrange(len(sol.wrong_steps))]
            return f"I think the quickest way is to compute `{wrong}` next."
        return f"I am fairly sure the answer is `{sol.wrong_answer}`, so I will submit it now."

    def _solve(
        self, sol: Solution, history: Sequence[Step], verdict: Verdict, rng: random.Random
    ) -> str:
        """MMAU's solver: the next step in a sentence, then that step as one action."""
        if verdict.malformed:  # the step in prose, no action block: an invalid round
            todo = sol.next_step(history) or sol.answer
            return f"Next I would work out {todo}, and then see where that leaves us."
        thought = self._reason(sol, history, verdict, rng)
        step = sol.next_step(history)
        if verdict.correct:
            action = f"calculator: {step}" if step is not None else f"answer: {sol.answer}"
        else:
            wrong = [w for w in sol.wrong_steps if f"`{w}`" in thought]
            action = f"calculator: {wrong[0]}" if wrong else f"answer: {sol.wrong_answer}"
        return f"{thought}\n\n{fence(action)}"

    def _act(
        self, sol: Solution, history: Sequence[Step], verdict: Verdict, rng: random.Random
    ) -> str:
        step = sol.next_step(history)
        right = f"calculator: {step}" if step is not None else f"answer: {sol.answer}"
        if verdict.malformed:
            return rng.choice(
                [
                    PROSE_ACTION.format(step or sol.answer),
                    fence(f"calc {step or sol.answer}"),
                    f"```\n{right.split(':', 1)[0]} -> {right.split(':', 1)[1].strip()}\n```",
                ]
            )
        if verdict.correct:
            return fence(right)
        roll = rng.random()
        if roll < 0.5:
            return fence(f"answer: {sol.wrong_answer}")
        if roll < 0.8 and sol.wrong_steps:
            return fence(f"calculator: {sol.wrong_steps[rng.randrange(len(sol.wrong_steps))]}")
        return fence(f"search: {sol.wrong_method.split(',')[0]}")

    def _reflect(
        self,
        sol: Solution,
        history: Sequence[Step],
        parts: dict[str, str],
        verdict: Verdict,
        rng: random.Random,
    ) -> str:
        if verdict.malformed:
            return "Something did not work in the last step."
        last = rounds(parts.get("Last step", ""))
        given = last[-1].action if last else "the submitted answer"
        if given.strip() == NO_ACTION and history:  # the history ends with the last step
            given = sol.replay(history)[-1].action  # as the expert wrote it
        if verdict.correct:
            step = sol.next_step(history)
            todo = (
                f"compute `{step}` with the calculator, then submit the result"
                if step is not None
                else f"the computed value is `{sol.answer}`; submit exactly that"
            )
            # no quoting of the rejected value: echoing a wrong answer is what
            # a misleading reflection does (``assess`` judges it so)
            return (
                "The last attempt was wrong because it did not follow the right "
                f"method. This is {sol.method}. Next, {todo}."
            )
        return rng.choice(
            [
                f"The method was fine; the answer ({given}) was probably rejected for its "
                "format. Resubmit the same value as a decimal.",
                "I probably made a small arithmetic slip. Redo the same computation more "
                "carefully and submit again.",
            ]
        )


__all__ = ["MathExpert"]

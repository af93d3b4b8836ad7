"""The simulator's expert for git puzzles: knows each puzzle's way to the goal.

It finds the task by the prompt's ``## Task`` section, rebuilds the current
state by replaying the ``## History`` actions on the start tree with the same
model the environment uses, and asks the :class:`~environments.git.solver.Solver`
for the right next command. From there:

- ``assess`` judges upstream content: a plan is good when the commands it
  lists solve the puzzle from the start; a thought when its command is (or has
  the same effect as) the right one in the state it was written for; a
  reflection when the command it recommends is the right one now.
- ``respond`` writes the answer: a correct plan lists the solution with what
  each command does; a wrong one is plausible but off (a related command, a
  wrong argument, a step missing or out of order). A correct thought names the
  right command and why; a wrong one confidently proposes a wrong command that
  (where possible) runs and damages the tree. The action carries out the right
  command when its verdict is correct, even after a wrong thought; when wrong,
  it follows a wrong thought, or slips (a mistyped name, a wrong argument).
  Malformed answers break the format (no fence, an empty fence, two commands,
  or a plan / thought that names no command).

Replays are cached per (task, actions), so a long run pays for each state once.
"""

from __future__ import annotations

import random
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentbus import ExpertKit, ExpertQuery, Task, Upstream, Verdict, task_spread
from environments.git.mistakes import slip, wrong_command
from environments.git.model import GitModel, normalise
from environments.git.narrate import describe, differences
from environments.git.solver import Solver
from environments.git.tasks import task_puzzle
from environments.skill import felt

_ROUND = re.compile(
    r"^Round (\d+)\nThought: (.*?)\nAction: (.*?)\nFeedback: ", re.DOTALL | re.MULTILINE
)
_BACKTICK = re.compile(r"`([^`\n]+)`")
_BARE = re.compile(r"^\s*(?:\d+[.)]\s*)?(?:\$\s*)?((?:git \S.*|undo))\s*$", re.MULTILINE)
_CACHE = 4096


#: histories whose reading is remembered (assess and respond read the same prompt)
_READ_MEMO = 64


def history_rounds(history: str) -> list[tuple[str, str]]:
    """(thought, action) of each finished round in a ``## History`` body."""
    return list(_history_rounds(history))


@lru_cache(maxsize=_READ_MEMO)
def _history_rounds(history: str) -> tuple[tuple[str, str], ...]:
    return tuple((m.group(2), m.group(3).strip()) for m in _ROUND.finditer(history))


def commands_in(text: str) -> list[str]:
    """Git commands (or ``undo``) a free text names: in backticks, else on their own line."""
    found = [c.strip() for c in _BACKTICK.findall(text)]
    found = [c for c in found if c.startswith("git ") or c == "undo"]
    if not found:
        found = [m.group(1).strip() for m in _BARE.finditer(text)]
    return [normalise(c) for c in found]


def _playable(action: str) -> bool:
    return bool(action) and not action.startswith("(invalid") and action != "(none)"


#: logit penalty of a puzzle by its difficulty (1-5), for every model alike
LEVEL_DIFFICULTY: dict[int, float] = {1: 0.0, 2: 0.5, 3: 1.0, 4: 1.5, 5: 2.0}
#: standard deviation of a puzzle's own part of the penalty (fixed per task id)
TASK_SPREAD = 1.5


def difficulty(task: Task) -> float:
    """How hard a git puzzle is for any model, in logits.

    Puzzles differ in more than their level (some happen to need a command
    every model knows, some a rare one), so a fixed per-puzzle draw is added:
    that keeps the weak model solving the easy ones and the strong model
    failing some hard ones instead of everything being won or lost.
    """
    level = int(task.data.get("difficulty") or 3)
    return LEVEL_DIFFICULTY.get(level, LEVEL_DIFFICULTY[3]) + task_spread(
        task.id, TASK_SPREAD, "git"
    )


@dataclass(frozen=True)
class Situation:
    """A prompt, read: its ``## `` sections, its history's rounds and the actions that ran."""

    parts: dict[str, str]
    rounds: list[tuple[str, str]]
    played: list[str]


class GitExpert(ExpertKit[Situation]):
    """The git puzzles' expert (see the module docstring).

    It stands on the environment kit for the task index, the prompt's
    sections and the situation memo. Its answers are its own: a git step's
    right answer comes from a replayed model and a solver, and a wrong one
    draws from the random stream in ways the kit's per-role answers do not.
    """

    env = "git"

    def __init__(self) -> None:
        super().__init__()
        self._solvers: dict[str, Solver] = {}
        self._states: OrderedDict[tuple[str, tuple[str, ...]], GitModel] = OrderedDict()
        self._next: OrderedDict[tuple[str, tuple[str, ...]], str | None] = OrderedDict()
        self._plans: OrderedDict[tuple[str, str], bool] = OrderedDict()

    # --- finding the task and the state ----------------------------------------

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        tasks = list(tasks)
        for task in tasks:
            if task.env != self.env:
                continue
            known = self._solvers.get(task.id)
            if known is not None and known.task != task:
                self._forget(task.id)  # same id, other puzzle (another level file)
        super().add_tasks(tasks)

    def understand(self, task: Task, user: str) -> Situation:
        parts = self.read_sections(user)
        rounds = history_rounds(parts.get("History", ""))
        return Situation(parts, rounds, [a for _, a in rounds if _playable(a)])

    def _forget(self, task_id: str) -> None:
        self._solvers.pop(task_id, None)
        caches: tuple[OrderedDict[Any, Any], ...] = (self._states, self._next, self._plans)
        for cache in caches:
            for key in [k for k in cache if k[0] == task_id]:
                del cache[key]

    def solver(self, task: Task) -> Solver:
        solver = self._solvers.get(task.id)
        if solver is None or solver.task != task:
            self._forget(task.id)
            solver = self._solvers[task.id] = Solver(task_puzzle(task), task)
        return solver

    def state(self, task: Task, actions: Sequence[str]) -> GitModel:
        """The model after ``actions`` (cached; callers must clone before changing it)."""
        key = (task.id, tuple(actions))
        model = self._states.get(key)
        if model is None:
            if actions:
                model = self.state(task, actions[:-1]).clone()
                model.run(actions[-1])
            else:
                model = self.solver(task).start()
            self._states[key] = model
            if len(self._states) > _CACHE:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(key)
        return model

    def next_command(self, task: Task, actions: Sequence[str]) -> str | None:
        """The solver's next command after ``actions`` (cached like the states)."""
        key = (task.id, tuple(actions))
        if key in self._next:
            self._next.move_to_end(key)
            return self._next[key]
        command = self.solver(task).next_command(self.state(task, actions))
        self._next[key] = command
        if len(self._next) > _CACHE:
            self._next.popitem(last=False)
        return command

    # --- judging upstream content --------------------------------------------

    def plan_good(self, task: Task, plan: str) -> bool:
        """Does the plan solve the puzzle (replayed from the start), cached per plan text."""
        key = (task.id, plan)
        if key not in self._plans:
            self._plans[key] = self._judge_plan(task, plan)
            if len(self._plans) > _CACHE:
                self._plans.popitem(last=False)
        return self._plans[key]

    def _judge_plan(self, task: Task, plan: str) -> bool:
        solver = self.solver(task)
        commands = commands_in(plan)
        if commands:
            model = solver.start()
            for command in commands:
                model.run(command)
            return solver.solved(model)
        words = set(re.findall(r"[a-z-]+", plan.lower()))
        needed = {c.split()[1] for c in solver.puzzle.solution if len(c.split()) > 1}
        return needed <= words

    def command_good(self, task: Task, actions: Sequence[str], command: str | None) -> bool:
        """Is ``command`` the right move after ``actions`` (or one just as good)?"""
        if command is None:
            return False
        solver = self.solver(task)
        model = self.state(task, actions)
        right = self.next_command(task, actions)
        if right is None:
            return False
        if command == right or solver.same_effect(model, command, right):
            return True
        trial = model.clone()
        return trial.run(command).ok and solver.solved(trial)

    def assess(self, query: ExpertQuery) -> Upstream:
        task, sit = query.task, self.situation(query)
        parts, rounds, played = sit.parts, sit.rounds, sit.played
        plan = parts.get("Plan")
        plan_ok = self.plan_good(task, plan) if plan and query.role != "planning" else None
        thought_ok: bool | None = None
        reflection_ok: bool | None = None
        if query.role == "action" and "Current thought" in parts:
            thought = parts["Current thought"]
            thought_ok = self.command_good(task, played, _first(thought))
        elif rounds and query.role in ("reasoning", "reflection"):
            thought, last = rounds[-1]
            before = played[:-1] if _playable(last) else played
            thought_ok = self.command_good(task, before, _first(thought))
        if query.role == "reasoning" and parts.get("Latest reflection"):
            advice = _first(parts["Latest reflection"])
            # advice already carried out is history, not a signal for this round
            if advice is None or advice not in played:
                reflection_ok = self.command_good(task, played, advice)
        return Upstream(
            plan=plan_ok,
            thought=thought_ok,
            reflection=reflection_ok,
            difficulty=felt(difficulty(task), query.role),
        )

    # --- writing answers ---------------------------------------------------------

    def respond(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        task, sit = query.task, self.situation(query)
        parts, played = sit.parts, sit.played
        model = self.state(task, played)
        right = self.next_command(task, played) or "git status"
        if query.role == "planning":
            return self._plan(task, verdict, rng)
        if query.role == "action":
            return self._action(model, right, parts.get("Current thought", ""), verdict, rng)
        if query.role == "reflection":
            return self._reflection(task, model, right, parts, verdict, rng)
        misled = None
        if not verdict.correct and parts.get("Plan"):
            misled = self._plan_step(task, parts["Plan"], played, right)
        return self._thought(task, model, right, verdict, rng, misled)

    def _plan_step(self, task: Task, plan: str, played: list[str], right: str) -> str | None:
        """The step a (bad) plan proposes at this point, when it differs from the right one.

        A model that gets the step wrong while holding a wrong plan most
        plausibly follows the plan, so a bad plan misleads in its own way.
        """
        if self.plan_good(task, plan):
            return None
        steps = commands_in(plan)
        if len(played) >= len(steps):
            return None
        step = steps[len(played)]
        model = self.state(task, played)
        if step == right or self.solver(task).same_effect(model, step, right):
            return None
        return step

    def _plan(self, task: Task, verdict: Verdict, rng: random.Random) -> str:
        solver = self.solver(task)
        steps = list(solver.puzzle.solution)
        if not verdict.correct:
            steps = self._wrong_plan(solver, steps, rng)
        model = solver.start()
        lines = []
        for i, command in enumerate(steps, 1):
            lines.append(f"{i}. `{command}`: {describe(model, command)}.")
            model.run(command)
        if verdict.malformed:
            prose = " Then ".join(f"I would {c.replace('git ', 'use git ')}" for c in steps)
            return f"The tree has to be reshaped to the goal. {prose}."
        opening = rng.choice(
            (
                "Comparing the current tree with the goal, this sequence gets there:",
                "Plan (one git command per step):",
                "The goal tree can be reached with these commands, in this order:",
            )
        )
        return opening + "\n" + "\n".join(lines)

    def _wrong_plan(self, solver: Solver, steps: list[str], rng: random.Random) -> list[str]:
        for _ in range(6):
            trial = list(steps)
            kind = rng.choice(("replace", "replace", "drop", "swap"))
            if kind == "drop" and len(trial) > 1:
                del trial[rng.randrange(len(trial))]
            elif kind == "swap" and len(trial) > 1:
                i = rng.randrange(len(trial) - 1)
                trial[i], trial[i + 1] = trial[i + 1], trial[i]
            else:
                i = rng.randrange(len(trial))
                model = solver.replay(trial[:i])
                trial[i] = wrong_command(model, trial[i], rng)
            if trial != steps and not solver.puzzle.solved_by(trial):
                return trial
        model = solver.start()
        return [wrong_command(model, steps[0], rng), *steps[1:]]

    def _thought(
        self,
        task: Task,
        model: GitModel,
        right: str,
        verdict: Verdict,
        rng: random.Random,
        misled: str | None = None,
    ) -> str:
        solver = self.solver(task)
        gaps = differences(model.repo, solver.puzzle.goal)
        seen = (
            "The tree already matches the goal."
            if not gaps
            else "Compared with the goal, " + "; ".join(gaps) + "."
        )
        if verdict.malformed:
            return (
                f"{seen} There are several things that could be done here and I am not "
                "sure which one comes first, so I will look at the tree again."
            )
        if verdict.correct:
            command = right
        else:
            command = misled or wrong_command(model, right, rng)
        lead = rng.choice(("Next command:", "The next step is", "I will run"))
        return f"{seen}\n{lead} `{command}`, which {describe(model, command)}."

    def _action(
        self, model: GitModel, right: str, thought: str, verdict: Verdict, rng: random.Random
    ) -> str:
        if verdict.correct:
            command = right
        else:
            proposed = _first(thought)
            if proposed is not None and proposed != right:
                command = proposed
            elif rng.random() < 0.5:
                command = slip(right, rng)
            else:
                command = wrong_command(model, right, rng)
        if verdict.malformed:
            return rng.choice(
                (
                    f"I will now run {command} to move the tree\ntowards the goal.",
                    "```action\n```",
                    f"```action\n{command}\ngit status\n```",
                )
            )
        return f"```action\n{command}\n```"

    def _reflection(
        self,
        task: Task,
        model: GitModel,
        right: str,
        parts: dict[str, str],
        verdict: Verdict,
        rng: random.Random,
    ) -> str:
        rounds = history_rounds(parts.get("Last step", "") or parts.get("History", ""))
        last = rounds[-1][1] if rounds else "the last command"
        gaps = differences(model.repo, self.solver(task).puzzle.goal)
        if verdict.malformed:
            return "The last steps did not work out. I should be more careful next time."
        if verdict.correct:
            why = "; ".join(gaps) if gaps else "the tree is close to the goal"
            return (
                f"The last command ({last}) did not bring the tree closer to the goal: {why}. "
                f"Instead, run `{right}` next, which {describe(model, right)}."
            )
        wrong = wrong_command(model, right, rng)
        return (
            f"The last command ({last}) was the right idea but the tree was not ready for it. "
            f"Run `{wrong}` next, which {describe(model, wrong)}, and then try again."
        )


def _first(text: str) -> str | None:
    found = commands_in(text)
    return found[0] if found else None

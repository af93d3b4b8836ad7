"""Executing proposed rounds on a world, shared by the environment and the expert.

The environment feeds the action text of each step here; the expert replays
the prompt's history through the very same code, so both agree on the state
by construction. Rounds run in order; the first round that does not parse or
breaks a rule stops execution (nothing of it happens) and is reported with the
robot, the action and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from environments.robot.parser import parse_execute
from environments.robot.rules import Rules, rules_for
from environments.robot.scene import Act, Round, Scene, State, round_inline

SYNTAX_HINT = (
    "write EXECUTE on its own line, then one line per robot: NAME: <robot> ACTION: <action>"
)


@dataclass
class StepResult:
    """What one step (one action text, possibly several rounds) did."""

    executed: list[Round] = field(default_factory=list)
    proposed: int = 0
    #: why the first rejected round was rejected (None: every round ran)
    rejected: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    #: rounds left unexecuted because the task ended first
    skipped: int = 0

    @property
    def invalid(self) -> bool:
        return bool(self.rejected)


class World:
    """One task instance's rules and its current state."""

    def __init__(self, scene: Scene, rules: Rules | None = None) -> None:
        self.scene = scene
        #: ``rules`` must be this scene's (the expert reuses one instance per task)
        self.rules: Rules = rules if rules is not None else rules_for(scene)
        self.state: State = self.rules.initial()

    @property
    def complete(self) -> bool:
        return self.rules.is_complete(self.state)

    @property
    def out_of_rounds(self) -> bool:
        return self.state.rounds >= self.scene.round_limit

    @property
    def done(self) -> bool:
        return self.complete or self.state.failure is not None or self.out_of_rounds

    @property
    def reward(self) -> float:
        return self.rules.reward(self.state)

    def execute(self, text: str) -> StepResult:
        """Run the rounds in ``text`` in order until one is rejected or the task ends."""
        result = StepResult()
        parsed = parse_execute(text)
        result.proposed = len(parsed)
        if not parsed:
            result.rejected = [f"no robot actions found: {SYNTAX_HINT}"]
            return result
        for i, pr in enumerate(parsed):
            if self.done:
                result.skipped = len(parsed) - i
                break
            if pr.errors:
                result.rejected = [f"proposed round {i + 1}: {e}" for e in pr.errors]
                break
            problems = self.rules.check(self.state, pr.acts)
            if problems:
                result.rejected = [f"proposed round {i + 1}: {p}" for p in problems]
                break
            rnd: Round = {a.robot: a for a in pr.acts}
            result.events += self.rules.apply(self.state, rnd)
            self.state.rounds += 1
            result.executed.append(rnd)
        return result

    def progress_line(self) -> str:
        subs = self.rules.subtasks()
        done = self.rules.completed(self.state)
        rest = [s for s in subs if s not in done]
        line = f"Sub-tasks done: {len(done)}/{len(subs)}"
        if done:
            line += f" ({', '.join(done)})"
        if rest:
            line += f"; still to do: {', '.join(rest)}"
        return line + "."

    def report(self, result: StepResult) -> str:
        """The feedback text: what ran, what was rejected and why, the new state."""
        order = self.rules.robots
        lines: list[str] = []
        first = self.state.rounds - len(result.executed) + 1
        for k, rnd in enumerate(result.executed):
            lines.append(f"Executed round {first + k}: {round_inline(rnd, order)}.")
        lines += [f"Effect: {e}." for e in result.events]
        if result.rejected:
            lines.append("Rejected, nothing of this round was executed:")
            lines += [f"- {p}" for p in result.rejected]
            if result.executed:
                lines.append("Rounds proposed after it were not executed either.")
        if result.skipped:
            lines.append(f"{result.skipped} proposed round(s) were not needed: the task ended.")
        lines.append(self.progress_line())
        lines.append(f"Rounds used: {self.state.rounds} of at most {self.scene.round_limit}.")
        if self.state.failure:
            lines.append(f"Task failed: {self.state.failure}.")
        elif self.complete:
            lines.append("Task complete: every sub-task is done.")
        elif self.out_of_rounds:
            lines.append("Out of rounds: the task ends unfinished.")
        else:
            lines.append("Current scene:")
            lines.append(self.rules.describe(self.state))
        return "\n".join(lines)


def acts_of(rnd: Round) -> list[Act]:
    return list(rnd.values())

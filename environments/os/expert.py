"""The simulator's expert for OS tasks: it knows each task's solution steps.

The solution is the generator's step list (a file task's: its example
script, then ``finish`` or the expected answer). From the prompt's history
the expert works out how many steps have run successfully (exit status 0)
and so what the right next move is; an answer that is "whatever the last
command printed" (a PID, a count) is read off that command's output.

``assess`` judges the plan (does it name every command of the solution?),
the thought (does it name the right next move?) and the reflection (does
it name the right move now?). ``respond`` writes the right move when the
verdict is correct. A wrong move is one a model really makes: a plausible
wrong command (from the task's list), a misspelt command that fails and
asks for a reflection, or giving up early: ``finish`` before the work is
done or a wrong answer, which ends the episode lost. How often a wrong
move is fatal is this environment's difficulty knob (:data:`FATAL`).
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentbus import ExpertKit, ExpertQuery, SituationMemo, Task, Upstream, Verdict
from environments.os.actions import render_move
from environments.os.prompt import Turn, named_move, squash, turns
from environments.os.task import ENV, OsTask, Step

#: chance that a wrong move ends the episode (premature finish / wrong answer)
FATAL = 0.5
#: per-task chance that even a correct reasoning step goes astray (a task that is
#: easy to misread), the same for every model: the three levels, by task id
TRAPS = (0.0, 0.1, 0.2)
#: harmless commands a model runs to look around instead of acting
LOOK = ("ls -la ~", "pwd", "ls /tmp", "cat ~/.bashrc", "ps aux | head")


@dataclass(frozen=True)
class Situation:
    """A prompt, read: its task's solution steps, its ``## `` sections and its history."""

    task: OsTask
    parts: dict[str, str]
    history: list[Turn]


class OsExpert(ExpertKit[Situation]):
    """Plays OS tasks at any skill from their known solution steps.

    It stands on the environment kit for the task index, the prompt's
    sections and the situation memo; it writes its answers itself (not by
    :func:`agentbus.answer_by_verdict`) because its reasoning draws a trap
    from the random stream before the verdict's format is applied, and that
    draw order is part of its behaviour.
    """

    env = ENV

    def __init__(self) -> None:
        super().__init__()
        self._tasks: dict[str, OsTask] = {}

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        tasks = list(tasks)
        super().add_tasks(tasks)
        ids = {task.id for task in tasks if task.env == ENV}
        if ids & self._tasks.keys():  # a known id may now name another task: read afresh
            self._memo = SituationMemo()
        for task_id in ids:
            self._tasks.pop(task_id, None)

    def understand(self, task: Task, user: str) -> Situation:
        parts = self.read_sections(user)
        return Situation(self.os_task(task), parts, turns(parts.get("History", "")))

    def os_task(self, task: Task) -> OsTask:
        known = self._tasks.get(task.id)
        if known is None or known.description != task.instruction:
            known = self._tasks[task.id] = OsTask.of(task)
        return known

    # --- where the episode stands -----------------------------------------------------

    def progress(self, task: OsTask, history: Sequence[Turn]) -> tuple[int, str]:
        """Solution steps done (bash steps that ran with exit 0, in order), last output."""
        k, output = 0, ""
        for turn in history:
            if k >= len(task.steps):
                break
            step = task.steps[k]
            if step.kind == "bash" and squash(turn.action) == squash(step.text):
                if turn.status == 0:
                    k, output = k + 1, turn.output
        return k, output

    def right_move(self, task: OsTask, history: Sequence[Turn]) -> str:
        """The action text of the right next move."""
        k, output = self.progress(task, history)
        if k >= len(task.steps):
            return "finish"
        step = task.steps[k]
        if step.kind == "answer":
            value = step.text
            if value == "$OUTPUT":
                value = output.strip().splitlines()[0].strip() if output.strip() else "0"
            return render_move("answer", value)
        return render_move(step.kind, step.text)

    def _step(self, task: OsTask, history: Sequence[Turn]) -> Step:
        k, _ = self.progress(task, history)
        return task.steps[k] if k < len(task.steps) else Step("finish")

    # --- judging ------------------------------------------------------------------------

    def plan_good(self, task: OsTask, plan: str) -> bool:
        text = squash(plan)
        needed = [squash(s.text) for s in task.steps if s.kind == "bash"]
        wrong = [squash(w) for s in task.steps for w in s.wrong]
        return all(n in text for n in needed) and not any(w in text for w in wrong)

    def good(self, task: OsTask, history: Sequence[Turn], text: str) -> bool:
        named = named_move(text)
        return named is not None and named == squash(self.right_move(task, history))

    def assess(self, query: ExpertQuery) -> Upstream:
        if query.role not in ("reasoning", "action", "reflection"):
            return Upstream()
        sit = self.situation(query)
        task, parts, history = sit.task, sit.parts, sit.history
        plan = self.plan_good(task, parts["Plan"]) if parts.get("Plan") else None
        thought: bool | None = None
        reflection: bool | None = None
        if query.role == "action" and parts.get("Current thought"):
            thought = self.good(task, history, parts["Current thought"])
        if query.role == "reflection" and history:
            thought = self.good(task, history[:-1], history[-1].thought)
        if query.role == "reasoning" and parts.get("Latest reflection"):
            reflection = self.good(task, history, parts["Latest reflection"])
        return Upstream(plan=plan, thought=thought, reflection=reflection)

    # --- writing ------------------------------------------------------------------------

    def wrong_move(self, task: OsTask, history: Sequence[Turn], rng: random.Random) -> str:
        """A realistic mistake at this point of the episode."""
        step = self._step(task, history)
        right = self.right_move(task, history)
        if rng.random() < FATAL:
            if step.kind == "answer":
                return render_move("answer", _nudge(right[len("answer(") : -1], rng))
            if step.kind == "bash":
                return "finish"
        if step.kind == "bash":
            if step.wrong and rng.random() < 0.6:
                return rng.choice(step.wrong)
            return _misspell(step.text, rng)
        return rng.choice(LOOK)

    def respond(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        sit = self.situation(query)
        task, parts, history = sit.task, sit.parts, sit.history
        if query.role == "planning":
            return self._plan(task, verdict, rng)
        right = self.right_move(task, history)
        if query.role == "action":
            move = self._action(task, history, parts.get("Current thought", ""), verdict, rng)
            if verdict.malformed:
                return rng.choice((f"I will run {move} now.\nThen check.", "```action\n```"))
            return f"```action\n{move}\n```"
        correct = verdict.correct
        if query.role == "reasoning" and correct and rng.random() < trap(task.id):
            correct = False
        move = right if correct else self.wrong_move(task, history, rng)
        if query.role == "reflection":
            if verdict.malformed:
                return "That did not work. I should be more careful."
            last = history[-1].action if history else "the last command"
            return (
                f"The command `{_one_line(last)}` did not get the job done. "
                f"Next: `{_one_line(move)}`."
            )
        if verdict.malformed:
            return "Let me think about the system again; there are several things to look at."
        return f"{_why(move)} Next: `{_one_line(move)}`."

    def _action(
        self,
        task: OsTask,
        history: Sequence[Turn],
        thought: str,
        verdict: Verdict,
        rng: random.Random,
    ) -> str:
        """Carry out the thought; a correct actor repairs only what would not run.

        A correct actor writes the thought's move when it is a real command,
        ``finish`` or an answer, right or not (strategy is the reasoning
        module's job, which is why reasoning dominates here, as in CapaBench's
        OS results), and the right move when the thought names none or a
        command that does not exist. A wrong actor follows a wrong thought or
        slips on a right one (a mistyped program, a wrong variant).
        """
        right = self.right_move(task, history)
        proposed = named_move(thought)
        runnable = proposed is not None and _runnable(proposed, task)
        if verdict.correct:
            return proposed if runnable and proposed else right
        if proposed is not None and proposed != squash(right):
            return proposed
        step = self._step(task, history)
        if step.kind == "bash":
            if step.wrong and rng.random() < 0.3:
                return rng.choice(step.wrong)
            return _misspell(step.text, rng)
        return self.wrong_move(task, history, rng)

    def _plan(self, task: OsTask, verdict: Verdict, rng: random.Random) -> str:
        steps = list(task.steps)
        if not verdict.correct:
            k = rng.randrange(len(steps))
            step = steps[k]
            if step.kind == "bash" and step.wrong:
                steps[k] = Step("bash", rng.choice(step.wrong))
            elif step.kind == "bash":
                steps[k] = Step("bash", _misspell(step.text, rng))
            else:
                steps.insert(0, Step("finish"))
        if verdict.malformed:
            return "Plan: look at the system, do what the task asks, and finish."
        lines = []
        for n, step in enumerate(steps, 1):
            if step.kind == "bash":
                lines.append(f"{n}. Run `{_one_line(step.text)}`.")
            elif step.kind == "answer":
                lines.append(f"{n}. Read the value from the output and submit it with answer(...).")
            else:
                lines.append(f"{n}. Check the result and `finish`.")
        return "Plan:\n" + "\n".join(lines)


#: programs and shell words a thought may start with besides the task's own
COMMON = frozenset(
    "ls cd cat echo printf grep egrep sed awk cut sort uniq wc head tail find xargs mkdir "
    "rmdir rm mv cp touch chmod chown ln tar gzip gunzip zip unzip ps pgrep pkill kill "
    "renice nice sleep export alias getent groupadd groupdel useradd userdel stat df du "
    "pwd id whoami uname hostname date file tee test true false for while if set".split()
)


def _runnable(move: str, task: OsTask) -> bool:
    """Whether a move would run at all: finish, an answer, or a known program first."""
    if move == "finish" or move.startswith("answer("):
        return True
    known = set(COMMON)
    for step in task.steps:
        for text in (step.text, *step.wrong):
            if text.split():
                known.add(text.split()[0])
    head = move.split()[0] if move.split() else ""
    return head in known or head.startswith(("[", "(", "{", "~", "/", "./"))


def trap(task_id: str) -> float:
    """How often this task's wording leads even a sound reasoner astray (see TRAPS)."""
    return TRAPS[zlib.crc32(task_id.encode()) % len(TRAPS)]


def _one_line(text: str) -> str:
    """A (possibly multi-line) command on one line, for backticks in prose."""
    return squash(text)


def _why(move: str) -> str:
    if move == "finish":
        return "The job looks done."
    if move.startswith("answer("):
        return "The output gives the answer."
    return "This command does what the task needs."


def _misspell(command: str, rng: random.Random) -> str:
    """The command with its program name mistyped (it will fail with status 127)."""
    head, _, rest = command.partition(" ")
    if len(head) > 2:
        k = rng.randrange(1, len(head))
        head = head[:k] + head[k - 1] + head[k:]
    else:
        head += head[-1]
    return f"{head} {rest}".strip()


def _nudge(value: str, rng: random.Random) -> str:
    m = re.search(r"\d+", value)
    if m is None:
        return value + "s" if value else "unknown"
    number = int(m.group(0)) + rng.choice((-2, -1, 1, 2))
    return value[: m.start()] + str(max(0, number)) + value[m.end() :]

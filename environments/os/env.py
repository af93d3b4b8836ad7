"""The OS environment adapter: bash commands in a per-episode bubblewrap sandbox.

``reset`` starts the episode's sandbox and runs the task's init and start
scripts; each ``step`` runs one bash command and shows its output (cut at
800 characters, as AgentBench does) with the exit status; a failed command
(non-zero exit) asks for a reflection, as CapaBench does. ``answer(...)`` or
``finish`` ends the episode and the task's checks decide it; an episode that
runs out of rounds fails, as in AgentBench. ``close`` kills the sandbox.

``setup`` refuses to start, in one line, when bubblewrap cannot run here.
"""

from __future__ import annotations

from typing import Any, ClassVar

import structlog

from agentbus import (
    ActionProposed,
    Environment,
    EnvSetup,
    Feedback,
    InfraError,
    Observation,
    Score,
    Task,
    TaskSource,
    UserError,
)
from environments.os.actions import parse_move
from environments.os.generator import generate
from environments.os.guide import os_guide
from environments.os.judge import Verdict, judge, prepare
from environments.os.loader import load_path
from environments.os.task import OsTask
from environments.sandbox import Sandbox, SandboxError, SandboxLimits, freezer
from environments.sandbox import persistent_unavailable as unavailable
from environments.task_source import loaded_or_generated

log = structlog.get_logger(__name__)

#: AgentBench cuts each output at this many characters
OUTPUT_CHARS = 800
#: AgentBench's round limit for OS tasks
ROUNDS = 8


class OsEnvironment(Environment):
    """AgentBench/CapaBench OS interaction in a bubblewrap sandbox."""

    name: ClassVar[str] = "os"
    default_max_steps: ClassVar[int] = ROUNDS
    action_format = "shell"
    limits: ClassVar[SandboxLimits] = SandboxLimits()

    def __init__(self) -> None:
        self.task: OsTask | None = None
        self.box: Sandbox | None = None
        self.verdict: Verdict | None = None
        self.commands = 0
        self.failed = 0
        self.init_problems: list[str] = []

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        why = unavailable()
        if why is not None:
            raise UserError(f"--env os: {why}")
        if not freezer.available():  # said once: checks are weaker here (docs/security.md)
            log.warning(
                "os: no cgroup v2 group can be made here; the agent's processes are stopped "
                "by signals before checks, which a self-waking process survives"
            )
        tasks = loaded_or_generated(source, "os", load_path, generate)
        return EnvSetup(tasks=unique([t.to_task() for t in tasks]), factory=cls)

    def guide(self, task: Task) -> dict[str, str]:
        return os_guide()

    async def reset(self, task: Task) -> Observation:
        self.task = OsTask.of(task)
        self.box = Sandbox(self.limits, hostname="sandbox")
        try:
            await self.box.start()
        except SandboxError as exc:  # the machine's fault, not the agent's: retried, reported
            raise InfraError(f"os sandbox: {exc}") from None
        self.init_problems = await prepare(self.task, self.box)
        text = (
            "You are root in a fresh Linux system; the current directory is /root. "
            f"You have {ROUNDS} steps."
        )
        return Observation(text=text, data={"rounds": ROUNDS})

    def _parts(self) -> tuple[OsTask, Sandbox]:
        if self.task is None or self.box is None:
            raise RuntimeError("os environment: step() before reset()")
        return self.task, self.box

    async def step(self, action: ActionProposed) -> Feedback:
        task, box = self._parts()
        if self.verdict is not None:
            return Feedback(text="The task has already ended.", done=True, success=False)
        move = parse_move(action.text)
        if move.kind in ("answer", "finish"):
            answer = move.text if move.kind == "answer" else None
            self.verdict = await judge(task, box, answer)
            said = f"Answer submitted: {move.text}" if answer is not None else "Finished."
            return Feedback(
                text=said,
                done=True,
                success=self.verdict.passed,
                reward=1.0 if self.verdict.passed else 0.0,
                data={"verdict": self.verdict.why},
            )
        if not move.text:
            return Feedback(text="No command was given.", valid=False, needs_reflection=True)
        result = await box.run(move.text)
        self.commands += 1
        self.failed += 0 if result.ok else 1
        shown = result.shown(OUTPUT_CHARS)
        text = (
            f"The output of the OS:\n{shown}" if shown.strip() else "The output of the OS is empty."
        )
        text += f"\n(exit status {result.exit_code})"
        return Feedback(
            text=text,
            valid=True,
            needs_reflection=not result.ok,
            data={"exit_code": result.exit_code, "timed_out": result.timed_out},
        )

    async def score(self) -> Score:
        passed = self.verdict.passed if self.verdict else False
        details: dict[str, Any] = {
            "task": self.task.id if self.task else None,
            "category": self.task.category if self.task else None,
            "commands": self.commands,
            "failed_commands": self.failed,
            "verdict": self.verdict.why if self.verdict else "no answer or finish",
        }
        if self.init_problems:
            details["init_problems"] = self.init_problems
        if self.verdict is not None and self.verdict.stderr:
            details["check_stderr"] = self.verdict.stderr  # shown, never judged
        return Score(reward=1.0 if passed else 0.0, success=passed, details=details)

    async def close(self) -> None:
        if self.box is not None:
            await self.box.close()
            self.box = None


def unique(tasks: list[Task]) -> list[Task]:
    """Make instructions unique (the expert finds its task by it): repeat -> a tag."""
    seen: set[str] = set()
    out: list[Task] = []
    for task in tasks:
        if task.instruction in seen:
            task = task.model_copy(update={"instruction": f"{task.instruction} [{task.id}]"})
        seen.add(task.instruction)
        out.append(task)
    return out

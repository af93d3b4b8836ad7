"""The tools environment adapter: calls in, API responses or error observations out.

One action is one function call (``calls.py``); ``finish`` with the answer
ends the episode, which passes when the answer states every ground-truth
fact. A planned transient failure (a rate limit or a timeout) answers the
first matching call and lets its retry through; any failing call asks for a
reflection.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agentbus import (
    ActionProposed,
    Environment,
    EnvSetup,
    Feedback,
    Observation,
    Score,
    Task,
    TaskSource,
)
from environments.tools.calls import FINISH, Call, execute, key, parse_call, transient
from environments.tools.guide import observation_text, tools_guide
from environments.tools.scoring import missing
from environments.tools.tasks import MAX_STEPS, tasks_from


class ToolsEnvironment(Environment):
    """Answer a user query by calling seeded APIs, then ``finish`` with the answer."""

    name: ClassVar[str] = "tools"
    default_max_steps: ClassVar[int] = MAX_STEPS
    action_format = "tool_call"

    def __init__(self) -> None:
        self.task: Task | None = None
        self.answer: str | None = None
        self.calls: list[dict[str, Any]] = []
        self.failed_calls = 0
        self._transient_key: str | None = None
        self._transient_kind = "rate_limit"

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        return EnvSetup(tasks=tasks_from(source), factory=cls)

    def guide(self, task: Task) -> dict[str, str]:
        return tools_guide()

    async def reset(self, task: Task) -> Observation:
        self.task = task
        planned = task.hidden.get("transient")
        if planned:
            gt = task.hidden["calls"][planned["index"]]
            self._transient_key = key(Call(gt["name"], gt["arguments"]))
            self._transient_kind = planned["kind"]
        return Observation(
            text=observation_text(task), data={"tools": task.data["tools"], "env": self.name}
        )

    async def step(self, action: ActionProposed) -> Feedback:
        call = parse_call(action.text)
        if isinstance(call, str):
            return Feedback(text=f"ERROR parse_error: {call}", valid=False, needs_reflection=True)
        if call.name == FINISH:
            self.answer = str(call.arguments.get("answer", ""))
            passed = self._passed()
            return Feedback(
                text="Answer submitted.",
                done=True,
                success=passed,
                reward=1.0 if passed else 0.0,
                data={"finish": True},
            )
        k = key(call)
        if k is not None and k == self._transient_key:
            self._transient_key = None  # fails once; the retry goes through
            result = transient(call, self._transient_kind)
        else:
            result = execute(call)
        self.calls.append({"name": call.name, "arguments": call.arguments, "ok": result.ok})
        self.failed_calls += not result.ok
        return Feedback(
            text=result.text,
            valid=True,
            needs_reflection=not result.ok,
            data={"ok": result.ok, "kind": result.kind, "call": call.text()},
        )

    def _passed(self) -> bool:
        if self.task is None or self.answer is None:
            return False
        return not missing(self.answer, list(self.task.hidden["facts"]))

    async def score(self) -> Score:
        task = self.task
        passed = self._passed()
        facts = list(task.hidden["facts"]) if task else []
        return Score(
            reward=1.0 if passed else 0.0,
            success=passed,
            details={
                "kind": task.data.get("kind") if task else None,
                "variant": task.data.get("variant") if task else None,
                "answered": self.answer is not None,
                "missing_facts": missing(self.answer or "", facts),
                "calls": len(self.calls),
                "failed_calls": self.failed_calls,
            },
        )

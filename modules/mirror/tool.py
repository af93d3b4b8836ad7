"""MIRROR's tool agent: a function call per subtask, gated by its critic, led by short-term memory.

Calls go through the OpenAI function-calling format (``SamplingParams.tools``,
``Completion.tool_calls``); the LLM layer falls back to a text format for
backends without it, and a call written in the text anyway (fenced JSON, bare
JSON, ``<tool_call>``) is read too, for every backend. The
tool agent sees the results of the subtasks done so far in this attempt; its
failures on the current subtask reach it only through short-term memory, so
with that memory off it retries blind (and at temperature 0, identically).
"""

from __future__ import annotations

from typing import ClassVar

import orjson

from agentbus import ActionProposed, Completion, Feedback, SamplingParams, on, read_tool_calls
from modules.mirror.base import MAX_ATTEMPTS, MAX_TRIES, Gate, MirrorActor
from modules.mirror.messages import (
    AttemptDone,
    AttemptFailed,
    CallReview,
    Critique,
    PlanReady,
    StmClear,
    StmNote,
    StmRecall,
)

#: theta_t: a call scoring below this is revised
THETA_T = 8.0


def call_of(completion: Completion) -> str | None:
    """The first function call of an answer as action text ``{"name", "arguments"}``, or None."""
    # the LLM layer already read calls out of the text where the server left them
    # there; this is for an answer that reached us by another path (a cache entry
    # written before that, a wrapper of the module's own)
    calls = completion.tool_calls or read_tool_calls(completion.text)[1]
    if not calls:
        return None
    call = calls[0]
    try:
        args = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        args = call.arguments
    return orjson.dumps({"name": call.name, "arguments": args}).decode()


class ToolAgent(MirrorActor):
    role: ClassVar[str] = "action"
    agent: ClassVar[str] = "MIRROR tool agent"
    instructions: ClassVar[str] = (
        "Choose the function and arguments that carry out the current subtask, and call it."
    )
    publishes = (ActionProposed, AttemptDone)

    def __init__(self) -> None:
        super().__init__()
        self.plan = PlanReady(attempt=0, text="")
        self.index = 0
        self.tries = 0
        self.round = 0
        self.done: list[str] = []
        self.pending = ""

    @on(PlanReady)
    async def start(self, msg: PlanReady) -> ActionProposed | AttemptDone:
        self.plan, self.index, self.tries, self.done = msg, 0, 0, []
        await self.note(StmClear())
        return await self.next_call()

    def history(self) -> str:
        return "\n\n".join(self.done)

    def subtask(self) -> str:
        return self.plan.subtasks[self.index]

    async def propose(self, items: list[tuple[str, str]], request: str) -> str | None:
        params = SamplingParams(tools=tuple(self.tools))
        completion = await self.llm.complete(self.messages(items, request), params)
        return call_of(completion)

    async def next_call(self) -> ActionProposed | AttemptDone:
        if self.index >= len(self.plan.subtasks):
            return self.finished(complete=True)
        memory = await self.recall(StmRecall())
        items = [
            ("Observation", self.observation),
            ("Attempt", f"{self.plan.attempt} of {MAX_ATTEMPTS}"),
            ("Plan", self.plan.text),
            ("History", self.history()),
            ("Current subtask", self.subtask()),
            ("Short-term memory", "\n".join(memory)),
        ]
        draft = await self.propose(items, "Call the function for the current subtask.")

        async def revise(old: str, critique: Critique) -> str:
            await self.note(StmNote(text=f"Critique of {old}: {critique.text}"))
            better = await self.propose(
                [*items, ("Draft call", old), ("Critique", critique.text)],
                "Call the function again, fixed as the critique says.",
            )
            return better or old

        if draft is not None:
            context = (
                f"Current subtask: {self.subtask()}\nHistory:\n{self.history()}\n"
                + "\n".join(memory)
            )
            draft, _ = await Gate(self, THETA_T).run(
                draft, lambda d: CallReview(draft=d, context=context), revise
            )
        self.round += 1
        if draft is None:
            self.pending = "(no call)"
            return ActionProposed(
                text="", round=self.round, valid=False, parse_error="no function call"
            )
        self.pending = draft
        return ActionProposed(text=draft, round=self.round)

    def finished(self, complete: bool) -> AttemptDone:
        return AttemptDone(
            attempt=self.plan.attempt,
            plan=self.plan.text,
            history=self.history(),
            complete=complete,
        )

    @on(Feedback)
    async def result(self, msg: Feedback) -> ActionProposed | AttemptDone | AttemptFailed | None:
        if msg.done or msg.data.get("finish"):
            return None
        ok = bool(msg.data.get("ok")) and msg.valid
        block = (
            f"Round {msg.round}\nThought: {self.subtask()}\nAction: {self.pending}\n"
            f"Feedback: {msg.text}"
        )
        if ok:
            self.done.append(block)
            self.index, self.tries = self.index + 1, 0
            await self.note(StmClear())
            return await self.next_call()
        self.tries += 1
        await self.note(StmNote(text=f"Tried {self.pending} -> {msg.text}"))
        if self.tries < MAX_TRIES:
            return await self.next_call()
        if self.plan.attempt < MAX_ATTEMPTS:
            trajectory = f"Plan:\n{self.plan.text}\n\n{self.history()}\n\n{block}"
            return AttemptFailed(
                attempt=self.plan.attempt,
                trajectory=trajectory,
                reason=f"subtask '{self.subtask()}' failed {MAX_TRIES} times",
            )
        return self.finished(complete=False)

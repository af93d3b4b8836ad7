"""The math environment: solve one problem with a calculator, a knowledge search and answers.

Per round the agent sends one action (see :data:`ACTION_SYNTAX`). Calculator
and search results are feedback; a correct answer ends the episode with
reward 1; a wrong answer is feedback that asks for reflection (CapaBench
reflects on a confirmed wrong answer), and the agent may try again until the
round limit.
"""

from __future__ import annotations

import functools
import re
from typing import ClassVar

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
from environments.math.answer import AnswerChecker
from environments.math.calculator import Calculator
from environments.math.generator import generate
from environments.math.knowledge import knowledge_texts
from environments.math.loader import load_knowledge, load_problems
from environments.math.pool import SympyPool
from environments.math.safeparse import CalcError
from environments.math.search import KnowledgeBase

ACTION_SYNTAX = """\
Actions (exactly one per round, on one line):
  calculator: <expression>   evaluate an expression in LaTeX or plain syntax:
                               calculator: \\frac{3}{4} + \\sqrt{2}
                               calculator: sqrt(5^2 + 12^2)
                             solve equations with '=', several separated by commas:
                               calculator: 2x + 3y = 7, x - y = 1
  search: <query>            the three most relevant knowledge points:
                               search: area of a sector
  answer: <final answer>     submit the final answer (exact form, LaTeX allowed):
                               answer: \\frac{7}{2}
Write the action inside a fenced block:
```action
calculator: 2^10 - 24
```"""

TOOLS = ("calculator", "search", "answer")
_ALIASES = {
    "calculator": "calculator",
    "calculate": "calculator",
    "calc": "calculator",
    "search": "search",
    "knowledge": "search",
    "answer": "answer",
    "final answer": "answer",
    "submit": "answer",
}
_ACTION = re.compile(
    r"^\s*(?P<tool>calculator|calculate|calc|search|knowledge|final answer|answer|submit)\s*"
    r"(?:(?P<colon>:)|(?P<open>[(\[]))\s*(?P<arg>.*?)\s*$",
    re.IGNORECASE | re.DOTALL,
)


def parse_math_action(text: str) -> tuple[str, str] | str:
    """``(tool, argument)`` from an action, or the reason it cannot be read."""
    line = " ".join(part.strip() for part in text.strip().splitlines() if part.strip())
    m = _ACTION.match(line)
    if m is None:
        return f"unknown action {line[:80]!r}; use one of: {', '.join(TOOLS)} (as 'tool: input')"
    tool, arg = _ALIASES[m.group("tool").lower()], m.group("arg").strip()
    if m.group("open"):
        close = ")" if m.group("open") == "(" else "]"
        if arg.endswith(close):
            arg = arg[:-1].strip()
    if not arg:
        return f"the {tool} action needs an input after '{tool}:'"
    return tool, arg


@functools.cache
def builtin_knowledge() -> KnowledgeBase:
    """The generator's knowledge base (built once, read-only)."""
    return KnowledgeBase(knowledge_texts())


class MathEnvironment(Environment):
    """One problem per episode; tools share the run's knowledge base and sympy pool."""

    name: ClassVar[str] = "math"
    default_max_steps: ClassVar[int] = 10
    action_format = "command"

    def __init__(
        self,
        knowledge: KnowledgeBase | None = None,
        pool: SympyPool | None = None,
        timeout: float = 5.0,
    ) -> None:
        self.knowledge = knowledge or builtin_knowledge()
        self.calculator = Calculator(pool, timeout)
        self.checker = AnswerChecker(pool, timeout)
        self.task: Task | None = None
        self.solved = False
        self.answers: list[str] = []

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        if source.dataset is None:
            tasks = generate(source.count, source.seed)
            kb = builtin_knowledge()
        else:
            tasks = load_problems(source.dataset)
            if source.knowledge is not None:
                kb = KnowledgeBase(load_knowledge(source.knowledge))
            else:
                kb = builtin_knowledge()
        if source.limit is not None:
            tasks = tasks[: source.limit]
        return EnvSetup(tasks=tasks, factory=functools.partial(cls, kb))

    def guide(self, task: Task) -> dict[str, str]:
        return {
            "system": (
                "The task is a competition-style math problem (algebra or geometry). The agent "
                "works with tools, one action per round, and must submit the final answer with "
                "the answer action before the rounds run out. A wrong answer can be corrected "
                "in a later round."
            ),
            "planning": (
                "Name the mathematical method or knowledge point that solves the problem, then "
                "list the computations to run with the calculator; the last step submits the "
                "answer."
            ),
            "reasoning": (
                "Each round choose one thing: compute an exact expression with the calculator "
                "(e.g. sqrt(5^2 + 12^2)), look up a formula with search, or submit the final "
                "answer once it is known. Prefer exact values (fractions, radicals, pi) unless "
                "the problem asks for decimals, and answer exactly what the question asks."
            ),
            "action": ACTION_SYNTAX,
            "reflection": (
                "A submitted answer was checked and is wrong. Decide whether the method, a "
                "computation, or the reading of the question (what exactly is asked) was wrong."
            ),
        }

    async def reset(self, task: Task) -> Observation:
        self.task, self.solved, self.answers = task, False, []
        return Observation(
            text="Tools: calculator, search, answer. Submit the final answer with 'answer:'.",
            data={"tools": list(TOOLS)},
        )

    async def step(self, action: ActionProposed) -> Feedback:
        parsed = parse_math_action(action.text)
        if isinstance(parsed, str):
            return Feedback(text=f"Invalid action: {parsed}", valid=False)
        tool, arg = parsed
        if tool == "calculator":
            try:
                result = await self.calculator(arg)
            except CalcError as exc:
                return Feedback(text=f"Calculator error: {exc}", data={"tool": tool})
            return Feedback(text=f"Calculator: {arg} = {result}", data={"tool": tool})
        if tool == "search":
            hits = await self.knowledge.asearch(arg, 3)
            if not hits:
                return Feedback(text=f"Search: nothing found for {arg!r}", data={"tool": tool})
            listed = "\n".join(f"{i}. {h}" for i, h in enumerate(hits, 1))
            return Feedback(text=f"Search results for {arg!r}:\n{listed}", data={"tool": tool})
        return await self._answer(arg)

    async def _answer(self, given: str) -> Feedback:
        assert self.task is not None, "step before reset"
        self.answers.append(given)
        expected = str(self.task.hidden.get("answer", ""))
        if await self.checker.check(given, expected):
            self.solved = True
            return Feedback(
                text=f"The answer {given} is correct.",
                done=True,
                success=True,
                reward=1.0,
                data={"tool": "answer"},
            )
        return Feedback(
            text=f"The answer {given} is incorrect.",
            needs_reflection=True,
            data={"tool": "answer"},
        )

    async def score(self) -> Score:
        return Score(
            reward=1.0 if self.solved else 0.0,
            success=self.solved,
            details={"answers": self.answers[-5:], "solved": self.solved},
        )


__all__ = ["ACTION_SYNTAX", "MathEnvironment", "parse_math_action"]

"""MathEnvironment on its own: actions, feedback semantics and the score."""

from __future__ import annotations

import re

from agentbus.core import registry
from agentbus.core.environment import TaskSource
from agentbus.core.messages import ActionProposed
from environments.math.env import ACTION_SYNTAX, MathEnvironment, parse_math_action


def test_registered_under_its_name() -> None:
    assert registry.get("environments", "math") is MathEnvironment
    assert MathEnvironment.name == "math" and MathEnvironment.default_max_steps == 10


def test_action_syntax_examples_parse() -> None:
    examples = re.findall(r"^\s+((?:calculator|search|answer): .+)$", ACTION_SYNTAX, re.MULTILINE)
    assert len(examples) >= 4
    for example in examples:
        assert isinstance(parse_math_action(example), tuple), example
    assert parse_math_action("Calculator(sqrt(2))") == ("calculator", "sqrt(2)")
    assert parse_math_action("final answer: 5") == ("answer", "5")
    assert isinstance(parse_math_action("compute 2+2"), str)
    assert isinstance(parse_math_action("answer:"), str)


async def test_feedback_semantics_and_score() -> None:
    setup = MathEnvironment.setup(TaskSource(count=3, seed=9))
    task = setup.tasks[0]
    env = setup.factory()
    guide = env.guide(task)
    assert set(guide) == {"system", "planning", "reasoning", "action", "reflection"}
    await env.reset(task)

    calc = await env.step(ActionProposed(text="calculator: \\frac{6}{4} + 1"))
    assert calc.text.endswith("= 5/2 ≈ 2.5") and not calc.done and not calc.needs_reflection
    refused = await env.step(ActionProposed(text="calculator: __import__('os')"))
    assert refused.text.startswith("Calculator error:") and not refused.done
    found = await env.step(ActionProposed(text="search: linear equation isolate x"))
    assert found.text.count("\n") == 3 and "Linear" in found.text
    invalid = await env.step(ActionProposed(text="print(42)"))
    assert not invalid.valid and "unknown action" in invalid.text

    wrong = await env.step(ActionProposed(text=f"answer: {task.hidden['wrong_answer']}"))
    assert wrong.needs_reflection and not wrong.done and wrong.success is None
    assert (await env.score()).reward == 0.0

    right = await env.step(ActionProposed(text=f"answer: $\\boxed{{{task.hidden['answer']}}}$"))
    assert right.done and right.success and right.reward == 1.0
    score = await env.score()
    assert score.success and score.reward == 1.0

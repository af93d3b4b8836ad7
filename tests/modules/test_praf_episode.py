"""The PRAF workflow on the core Episode, driven by a scripted model defined here."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentbus.core import registry
from agentbus.core.environment import TaskSource
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from environments.math.env import MathEnvironment
from modules.praf import AGENT, SLOTS
from modules.praf.action import ActionActor
from modules.praf.planning import PlanningActor
from modules.praf.reasoning import ReasoningActor
from modules.praf.reflection import ReflectionActor

ROLE = re.compile(r"^You are the (\w+) module of an LLM agent\.")


class ScriptedModel:
    """Answers per role from a script; records every prompt it was sent."""

    def __init__(self, actions: list[str]) -> None:
        self.actions = list(actions)
        self.prompts: list[tuple[str, list[ChatMessage]]] = []

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        m = ROLE.match(messages[0]["content"])
        assert m is not None, messages[0]["content"]
        role = m.group(1)
        self.prompts.append((role, list(messages)))
        text = {
            "planning": "1. Compute the value.\n2. Submit it.",
            "reasoning": "Compute the value, then submit it.",
            "reflection": "The submitted value was wrong; recompute it.",
        }.get(role)
        if role == "action":
            text = self.actions.pop(0)
        assert text is not None
        return Completion(text=text, model="scripted", prompt_tokens=10, completion_tokens=5)


def titles(user: str) -> list[str]:
    return re.findall(r"^## (.+)$", user, re.MULTILINE)


def test_agent_registry_names() -> None:
    assert SLOTS == ("planning", "reasoning", "action", "reflection")
    assert AGENT == {slot: f"praf.{slot}" for slot in SLOTS}
    classes = [PlanningActor, ReasoningActor, ActionActor, ReflectionActor]
    for slot, cls in zip(SLOTS, classes, strict=True):
        assert registry.get("modules", AGENT[slot]) is cls


async def test_wrong_answer_reflection_invalid_step_then_success() -> None:
    setup = MathEnvironment.setup(TaskSource(count=1, seed=5))
    task = setup.tasks[0]
    answer = task.hidden["answer"]
    model = ScriptedModel(
        [
            "```action\nanswer: 123456\n```",  # wrong: reflection follows
            "I am not sure what to do.\nMaybe compute something.",  # unparseable: invalid step
            f"Action: answer: {answer}",  # right, without a fence
        ]
    )
    actors = [
        ActorSpec(slot=s, factory=registry.get("modules", AGENT[s]), llm=model) for s in SLOTS
    ]
    spec = EpisodeSpec("praf-1", task, setup.factory, actors, trace=True)
    outcome = await Episode(spec).run()
    assert outcome.success and outcome.reward == 1.0, outcome.reason
    assert outcome.steps == 3
    assert outcome.llm_calls == 1 + 3 + 3 + 1
    types = [m["type"] for m in outcome.trace or []]
    assert types.count("Plan") == 1 and types.count("Reflection") == 1
    invalid = [m for m in outcome.trace or [] if m["type"] == "ActionProposed" and not m["valid"]]
    assert len(invalid) == 1 and "no action found" in invalid[0]["parse_error"]
    feedback = [m for m in outcome.trace or [] if m["type"] == "Feedback"]
    assert [f["needs_reflection"] for f in feedback] == [True, False, False]
    assert feedback[1]["valid"] is False and feedback[2]["done"] is True

    # every prompt follows docs/prompt-contract.md
    by_role: dict[str, list[list[ChatMessage]]] = {}
    for role, messages in model.prompts:
        by_role.setdefault(role, []).append(messages)
        assert [m["role"] for m in messages] == ["system", "user"]
        user = messages[1]["content"]
        assert user.startswith(f"## Task\n{task.instruction}\n")
        assert task.hidden["answer"] not in messages[0]["content"]
    assert titles(by_role["planning"][0][1]["content"]) == ["Task", "Observation"]
    # the environment's guide specialises the system prompt per role
    assert "calculator:" in by_role["action"][0][0]["content"]
    assert "calculator:" not in by_role["planning"][0][0]["content"]
    assert titles(by_role["action"][0][1]["content"]) == [
        "Task",
        "Observation",
        "Plan",
        "Current thought",
    ]
    second_reasoning = by_role["reasoning"][1][1]["content"]
    assert titles(second_reasoning) == [
        "Task",
        "Observation",
        "Plan",
        "History",
        "Latest reflection",
    ]
    assert "Round 1\nThought: Compute the value" in second_reasoning
    assert "Action: answer: 123456\nFeedback: The answer 123456 is incorrect." in second_reasoning
    reflection = by_role["reflection"][0][1]["content"]
    assert titles(reflection) == ["Task", "Observation", "Plan", "History", "Last step"]
    third_action = by_role["action"][2][1]["content"]
    # an unreadable action shows as "(none)", with no reason a model could copy back;
    # the environment's feedback says it was invalid
    assert "Action: (none)\nFeedback: Invalid action: no action found" in third_action
    assert "(invalid" not in third_action


async def test_step_limit_ends_a_stuck_agent() -> None:
    setup = MathEnvironment.setup(TaskSource(count=1, seed=6))
    model = ScriptedModel(["```action\nsearch: formulas\n```"] * 4)
    actors = [
        ActorSpec(slot=s, factory=registry.get("modules", AGENT[s]), llm=model) for s in SLOTS
    ]
    spec = EpisodeSpec("praf-2", setup.tasks[0], setup.factory, actors, max_steps=4)
    outcome = await Episode(spec).run()
    assert outcome.error_kind == "step_limit" and outcome.counts_for_value
    assert outcome.reward == 0.0 and outcome.steps == 4

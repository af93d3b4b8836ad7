"""Shared helpers of the robot tests (no tests here): contract-shaped prompts."""

from __future__ import annotations

from agentbus.core.environment import Task
from agentbus.llm.types import ChatMessage
from environments.robot.tasks import generated_tasks


def prompt(
    task: Task,
    role: str,
    observation: str,
    history: list[tuple[str, str, str]],
    *,
    plan: str = "",
    current_thought: str = "",
    reflection: str = "",
) -> list[ChatMessage]:
    """The two chat messages a PRAF module sends (docs/prompt-contract.md)."""
    rounds = "\n\n".join(
        f"Round {i + 1}\nThought: {t}\nAction: {a}\nFeedback: {f}"
        for i, (t, a, f) in enumerate(history)
    )
    parts = [("Task", task.instruction), ("Observation", observation)]
    if role != "planning":
        parts += [("Plan", plan), ("History", rounds)]
    if role == "reasoning":
        parts.append(("Latest reflection", reflection))
    if role == "action":
        parts.append(("Current thought", current_thought))
    if role == "reflection" and history:
        t, a, f = history[-1]
        last = f"Round {len(history)}\nThought: {t}\nAction: {a}\nFeedback: {f}"
        parts.append(("Last step", last))
    user = "\n\n".join(f"## {title}\n{body}" for title, body in parts if body)
    return [
        {"role": "system", "content": f"You are the {role} module of an LLM agent."},
        {"role": "user", "content": user + "\n\nAnswer now."},
    ]


def fenced(text: str) -> str:
    """The first fenced block's body (what the action module passes on)."""
    if "```" not in text:
        return text
    body = text.split("```", 2)[1]
    return body.split("\n", 1)[1] if "\n" in body else ""


def tasks_of(kind: str, count: int = 40, seed: int = 0) -> list[Task]:
    return [t for t in generated_tasks(count, seed) if t.data["kind"] == kind]

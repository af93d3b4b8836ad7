"""The two stages' prompts, in the shape of docs/prompt-contract.md.

The system message opens with ``You are the <role> module of an LLM agent.``
(``planner`` or ``solver``: the simulator reads the role from that phrase and
draws the answer with the skill ``agentbus.ROLE_SKILLS`` names for it), then
the stage's instructions, then the environment's guide for the PRAF roles the
stage stands in for (the planner: planning; the solver: reasoning and action,
so it knows the environment's action syntax).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentbus import ChatMessage
from modules.praf.prompt import sections
from modules.praf.view import EpisodeView


def system_prompt(
    role: str, instructions: str, view: EpisodeView, guide_keys: Sequence[str]
) -> str:
    parts = [f"You are the {role} module of an LLM agent.", instructions.strip()]
    for key in ("system", *guide_keys):
        extra = view.guide.get(key, "").strip()
        if extra:
            parts.append(extra)
    return "\n\n".join(parts)


def build(
    role: str,
    instructions: str,
    view: EpisodeView,
    guide_keys: Sequence[str],
    items: Iterable[tuple[str, str]],
    ask: str,
) -> list[ChatMessage]:
    """The two chat messages of one stage's call; ``ask`` closes the user message."""
    user = sections([("Task", view.instruction), ("Observation", view.observation), *items])
    return [
        {"role": "system", "content": system_prompt(role, instructions, view, guide_keys)},
        {"role": "user", "content": f"{user}\n\n{ask.strip()}"},
    ]


__all__ = ["build", "system_prompt"]

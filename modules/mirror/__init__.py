"""MIRROR (Guo et al., 2025): planner, tool and answer agents with intra- and inter-reflection.

Every reflection component is an actor in its own slot, so a coalition game
over them (each ``off`` or ``on``) says what each is worth, with interactions:

- ``planner`` (``mirror.planner``): decomposes the task into ordered subtasks;
- ``tool`` (``mirror.tool``): one function call per subtask (OpenAI tools format);
- ``answer`` (``mirror.answer``): the final answer from the whole trajectory;
- ``planner.intra_reflection`` (``mirror.plan_critic``): scores the plan, the
  planner revises below theta_p;
- ``tool.intra_reflection`` (``mirror.call_critic``): scores the call, the tool
  agent revises below theta_t;
- ``answer.intra_reflection`` (``mirror.answer_critic``): scores the answer, the
  answer agent revises below theta_a, then the task is replanned;
- ``tool.short_term_memory`` (``mirror.short_term_memory``): failures and
  critiques of the current subtask, cleared when it succeeds;
- ``planner.long_term_memory`` (``mirror.long_term_memory``): the failed
  attempts (whole trajectories) of the current task.

A slot that is off has no actor: the agent that would consult it sees that
nobody handles its request type and goes on without it (no LLM call).
"""

from __future__ import annotations

from typing import Any

SLOTS: tuple[str, ...] = (
    "planner",
    "tool",
    "answer",
    "planner.intra_reflection",
    "tool.intra_reflection",
    "answer.intra_reflection",
    "tool.short_term_memory",
    "planner.long_term_memory",
)
#: the reflection components, in the order the preset varies them
REFLECTION_SLOTS: tuple[str, ...] = SLOTS[3:]

AGENT: dict[str, str] = {
    "planner": "mirror.planner",
    "tool": "mirror.tool",
    "answer": "mirror.answer",
    "planner.intra_reflection": "mirror.plan_critic",
    "tool.intra_reflection": "mirror.call_critic",
    "answer.intra_reflection": "mirror.answer_critic",
    "tool.short_term_memory": "mirror.short_term_memory",
    "planner.long_term_memory": "mirror.long_term_memory",
}

#: ``--preset mirror``: MIRROR's ablation as one game over its reflection components
PRESET: dict[str, Any] = {
    "agent": "mirror",
    "env": "tools",
    "default": "sim:strong",
    "test": ["sim:strong"],
    "tasks": 32,
    "slots": list(REFLECTION_SLOTS),
    "vary": {slot: "off:on" for slot in REFLECTION_SLOTS},
}

__all__ = ["AGENT", "PRESET", "REFLECTION_SLOTS", "SLOTS"]

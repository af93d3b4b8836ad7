"""A tools task as data: the query, the offered functions, the ground truth.

This is also the ``--dataset`` format: a JSON list of these objects (or
``{"tasks": [...]}``), so a task set can be written once, edited and
replayed. Facts are checked against the final answer (``scoring.py``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["single", "multi_tool", "multi_step"]
Variant = Literal["none", "transient", "correction"]


class CallSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class TransientSpec(BaseModel):
    """The ground-truth call at ``index`` fails once with ``kind``; its retry succeeds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=0)
    kind: Literal["rate_limit", "timeout"] = "rate_limit"


class PriorSpec(BaseModel):
    """A wrong call already made before the episode starts, and the error it got."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    call: CallSpec
    error: str


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    query: str
    kind: Kind
    category: str
    #: the functions offered (the needed ones and distractors of the same categories)
    tools: list[str]
    #: the ground-truth calls, in order
    calls: list[CallSpec]
    #: what the final answer must state
    facts: list[str]
    variant: Variant = "none"
    transient: TransientSpec | None = None
    prior: PriorSpec | None = None

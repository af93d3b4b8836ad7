"""The result of one episode.

``error`` separates infrastructure failures (a server down, a timeout after
retries, a crashing handler) from task failures: an episode with an error is
retried or reported, and never counted as a task failure in v(S).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ErrorKind = Literal[
    "infra",
    "actor",
    "timeout",
    "step_limit",
    "config",
    "context_overflow",
    "agent_crash",
    "agent_timeout",
    "agent_no_result",
    "agent_refused",
    "agent_cap",
]

#: how a user's own agent (``--agent``, ``--agent-cmd``, ``--agent-url``) can fail
#: its episode, each with the words reports use. They are the agent's behaviour,
#: so they count in v(S) as failures (reward 0), but they are not wrong answers:
#: every report names them apart, so a crash is never read as a bad module.
AGENT_FAILURES: dict[str, str] = {
    "agent_crash": "the agent crashed",
    "agent_timeout": "the agent ran past its time limit",
    "agent_no_result": "the agent gave no result",
    "agent_refused": "the agent called a module the run refuses",
    "agent_cap": "the agent exceeded a cap",
}

#: endings that are the agent's own failure of the task: it ran out of rounds, its
#: prompt outgrew its model's context window, or (a user's own agent) one of
#: :data:`AGENT_FAILURES`. They count in v(S), scored as the environment stands,
#: like an episode that ended normally.
AGENT_ENDINGS: frozenset[str] = frozenset({"step_limit", "context_overflow", *AGENT_FAILURES})


def kind_counts(error_kind: object) -> bool:
    """The one rule for whether an ending measures the agent (see ``counts_for_value``)."""
    return error_kind is None or error_kind in AGENT_ENDINGS


def is_agent_failure(error_kind: object) -> bool:
    """Whether an ending is one of a user's agent's own failures (:data:`AGENT_FAILURES`)."""
    return isinstance(error_kind, str) and error_kind in AGENT_FAILURES


class SlotUsage(BaseModel):
    """The tokens one slot's module used in one episode, and what they cost.

    Two views of the same calls. The plain fields are what this agent would
    use on its own (every call counted, also one the run's cache answered
    because another coalition made it first): the cost of the agent, which
    the per-coalition cost and the Pareto front are about. The ``sent_``
    fields count only calls that went upstream: what the run was billed, which
    budgets are about. ``input_tokens`` includes ``cached_input_tokens`` (a
    provider's prompt-cache reads, billed at the cached rate). Costs are in
    USD, None when the model has no price.
    """

    model_config = ConfigDict(extra="forbid")

    model: str = ""
    calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    sent_calls: int = 0
    sent_input_tokens: int = 0
    sent_cached_input_tokens: int = 0
    sent_output_tokens: int = 0
    cost_usd: float | None = None
    sent_usd: float | None = None
    #: how the model's answers ended, by ``finish_reason`` (``stop``, ``length``,
    #: ``tool_calls``...): one count per call
    finish_reasons: dict[str, int] = Field(default_factory=dict)
    #: refused actions of this slot (agentbus.core.refusals): no action found in the answer,
    unparsable: int = 0
    #: an action that was a copy of the prompt (a guide example, earlier feedback),
    copied: int = 0
    #: an action the environment read and rejected as none it knows
    rejected: int = 0
    #: the first refusal's reason in this episode (for the end-of-run line)
    refusal: str | None = None
    #: function calls this slot's model wrote that could not be used
    invalid_tool_calls: int = 0
    #: calls refused because the prompt outgrew the model's context window
    context_overflows: int = 0

    @property
    def truncated(self) -> int:
        """Answers cut at the output limit (``finish_reason == "length"``)."""
        return self.finish_reasons.get("length", 0)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def sent_tokens(self) -> int:
        return self.sent_input_tokens + self.sent_output_tokens


class Outcome(BaseModel):
    """Reward in [0, 1], success flag and the costs of one episode."""

    model_config = ConfigDict(extra="forbid")

    reward: float = 0.0
    success: bool = False
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0
    latency_s: float = 0.0
    reason: str = "done"
    error: str | None = None
    error_kind: ErrorKind | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    #: slot -> its module's tokens and cost (see :class:`SlotUsage`)
    usage: dict[str, SlotUsage] = Field(default_factory=dict)
    trace: list[dict[str, Any]] | None = None

    @property
    def counts_for_value(self) -> bool:
        """True when the reward measures the agent (not the infrastructure).

        Running out of steps is the agent's own failure (it did not finish in
        the rounds it had), and so is a prompt that outgrew the model's context
        window (``context_overflow``); crashes, unreachable servers and wall-clock
        timeouts (usually a slow server) are not, and are retried or reported.
        """
        return kind_counts(self.error_kind)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost_usd(self) -> float | None:
        """What this agent's calls cost (all slots; None if any slot is unpriced)."""
        costs = [u.cost_usd for u in self.usage.values()]
        return None if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs))

    @property
    def sent_usd(self) -> float:
        """What the calls that went upstream were billed (unpriced slots count 0)."""
        return float(sum(u.sent_usd or 0.0 for u in self.usage.values()))

    @property
    def sent_tokens(self) -> int:
        return sum(u.sent_tokens for u in self.usage.values())

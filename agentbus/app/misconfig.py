"""Stop a run of a user's agent that is misconfigured, after its first block of episodes.

A wrong ``--slots`` does not make episodes fail loudly: an agent whose
components call ``checker`` where the run declared ``critic`` crashes on a
refused call in every episode, the zeros count as the agent's, and the run
ends with a table of +0.00 for every slot. The first block of episodes (one
task under every coalition) already shows it, so :class:`MisconfigWatch`
looks when that many episodes have ended, and again after each further
block's worth (over all episodes so far), and names the first of:

* a module name the run refused (no slot, no ``--unmapped``) in most episodes;
* a majority of episodes that were the agent's own failures;
* a declared slot that no episode called (an agent that crashes before its
  first call says nothing about its slots, hence this order).

The run then stops with one line saying what to change (exit 2);
``--keep-going`` runs on regardless.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from agentbus.core.outcome import AGENT_FAILURES, is_agent_failure
from agentbus.core.record import EpisodeRecord

if TYPE_CHECKING:
    from agentbus.app.config import RunConfig
    from agentbus.app.evaluation import EvaluationPlan


class MisconfigWatch:
    """Reads the first ``block`` coalition records and says whether the run is misconfigured."""

    def __init__(self, slots: Sequence[str], block: int, *, maybe_off: Iterable[str] = ()) -> None:
        self.slots = tuple(slots)
        #: episodes to read before judging: one task under every coalition
        self.block = max(1, block)
        #: slots some coalition switches off (--vary SLOT=off): not calling them is no sign
        self.maybe_off = frozenset(maybe_off)
        self.episodes = 0
        self.calls: Counter[str] = Counter()
        self.refused_in: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.first_reason: str | None = None
        self.reason: str | None = None

    def record(self, record: EpisodeRecord) -> str | None:
        """Fold in one ended episode; the stop line once the first block says so."""
        if self.reason is not None or record.kind != "coalition" or not record.counts:
            return None
        self.episodes += 1
        details = record.outcome.details
        gateway = details.get("gateway") if isinstance(details, dict) else None
        gateway = gateway if isinstance(gateway, dict) else {}
        for module, stats in (gateway.get("modules") or {}).items():
            if isinstance(stats, dict):
                self.calls[module] += int(stats.get("calls", 0) or 0)
        for module in gateway.get("unknown") or ():
            self.refused_in[str(module)] += 1
        kind = record.outcome.error_kind
        if is_agent_failure(kind):
            assert kind is not None
            self.failures[kind] += 1
            if self.first_reason is None:
                flat = " ".join(record.outcome.reason.split())
                self.first_reason = flat if len(flat) <= 200 else flat[:197] + "..."
        if self.episodes % self.block:
            return None
        self.reason = self.judge()
        return self.reason

    def judge(self) -> str | None:
        """The stop line for what the episodes so far show, or None when they look sound."""
        n = self.episodes
        sent = ", ".join(sorted(m for m in self.calls if self.calls[m])) or "nothing"
        for module, count in self.refused_in.most_common():
            if 2 * count > n:
                return (
                    f"misconfigured: the agent called module {module!r}, which is no slot of "
                    f"this run, in {count} of the first {n} episodes and every such call was "
                    f"refused; add it to --slots (declared: {', '.join(self.slots)}) or send it "
                    "to a model with --unmapped MODEL (or --keep-going to run on)"
                )
        failed = sum(self.failures.values())
        if 2 * failed > n:
            kinds = ", ".join(
                f"{AGENT_FAILURES[k].removeprefix('the agent ')} {c}"
                for k, c in self.failures.most_common()
            )
            return (
                f"misconfigured: {failed} of the first {n} episodes were the agent's own "
                f"failures ({kinds}; first: {self.first_reason}); fix the agent or its "
                "limits (--agent-timeout) before spending the run (or --keep-going to run on)"
            )
        silent = [s for s in self.slots if not self.calls.get(s) and s not in self.maybe_off]
        if silent:
            return (
                f"misconfigured: no episode of the first {n} called slot "
                f"{', '.join(repr(s) for s in silent)}; the agent's components sent: "
                f"{sent}; set --slots to the names they send (python -m agentbus.discover "
                "lists them) (or --keep-going to run on)"
            )
        return None


def watch_for(config: RunConfig, plan: EvaluationPlan) -> MisconfigWatch | None:
    """The watch for a run of a user's agent; None for agentbus's own or with --keep-going."""
    from agentbus.app import external

    if config.keep_going or not external.is_external(config):
        return None
    per_task = plan.design_size or len(plan.coalitions)
    block = per_task * len(plan.test_models) * plan.repeats
    off = [s for s, pair in config.variants().items() if any(v.off for v in pair)]
    return MisconfigWatch(plan.varied, block, maybe_off=off)


__all__ = ["MisconfigWatch", "watch_for"]

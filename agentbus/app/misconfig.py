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
  first call says nothing about its slots, hence this order);
* nothing fit: once :data:`FIT_TASKS` tasks are complete, none of at least
  :data:`FIT_EPISODES` scored answers is right and most do not have the form
  of the expected answer (:func:`agentbus.gateway.scorers.readable`; an
  agent that abstains when unsure is sound while some answer scores), or
  every one of at least :data:`SAME_EPISODES` scored the same (all 0, all 1:
  a table that can tell no slot from another); the line shows the first
  answers against what the scorer expected.

The run then stops with one line saying what to change (exit 2);
``--keep-going`` runs on regardless.

It judges complete tasks only: a task's episodes are folded in once all of
them (every coalition) have ended. Judging episodes in the order they end
would make the verdict depend on the agent mode: in process a crash ends in
a millisecond and a healthy episode in seconds, so an agent that crashes on
a quarter of its episodes filled the first block with crashes and was
stopped, while the same agent as a command (every episode paying its
start-up) ran to the end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from agentbus.core.outcome import AGENT_FAILURES, is_agent_failure
from agentbus.core.record import EpisodeRecord
from agentbus.gateway.scorers import final_answer, readable

#: tasks complete before "nothing fit" is judged (one task's coalitions alone agree by chance)
FIT_TASKS = 2
#: ... and scored episodes (not the agent's failures) at least, for answers of the wrong form
FIT_EPISODES = 8
#: ... and for every episode scoring the same: a sound agent that is right 90% of the
#: time in most coalitions still scores all ones in 16 episodes now and then
#: (examples/plain_openai did in 2 tasks x 8 coalitions, a 4% chance); at 32 it is
#: a chance of about 0.2%
SAME_EPISODES = 32
#: answers shown against the expected ones in the "nothing fit" line
EXAMPLES = 2

if TYPE_CHECKING:
    from agentbus.app.config import RunConfig
    from agentbus.app.evaluation import EvaluationPlan


class MisconfigWatch:
    """Reads the first ``block`` coalition records and says whether the run is misconfigured."""

    def __init__(
        self,
        slots: Sequence[str],
        block: int,
        *,
        maybe_off: Iterable[str] = (),
        check_form: bool = True,
    ) -> None:
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
        #: whether answers are checked for the expected answer's form (built-in scorers)
        self.check_form = check_form
        self.tasks = 0
        self.rewards: Counter[float] = Counter()
        self.unreadable = 0
        self.examples: list[tuple[str, str]] = []
        self._pending: dict[str, list[EpisodeRecord]] = {}

    def record(self, record: EpisodeRecord) -> str | None:
        """Take one ended episode; the stop line once the complete tasks say so."""
        if self.reason is not None or record.kind != "coalition" or not record.counts:
            return None
        pending = self._pending.setdefault(f"{record.task_id}|{record.repeat}", [])
        pending.append(record)
        if len(pending) < self.block:
            return None
        del self._pending[f"{record.task_id}|{record.repeat}"]
        self.tasks += 1
        first = True
        for done in pending:
            first = not self._fold(done, first) and first
        self.reason = self.judge()
        return self.reason

    def _fold(self, record: EpisodeRecord, first: bool) -> bool:
        """Count one episode of a complete task; True when it gave the task's example."""
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
                self.first_reason = _short(record.outcome.reason, 200)
            return False
        self.rewards[round(record.outcome.reward, 6)] += 1
        result = details.get("result") if isinstance(details, dict) else None
        if isinstance(result, dict) and isinstance(details, dict) and "expected" in details:
            task = {"answer": details["expected"]}
            if self.check_form and not readable(result, task):
                self.unreadable += 1
            if len(self.examples) < EXAMPLES and record.outcome.reward < 1 and first:
                got = _short(repr(result.get("answer")), 80)
                self.examples.append((got, _short(repr(final_answer(details["expected"])), 40)))
                return True  # one example a task
        return False

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
        return self.nothing_fit()

    def nothing_fit(self) -> str | None:
        """The "nothing fit" line, once enough tasks are in and they say so (else None)."""
        scored = sum(self.rewards.values())
        if self.tasks < FIT_TASKS or scored < FIT_EPISODES:
            return None
        shown = "; ".join(f"answered {a} where the scorer expected {e}" for a, e in self.examples)
        tail = (
            f"{' first: ' + shown + ';' if shown else ''} give --scorer for the form your agent "
            "answers in (docs/your-agent.md, Scorers) or fix its output (or --keep-going to run on)"
        )
        # an agent that abstains ("no agreed answer") when unsure is sound while some answer
        # scores: only answers of the wrong form with none right say nothing fit
        if 2 * self.unreadable > scored and set(self.rewards) == {0.0}:
            return (
                f"nothing fit: {self.unreadable} of the first {scored} scored answers do not "
                f"have the form of the expected answer;{tail}"
            )
        if len(self.rewards) == 1 and scored >= SAME_EPISODES:
            (reward,) = self.rewards
            return (
                f"nothing fit: every one of the first {scored} scored episodes "
                f"({self.tasks} tasks, every coalition) scored {reward:g}, so the table cannot "
                f"tell one slot from another;{tail}"
            )
        return None


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def watch_for(config: RunConfig, plan: EvaluationPlan) -> MisconfigWatch | None:
    """The watch for a run of a user's agent; None for agentbus's own or with --keep-going."""
    from agentbus.app import external

    if config.keep_going or not external.is_external(config):
        return None
    per_task = plan.design_size or len(plan.coalitions)
    block = per_task * len(plan.test_models) * plan.repeats
    off = [s for s, pair in config.variants().items() if any(v.off for v in pair)]
    form = config.scorer in (None, "final", "exact", "numeric")
    return MisconfigWatch(plan.varied, block, maybe_off=off, check_form=form)


__all__ = ["MisconfigWatch", "watch_for"]

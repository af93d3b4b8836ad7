"""Replaying an episode, and finding the decisive step of a finished one.

:func:`replay` runs an :class:`~agentbus.core.episode.EpisodeSpec` again with its
slots' models wrapped (:mod:`agentbus.replay.calls`). :func:`decisive_step`
asks which call, answered by the repair model instead, changes the episode's
*probability* of the other outcome, not merely its outcome once:

1. one reproduction (no intervention): every call must come back from the
   run's cache as recorded and the outcome must be the recorded one, or the
   verdict is *not replayable* (cost 1);
2. for each call in step order, the repair model is asked the same prompt
   first (one model call, no episode): where it answers exactly as the
   original did, repairing that call changes nothing and costs no replay;
3. otherwise one *screen*: the episode replayed with that call repaired. No
   flip: the call is passed over (cost 1);
4. a screened flip is *tested*. Any new answer changes every later prompt,
   so a failure that was bad luck in its later calls flips for any change
   early on. So the flip is compared with ``placebos`` continuations that
   keep the call's *recorded* answer and draw every later call again
   (temperature :data:`~agentbus.replay.calls.RESAMPLE_TEMPERATURE`, seeds
   1..P), against ``repairs`` continuations of the repair model's answer
   drawn the same way (the screen and seeds 1..R-1; the repair's own answer
   resampled too after the first). The two arms differ only in the call's
   answer, so the test asks whether *that answer* moved the chance of
   success. The call is *decisive* when the repaired flip rate exceeds the
   placebo flip rate by a one-sided Fisher exact test at level ``alpha``.
   Placebos run first and the test stops as soon as it can no longer pass
   (futility), so a call whose kept answer also flips costs a few replays,
   not R + P. (The previous rule's placebo asked the slot's own model
   again: where that model rarely errs, or errs harmlessly on a redraw, the
   placebo repaired the call too and the contrast vanished; it is kept as
   ``placebo="redraw"`` to compare with.)
5. the earliest decisive call is the verdict; none: *no decisive single
   call* (the failure needs two or more repairs, or none suffices).

Error rate: for a call whose repaired answer gives no better chance of
success than its recorded one (the null), the test names it decisive with
probability at most ``alpha``: the screen's flip is one of the R repaired
continuations, so a screened rejection is a rejection of the full test, and
the futility stop only removes chances to reject. Each call whose repair
answers differently is one such test, so an episode's false-blame chance is
at most ``alpha`` times the calls screened before the true one (measured on
injected mistakes: docs/blame.md).
Budget: 1 + (calls answered differently by the repair model) screens, plus at
most R + P - 1 per tested call; it grows linearly with the episode's length
(every call is probed once, at most every call screened once).

Why earliest first: a failure usually has one root mistake followed by calls
that only inherit it; the earliest call whose repair saves the episode is
the one an engineer must fix, and later calls cannot be decisive in the
same sense without the earlier state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scipy.stats import fisher_exact

from agentbus.core.episode import Episode, EpisodeSpec
from agentbus.core.outcome import Outcome
from agentbus.llm.types import LLM
from agentbus.replay.calls import Call, CallLog, Intervention, Recorded, ReplayLLM

Status = Literal["decisive", "none", "not_replayable"]

#: repaired and placebo continuations per tested call, and the test's level
REPAIRS = 6
PLACEBOS = 6
ALPHA = 0.05


@dataclass
class Replay:
    """One replayed episode: its outcome, its calls, and whether the prefix reproduced."""

    outcome: Outcome
    calls: list[Call]
    diverged: str | None

    @property
    def replayable(self) -> bool:
        return self.diverged is None


async def replay(
    spec: EpisodeSpec,
    recorded: Mapping[str, Sequence[Recorded]] | None,
    intervention: Intervention | None = None,
    repair: LLM | None = None,
) -> Replay:
    """Run ``spec`` with the recorded prefix, then ``intervention`` answered by ``repair``."""
    log = CallLog(recorded, intervention)
    actors = [
        a if a.llm is None else dataclasses.replace(a, llm=ReplayLLM(a.slot, a.llm, repair, log))
        for a in spec.actors
    ]
    outcome = await Episode(dataclasses.replace(spec, actors=actors, trace=False)).run()
    if intervention is None:
        log.check_complete()
    return Replay(outcome, log.calls, log.diverged)


@dataclass
class Test:
    """One tested call: flips of its repaired and placebo continuations, and the p-value."""

    step: int
    slot: str
    repair_flips: int = 0
    repairs: int = 0
    placebo_flips: int = 0
    placebos: int = 0
    #: one-sided Fisher exact p-value (repair flips more often than placebo); 1 when stopped
    p: float = 1.0
    #: stopped early: the test could no longer pass
    futile: bool = False

    @property
    def repair_rate(self) -> float:
        return self.repair_flips / self.repairs if self.repairs else 0.0

    @property
    def placebo_rate(self) -> float:
        return self.placebo_flips / self.placebos if self.placebos else 0.0


@dataclass
class Verdict:
    """The decisive step of one episode, or why there is none, and what it cost."""

    status: Status
    #: episode replays run (the reproduction included)
    replays: int = 0
    #: single calls put to the repair model to see whether it answers differently
    probes: int = 0
    #: the decisive call: step index (start order), slot, and that slot's call rank
    step: int | None = None
    slot: str | None = None
    rank: int | None = None
    #: calls in the reproduced episode
    calls: int = 0
    #: steps whose screen replay did not flip the outcome
    tried: list[int] = field(default_factory=list)
    #: every call whose screen flipped, with its flip rates (the decisive one last)
    tested: list[Test] = field(default_factory=list)
    #: the decisive call's estimated flip rates (repaired, placebo) and p-value
    repair_rate: float | None = None
    placebo_rate: float | None = None
    p: float | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["tested"] = [dataclasses.asdict(t) for t in self.tested]
        return out


Passed = Callable[[Outcome], bool]


def succeeded(outcome: Outcome) -> bool:
    """The default notion of success: the episode's own success flag."""
    return outcome.success


def flipped(recorded: Outcome, new: Outcome, passed: Passed = succeeded) -> bool:
    """Whether ``new`` is on the other side of ``passed`` than the record (errors never flip)."""
    return new.error is None and passed(new) != passed(recorded)


def reproduction_problem(recorded: Outcome, base: Replay) -> str | None:
    """Why a reproduction is not the recorded episode (None: it is)."""
    if not base.replayable:
        return base.diverged
    same = (base.outcome.success, base.outcome.reward, base.outcome.error)
    if same != (recorded.success, recorded.reward, recorded.error):
        return f"the reproduction ended {_describe(base.outcome)}, the record {_describe(recorded)}"
    # your own agent's returned result: randomness in the final answer shows here even when
    # the score happens to be the same
    mine, again = recorded.details.get("result"), base.outcome.details.get("result")
    if mine is not None and again != mine:
        return f"the agent returned {_short(again)} where the record has {_short(mine)}"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def same_answer(call: Call, other_text: str, other_tools: list[dict[str, Any]]) -> bool:
    return call.text == other_text and call.tool_calls == other_tools


def p_value(repair_flips: int, repairs: int, placebo_flips: int, placebos: int) -> float:
    """One-sided Fisher exact test: repaired continuations flip more often than placebo ones."""
    table = [[repair_flips, repairs - repair_flips], [placebo_flips, placebos - placebo_flips]]
    return float(fisher_exact(table, alternative="greater").pvalue)


Replayer = Callable[[Intervention | None], Awaitable[Replay]]
#: continuation number k of one arm of a call's test
Arm = Callable[[int], Intervention]
Prober = Callable[[Call], Awaitable[tuple[str, list[dict[str, Any]]]]]


class _Diverged(Exception):
    """A replay's prefix did not reproduce: the verdict is not replayable."""


#: the placebo of the test: the recorded answer kept with its continuation drawn again
#: ("keep"), or the slot's own model asked again (the previous rule, "redraw")
Placebo = Literal["keep", "redraw"]
PLACEBO: Placebo = "keep"


def arms(step: int, slot: str, placebo: Placebo) -> tuple[Arm, Arm]:
    """The repaired and the placebo continuation number ``k`` (0-based) of one call.

    ``keep``: repaired continuation k has the repair model's answer (its own
    at k = 0, resampled with seed k after) and every later call drawn again
    with seed k + 1; placebo continuation k keeps the recorded answer and
    draws every later call again with seed k + 1. Both arms draw their
    continuations the same way, so they differ only in the call's answer.
    ``redraw`` (the previous rule): the placebo is the slot's own model
    resampled, and later calls run at the run's sampling.
    """
    if placebo == "keep":
        return (
            lambda k: Intervention(step, slot, resample=k, reroll=k + 1),
            lambda k: Intervention(step, slot, keep=True, reroll=k + 1),
        )
    return (
        lambda k: Intervention(step, slot, resample=k),
        lambda k: Intervention(step, slot, resample=k + 1, placebo=True),
    )


async def decisive_step(
    recorded: Outcome,
    run: Replayer,
    probe: Prober,
    *,
    repairs: int = REPAIRS,
    placebos: int = PLACEBOS,
    alpha: float = ALPHA,
    passed: Passed = succeeded,
    placebo: Placebo = PLACEBO,
) -> Verdict:
    """The earliest call whose repair raises the flip rate over placebo (module docstring).

    ``placebos`` = 0 takes the first screened flip (no test), as a baseline;
    ``placebo`` = "redraw" is the previous rule, kept to compare with.
    """
    base = await run(None)
    verdict = Verdict("none", replays=1, calls=len(base.calls))
    problem = reproduction_problem(recorded, base)
    if problem is not None:
        verdict.status, verdict.reason = "not_replayable", problem
        return verdict

    async def flips(intervention: Intervention) -> bool:
        result = await run(intervention)
        verdict.replays += 1
        if not result.replayable:
            verdict.reason = result.diverged
            raise _Diverged
        return flipped(recorded, result.outcome, passed)

    try:
        for call in base.calls:
            if not call.done:  # cut off by the episode's end: repairing it changes nothing
                continue
            text, tools = await probe(call)
            verdict.probes += 1
            if same_answer(call, text, tools):
                continue
            repaired, kept = arms(call.index, call.slot, placebo)
            if not await flips(repaired(0)):
                verdict.tried.append(call.index)
                continue
            test = Test(call.index, call.slot, repair_flips=1, repairs=1)
            verdict.tested.append(test)
            arm = (repaired, kept)
            if placebos and not await _test(test, flips, arm, repairs, placebos, alpha):
                continue
            verdict.status, verdict.step, verdict.slot, verdict.rank = (
                "decisive",
                call.index,
                call.slot,
                call.rank,
            )
            verdict.repair_rate, verdict.placebo_rate = test.repair_rate, test.placebo_rate
            verdict.p = test.p if placebos else None
            return verdict
    except _Diverged:
        verdict.status = "not_replayable"
    return verdict


async def _test(
    test: Test,
    flips: Callable[[Intervention], Awaitable[bool]],
    arm: tuple[Arm, Arm],
    repairs: int,
    placebos: int,
    alpha: float,
) -> bool:
    """Run the placebo and repaired continuations of one screened flip; True if decisive."""
    repaired, kept = arm
    for k in range(placebos):
        test.placebo_flips += await flips(kept(k))
        test.placebos += 1
        # futility: even with every remaining repair flipping and no placebo, no pass
        if p_value(repairs, repairs, test.placebo_flips, placebos) > alpha:
            test.futile = True
            return False
    for k in range(1, repairs):
        test.repair_flips += await flips(repaired(k))
        test.repairs += 1
        best = test.repair_flips + repairs - test.repairs
        if p_value(best, repairs, test.placebo_flips, placebos) > alpha:
            test.futile = True
            return False
    test.p = p_value(test.repair_flips, test.repairs, test.placebo_flips, test.placebos)
    return test.p <= alpha


def _describe(outcome: Outcome) -> str:
    if outcome.error is not None:
        return f"with an error ({outcome.error_kind})"
    return f"in {'success' if outcome.success else 'failure'} (reward {outcome.reward:g})"


__all__ = [
    "ALPHA",
    "PLACEBO",
    "PLACEBOS",
    "REPAIRS",
    "Passed",
    "Placebo",
    "Replay",
    "Test",
    "Verdict",
    "arms",
    "decisive_step",
    "flipped",
    "p_value",
    "replay",
    "reproduction_problem",
    "succeeded",
]

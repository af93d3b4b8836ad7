"""Replaying an episode, and finding the decisive step of a finished one.

:func:`replay` runs an :class:`~agentbus.core.episode.EpisodeSpec` again with its
slots' models wrapped (:mod:`agentbus.replay.calls`). :func:`decisive_step`
asks which single call, answered by the repair model instead, flips the
episode's outcome, with as few replays as it can:

1. one reproduction (no intervention): every call must come back from the
   run's cache as recorded and the outcome must be the recorded one, or the
   verdict is *not replayable* (cost 1);
2. for each call in step order, the repair model is asked the same prompt
   first (one model call, no episode): where it answers exactly as the
   original did, repairing that call changes nothing and costs no replay;
3. otherwise the episode is replayed with that call repaired; the first
   replay whose outcome flips names the decisive step and the search stops.
   No flip after the last call: *no decisive single call* (the failure needs
   two or more repairs, or none suffices).
4. with ``confirm`` = N > 0, a flip counts only when N more replays, each
   with another, independent answer of the repair model to the same call
   (:data:`~agentbus.replay.calls.RESAMPLE_TEMPERATURE`, seeds 1..N), flip
   it too; otherwise it is recorded as ``unconfirmed`` and the search goes
   on. Any repaired answer changes every later prompt, so every later call
   is drawn afresh: a repair of a call that was right all along can flip the
   outcome because the calls after it fell better (docs/blame.md measures
   how often; on git the confirmation did not remove those cases).
5. with ``placebo`` = M > 0, a (confirmed) flip counts only when fewer than
   half of M replays in which the slot's *own* model answers the call again
   (resampled the same way) flip it too: when most fresh answers of the same
   skill flip the outcome, the outcome hangs on the redraw of the calls that
   follow, not on the quality of this one.

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

from agentbus.core.episode import Episode, EpisodeSpec
from agentbus.core.outcome import Outcome
from agentbus.llm.types import LLM
from agentbus.replay.calls import Call, CallLog, Intervention, Recorded, ReplayLLM

Status = Literal["decisive", "none", "not_replayable"]


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
    #: steps whose repair was replayed without flipping the outcome
    tried: list[int] = field(default_factory=list)
    #: steps whose repair flipped the outcome but a second repair answer did not
    unconfirmed: list[int] = field(default_factory=list)
    #: per flip put to the placebo test, how many placebo answers flipped it too
    placebo_flips: list[int] = field(default_factory=list)
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def flipped(recorded: Outcome, new: Outcome) -> bool:
    """Whether ``new`` has the other success flag than the recorded outcome (errors never flip)."""
    return new.error is None and new.success != recorded.success


def same_answer(call: Call, other_text: str, other_tools: list[dict[str, Any]]) -> bool:
    return call.text == other_text and call.tool_calls == other_tools


Replayer = Callable[[Intervention | None], Awaitable[Replay]]
Prober = Callable[[Call], Awaitable[tuple[str, list[dict[str, Any]]]]]


async def decisive_step(
    recorded: Outcome,
    run: Replayer,
    probe: Prober,
    *,
    confirm: int = 0,
    placebo: int = 4,
) -> Verdict:
    """The earliest call whose repair flips ``recorded`` (see the module docstring)."""
    base = await run(None)
    verdict = Verdict("none", replays=1, calls=len(base.calls))
    if not base.replayable:
        verdict.status, verdict.reason = "not_replayable", base.diverged
        return verdict
    if base.outcome.success != recorded.success or base.outcome.error != recorded.error:
        verdict.status = "not_replayable"
        verdict.reason = (
            f"the reproduction ended {_describe(base.outcome)}, the record {_describe(recorded)}"
        )
        return verdict
    for call in base.calls:
        if not call.done:  # cut off by the episode's end: repairing it changes nothing
            continue
        text, tools = await probe(call)
        verdict.probes += 1
        if same_answer(call, text, tools):
            continue
        result = await run(Intervention(call.index, call.slot))
        verdict.replays += 1
        if not result.replayable:
            verdict.status, verdict.reason = "not_replayable", result.diverged
            return verdict
        if flipped(recorded, result.outcome) and (confirm or placebo):
            held = await _confirmed(recorded, run, call, confirm, verdict)
            if held and placebo and verdict.status != "not_replayable":
                held = await _beats_placebo(recorded, run, call, placebo, verdict)
            if verdict.status == "not_replayable":
                return verdict
            if not held:
                verdict.unconfirmed.append(call.index)
                continue
        if flipped(recorded, result.outcome):
            verdict.status, verdict.step, verdict.slot, verdict.rank = (
                "decisive",
                call.index,
                call.slot,
                call.rank,
            )
            return verdict
        verdict.tried.append(call.index)
    return verdict


async def _confirmed(
    recorded: Outcome, run: Replayer, call: Call, confirm: int, verdict: Verdict
) -> bool:
    """Whether a flip holds: ``confirm`` more, independent repair answers flip it too."""
    for seed in range(1, confirm + 1):
        again = await run(Intervention(call.index, call.slot, resample=seed))
        verdict.replays += 1
        if not again.replayable:
            verdict.status, verdict.reason = "not_replayable", again.diverged
            return False
        if not flipped(recorded, again.outcome):
            return False
    return True


async def _beats_placebo(
    recorded: Outcome, run: Replayer, call: Call, placebo: int, verdict: Verdict
) -> bool:
    """Whether fewer than half of ``placebo`` resampled answers of the slot's own
    model flip the outcome too (if most do, the flip is the redraw's, not the repair's)."""
    flips = 0
    for seed in range(1, placebo + 1):
        again = await run(Intervention(call.index, call.slot, resample=seed, placebo=True))
        verdict.replays += 1
        if not again.replayable:
            verdict.status, verdict.reason = "not_replayable", again.diverged
            return False
        flips += flipped(recorded, again.outcome)
        if 2 * flips >= placebo:
            break
    verdict.placebo_flips.append(flips)
    return 2 * flips < placebo


def _describe(outcome: Outcome) -> str:
    if outcome.error is not None:
        return f"with an error ({outcome.error_kind})"
    return "in success" if outcome.success else "in failure"


__all__ = ["Replay", "Verdict", "decisive_step", "flipped", "replay"]

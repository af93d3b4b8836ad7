"""One replayed episode's model calls: the recorded prefix, one repaired call, the rest.

A replay runs a finished episode again with every slot's model wrapped in a
:class:`ReplayLLM`. All wrappers of one episode share a :class:`CallLog`, which
numbers the calls in the order they start (the *step*: one module call, or one
gateway call) and checks the prefix:

* a call before the repaired one must be the recorded call: the same slot,
  the same prompt as that slot's recorded call of the same rank, answered from
  the run's cache with the recorded answer. The prompt is compared *before* the
  call is made, so a prefix that drifted never reaches a provider; a cache miss
  or another answer is caught after it. Any difference means the agent or the
  environment is not deterministic given identical answers, and the replay
  stops as not replayable (it is never guessed on);
* the repaired call (``Intervention``) is answered by another model (the
  repair model) with the same prompt and sampling parameters;
* every later call is run normally (through the cache, which usually misses).

Without an intervention the whole episode is the prefix: that is the
reproduction check every verdict starts with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from agentbus.core.errors import UserError
from agentbus.llm.types import LLM, ChatMessage, Completion, SamplingParams


class NotReplayable(Exception):
    """The recorded prefix did not reproduce: raised inside the replayed episode."""


@dataclass(frozen=True)
class Intervention:
    """Answer call number ``index`` (0-based, in start order), made by ``slot``, differently.

    By default the call is answered by the repair model. ``resample`` > 0 asks
    it for another, independent answer (sampling temperature
    :data:`RESAMPLE_TEMPERATURE` with seed ``resample``). ``keep`` answers the
    call as recorded instead: the *placebo* of blame's test, the original
    answer with only what follows drawn again. ``reroll`` > 0 resamples every
    call after ``index`` the same way with seed ``reroll``, so that repeated
    continuations of one answer differ (at temperature 0 a kept answer would
    replay the record). ``placebo`` answers the call with the slot's own model,
    resampled: the placebo of the previous rule, kept to compare with.
    """

    index: int
    slot: str
    resample: int = 0
    #: answer with the slot's own model, resampled (the previous rule's placebo)
    placebo: bool = False
    #: answer the call as recorded (from the run's cache); only what follows changes
    keep: bool = False
    #: seed of every later call's resampled answer (0: the run's own sampling)
    reroll: int = 0


#: temperature of a resampled repair (its seed keeps it reproducible)
RESAMPLE_TEMPERATURE = 0.7


def resampled(params: SamplingParams | None, seed: int) -> SamplingParams:
    """``params`` with the temperature and seed of a resampled repair."""
    base = params if params is not None else SamplingParams()
    return base.model_copy(update={"temperature": RESAMPLE_TEMPERATURE, "seed": seed})


@dataclass(frozen=True)
class Recorded:
    """What a slot's call of one rank asked and got in the original episode."""

    prompt: tuple[tuple[str, str], ...]
    answer: str


@dataclass
class Call:
    """One call of a replay, as made: enough to ask another model the same thing."""

    index: int
    slot: str
    rank: int  # this slot's calls before it
    messages: list[ChatMessage]
    params: SamplingParams | None
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    cached: bool = False
    repaired: bool = False
    #: answered (a call cut off by the episode's end never is)
    done: bool = False


def prompt_of(messages: Sequence[ChatMessage]) -> tuple[tuple[str, str], ...]:
    """A prompt as comparable (role, content) pairs."""
    return tuple((str(m.get("role", "")), str(m.get("content", ""))) for m in messages)


def recorded_calls(trace: Sequence[Mapping[str, Any]]) -> dict[str, list[Recorded]]:
    """slot -> its recorded calls in order, from a trace whose prompts are expanded.

    ``trace`` is what :func:`agentbus.core.calltrace.expand_prompts` returns.
    """
    out: dict[str, list[Recorded]] = {}
    for entry in trace:
        if entry.get("type") != "LLMCall":
            continue
        prompt = tuple(
            (str(m.get("role", "")), str(m.get("content", ""))) for m in entry.get("prompt") or ()
        )
        out.setdefault(str(entry.get("sender", "")), []).append(
            Recorded(prompt, str(entry.get("answer", "")))
        )
    return out


class CallLog:
    """The calls of one replayed episode and the first way its prefix failed to reproduce."""

    def __init__(
        self,
        recorded: Mapping[str, Sequence[Recorded]] | None,
        intervention: Intervention | None = None,
    ) -> None:
        self.recorded = recorded
        self.intervention = intervention
        self.calls: list[Call] = []
        self._ranks: dict[str, int] = {}
        #: why the prefix did not reproduce (None: it did, so far)
        self.diverged: str | None = None

    def start(
        self, slot: str, messages: Sequence[ChatMessage], params: SamplingParams | None
    ) -> Call:
        rank = self._ranks.get(slot, 0)
        self._ranks[slot] = rank + 1
        call = Call(len(self.calls), slot, rank, list(messages), params)
        self.calls.append(call)
        return call

    def in_prefix(self, call: Call) -> bool:
        """A call answered as recorded: before the intervention, or the kept call itself."""
        target = self.intervention
        if target is None or call.index < target.index:
            return True
        return target.keep and call.index == target.index

    def fail(self, why: str) -> NotReplayable:
        if self.diverged is None:
            self.diverged = why
        return NotReplayable(self.diverged)

    def check_prompt(self, call: Call) -> None:
        """Before a prefix call: it must be the recorded one (no upstream call otherwise)."""
        if self.recorded is None:
            return
        mine = self.recorded.get(call.slot, ())
        if call.rank >= len(mine):
            return  # beyond the record: see ReplayLLM.complete
        if mine[call.rank].prompt != prompt_of(call.messages):
            raise self.fail(
                f"step {call.index}: {call.slot}'s call {call.rank + 1} has another prompt "
                "than recorded"
            )

    def beyond_record(self, call: Call) -> bool:
        """A call the record has no answer for (its slot already made all its recorded ones)."""
        if self.recorded is None:
            return False
        return call.rank >= len(self.recorded.get(call.slot, ()))

    def check_answer(self, call: Call) -> None:
        """After a prefix call: answered from the cache, with the recorded answer."""
        if not call.cached:
            raise self.fail(f"step {call.index}: {call.slot}'s call was not in the run's cache")
        if self.recorded is not None:
            if self.recorded[call.slot][call.rank].answer != call.text:
                raise self.fail(f"step {call.index}: {call.slot}'s answer differs from the record")

    def check_complete(self) -> None:
        """After a reproduction: every recorded call was made again."""
        if self.recorded is None or self.diverged is not None:
            return
        for slot, mine in self.recorded.items():
            made = self._ranks.get(slot, 0)
            if made < len(mine):
                self.fail(f"{slot} made {made} of its {len(mine)} recorded calls")
                return


#: seconds a reproduced call beyond the record waits for the episode to end
CUT_OFF_WAIT_S = 30.0


class ReplayLLM:
    """A slot's model in a replay: see the module docstring."""

    __slots__ = ("_inner", "_log", "_repair", "slot")

    def __init__(self, slot: str, inner: LLM, repair: LLM | None, log: CallLog) -> None:
        self.slot = slot
        self._inner = inner
        self._repair = repair
        self._log = log

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        log = self._log
        if log.diverged is not None:  # another slot's call already failed the prefix
            raise NotReplayable(log.diverged)
        call = log.start(self.slot, messages, params)
        prefix = log.in_prefix(call)
        target = log.intervention
        if prefix:
            if log.beyond_record(call):
                await self._cut_off(call)
            log.check_prompt(call)
            llm = self._inner
        elif target is not None and call.index == target.index:
            if call.slot != target.slot:
                raise log.fail(
                    f"step {call.index} is {call.slot}'s call, not {target.slot}'s as recorded"
                )
            if self._repair is None:
                raise UserError("a repaired call needs a repair model")
            llm = self._inner if target.placebo else self._repair
            call.repaired = True
            if target.resample:
                params = resampled(params, target.resample)
        else:
            llm = self._inner
            if target is not None and target.reroll:
                params = resampled(params, target.reroll)
        result = await llm.complete(messages, params)
        call.text = result.text
        call.tool_calls = [c.model_dump(mode="json") for c in result.tool_calls]
        call.cached = result.cached
        call.done = True
        if prefix:
            log.check_answer(call)
        return result

    async def _cut_off(self, call: Call) -> None:
        """A prefix call the record never answered: the episode ended while it was in flight.

        A faithful reproduction ends the same way, so the call waits for the
        episode's end (which cancels it) instead of going upstream; if the end
        does not come, the agent made a call the original did not.
        """
        await anyio.sleep(CUT_OFF_WAIT_S)
        raise self._log.fail(
            f"step {call.index}: {call.slot} made more calls than recorded "
            f"({call.rank}) and the episode did not end"
        )


__all__ = [
    "Call",
    "CallLog",
    "Intervention",
    "NotReplayable",
    "Recorded",
    "ReplayLLM",
    "prompt_of",
    "recorded_calls",
    "resampled",
]

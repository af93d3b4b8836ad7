"""Where the simulator erred: the known mistakes a blame verdict is checked against.

The simulated model is a pure function of (profile, prompt, sampling): its
random stream is seeded from a hash of them at temperature 0 (or with a
seed), and :meth:`~agentbus.sim.model.SimModel.generate` returns the
:class:`~agentbus.sim.expert.Verdict` it rolled beside the text. So the
verdict behind any recorded call is recorded by asking the same model the
same thing again, in process: no answer and no random stream of the run
changes, and the regenerated text is compared with the recorded one, so a
verdict is only reported for the very answer the episode saw.

A call is a *mistake* when the roll was wrong or malformed. A decisive step
found by replay should be one of them; one that is not is a false blame. In
a failed episode of a weak agent most calls are mistakes, so that check is
nearly vacuous; the strict truth is an *injected* mistake
(:mod:`agentbus.sim.mistakes`): a near-perfect agent made to err on one known
prompt, which blame must name (:func:`injected`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentbus.llm.router import with_defaults
from agentbus.llm.types import SamplingParams
from agentbus.replay.calls import Call
from agentbus.sim.mistakes import prompt_key
from agentbus.sim.model import SimModel, strip_backend


def mistakes(
    sim: SimModel,
    calls: Sequence[Call],
    models: Mapping[str, str],
    defaults: SamplingParams,
) -> list[bool | None]:
    """Per call: True if the simulator rolled a mistake, False if not, None if unknown.

    ``models`` maps each slot to the model spec it ran on. Unknown: the slot is
    not on a ``sim:`` model, the simulator found no task (a generic answer), or
    the regenerated text is not the recorded one.
    """
    out: list[bool | None] = []
    for call in calls:
        model = models.get(call.slot, "")
        if not model.startswith("sim:") or call.repaired:
            out.append(None)
            continue
        params = defaults if call.params is None else with_defaults(defaults, call.params)
        answer = sim.generate(model, call.messages, params)
        if answer.verdict is None or answer.text != call.text:
            out.append(None)
            continue
        out.append(not answer.verdict.correct or answer.verdict.malformed)
    return out


def injected(sim: SimModel, calls: Sequence[Call], models: Mapping[str, str]) -> list[int]:
    """Steps of ``calls`` whose prompt is an injected mistake of the slot's model."""
    out: list[int] = []
    for call in calls:
        model = models.get(call.slot, "")
        if not model.startswith("sim:") or call.repaired:
            continue
        faults = sim.profiles.get(strip_backend(model)).mistakes
        if faults and prompt_key(call.messages) in faults:
            out.append(call.index)
    return out


def rolled_wrong(sim: SimModel, model: str, call: Call, defaults: SamplingParams) -> bool | None:
    """Whether ``model`` rolls a mistake on ``call``'s prompt (None: not a sim model, no task).

    The truth of a blamed *success*: the decisive call should be one the
    original model got right and the repair (the default) model gets wrong.
    """
    if not model.startswith("sim:"):
        return None
    params = defaults if call.params is None else with_defaults(defaults, call.params)
    answer = sim.generate(model, call.messages, params)
    if answer.verdict is None:
        return None
    return not answer.verdict.correct or answer.verdict.malformed


__all__ = ["injected", "mistakes", "rolled_wrong"]

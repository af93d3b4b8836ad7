"""Exact truths of gateway agents under the simulator's generic gateway model.

Under :mod:`agentbus.sim.gateway_model` every call of a module is right with
the probability its model's skill gives (``probability(profile, module)``),
independently of every other call, and two wrong answers never agree (they
differ by a random amount up to a million; the model treats agreement as
probability 0). So an agent's chance of answering right follows from its
own logic alone: which module it asks, in which order, and what it does with
the answers. :func:`success` enumerates that exactly: it runs the agent's
logic once per sequence of verdicts (right or wrong for each call, in the
order the logic makes them) and adds up the probabilities of the sequences
that end on the right answer. No closed form to derive by hand, and any
logic works, loops and early exits included.

The logic is a plain function of ``ask``: ``ask(module)`` returns
:data:`RIGHT` when that call is right and a value of its own, never repeated,
when it is wrong; the function returns the agent's final answer. Each
example's ``truth.py`` writes its agent's logic this way and calls
:func:`values` for the table of v(S).

Cost has a truth the same way: :func:`expected_calls` gives the expected
number of calls of each module per episode (exact), and
:func:`completion_tokens` the expected completion tokens of one call of a
module on a profile (the generic model's text length: Monte Carlo over its
own generator, standard error stated), so the expected completion tokens of
an episode of coalition S is the sum over modules of their product.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from agentbus.sim.gateway_model import probability
from agentbus.sim.profiles import BUILTIN

#: what a right call returns; a wrong call returns ``wrong-<k>`` (k: its call number)
RIGHT = "right"

Ask = Callable[[str], str]
Logic = Callable[[Ask], "str | None"]


class _Unscripted(Exception):
    """The logic made a call past the end of the verdict script: branch there."""


def _leaves(logic: Logic, p: Mapping[str, float]) -> list[tuple[float, str | None, Counter[str]]]:
    """Every verdict sequence ``logic`` can take: (probability, final answer, calls per module)."""
    out: list[tuple[float, str | None, Counter[str]]] = []
    stack: list[tuple[bool, ...]] = [()]
    while stack:
        script = stack.pop()
        weight = 1.0
        calls: Counter[str] = Counter()

        def ask(module: str, script: tuple[bool, ...] = script, calls: Counter[str] = calls) -> str:
            nonlocal weight
            made = calls.total()
            if made >= len(script):
                raise _Unscripted
            right = script[made]
            weight *= p[module] if right else 1.0 - p[module]
            calls[module] += 1
            return RIGHT if right else f"wrong-{made + 1}"

        try:
            answer = logic(ask)
        except _Unscripted:
            stack.extend(((*script, True), (*script, False)))
            continue
        if calls.total() == len(script):  # else counted on its own, shorter script
            out.append((weight, answer, calls))
    return out


def success(logic: Logic, p: Mapping[str, float]) -> float:
    """P(``logic`` returns the right answer) when each call of module m is right w.p. p[m]."""
    return sum(w for w, answer, _ in _leaves(logic, p) if answer == RIGHT)


def expected_calls(logic: Logic, p: Mapping[str, float]) -> dict[str, float]:
    """The expected number of calls of each module per episode (exact, like :func:`success`)."""
    out: dict[str, float] = {}
    for weight, _, calls in _leaves(logic, p):
        for module, n in calls.items():
            out[module] = out.get(module, 0.0) + weight * n
    return out


def completion_tokens(
    profile: str, module: str, answer: Callable[[random.Random], str], draws: int = 20_000
) -> tuple[float, float]:
    """(mean, its standard error) of a gateway answer's completion tokens.

    Monte Carlo over the generic model's own text (the profile's length for
    the module's skill, the answer line; :func:`agentbus.sim.gateway_model.answer_text`),
    with the task's true answer drawn by ``answer``. The length does not
    depend on the verdict beyond the answer value's own length.
    """
    from agentbus.core.environment import Task
    from agentbus.sim.gateway_model import answer_text
    from agentbus.sim.model import count_tokens

    rng = random.Random(f"completion-tokens:{profile}:{module}")
    hint = {"task": "t", "module": module}
    prof = BUILTIN.get(profile)
    counts = []
    for _ in range(draws):
        task = Task(id="t", env="x", instruction="", hidden={"answer": answer(rng)})
        text, _, _ = answer_text(prof, hint, task, rng, rng)
        counts.append(count_tokens(text))
    mean = sum(counts) / draws
    var = sum((c - mean) ** 2 for c in counts) / (draws - 1)
    return mean, (var / draws) ** 0.5


def values(
    logic: Logic,
    slots: Sequence[str],
    default: str = "weak",
    test: str = "strong",
) -> dict[tuple[str, ...], float]:
    """v(S) for every coalition S (the slots on ``test``, the rest on ``default``)."""
    out: dict[tuple[str, ...], float] = {}
    for k in range(len(slots) + 1):
        for coalition in itertools.combinations(slots, k):
            p = {m: probability(BUILTIN.get(test if m in coalition else default), m) for m in slots}
            out[coalition] = success(logic, p)
    return out


def shapley(v: Mapping[tuple[str, ...], float], slots: Sequence[str]) -> dict[str, float]:
    """The Shapley value of each slot from v over every coalition (slot order as ``slots``)."""
    n = len(slots)
    phi = dict.fromkeys(slots, 0.0)
    for coalition, value in v.items():
        for slot in slots:
            if slot in coalition:
                continue
            with_slot = tuple(s for s in slots if s in coalition or s == slot)
            k = len(coalition)
            weight = math.factorial(k) * math.factorial(n - k - 1) / math.factorial(n)
            phi[slot] += weight * (v[with_slot] - value)
    return phi


def print_table(v: Mapping[tuple[str, ...], float], slots: Sequence[str]) -> None:
    """Print v(S) and each slot's Shapley value: the one output every example's truth.py shares.

    Kept here so ``python examples/X/truth.py`` prints the same layout for every
    example without each repeating the loop.
    """
    for coalition, value in v.items():
        print(f"v({{{','.join(coalition)}}}) = {value:.4f}")
    for slot, value in shapley(v, slots).items():
        print(f"phi[{slot}] = {value:.4f}")


__all__ = [
    "RIGHT",
    "completion_tokens",
    "expected_calls",
    "print_table",
    "shapley",
    "success",
    "values",
]

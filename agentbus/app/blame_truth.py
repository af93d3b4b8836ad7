"""How often blame names an injected mistake, beside what chance and simple rules score.

With injected mistakes (:mod:`agentbus.sim.mistakes`) each blamed failure has
one known decisive call. A verdict is *step-correct* when it names that call
and *module-correct* when it names that call's module. The same two scores
are given to four rules that need no replay, so that a figure can be read
against what it must beat: step 0 (the first call), a random call, the
earliest rolled mistake and a random rolled mistake. Each score carries a
95% Wilson interval. A rule beats another when its interval lies above the
other's: that is what :func:`beats` checks, and what the CI test asks of blame
against every baseline.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scipy.stats import binomtest

#: the rules scored beside blame
BASELINES = ("step 0", "random call", "earliest mistake", "random mistake")

Pick = Callable[[Mapping[str, Any], random.Random], int | None]


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The 95% Wilson interval of ``hits`` of ``n`` ((0, 1) when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    ci = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def _random_mistake(e: Mapping[str, Any], rng: random.Random) -> int | None:
    wrong = list(e.get("mistakes") or ())
    return rng.choice(wrong) if wrong else None


RULES: dict[str, Pick] = {
    "blame": lambda e, rng: e.get("step") if e.get("status") == "decisive" else None,
    "step 0": lambda e, rng: 0,
    "random call": lambda e, rng: rng.randrange(len(e["call_slots"])) if e["call_slots"] else None,
    "earliest mistake": lambda e, rng: min(e["mistakes"]) if e.get("mistakes") else None,
    "random mistake": _random_mistake,
}


def one_injected(e: Mapping[str, Any]) -> int | None:
    """The truth of a verdict with exactly one injected mistake: that call."""
    found = e.get("injected") or []
    return int(found[0]) if len(found) == 1 else None


def verdicts_of(entries: Sequence[Mapping[str, Any]]) -> Pick:
    """A rule that names what another blame method's verdicts named, episode by episode.

    How a second decision rule (the previous one, the first flip, ...) run on
    the same failures is scored beside blame: it is one more method, judged
    by the same truth and the same bar.
    """
    by_episode = {str(e.get("episode_id")): e for e in entries}

    def pick(e: Mapping[str, Any], rng: random.Random) -> int | None:
        return RULES["blame"](by_episode.get(str(e.get("episode_id")), {}), rng)

    return pick


def score(
    entries: Sequence[Mapping[str, Any]],
    truth: Callable[[Mapping[str, Any]], int | None] = one_injected,
    seed: int = 0,
    others: Mapping[str, Pick] | None = None,
) -> dict[str, Any] | None:
    """Step and module accuracy of blame and each baseline on the entries with a known truth.

    ``others`` adds methods by name (:func:`verdicts_of` for another rule's verdicts).
    """
    known = [(e, t) for e in entries if "call_slots" in e and (t := truth(e)) is not None]
    if not known:
        return None
    out: dict[str, Any] = {"episodes": len(known), "rules": {}}
    for name, pick in {**RULES, **(others or {})}.items():
        rng = random.Random(f"blame-truth:{seed}:{name}")
        step_hits = module_hits = named = 0
        for e, t in known:
            chosen = pick(e, rng)
            named += chosen is not None
            slots = e["call_slots"]
            step_hits += chosen == t
            module_hits += chosen is not None and chosen < len(slots) and slots[chosen] == slots[t]
        n = len(known)
        out["rules"][name] = {
            "step": [step_hits, n, *wilson(step_hits, n)],
            "module": [module_hits, n, *wilson(module_hits, n)],
            #: failures in which the rule named a call at all (blame may say none)
            "named": named,
        }
    return out


def beats(scored: Mapping[str, Any], rule: str, other: str, what: str = "step") -> bool:
    """Whether ``rule``'s 95% interval lies wholly above ``other``'s (for ``what``)."""
    mine, theirs = scored["rules"][rule][what], scored["rules"][other][what]
    return bool(mine[2] > theirs[3])


#: the step accuracy a blame method must reach on injected failures (each setting)
BAR = 0.8


def pooled(scored: Sequence[Mapping[str, Any]], rule: str) -> tuple[int, int]:
    """A rule's step hits and failures over several :func:`score` results."""
    return (
        sum(int(s["rules"][rule]["step"][0]) for s in scored),
        sum(int(s["rules"][rule]["step"][1]) for s in scored),
    )


def shortfalls(one: Mapping[str, Any], two: Mapping[str, Any], method: str) -> list[str]:
    """Why ``method`` fails the injected truth (empty: it passes), one reason per check.

    ``one`` and ``two`` are :func:`score` results of the one- and a
    two-mistake run. A method passes when it names the injected call in at
    least :data:`BAR` of the failures of each, and its 95% Wilson interval
    over both lies above those of step 0 and of a random call. With two
    mistakes a random rolled mistake is the wrong one about half the time;
    in the one-mistake runs of a near-perfect agent the only rolled mistake
    is the injected one, so the earliest (or a random) mistake is the truth
    itself there.
    """
    out: list[str] = []
    for label, scored in (("one mistake", one), ("two mistakes", two)):
        k, n = scored["rules"][method]["step"][:2]
        if k < BAR * n:
            out.append(f"{label}: {method} named the injected call in {k} of {n} (< {BAR:g})")
    low = wilson(*pooled((one, two), method))[0]
    for chance in ("step 0", "random call"):
        high = wilson(*pooled((one, two), chance))[1]
        if chance == method or low <= high:
            out.append(
                f"{method}'s 95% interval (from {100 * low:.0f}%) does not lie above "
                f"{chance}'s (to {100 * high:.0f}%)"
            )
    return out


def truth_lines(scored: Mapping[str, Any] | None) -> list[str]:
    """The injected-truth table: each rule's step and module accuracy with its interval."""
    if scored is None:
        return []
    lines = [
        f"injected-mistake truth ({scored['episodes']} failures with one known decisive call):",
        f"  {'rule':<17} {'step':<10} {'acc':>6}  {'95% Wilson':<12}   {'module':<10} "
        f"{'acc':>6}  95% Wilson",
    ]
    for name, r in scored["rules"].items():
        cells = []
        for what in ("step", "module"):
            k, n, lo, hi = r[what]
            cells.append(
                f"{k:>4}/{n:<4} {100 * k / n:>5.1f}% [{100 * lo:>3.0f}, {100 * hi:>3.0f}]%"
            )
        lines.append(f"  {name:<17} {cells[0]:>30} {cells[1]:>30}")
    b = scored["rules"]["blame"]
    if "named" in b:  # (a blame.json written before the count was kept has none)
        lines.append(
            f"  blame named a call in {b['named']} of {scored['episodes']} failures; "
            f"the injected one in {b['step'][0]} of those {b['named']}"
        )
    return lines


__all__ = [
    "BAR",
    "BASELINES",
    "RULES",
    "beats",
    "one_injected",
    "pooled",
    "score",
    "shortfalls",
    "truth_lines",
    "verdicts_of",
    "wilson",
]

"""Continue a stored truth table over more seeds, exactly as if made in one go.

A table holds, per coalition, the mean of its block means and the
covariance of those means, over ``n`` independent blocks (generator seeds).
That is enough to pool it with a second table over the following seeds: the
pooled mean is the block-weighted mean, and the pooled sample covariance of
the block means is the two groups' sums of squares plus the between-group
term (the parallel form of Welford's update). The result equals, to rounding,
the table one computation over all the seeds would have made, so a table can
grow over several sessions without repeating the CPU-hours already spent.
"""

from __future__ import annotations

import math

import numpy as np

from agentbus.core.errors import UserError
from agentbus.sim.truth.table import CoalitionValue, Extension, TruthTable


def blocks(table: TruthTable) -> int:
    """How many seeds (blocks) a table's means are over."""
    first, last = table.provenance.seeds
    return last - first


def _same_game(old: TruthTable, new: TruthTable) -> list[str]:
    """Why ``new`` is not a continuation of ``old`` (empty when it is)."""
    a, b = old.provenance, new.provenance
    problems = []
    for name, x, y in (
        ("env", old.env, new.env),
        ("default model", old.default, new.default),
        ("test model", old.test, new.test),
        ("slots", old.slots, new.slots),
        ("agent", a.agent, b.agent),
        ("tasks per seed", a.tasks_per_seed, b.tasks_per_seed),
        ("max steps", a.max_steps_effective, b.max_steps_effective),
        ("temperature", a.temperature, b.temperature),
        ("sampling", a.sampling, b.sampling),
    ):
        if x != y:
            problems.append(f"{name} {x!r} vs {y!r}")
    for name, t in (("stored", old), ("new", new)):
        p = t.provenance
        if p.tasks != blocks(t) * p.tasks_per_seed:
            problems.append(f"the {name} table's seeds [{p.seeds[0]}, {p.seeds[1]}) have gaps")
    if b.seeds[0] != a.seeds[1]:
        problems.append(f"seeds do not follow on: [{a.seeds[0]}, {a.seeds[1]}) then {b.seeds[0]}")
    return problems


def extend(old: TruthTable, new: TruthTable) -> TruthTable:
    """``old`` continued by ``new`` (made over the seeds right after ``old``'s)."""
    problems = _same_game(old, new)
    if problems:
        raise UserError("cannot extend the truth table: " + "; ".join(problems))
    n1, n2 = blocks(old), blocks(new)
    if n2 == 0:
        return old
    n = n1 + n2
    keys = list(old.values)
    m1 = np.array([old.values[k].mean for k in keys])
    m2 = np.array([new.values[k].mean for k in keys])
    # stored covariance is that of the mean (sample covariance / n): undo, pool, redo
    s1 = np.asarray(old.covariance) * n1
    s2 = np.asarray(new.covariance) * n2
    s1 = np.where(np.isfinite(s1), s1, 0.0) if n1 < 2 else s1
    s2 = np.where(np.isfinite(s2), s2, 0.0) if n2 < 2 else s2
    d = m1 - m2
    pooled = ((n1 - 1) * s1 + (n2 - 1) * s2 + (n1 * n2 / n) * np.outer(d, d)) / (n - 1)
    cov = pooled / n
    mean = (n1 * m1 + n2 * m2) / n
    values = {
        k: CoalitionValue(
            mean=float(mean[i]),
            se=math.sqrt(max(0.0, float(cov[i][i]))),
            tasks=old.values[k].tasks + new.values[k].tasks,
        )
        for i, k in enumerate(keys)
    }
    a, b = old.provenance, new.provenance
    # the new part's own provenance, in the fields an extension records
    part = Extension.model_validate(b.model_dump(include=set(Extension.model_fields)))
    provenance = a.model_copy(
        update={
            "seeds": (a.seeds[0], b.seeds[1]),
            "tasks": a.tasks + b.tasks,
            "episodes": a.episodes + b.episodes,
            "seconds": round(a.seconds + b.seconds, 1),
            "extensions": (*a.extensions, part),
        }
    )
    return old.model_copy(
        update={"values": values, "covariance": cov.tolist(), "provenance": provenance}
    )


__all__ = ["blocks", "extend"]

"""Make a truth table: run the reference computation and record how it was made."""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Callable
from pathlib import Path

from agentbus.core import registry
from agentbus.sim.truth.reference import (
    Setting,
    Sums,
    coalition_keys,
    compute,
    covariance,
    summarise,
)
from agentbus.sim.truth.table import CoalitionValue, Provenance, TruthTable

#: sampling every reference episode uses (the simulator's answers are then a
#: function of model and prompt, which is what makes the cache exact)
SAMPLING = {"temperature": 0.0, "max_tokens": 512, "seed": None}


def code_version() -> str:
    """The git commit of this checkout (``+dirty`` when files differ), or ``unknown``."""
    root = Path(__file__).resolve().parents[3]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{commit}+dirty" if dirty else commit


def effective_max_steps(setting: Setting) -> int | None:
    if setting.max_steps is not None:
        return setting.max_steps
    env_cls = registry.get("environments", setting.env)
    steps = getattr(env_cls, "default_max_steps", None)
    return int(steps) if steps is not None else None


def to_table(
    setting: Setting,
    sums: Sums,
    *,
    first_seed: int,
    seeds: int,
    command: str,
    workers: int,
) -> TruthTable:
    """The table of a finished computation, with its provenance."""
    slots, _ = coalition_keys(setting.agent)
    stats = summarise(sums)
    tasks = max(s.tasks for s in stats.values())
    return TruthTable(
        env=setting.env,
        default=setting.default,
        test=setting.test,
        slots=slots,
        values={
            key: CoalitionValue(mean=s.mean, se=s.se, tasks=s.tasks) for key, s in stats.items()
        },
        covariance=covariance(sums),
        provenance=Provenance(
            command=command,
            code_version=code_version(),
            created=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            seeds=(first_seed, first_seed + seeds),
            tasks_per_seed=setting.per_seed,
            tasks=tasks,
            episodes=sums.episodes,
            temperature=0.0,
            sampling=dict(SAMPLING),
            max_steps=setting.max_steps,
            max_steps_effective=effective_max_steps(setting),
            agent=setting.agent,
            seconds=round(sums.seconds, 1),
            workers=workers,
        ),
    )


def make(
    setting: Setting,
    *,
    first_seed: int,
    seeds: int,
    workers: int,
    command: str,
    progress: Callable[[Sums], None] | None = None,
    deadline: float | None = None,
) -> TruthTable:
    """Run the reference computation over ``seeds`` blocks and build its table.

    With a ``deadline`` the table covers the seeds finished by then (the
    provenance records exactly which).
    """
    sums = compute(
        setting,
        list(range(first_seed, first_seed + seeds)),
        workers=workers,
        progress=progress,
        deadline=deadline,
    )
    done = sorted(sums.blocks)
    # chunks finish out of order; keep the stored seed range honest
    first, last = (done[0], done[-1] + 1) if done else (first_seed, first_seed)
    return to_table(
        setting,
        sums,
        first_seed=first,
        seeds=last - first,
        command=command,
        workers=workers,
    )


__all__ = ["SAMPLING", "code_version", "make", "to_table"]

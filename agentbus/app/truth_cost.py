"""``python -m agentbus.truth_cost``: the simulator's cost truth, made, shown and compared.

The sibling of ``python -m agentbus.truth`` for what episodes use rather than
what they score (:mod:`agentbus.sim.truth.cost`: expected prompt and
completion tokens per episode, and their cost at list prices with no
prompt-cache discount, per coalition, by the reward tables' Monte Carlo).

``make``   run the reference computation (``--tasks``, ``--workers``, ``--minutes``)
           and store the table in ``agentbus/sim/truth/data/cost``;
``show``   print it: each quantity per coalition with its se, then the Shapley
           value of each slot with its se;
``compare RUN_DIR``
           recompute a run's cost Shapley intervals for the same quantities from
           its episodes (the run's own estimator, task-paired, no range) and say
           whether each covers the truth. The run's own cost table prices cached
           input at the cached rate, which depends on timing, so it is not
           compared: its tokens are, and the list cost follows from them.

Errors a user can fix are one line and exit status 2.
"""

from __future__ import annotations

import argparse
import itertools
import math
import shlex
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from agentbus.core.coalitions import coalition_label
from agentbus.core.environment import check_count
from agentbus.core.errors import UserError
from agentbus.core.logs import configure
from agentbus.core.record import EpisodeRecord
from agentbus.llm.prices import PriceTable
from agentbus.runs.pipes import pipe_safe
from agentbus.sim.truth import cost as costs
from agentbus.sim.truth.cost import QUANTITIES, CostTable
from agentbus.sim.truth.reference import Setting
from attribution.exact import shapley_matrix, shapley_values
from attribution.game import Game

#: reference seeds start here (the reward tables' are at 1,000,000)
FIRST_SEED = 2_000_000
UNITS = {"prompt_tokens": "tokens", "completion_tokens": "tokens", "usd": "USD"}

#: one episode's use: (task id, coalition, (prompt tokens, completion tokens, list USD))
Use = tuple[str, tuple[str, ...], tuple[float, float, float]]


def true_shapley(
    table: CostTable, quantity: str, slots: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """(phi, its se) of ``quantity`` per slot of the (sub-)game over ``slots``."""
    mat = shapley_matrix(len(slots))
    v = np.asarray(table.vector(quantity, slots))
    cov = np.asarray(table.covariance_matrix(quantity, slots))
    return mat @ v, np.sqrt(np.clip(np.einsum("ij,jk,ik->i", mat, cov, mat), 0, None))


def games(uses: Iterable[Use], slots: Sequence[str]) -> dict[str, Game]:
    """One game per quantity, as the run builds its cost game (no range, paired by task)."""
    out = {q: Game(slots, unit_interval=False) for q in QUANTITIES}
    for task, coalition, values in uses:
        for q, x in zip(QUANTITIES, values, strict=True):
            out[q].add(coalition, task, x)
    return out


def record_uses(records: Iterable[EpisodeRecord], prices: PriceTable) -> list[Use]:
    """Each coalition record's use (its per-slot tokens, priced at list price, no discount)."""
    out: list[Use] = []
    for r in records:
        if r.kind != "coalition" or not r.counts:
            continue
        setting = Setting(env="", default=r.default_model or "", test=r.test_model or "")
        usage = {s: (u.input_tokens, u.output_tokens) for s, u in r.outcome.usage.items()}
        out.append(
            (r.task_id, r.coalition, costs.episode_use(usage, set(r.coalition), setting, prices))
        )
    return out


def _fmt(quantity: str, x: float) -> str:
    if quantity == "usd":
        return f"-${-x:.6f}" if x < 0 else f"${x:.6f}"
    return f"{x:,.1f}"


def render_table(table: CostTable) -> str:
    prov = table.provenance
    priced = ", ".join(f"{m} ${i:g}/${o:g}" for m, (i, o) in prov.prices.items())
    lines = [
        f"cost truth: env {table.env}, default {table.default}, test {table.test}",
        f"reference computation: {prov.tasks} tasks per coalition ({prov.seeds[1] - prov.seeds[0]}"
        f" seeds x {prov.tasks_per_seed}), made {prov.created} at {prov.code_version[:12]}",
        f"per episode, every call of each module (cache-shared calls included); usd: "
        f"{prov.usd_meaning} ({priced} per million in/out)",
        f"se: {prov.se_meaning}",
        "",
        f"{'coalition':<40} {'prompt':>10} {'se':>7} {'completion':>10} {'se':>6} "
        f"{'usd':>10} {'se':>9}",
    ]
    for key in table.values["usd"]:
        row = [table.values[q][key] for q in QUANTITIES]
        lines.append(
            f"{coalition_label(key):<40} {row[0].mean:10.1f} {row[0].se:7.1f} "
            f"{row[1].mean:10.1f} {row[1].se:6.1f} {row[2].mean:10.6f} {row[2].se:9.6f}"
        )
    lines += ["", f"{'Shapley':<12} " + " ".join(f"{q:>20} {'se':>9}" for q in QUANTITIES)]
    phis = {q: true_shapley(table, q, table.slots) for q in QUANTITIES}
    for i, slot in enumerate(table.slots):
        cells = [f"{_fmt(q, phis[q][0][i]):>20} {_fmt(q, phis[q][1][i]):>9}" for q in QUANTITIES]
        lines.append(f"{slot:<12} " + " ".join(cells))
    return "\n".join(lines)


def render_compare(run_dir: Path) -> tuple[str, int]:
    """A run's cost Shapley intervals next to the truth: (text, intervals missing it)."""
    from agentbus.app.blame import load_records

    records = load_records(run_dir)
    first = next((r for r in records if r.kind == "coalition"), None)
    if first is None or first.env is None:
        raise UserError(f"{run_dir} holds no coalition episodes")
    slots = tuple(first.slots)
    table = costs.load(first.env, first.default_model or "", first.test_model or "")
    found = games(record_uses(records, PriceTable()), slots)
    lines = [f"run {run_dir}: env {first.env}, {first.default_model} vs {first.test_model}"]
    misses = 0
    for q in QUANTITIES:
        est = shapley_values(found[q])
        truth, _ = true_shapley(table, q, slots)
        lines += ["", f"  {q:<10} {'estimate':>12} {'95% interval':>28} {'truth':>12}  covers"]
        for i, slot in enumerate(slots):
            low, high = float(est.ci_low[i]), float(est.ci_high[i])
            covered = low <= truth[i] <= high
            misses += not covered
            interval = f"[{_fmt(q, low)}, {_fmt(q, high)}]"
            lines.append(
                f"  {slot:<10} {_fmt(q, est.values[i]):>12} {interval:>28} "
                f"{_fmt(q, truth[i]):>12}  {'yes' if covered else 'NO'}"
            )
    return "\n".join(lines), misses


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m agentbus.truth_cost",
        description="The simulator's expected tokens and list cost per coalition.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make", help="compute and store the cost truth of one game")
    show = sub.add_parser("show", help="print the stored cost truth of one game")
    for s, (flag, default) in itertools.product(
        (make, show), (("--env", "math"), ("--default", "sim:weak"), ("--test", "sim:strong"))
    ):
        s.add_argument(flag, default=default)
    make.add_argument("--tasks", type=int, default=3000, help="tasks per coalition")
    make.add_argument("--first-seed", type=int, default=FIRST_SEED)
    make.add_argument("--workers", type=int, default=1, help="processes")
    make.add_argument("--minutes", type=float, help="start no new seeds after this long")
    make.add_argument("--out", help="directory for the table (default: the package's)")
    c = sub.add_parser("compare", help="a run's cost Shapley intervals next to the truth")
    c.add_argument("run_dir", type=Path)
    return p


def _make(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from agentbus.sim.truth.make import code_version
    from agentbus.sim.truth.reference import compute

    check_count(args.tasks)
    if not 1 <= args.workers <= 64:
        raise UserError(f"--workers must be 1-64 (got {args.workers})")
    setting = Setting(env=args.env, default=args.default, test=args.test, per_seed=30)
    seeds = max(2, math.ceil(args.tasks / setting.per_seed))
    deadline = time.monotonic() + 60 * args.minutes if args.minutes else None
    sums = compute(
        setting,
        list(range(args.first_seed, args.first_seed + seeds)),
        workers=args.workers,
        deadline=deadline,
        per_task=True,
    )
    command = "python -m agentbus.truth_cost " + " ".join(shlex.quote(a) for a in argv)
    table = costs.build(setting, sums, PriceTable(), command=command, code_version=code_version())
    out = costs.write(table, Path(args.out) if args.out else None)
    print(f"{render_table(table)}\n\nstored {out}")
    return 0


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    configure("warning")
    try:
        if args.command == "make":
            return _make(args, argv)
        if args.command == "show":
            print(render_table(costs.load(args.env, args.default, args.test)))
            return 0
        if not args.run_dir.is_dir():
            raise UserError(f"run directory {str(args.run_dir)!r} does not exist")
        text, _ = render_compare(args.run_dir)
        print(text)
        return 0
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

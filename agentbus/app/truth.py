"""``python -m agentbus.truth``: the simulator's known truth, made, shown and compared.

The simulated LLM's skills are set by its profiles, so the value of every
coalition is a fixed number; ``agentbus.sim.truth`` estimates it by a large
reference computation and stores it. This command is the application layer
around it (it may import ``attribution``, which turns v(S) into exact
Shapley and Banzhaf values):

``make``
    run the reference computation for one environment and model pair and
    store the table inside the package (``agentbus/sim/truth/data``)::

        python -m agentbus.truth make --env math --default sim:weak --test sim:strong \\
            --tasks 9600 --workers 2

    ``--extend`` continues the stored table over ``--tasks`` more tasks, on the
    seeds after its last, pooled exactly as if made in one go (the table
    records each part's command, code version and date).

``show``
    print a stored table: v(S) per coalition with its standard error, and
    phi (Shapley, Banzhaf) per slot; ``--slots planning,action`` shows the
    sub-game with the other slots on the default model.

``compare RUN_DIR``
    print what a run estimated next to the truth: each coalition's z-score,
    two joint tests (max |z|; the common shift of all coalitions), thresholds
    simulated from the table at the run's size so the stated 1% holds at 2
    tasks as at 30 (``--fail-on-drift``: exit 1 when either flags), and
    whether each 95% interval of phi covers the truth.

Errors a user can fix (no table for that pair, not a run directory): one line, exit 2.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from agentbus.core.coalitions import coalition_label
from agentbus.core.environment import check_count
from agentbus.core.errors import UserError
from agentbus.core.logs import configure
from agentbus.runs.pipes import pipe_safe
from agentbus.sim.truth import table as tables
from agentbus.sim.truth.drift import drift
from agentbus.sim.truth.table import TruthTable
from attribution.exact import banzhaf_matrix, shapley_matrix

KINDS = ("shapley", "banzhaf")
#: seeds of the reference computation start here, far from the seeds runs use
FIRST_SEED = 1_000_000

#: environments whose generators pick a task's kind (or level) from its index, so a
#: run's size changes its mix of tasks; navigation, ticket and tools draw every task
#: independently from the same distribution, and in math, git, robot, atp and os
#: every first T tasks are a random sample of the table's 30-task block (issue 42),
#: so their truth holds at any size
CYCLING = frozenset({"shopping"})


def true_values(table: TruthTable, slots: Sequence[str] | None = None) -> dict[str, Any]:
    """v, phi and the standard error of phi for the (sub-)game over ``slots``."""
    order = tuple(slots) if slots else table.slots
    v = np.asarray(table.vector(order))
    cov = np.asarray(table.covariance_matrix(order))
    out: dict[str, Any] = {"slots": order, "v": v}
    for kind in KINDS:
        mat = shapley_matrix(len(order)) if kind == "shapley" else banzhaf_matrix(len(order))
        out[kind] = mat @ v
        out[f"{kind}_se"] = np.sqrt(np.clip(np.einsum("ij,jk,ik->i", mat, cov, mat), 0, None))
    return out


def render_table(table: TruthTable, slots: Sequence[str] | None = None) -> str:
    """The true table as text: v(S) per coalition, then phi per slot."""
    truth = true_values(table, slots)
    order: tuple[str, ...] = truth["slots"]
    prov = table.provenance
    lines = [
        f"true values: env {table.env}, default {table.default}, test {table.test}"
        + (f", slots {','.join(order)}" if slots else ""),
        f"reference computation: {prov.tasks} tasks per coalition ({prov.seeds[1] - prov.seeds[0]} "
        f"seeds x {prov.tasks_per_seed}), temperature {prov.temperature:g}, "
        f"max steps {prov.max_steps_effective}, made {prov.created} at {prov.code_version[:12]}"
        + "".join(
            f"; seeds {e.seeds[0]}-{e.seeds[1] - 1} added {e.created} at {e.code_version[:12]}"
            for e in prov.extensions
        ),
        f"se: {prov.se_meaning}",
        *([f"note: {prov.derived}"] if prov.derived else []),
        *([f"reason: {prov.reason}"] if prov.reason else []),
        "",
        f"{'coalition':<40} {'v(S)':>7} {'se':>7}",
    ]
    canon = tuple(s for s in table.slots if s in set(order))
    for key, value in table.restrict(canon).items():
        lines.append(f"{coalition_label(key):<40} {value.mean:7.3f} {value.se:7.4f}")
    lines += ["", f"{'slot':<12} {'Shapley':>8} {'se':>7} {'Banzhaf':>8} {'se':>7}"]
    for i, slot in enumerate(order):
        lines.append(
            f"{slot:<12} {truth['shapley'][i]:8.3f} {truth['shapley_se'][i]:7.4f} "
            f"{truth['banzhaf'][i]:8.3f} {truth['banzhaf_se'][i]:7.4f}"
        )
    total = float(truth["v"][-1] - truth["v"][0])
    phi_sum = float(np.sum(truth["shapley"]))
    lines.append(f"{'sum':<12} {phi_sum:8.3f}   (v(N) - v(empty) = {total:.3f})")
    return "\n".join(lines)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} does not hold a JSON object")
    return data


def _run_config(run_dir: Path) -> dict[str, Any]:
    manifest = run_dir / "manifest.json"
    if not manifest.is_file():
        return {}
    config = _read_json(manifest).get("config")
    return config if isinstance(config, dict) else {}


def _caveats(config: dict[str, Any], table: TruthTable) -> list[str]:
    """Ways the run differs from the setting the truth was computed for."""
    prov = table.provenance
    notes: list[str] = []
    if config.get("dataset"):
        notes.append(
            f"the run used the dataset {config['dataset']}; the truth is for the built-in "
            "generator's tasks, so it does not apply to this run"
        )
    elif config.get("tasks") not in (None, prov.tasks_per_seed) and table.env in CYCLING:
        notes.append(
            f"the run has {config.get('tasks')} generated tasks; the truth is for runs of "
            f"{prov.tasks_per_seed}; the {table.env} generator cycles task kinds with the task "
            "index, so a run of another size draws another mix of tasks and the comparison "
            "is approximate at best"
        )
    sampling = ((config.get("llm") or {}).get("sampling")) or {}
    temperature = sampling.get("temperature", 0.0)
    if temperature not in (None, 0, 0.0):
        notes.append(f"the run sampled at temperature {temperature}; the truth is at 0")
    if config.get("max_steps") not in (None, prov.max_steps):
        notes.append(f"the run allowed {config['max_steps']} steps; the truth {prov.max_steps}")
    if config.get("modules") or config.get("agent", "praf") != prov.agent:
        notes.append("the run's agent differs from the PRAF agent the truth is for")
    if (config.get("sim") or {}).get("profiles"):
        notes.append("the run overrides sim profiles; the truth is for the built-in ones")
    return notes


def _run_means(rows: dict[str, Any], keys: Sequence[str]) -> dict[str, tuple[int, float]]:
    """{coalition: (tasks, mean)} from a results.json's coalition rows."""
    run: dict[str, tuple[int, float]] = {}
    for key in keys:
        row = rows.get(key) or {}
        n, mean = row.get("n"), row.get("mean")
        if isinstance(n, int) and isinstance(mean, int | float):
            run[key] = (n, float(mean))
    return run


def drift_lines(
    table: TruthTable, run: dict[str, tuple[int, float]], keys: Sequence[str], applies: bool
) -> tuple[list[str], bool]:
    """Each coalition's z and the joint test (see :mod:`agentbus.sim.truth.drift`).

    ``run``: {coalition: (tasks, mean)}; ``applies``: the run is of the table's kind
    (no caveat), so the joint test gives a verdict. Returns (lines, drift flagged).
    """
    result = drift(table, run, keys)
    lines = [f"  {'coalition':<40} {'n':>4} {'run':>7} {'truth':>7} {'sd':>7} {'z':>6}"]
    for r in result.rows:
        lines.append(
            f"  {coalition_label(r.key):<40} {r.n:>4} {r.mean:7.3f} {r.truth:7.3f} "
            f"{r.sd:7.4f} {r.z:+6.2f}"
        )
    if not result.rows:
        return [*lines, "  joint test: no coalition of the run has a mean"], False
    alarm = applies and result.alarm
    verdict = (
        "DRIFT: the run is not a draw from this table"
        if alarm
        else "no drift"
        if applies
        else "no verdict: the run differs from the truth's setting (notes above)"
    )
    lines.append(
        f"  joint test over {len(result.rows)} coalitions: max |z| "
        f"{result.max_z:.2f} (flagged above {result.threshold:.2f}); mean shift "
        f"{result.shift:+.3f}, z {result.shift_z:+.2f} (flagged above "
        f"{result.shift_threshold:.2f}); thresholds from {result.simulated:,} runs of the "
        f"run's size (n) simulated from the table, false-alarm rate {result.measured_rate:.2%} "
        f"(at most {result.alpha:.0%}): {verdict}"
    )
    return lines, alarm


def render_compare(run_dir: Path) -> tuple[str, int, int]:
    """The run's estimates next to the truth.

    Returns (text, intervals not covering the truth, joint tests that flag drift).
    """
    if not run_dir.is_dir():
        raise UserError(f"run directory {str(run_dir)!r} does not exist or is not a directory")
    results_path = run_dir / "results.json"
    if not results_path.is_file():
        raise UserError(f"no results.json in {str(run_dir)!r}: not a finished run directory")
    results = _read_json(results_path)
    env, default = results.get("env"), results.get("default_model")
    models = results.get("models")
    slots = results.get("slots")
    if not (isinstance(env, str) and isinstance(default, str) and isinstance(models, dict)):
        raise UserError(f"{results_path} lacks env, default_model or models")
    config = _run_config(run_dir)
    lines: list[str] = [f"run {run_dir}: env {env}, default {default}"]
    misses = alarms = 0
    for test, model in models.items():
        table = tables.load(env, default, str(test))
        order = tuple(slots) if isinstance(slots, list) else table.slots
        truth = true_values(table, order)
        canon = tuple(s for s in table.slots if s in set(order))
        lines += ["", f"test {test}  (truth: {table.provenance.tasks} reference tasks)"]
        notes = _caveats(config, table)
        lines += [f"  note: {note}" for note in notes]
        run_coalitions = model.get("coalitions") or {}
        keys = list(table.restrict(canon))
        found, alarm = drift_lines(table, _run_means(run_coalitions, keys), keys, applies=not notes)
        lines += found
        alarms += alarm
        for kind in KINDS:
            est = model.get(kind) or {}
            lines += [
                "",
                f"  {kind:<12} {'estimate':>9} {'95% interval':>20} {'truth':>7}  covers",
            ]
            for i, slot in enumerate(order):
                true = float(truth[kind][i])
                got = est.get(slot) or {}
                numbers = [got.get(k) for k in ("value", "ci_low", "ci_high")]
                if not all(isinstance(x, int | float) for x in numbers):
                    lines.append(f"  {slot:<12} {'not estimable':>30} {true:7.3f}  -")
                    continue
                estimate, low, high = (float(x) for x in numbers)  # type: ignore[arg-type]
                covered = low <= true <= high
                misses += not covered
                interval = f"[{low:+.3f}, {high:+.3f}]"
                lines.append(
                    f"  {slot:<12} {estimate:+9.3f} {interval:>20} {true:+7.3f}  "
                    f"{'yes' if covered else 'NO'}"
                )
    return "\n".join(lines), misses, alarms


def _make(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from agentbus.sim.truth.extend import extend
    from agentbus.sim.truth.make import make
    from agentbus.sim.truth.reference import Setting, Sums, summarise

    check_count(args.tasks)
    check_count(args.tasks_per_seed, "--tasks-per-seed")
    if not 1 <= args.workers <= 64:
        raise UserError(f"--workers must be 1-64 (got {args.workers})")
    seeds = max(2, math.ceil(args.tasks / args.tasks_per_seed))
    setting = Setting(
        env=args.env,
        default=args.default,
        test=args.test,
        per_seed=args.tasks_per_seed,
        max_steps=args.max_steps,
    )
    started = time.perf_counter()

    def progress(sums: Sums) -> None:
        done = len(sums.blocks)
        worst = max((s.se for s in summarise(sums).values()), default=math.inf)
        rate = sums.episodes / max(1e-9, time.perf_counter() - started)
        print(
            f"{done}/{seeds} seeds, {sums.episodes} episodes, {rate:.0f} episodes/s, "
            f"max se {worst:.4f}",
            file=sys.stderr,
            flush=True,
        )

    command = "python -m agentbus.truth " + " ".join(shlex.quote(a) for a in argv)
    directory = Path(args.out) if args.out else None
    target = tables.table_path(args.env, args.default, args.test, directory)
    reason = (args.reason or "").strip() or None
    if args.extend and reason:
        raise UserError("--extend adds seeds to the same estimand; it takes no --reason")
    if not args.extend and target.exists() and reason is None:
        raise UserError(
            f"{target} exists: replacing a stored table needs --reason saying why "
            "(it is kept in the table's provenance)"
        )
    stored = None
    first_seed = args.first_seed
    if args.extend:
        if args.first_seed != FIRST_SEED:
            raise UserError("--extend continues after the stored seeds; drop --first-seed")
        # the table in --out if there is one there, else the package's (extended into --out)
        source = directory
        if (
            directory is not None
            and not tables.table_path(args.env, args.default, args.test, directory).exists()
        ):
            source = None
        stored = tables.load(args.env, args.default, args.test, source, derive=False)
        first_seed = stored.provenance.seeds[1]
        if stored.provenance.tasks_per_seed != args.tasks_per_seed:
            raise UserError(
                f"the stored table has {stored.provenance.tasks_per_seed} tasks per seed; "
                f"--tasks-per-seed {args.tasks_per_seed} would be a different game"
            )
        if stored.provenance.max_steps != args.max_steps:
            raise UserError(
                f"the stored table was made with --max-steps {stored.provenance.max_steps}; "
                "use the same"
            )
        print(
            f"extending {tables.table_path(args.env, args.default, args.test, source)}: "
            f"{stored.provenance.tasks} tasks over seeds {stored.provenance.seeds[0]}-"
            f"{stored.provenance.seeds[1] - 1}, max se {stored.max_se:.4f}; next seed {first_seed}",
            file=sys.stderr,
            flush=True,
        )
    table = make(
        setting,
        first_seed=first_seed,
        seeds=seeds,
        workers=args.workers,
        command=command,
        progress=progress,
        deadline=time.monotonic() + 60 * args.minutes if args.minutes else None,
    )
    if stored is not None:
        table = extend(stored, table)
    elif reason is not None:
        table = table.model_copy(
            update={"provenance": table.provenance.model_copy(update={"reason": reason})}
        )
    out = tables.write(table, directory)
    print(render_table(table))
    print(f"\nstored {out} (max se {table.max_se:.4f})")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m agentbus.truth",
        description="The simulator's true coalition values, Shapley and Banzhaf values.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("make", "show"):
        s = sub.add_parser(name, help=f"{name} the true table of one environment and model pair")
        s.add_argument("--env", default="math")
        s.add_argument("--default", default="sim:weak")
        s.add_argument("--test", default="sim:strong")
        if name == "show":
            s.add_argument("--slots", help="comma-separated sub-game (others on the default)")
        else:
            s.add_argument("--tasks", type=int, default=9600, help="tasks per coalition")
            s.add_argument(
                "--tasks-per-seed", type=int, default=30, help="tasks of one run (one block)"
            )
            s.add_argument("--first-seed", type=int, default=FIRST_SEED)
            s.add_argument("--workers", type=int, default=2, help="processes")
            s.add_argument("--max-steps", type=int, default=None)
            s.add_argument(
                "--minutes",
                type=float,
                default=None,
                help="start no new seeds after this long; store what finished",
            )
            s.add_argument("--out", help="directory for the table (default: the package's)")
            s.add_argument(
                "--reason",
                help="why the table is (re)computed; required to replace a stored table",
            )
            s.add_argument(
                "--extend",
                action="store_true",
                help="continue the stored table (in --out, else the package's) over --tasks "
                "more tasks, the seeds after its last, pooled exactly as one computation",
            )
    c = sub.add_parser("compare", help="a run's estimates next to the truth")
    c.add_argument("run_dir", type=Path)
    c.add_argument(
        "--fail-on-drift",
        action="store_true",
        help="exit 1 when the joint test says the run is not a draw from the table (for CI)",
    )
    sub.add_parser("list", help="the stored tables")
    return p


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    configure("warning")  # debug lines of the LLM layer would drown the table
    try:
        if args.command == "make":
            return _make(args, argv)
        if args.command == "show":
            slots = [s.strip() for s in args.slots.split(",")] if args.slots else None
            print(render_table(tables.load(args.env, args.default, args.test), slots))
            return 0
        if args.command == "list":
            stored = tables.available()
            width = max((len(t.env) for t in stored), default=0)
            for t in stored:
                print(
                    f"{t.env:<{width}} {t.default:<12} {t.test:<22} "
                    f"tasks {t.provenance.tasks:>6}  max se {t.max_se:.4f}"
                )
            bases = [t for t in stored if (t.default, t.test) == ("sim:weak", "sim:strong")]
            if bases:
                print(
                    "derived (exactly, from those): sim:weak vs sim:strong-<slot> for "
                    + ", ".join(t.env for t in bases)
                )
            return 0
        text, _, alarms = render_compare(args.run_dir)
        print(text)
        return 1 if alarms and args.fail_on_drift else 0
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

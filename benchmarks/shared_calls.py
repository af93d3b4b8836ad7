"""Shared calls: LLM calls sent vs requested, and what common random numbers do to the SEs.

Three full 16-coalition math sweeps (sim weak default, sim strong test)
through ``agentbus.app.evaluate`` against the simulator's HTTP server at speed
0 (no serving delays: calls and SEs do not depend on timing):

1. temperature 0, cache ``auto`` (the default): calls requested by the
   modules vs sent upstream. Target sent/requested <= 0.6.
2. temperature 0.7 with a fixed sampling seed, cache ``auto``: the seed makes
   each call deterministic, so coalitions share every call up to the first
   slot where they differ (common random numbers across coalitions).
3. temperature 0.7 without a seed: every call is an independent draw, nothing
   is shared (the cache only takes deterministic calls).
4. as 2, with the simulator's ``coupled`` verdicts: on the same prompt every
   model draws the same uniforms, so where coalitions first differ (the same
   prompt sent to the weak and to the strong model) their right/wrong draws
   are correlated too. This is a property of the simulator, not of agentbus;
   it shows what common random numbers can do when the models share them.

For 2, 3 and 4 the script prints each slot's Shapley value and its standard error
(``results.json`` ``se``, task-paired) side by side, and last the ratios of
the SEs (shared / independent; < 1 means CRN helps).

Run: ``python benchmarks/shared_calls.py [--tasks N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

# Import installed packages, never scripts that sit beside this file.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from rich.console import Console  # noqa: E402

from agentbus.app.config import build_config  # noqa: E402
from agentbus.app.evaluate import RunReport, evaluate  # noqa: E402

SLOTS = ("planning", "reasoning", "action", "reflection")
TEST = "sim:strong"


async def sweep(
    tasks: int,
    run_dir: Path,
    sampling: dict[str, Any],
    coupled: bool = False,
    plots: bool = True,
) -> tuple[RunReport, float]:
    config = build_config(
        {
            "env": "math",
            "tasks": tasks,
            "default": "sim:weak",
            "test": [TEST],
            "progress": "off",
            "run_dir": str(run_dir),
            "sim": {"speed": 0, "coupled": coupled},
            "llm": {"sampling": sampling},
            "plots": plots,
        }
    )
    t0 = time.perf_counter()
    report = await evaluate(config, Console(quiet=True))
    return report, time.perf_counter() - t0


def calls_line(name: str, report: RunReport, seconds: float) -> tuple[float, str]:
    total = report.results["llm"]["total"]
    ratio = total["sent"] / total["requested"]
    per_model = ", ".join(
        f"{m} {s['sent']}/{s['requested']}" for m, s in report.results["llm"]["models"].items()
    )
    return ratio, (
        f"  {name}: {report.episodes_run} episodes in {seconds:.1f} s; requested "
        f"{total['requested']}, sent {total['sent']} ({ratio:.2f}; {total['cache_hits']} "
        f"cache hits, {total['coalesced']} coalesced; sent/requested per model: {per_model})"
    )


async def main(tasks: int, seed: int, plots: bool = True) -> None:
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"full 16-coalition math sweep, {tasks} tasks, sim weak vs sim strong")
        t0_report, t0_s = await sweep(tasks, root / "t0", {"temperature": 0.0}, plots=plots)
        t0_ratio, line = calls_line("temperature 0", t0_report, t0_s)
        print(line)
        shared, sh_s = await sweep(
            tasks, root / "shared", {"temperature": 0.7, "seed": seed}, plots=plots
        )
        _, line = calls_line(f"T=0.7 seed {seed} (shared)", shared, sh_s)
        print(line)
        indep, in_s = await sweep(tasks, root / "indep", {"temperature": 0.7}, plots=plots)
        _, line = calls_line("T=0.7 no seed (independent)", indep, in_s)
        print(line)
        coupled, co_s = await sweep(
            tasks, root / "coupled", {"temperature": 0.7, "seed": seed}, coupled=True, plots=plots
        )
        _, line = calls_line(f"T=0.7 seed {seed}, sim coupled (shared + CRN)", coupled, co_s)
        print(line)
    sh = shared.results["models"][TEST]["shapley"]
    ind = indep.results["models"][TEST]["shapley"]
    co = coupled.results["models"][TEST]["shapley"]
    print("Shapley value +- SE at T=0.7 (shared | independent | shared, sim coupled):")
    for slot in SLOTS:
        print(
            f"  {slot:<11} "
            + " | ".join(f"{x[slot]['value']:+.3f} +- {x[slot]['se']:.3f}" for x in (sh, ind, co))
        )
    for name, arm in (("shared", sh), ("shared, sim coupled", co)):
        ratios = [arm[slot]["se"] / ind[slot]["se"] for slot in SLOTS]
        print(
            f"ratio SE {name}/independent: "
            + ", ".join(f"{s} {r:.2f}" for s, r in zip(SLOTS, ratios, strict=True))
            + f"; mean {sum(ratios) / len(ratios):.2f}"
        )
    print(f"ratio LLM calls sent/requested at temperature 0: {t0_ratio:.2f}  (target <= 0.6)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1234, help="sampling seed of the shared sweep")
    ap.add_argument(
        "--no-plots",
        action="store_true",
        help="skip the runs' plots (their directory is deleted anyway; seconds of the smoke test)",
    )
    args = ap.parse_args()
    anyio.run(main, args.tasks, args.seed, not args.no_plots)

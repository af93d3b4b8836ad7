"""``python -m agentbus.report RUN_DIR``: rebuild the reports from the event log alone.

Reads ``RUN_DIR/events.jsonl`` (a torn last line from a crash is skipped;
any other bad line is refused, as resuming refuses it),
replays its ``episode.ended`` events through the same collector the live
service uses, and writes ``results.json``, ``results.md`` and the figures
under ``RUN_DIR/plots/``; prints the paper-layout table. A run of a user's
agent gets its agent-failure section back, and a run that stopped early or
was interrupted says so first, with the reason (:func:`run_ending`). A
missing or unreadable run directory is a one-line error and exit status 2.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console

from agentbus.app.answers import answer_markdown, answer_summary
from agentbus.core.errors import UserError
from agentbus.core.events import RUN_FINISHED, RUN_STARTED
from agentbus.core.inputs import json_object
from agentbus.runs.pipes import pipe_safe

EVENTS = "events.jsonl"


def rebuild(run_dir: Path, *, plots: bool = True, confidence: float = 0.95) -> dict[str, Any]:
    """Write results.json, results.md (and plots) for ``run_dir``; return the results."""
    from agentbus.app.summary import reward_kind
    from agentbus.runs.run_files import check_log
    from attribution.collect import collect_from_log
    from attribution.results import build_results
    from attribution.stop_interval import lead_with_stop_interval
    from attribution.tables import to_markdown

    if not run_dir.is_dir():
        raise UserError(f"run directory {str(run_dir)!r} does not exist or is not a directory")
    log = run_dir / EVENTS
    if not log.is_file():
        raise UserError(f"no {EVENTS} in {str(run_dir)!r}: not a run directory")
    if not 0.5 < confidence < 1.0:
        raise UserError(f"confidence must be between 0.5 and 1, got {confidence}")
    try:
        check_log(log)  # the resume rule: only a torn last line may be bad
        collector = collect_from_log(log)
    except OSError as exc:
        raise UserError(f"cannot read {log}: {exc.strerror or exc}") from None
    if collector.slots is None:
        raise UserError(f"{log} holds no episode.ended events with coalition data")
    config = _manifest_config(run_dir)
    shift = config.get("shift")
    adaptive = config.get("adaptive") is True
    results = build_results(
        collector,
        confidence=confidence,
        shift=shift if isinstance(shift, str) else None,
        horizon=_anytime_horizon(log) if adaptive else None,
        estimator=str(config.get("estimator") or "exact"),
    )
    results = _keep_run_metadata(run_dir / "results.json", results)
    stop = config.get("stop") or "halfwidth"
    lead_with_stop_interval(results, str(stop) if adaptive else None)
    results["cost"] = _rebuild_cost(log, collector, results, config.get("prices"))
    from agentbus.app.llm_totals import run_llm_totals

    llm = results.get("llm")
    results["llm"] = {**(llm if isinstance(llm, dict) else {}), "run": run_llm_totals(log)}
    results["answers"] = answer_summary(collector.book.records(), results.get("slots") or [])
    results["reward_kind"] = reward_kind(collector.book.records())
    _agent_figures(results, collector)
    ending = run_ending(log)
    if ending is not None:
        results["ending"] = ending
    else:
        results.pop("ending", None)
    try:
        (run_dir / "results.json").write_bytes(
            orjson.dumps(results, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
        )
        from agentbus.app.costs import cost_markdown

        # the same sections as the run wrote: the console shows cost only with --details
        markdown = to_markdown(results) + answer_markdown(results) + cost_markdown(results)
        if ending is not None:
            markdown = f"**{ending}**\n\n{markdown}"
        (run_dir / "results.md").write_text(markdown, encoding="utf-8")
        if plots:
            from attribution.plots import write_plots

            write_plots(results, run_dir / "plots")
    except OSError as exc:
        raise UserError(
            f"cannot write reports into {str(run_dir)!r}: {exc.strerror or exc}"
        ) from None
    return results


def _agent_figures(results: dict[str, Any], collector: Any) -> None:
    """A user's agent's run: its failures per kind and coalition, its gateway figures.

    The run writes them into results.json and results.md; the log holds every
    record they come from, so a rebuilt report has the same sections.
    """
    from agentbus.app import external
    from agentbus.core.record import agent_failures

    records = list(collector.book.records("coalition"))
    if not any("gateway" in r.outcome.details for r in records):
        return
    results["gateway"] = external.summary(records)
    results["agent_failures"] = agent_failures(records)


def run_ending(log: Path) -> str | None:
    """How the run in ``log`` ended when not at its end: stopped early (why), or cut off.

    ``run.finished`` carries ``stopped`` when the run stopped early (a
    misconfigured agent, an infrastructure breaker, a budget); a log whose
    last ``run.started`` has no ``run.finished`` after it was interrupted.
    None for a run that got to its end.
    """
    started = finished = False
    stopped: str | None = None
    with log.open("rb") as fh:
        for line in fh:
            if b'"run.' not in line:
                continue
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            kind = event.get("type") if isinstance(event, dict) else None
            if kind == RUN_STARTED:
                started, finished, stopped = True, False, None
            elif kind == RUN_FINISHED:
                finished = True
                stopped = str(event["stopped"]) if event.get("stopped") else None
    if stopped is not None:
        return f"stopped early: {stopped}. The tables cover the episodes that ended before."
    if started and not finished:
        return (
            "partial: the run was interrupted before its end (no run.finished in the log); "
            "the tables cover the episodes that ended. Rerun its command with the same "
            "--run-dir to finish it."
        )
    return None


def _rebuild_cost(
    log: Path, collector: Any, results: dict[str, Any], prices: Any = None
) -> dict[str, Any]:
    """The cost section from the log's records (prices as they were priced in the run).

    The billed figures are the run's call file's (every completed call of every
    process), priced with the run's price table (``prices``: its config's).
    What the log cannot give (the price table, the early projection, the
    budget) is kept from the earlier results.json.
    """
    from agentbus.app.budget import Spend
    from agentbus.app.llm_totals import whole_bill
    from agentbus.llm.prices import PriceTable
    from attribution.collect import read_records
    from attribution.cost import cost_summary

    spend = Spend()
    for record in read_records(log):
        spend.observe(record)
    try:
        table: PriceTable | None = PriceTable(prices if isinstance(prices, dict) else None)
    except UserError:
        table = None  # the run refused such prices already; keep the records' dollars
    prior = results.get("cost")
    old: dict[str, Any] = prior if isinstance(prior, dict) else {}
    cost = cost_summary(
        collector.book.records(),
        list(results.get("slots") or []),
        default_model=results.get("default_model"),
        billed=whole_bill(log.parent, spend.summary(), table),
    )
    for key in ("prices", "estimate", "budget"):
        if key in old:
            cost[key] = old[key]
    return cost


def compare(
    results: dict[str, Any],
    other: dict[str, Any],
    run_dir: Path,
    other_dir: Path,
    *,
    plots: bool = True,
) -> dict[str, Any]:
    """Compare two runs; writes RUN_DIR/comparison.json (and a radar).

    ``paired``: per slot and coalition, each run's value and their difference
    over the tasks both ran (:mod:`agentbus.runs.comparison`); beside it the
    consistency rate and correlations of the two Shapley tables, each None
    (with the reason in ``unavailable``) where it cannot be computed.
    """
    from agentbus.runs.comparison import compare_runs
    from agentbus.runs.runlog import scan
    from attribution.multi import consistency_rate, table_correlation, table_from_results

    a, b = table_from_results(results), table_from_results(other)
    corr = table_correlation(a, b)
    rate = consistency_rate(a, b)
    unavailable: dict[str, str] = {}
    if not math.isfinite(rate):
        unavailable["consistency_rate"] = (
            "needs two or more test models in both runs (it compares how each run orders them)"
        )
    cells = int(corr.get("cells", 0))
    for key in ("pearson", "spearman"):
        if not math.isfinite(corr[key]):
            unavailable[key] = (
                f"needs three or more (model, slot) cells in both runs, not all equal (has {cells})"
            )
    out: dict[str, Any] = {
        "other_run": str(other_dir),
        "default_models": [results.get("default_model"), other.get("default_model")],
        "consistency_rate": rate if math.isfinite(rate) else None,
        "pearson": corr["pearson"] if math.isfinite(corr["pearson"]) else None,
        "spearman": corr["spearman"] if math.isfinite(corr["spearman"]) else None,
        "cells": cells,
        "unavailable": unavailable,
        "paired": compare_runs(scan(run_dir), scan(other_dir)),
    }
    (run_dir / "comparison.json").write_bytes(orjson.dumps(out, option=orjson.OPT_INDENT_2))
    if plots:
        from attribution.plots import plot_radar

        tables = {f"{m} ({run_dir.name})": row for m, row in a.items()}
        tables.update({f"{m} ({other_dir.name})": row for m, row in b.items()})
        plot_radar(tables, run_dir / "plots", stem="radar_compare")
    return out


def _manifest_config(run_dir: Path) -> dict[str, Any]:
    """The run's config from its manifest ({} without a readable one)."""
    try:
        manifest = orjson.loads((run_dir / "manifest.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    config = manifest.get("config") if isinstance(manifest, dict) else None
    return config if isinstance(config, dict) else {}


def _anytime_horizon(log: Path) -> float | None:
    """The horizon an adaptive run tuned its anytime-valid intervals for.

    The live service used the run's planned size (``--max-episodes``, else the
    whole plan), which ``run.started`` states as ``total``.
    """
    from agentbus.core.events import RUN_STARTED

    marker = orjson.dumps(RUN_STARTED)
    with open(log, "rb") as fh:
        for line in fh:
            if marker not in line:
                continue
            event = json_object(line)
            if event is None or event.get("type") != RUN_STARTED:
                continue
            total = event.get("total")
            if isinstance(total, int) and total > 0:
                return float(total)
    return None


def _keep_run_metadata(path: Path, results: dict[str, Any]) -> dict[str, Any]:
    """Carry over top-level keys an earlier results.json had that the log cannot give.

    The run writes metadata (environment, LLM settings) beside the tables;
    every number is rebuilt from the log, but those descriptive keys are kept.
    """
    try:
        old = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return results
    if not isinstance(old, dict):
        return results
    extra = {k: v for k, v in old.items() if k not in results}
    return {**results, **extra}


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentbus.report",
        description="Rebuild results.json, results.md and plots from RUN_DIR/events.jsonl.",
    )
    parser.add_argument("run_dir", type=Path, help="run directory holding events.jsonl")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG/SVG figures")
    parser.add_argument("--confidence", type=float, default=0.95, help="interval level")
    parser.add_argument(
        "--quiet", action="store_true", help="do not print the table (a comparison still prints)"
    )
    parser.add_argument(
        "--details",
        action="store_true",
        help="print every table (coalitions, Banzhaf, cost) after the MVP line and phi table",
    )
    parser.add_argument(
        "--episode",
        metavar="ID",
        help="print one episode as a transcript (nothing is rebuilt); see --prompts",
    )
    parser.add_argument(
        "--prompts", action="store_true", help="with --episode: also print every prompt and answer"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="OTHER_RUN_DIR",
        help="a second run (e.g. another default model): consistency rate and correlations",
    )
    args = parser.parse_args(argv)
    if args.episode is not None:
        return _print_episode(args.run_dir, args.episode, prompts=args.prompts)
    try:
        results = rebuild(args.run_dir, plots=not args.no_plots, confidence=args.confidence)
        comparison = None
        if args.compare is not None:
            other = rebuild(args.compare, plots=False, confidence=args.confidence)
            comparison = compare(
                results, other, args.run_dir, args.compare, plots=not args.no_plots
            )
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        from agentbus.app.costs import print_budget_stop
        from agentbus.app.summary import print_summary

        console = Console(markup=False)  # text as written: "[prices]" is no markup
        from attribution.tables import agent_failure_line

        if results.get("ending"):
            console.print(results["ending"])
        print_summary(
            results, console, show_details=args.details, notes=[agent_failure_line(results)]
        )
        print_budget_stop(results, console, args.run_dir)
        console.print(f"wrote {args.run_dir / 'results.json'} and {args.run_dir / 'results.md'}")
    if comparison is not None:
        _print_comparison(comparison, args.run_dir, args.compare)
    return 0


def _print_comparison(comparison: dict[str, Any], run_dir: Path, other_dir: Path) -> None:
    """The paired comparison, then the table-level figures (never nan: the reason instead)."""
    from agentbus.runs.comparison import render_comparison

    print(render_comparison(comparison["paired"], str(run_dir), str(other_dir)))
    parts = []
    for key, label, fmt in (
        ("consistency_rate", "consistency rate", "{:.3f}"),
        ("pearson", "Pearson", "{:.3f}"),
        ("spearman", "Spearman", "{:.3f}"),
    ):
        value = comparison.get(key)
        why = comparison.get("unavailable", {}).get(key)
        parts.append(f"{label} " + (fmt.format(value) if value is not None else f"n/a ({why})"))
    print(f"Shapley tables over {comparison['cells']} cells: " + "; ".join(parts))
    print(f"wrote {run_dir / 'comparison.json'}")


def _print_episode(run_dir: Path, episode_id: str, *, prompts: bool) -> int:
    """``--episode ID``: the transcript of one episode, from the log alone."""
    from agentbus.runs.runlog import episode_event
    from agentbus.runs.transcript import render_text, transcript

    try:
        event = episode_event(run_dir, episode_id)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if event is None:
        print(
            f"error: no finished episode {episode_id!r} in {str(run_dir)!r} "
            "(python -m agentbus.export lists the ids)",
            file=sys.stderr,
        )
        return 2
    print(render_text(transcript(event), prompts=prompts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

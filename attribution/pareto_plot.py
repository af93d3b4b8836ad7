"""The accuracy-cost figure: every assignment, its front, and the ones run for real."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter


def _err(row: Mapping[str, Any]) -> tuple[float, list[list[float]]]:
    mean = float(row["mean"])
    if row.get("ci_low") is None:
        return mean, [[0.0], [0.0]]
    # clamped: matplotlib refuses a negative error bar, and a plot must not end a run
    below = max(0.0, mean - float(row["ci_low"]))
    above = max(0.0, float(row["ci_high"]) - mean)
    return mean, [[below], [above]]


def _models(results: Mapping[str, Any]) -> list[str]:
    default = results.get("default_model") or ""
    return [default, *(results.get("test_models") or [])]


def _code(results: Mapping[str, Any], point: Mapping[str, Any]) -> str:
    index = {m: str(i) for i, m in enumerate(_models(results))}
    return "".join(index.get(m, "?") for m in point["assignment"].values())


def plot_front(results: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """Write ``pareto.png`` and ``pareto.svg`` under ``out_dir``; returns the paths."""
    points = [
        p for p in results["points"] if p["acc"]["mean"] is not None and p["cost_usd"]["mean"]
    ]
    if not points:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for source, marker, color in (("measured", "o", "tab:blue"), ("predicted", "^", "tab:gray")):
        chosen = [p for p in points if p["source"] == source]
        if chosen:
            ax.scatter(
                [p["cost_usd"]["mean"] for p in chosen],
                [p["acc"]["mean"] for p in chosen],
                marker=marker,
                s=18,
                color=color,
                alpha=0.6,
                label=f"{source} by the coalition runs",
            )
    front = sorted((p for p in points if p["on_front"]), key=lambda p: p["cost_usd"]["mean"])
    ax.plot(
        [p["cost_usd"]["mean"] for p in front],
        [p["acc"]["mean"] for p in front],
        "-",
        color="tab:orange",
        label="Pareto front"
        + (
            " (figures from held-out tasks)"
            if any(p.get("estimated_on") == "held-out" for p in front)
            else ""
        ),
    )
    for p in front:
        x, xerr = _err(p["cost_usd"])
        y, yerr = _err(p["acc"])
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, color="tab:orange", alpha=0.5, capsize=2)
    for i, p in enumerate(q for q in results["chosen"] if q.get("run")):
        run = p["run"]
        x, xerr = _err(run["cost_usd"])
        y, yerr = _err(run["acc"])
        ax.errorbar(
            x,
            y,
            xerr=xerr,
            yerr=yerr,
            fmt="s",
            color="tab:red",
            capsize=3,
            label="run for real" if i == 0 else None,
        )
        ax.annotate(
            _code(results, p), (x, y), fontsize=7, xytext=(4, 4), textcoords="offset points"
        )
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"${x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(
        "cost per episode (USD, log scale); run for real: one digit per slot, "
        + ", ".join(f"{i}={m}" for i, m in enumerate(_models(results)))
    )
    ax.xaxis.label.set_fontsize(7)
    ax.set_ylabel("accuracy (success rate)")
    ax.set_title(f"Accuracy vs cost of {results['assignments']} per-slot model assignments")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    paths = [out_dir / "pareto.png", out_dir / "pareto.svg"]
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return paths

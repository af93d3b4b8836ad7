"""Figures for a results dict, as PNG and SVG (matplotlib, Agg backend).

* ``shapley.{png,svg}``: phi per slot with 95% error bars, one bar group per
  test model;
* ``coalitions.{png,svg}``: success rate of every coalition, ordered by size
  (the CapaBench paper's Figure 3), with its Wilson interval over tasks;
* ``radar.{png,svg}``: phi per slot on a radar chart, one polygon per table
  (test models, or environments when several runs are combined).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

from agentbus.core.coalitions import coalition_label

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.projections.polar import PolarAxes

from attribution.tables import ordered_keys

FORMATS = ("png", "svg")


def _save(fig: Figure, out_dir: Path, stem: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in FORMATS:
        path = out_dir / f"{stem}.{fmt}"
        fig.savefig(path, dpi=120, bbox_inches="tight")
        paths.append(path)
    plt.close(fig)
    return paths


def _run_title(results: Mapping[str, Any]) -> str:
    """``math: sim:strong vs default sim:weak`` (what the figure is about, in one line)."""
    env = results.get("env")
    models = ", ".join(results.get("models") or {}) or "no test model"
    default = results.get("default_model")
    text = f"{models} vs default {default}" if default else models
    return f"{env}: {text}" if env else text


def _value_word(results: Mapping[str, Any]) -> str:
    return "mean reward" if results.get("reward_kind") == "graded" else "success rate"


def plot_shapley(results: Mapping[str, Any], out_dir: Path, index: str = "shapley") -> list[Path]:
    """Bars of phi per slot with interval error bars, one colour per test model."""
    slots = list(results["slots"])
    models = [m for m, s in results["models"].items() if s.get(index)]
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(slots), 3.6))
    width = 0.8 / max(len(models), 1)
    x = np.arange(len(slots))
    for k, model in enumerate(models):
        rows = results["models"][model][index]
        vals = np.array([rows[s]["value"] for s in slots], dtype=float)
        low = np.array([rows[s]["ci_low"] for s in slots], dtype=float)
        high = np.array([rows[s]["ci_high"] for s in slots], dtype=float)
        ax.bar(
            x + (k - (len(models) - 1) / 2) * width,
            vals,
            width,
            yerr=np.vstack([vals - low, high - vals]),
            capsize=3,
            label=model,
        )
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xticks(x, slots)
    conf = round(100 * float(results.get("confidence", 0.95)))
    ax.set_ylabel(f"{index.capitalize()} value ({conf}% interval)")
    ax.set_title(
        f"{index.capitalize()} value of each slot ({_value_word(results)})\n{_run_title(results)}",
        fontsize="medium",
    )
    if not models:
        ax.text(0.5, 0.5, "not estimable yet", ha="center", transform=ax.transAxes)
    else:
        ax.legend(fontsize="small")
    return _save(fig, out_dir, index)


def _or(x: Any, default: float) -> float:
    return default if x is None else float(x)


def plot_coalitions(results: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """Success rate per coalition, ordered by size, one bar group per test model."""
    models = list(results["models"])
    keys = ordered_keys(
        list(results["slots"]),
        {k for m in models for k in results["models"][m].get("coalitions", {})},
    )
    fig, ax = plt.subplots(figsize=(max(4.0, 0.55 * len(keys) + 1.5), 3.8))
    width = 0.8 / max(len(models), 1)
    x = np.arange(len(keys))
    for k, model in enumerate(models):
        table = results["models"][model].get("coalitions", {})
        means = np.array([table.get(key, {}).get("mean") or 0.0 for key in keys], dtype=float)
        # the Wilson interval over tasks results.json carries (attribution.rates);
        # a results file without one gets no bar
        rows = [(table.get(key) or {}, float(m)) for key, m in zip(keys, means, strict=True)]
        low = np.array([_or(row.get("ci_low"), m) for row, m in rows])
        high = np.array([_or(row.get("ci_high"), m) for row, m in rows])
        err = np.vstack([np.maximum(means - low, 0.0), np.maximum(high - means, 0.0)])
        ax.bar(
            x + (k - (len(models) - 1) / 2) * width, means, width, yerr=err, capsize=2, label=model
        )
    ax.set_xticks(
        x, [coalition_label(key) for key in keys], rotation=60, ha="right", fontsize="small"
    )
    ax.set_ylabel(_value_word(results))
    ax.set_ylim(0, 1)
    ax.set_title(
        f"{_value_word(results).capitalize()} per coalition (slots on the test model)\n"
        f"{_run_title(results)}",
        fontsize="medium",
    )
    if models:
        ax.legend(fontsize="small")
    return _save(fig, out_dir, "coalitions")


def plot_radar(
    tables: Mapping[str, Mapping[str, float]],
    out_dir: Path,
    stem: str = "radar",
    title: str = "Shapley value per slot, compared",
) -> list[Path]:
    """Radar chart: one polygon per table (model, environment or run), axes = slots."""
    slots = sorted({s for row in tables.values() for s in row}, key=lambda s: s)
    if tables:
        first = next(iter(tables.values()))
        slots = [s for s in first] + [s for s in slots if s not in first]
    angles = np.linspace(0, 2 * np.pi, max(len(slots), 1), endpoint=False)
    fig = plt.figure(figsize=(4.5, 4.5))
    ax: PolarAxes = fig.add_subplot(projection="polar")  # type: ignore[assignment]
    for name, row in tables.items():
        vals = np.array([row.get(s, 0.0) for s in slots], dtype=float)
        ax.plot(np.append(angles, angles[:1]), np.append(vals, vals[:1]), label=name)
        ax.fill(np.append(angles, angles[:1]), np.append(vals, vals[:1]), alpha=0.15)
    ax.set_xticks(angles, slots)
    values = [v for row in tables.values() for v in row.values()]
    if values:  # negative values would wrap around the centre: start the axis below them
        ax.set_ylim(min(0.0, float(min(values))), max(float(max(values)), 0.0) * 1.1 or 1.0)
    ax.set_rlabel_position(180.0 / max(len(slots), 1))
    ax.tick_params(axis="y", labelsize="x-small")
    ax.set_title(title, fontsize="medium", pad=18)
    if tables:  # below the circle: beside it, it sat on the slot labels
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.08))
    return _save(fig, out_dir, stem)


def write_plots(results: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """Every figure for one results dict; returns the written paths."""
    from attribution.multi import table_from_results

    paths = plot_shapley(results, out_dir)
    paths += plot_shapley(results, out_dir, "banzhaf")
    paths += plot_coalitions(results, out_dir)
    tables = table_from_results(results)
    if len(tables) > 1:  # one test model: the radar would repeat shapley.png
        paths += plot_radar(tables, out_dir, title="Shapley value per slot, by test model")
    else:
        for ext in FORMATS:  # a rerun of the report must not leave an old one behind
            (out_dir / f"radar.{ext}").unlink(missing_ok=True)
    return paths

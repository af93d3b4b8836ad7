"""What blame verdicts add up to: shares per module, decisive steps, cost, truth.

A module's *share* is the fraction of the blamed episodes whose decisive call
is one of its calls. Episodes of one task are not independent units (repeats,
or several coalitions of one task), so the 95% interval is the task-clustered
Wilson interval every pass-rate table uses (:func:`attribution.rates.rate_interval`).
Episodes with no decisive single call and episodes that could not be
replayed are counted and listed, never folded into a module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from attribution.rates import rate_interval


def summarise(entries: Sequence[Mapping[str, Any]], slots: Sequence[str]) -> dict[str, Any]:
    """blame.json's content: per-module shares, step distribution, none, cost, truth."""
    replayable = [e for e in entries if e.get("status") != "not_replayable"]
    tasks = [str(e.get("task_id")) for e in replayable]
    modules: dict[str, Any] = {}
    for slot in slots:
        hits = [1.0 if e.get("slot") == slot else 0.0 for e in replayable]
        interval = rate_interval(hits, tasks)
        modules[slot] = {
            "decided": int(sum(hits)),
            "share": interval["mean"],
            "ci_low": interval["ci_low"],
            "ci_high": interval["ci_high"],
        }
    decisive = [e for e in replayable if e.get("status") == "decisive"]
    steps = Counter(int(e["step"]) for e in decisive)
    replays = [int(e.get("replays", 0)) for e in entries]
    out: dict[str, Any] = {
        "episodes": len(entries),
        "replayable": len(replayable),
        "decisive": len(decisive),
        "modules": modules,
        "steps": {str(k): steps[k] for k in sorted(steps)},
        "none": sorted(str(e["episode_id"]) for e in replayable if e.get("status") == "none"),
        "not_replayable": {
            str(e["episode_id"]): str(e.get("reason"))
            for e in entries
            if e.get("status") == "not_replayable"
        },
        "replays": sum(replays),
        "replays_per_episode": (sum(replays) / len(entries)) if entries else None,
        "probes": sum(int(e.get("probes", 0)) for e in entries),
    }
    out["truth"] = truth(replayable)
    return out


def truth(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Against the simulator's own mistakes: how often the decisive step is one of them.

    ``correct``: decisive steps that are a rolled mistake, of those whose roll
    is known; ``false_blame``: the rest. ``with_mistake``: episodes with at
    least one mistake, of which ``found`` got a decisive step at all.
    """
    known = [e for e in entries if "mistakes" in e]
    if not known:
        return None
    judged = [e for e in known if e.get("status") == "decisive" and e.get("truth") is not None]
    correct = sum(1 for e in judged if e["truth"])
    with_mistake = [e for e in known if e["mistakes"]]
    return {
        "episodes": len(known),
        "judged": len(judged),
        "correct": correct,
        "accuracy": correct / len(judged) if judged else None,
        "false_blame": (len(judged) - correct) / len(judged) if judged else None,
        "with_mistake": len(with_mistake),
        "found": sum(1 for e in with_mistake if e.get("status") == "decisive"),
        "unknown_calls": sum(int(e.get("unknown", 0)) for e in known),
    }


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def table_lines(summary: Mapping[str, Any]) -> list[str]:
    """The printed table (plain text: it also goes into blame.md as a code block)."""
    lines = [
        f"{'module':<14} {'decides':>8} {'share':>7}  95% interval (clustered by task)",
    ]
    for slot, m in summary["modules"].items():
        lines.append(
            f"{slot:<14} {m['decided']:>8} {_pct(m['share']):>7}  "
            f"[{_pct(m['ci_low'])}, {_pct(m['ci_high'])}]"
        )
    n, ok = summary["episodes"], summary["replayable"]
    none = len(summary["none"])
    lines.append(
        f"{'none':<14} {none:>8} {_pct(none / ok if ok else None):>7}  "
        "(no single repaired call flips the outcome)"
    )
    lines.append(
        f"episodes: {n} blamed, {ok} replayable, {summary['decisive']} with a decisive step"
    )
    steps = ", ".join(f"{k}:{v}" for k, v in summary["steps"].items()) or "-"
    lines.append(f"decisive step (0 = first call) -> episodes: {steps}")
    if summary["replays_per_episode"] is not None:
        lines.append(
            f"cost: {summary['replays']} replays ({summary['replays_per_episode']:.1f} per "
            f"episode, the reproduction included), {summary['probes']} single-call probes"
        )
    t = summary.get("truth")
    if t is not None:
        lines.append(
            f"simulator truth: decisive step is a rolled mistake in {t['correct']}/{t['judged']} "
            f"({_pct(t['accuracy'])}), false blame {_pct(t['false_blame'])}"
        )
    for eid, why in list(summary["not_replayable"].items())[:5]:
        lines.append(f"not replayable: {eid}: {why}")
    return lines


def markdown(summary: Mapping[str, Any], repair: str, command: str) -> str:
    """blame.md: the table, the episodes with no decisive call, and how it was made."""
    out = [
        "# Blame: the decisive call of each episode",
        "",
        f"Repair model: `{repair}`. Made with `{command}`.",
        "",
        "```",
        *table_lines(summary),
        "```",
        "",
    ]
    if summary["none"]:
        out += ["## Episodes with no decisive single call", ""]
        out += [f"- `{eid}`" for eid in summary["none"]]
        out.append("")
    return "\n".join(out)


__all__ = ["markdown", "summarise", "table_lines", "truth"]

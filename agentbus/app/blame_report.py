"""What blame verdicts add up to: shares per module, decisive steps, cost, truth.

A module's *share* is the fraction of the blamed episodes whose decisive call
is one of its calls. Episodes of one task are not independent units (repeats,
or several coalitions of one task), so the 95% interval is the task-clustered
Wilson interval every pass-rate table uses (:func:`attribution.rates.rate_interval`).
Episodes with no decisive single call and episodes that could not be
replayed are counted and listed (every one, with its first difference),
never folded into a module. Steps are numbered from 0 in the order the calls
start, everywhere (console, blame.md, blame.json, the viewer): a step is a
model call, not an environment round.

``blame.json`` keeps one summary per blame setting (who was blamed, repair
model, success bar, decision rule) and ``blame.md`` one section each, so
blaming a run a second way adds to them instead of overwriting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from agentbus.app.blame_truth import score, truth_lines
from agentbus.core.coalitions import coalition_label
from agentbus.core.inputs import json_object
from agentbus.runs.run_files import atomic_write
from attribution.rates import rate_interval

#: what a placebo continuation is, per decision rule (BlameOptions.placebo)
_PLACEBO = {
    "keep": "the recorded answer kept, every later call drawn again, as in the repaired ones",
    "redraw": "the slot's own model asked again",
}

#: the per-episode fields kept in the summary (blame.json, blame.md, --details)
ROW = ("episode_id", "task_id", "coalition", "status", "step", "slot", "rank", "calls")
ROW_EXTRA = ("repair_rate", "placebo_rate", "p", "said", "repair_said", "reason", "truth")


def summarise(entries: Sequence[Mapping[str, Any]], slots: Sequence[str]) -> dict[str, Any]:
    """One setting's summary: per-module shares, steps, none, cost, truth, every episode."""
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
        "max_replays": max(replays, default=0),
        "probes": sum(int(e.get("probes", 0)) for e in entries),
        "tested": sum(len(e.get("tested") or ()) for e in entries),
        "verdicts": [
            {k: e.get(k) for k in (*ROW, *ROW_EXTRA) if e.get(k) is not None}
            for e in sorted(entries, key=lambda e: str(e.get("episode_id")))
        ],
    }
    out["truth"] = truth(replayable)
    out["injected_truth"] = score(replayable)
    return out


def truth(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Against the simulator's own mistakes: how often the decisive step is one of them.

    A weak check (most calls of a weak agent's failure are mistakes), kept
    because it needs no injection; the strict one is ``injected_truth``.
    ``correct``: decisive steps that are a rolled mistake (for a blamed
    success: a right call the repair model gets wrong), of those whose roll is
    known; ``false_blame``: the rest.
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
        "(no single repaired call changes the outcome beyond its placebo)"
    )
    lines.append(
        f"episodes: {n} blamed, {ok} replayable, {summary['decisive']} with a decisive step"
    )
    steps = ", ".join(f"{k}:{v}" for k, v in summary["steps"].items()) or "-"
    lines.append(f"decisive step (call number, 0 = first call) -> episodes: {steps}")
    if summary["replays_per_episode"] is not None:
        lines.append(
            f"cost: {summary['replays']} replays ({summary['replays_per_episode']:.1f} per "
            f"episode, at most {summary['max_replays']}; the reproduction included), "
            f"{summary['probes']} single-call probes, {summary['tested']} calls tested"
        )
    if "repairs" in summary:
        lines.append(
            f"rule: a call is decisive when {summary['repairs']} repaired continuations flip "
            f"the outcome more often than {summary['placebos']} placebo ones ("
            + _PLACEBO.get(summary.get("placebo", "keep"), "")
            + f"; one-sided Fisher test, alpha {summary['alpha']:g} per tested call); "
            "earliest such call"
        )
    t = summary.get("truth")
    if t is not None:
        lines.append(
            f"simulator truth (weak): decisive step is a rolled mistake in "
            f"{t['correct']}/{t['judged']} ({_pct(t['accuracy'])})"
        )
    lines += truth_lines(summary.get("injected_truth"))
    for eid, why in summary["not_replayable"].items():
        lines.append(f"not replayable: {eid}: {why}")
    return lines


def detail_lines(summary: Mapping[str, Any]) -> list[str]:
    """One block per blamed episode: task, coalition, verdict, flip rates, what was said."""
    lines: list[str] = []
    for v in summary.get("verdicts", ()):
        who = coalition_label("+".join(v.get("coalition") or ()))
        head = f"{v['episode_id']}  task {v.get('task_id')}  coalition {who}: "
        if v.get("status") == "decisive":
            rates = ""
            if v.get("p") is not None:
                rates = (
                    f"; flip rate repaired {v['repair_rate']:.2f} vs placebo "
                    f"{v['placebo_rate']:.2f}, p {v['p']:.3f}"
                )
            lines.append(
                f"{head}step {v['step']} of {v.get('calls')} ({v['slot']}'s call "
                f"{int(v['rank']) + 1}){rates}"
            )
            lines.append(f"    said:   {v.get('said', '')}")
            lines.append(f"    repair: {v.get('repair_said', '')}")
        elif v.get("status") == "none":
            lines.append(f"{head}no decisive single call ({v.get('calls')} calls)")
        else:
            lines.append(f"{head}not replayable: {v.get('reason')}")
    return lines


def markdown(settings: Mapping[str, Mapping[str, Any]]) -> str:
    """blame.md: one section per blame setting: the table, then every episode's verdict."""
    out = ["# Blame: the decisive call of each episode", ""]
    for key, summary in settings.items():
        out += [f"## {key}", "", f"Made with `{summary.get('command', '')}`.", "", "```"]
        out += [*table_lines(summary), "```", "", "### Every episode", "", "```"]
        out += [*detail_lines(summary), "```", ""]
    return "\n".join(out)


def save(run_dir: Path, summary: Mapping[str, Any]) -> int:
    """Add ``summary`` to blame.json/blame.md under its setting; returns the settings kept."""
    path = run_dir / "blame.json"
    settings: dict[str, Any] = {}
    try:
        old = json_object(path.read_bytes())
    except OSError:
        old = None
    if old is not None and isinstance(old.get("settings"), dict):
        settings = dict(old["settings"])
    settings[str(summary["setting"])] = dict(summary)
    doc = {"latest": summary["setting"], "settings": settings}
    atomic_write(path, orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    atomic_write(run_dir / "blame.md", markdown(settings).encode())
    return len(settings)


__all__ = ["detail_lines", "markdown", "save", "summarise", "table_lines", "truth"]

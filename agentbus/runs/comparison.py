"""Two runs side by side: did a slot's value move between them?

Each run's phi is the mean over its tasks of the per-task Shapley value (exact
Shapley on that task's coalition means, averaged over repeats); with every
coalition run on every task this is the run's own phi. The difference between
runs is taken over the tasks both ran (paired by task id), so the task mix
cancels: for each shared task, d = phi_A(task) - phi_B(task), and the interval
is mean(d) +/- t * sd(d)/sqrt(k) over the k shared tasks (Student t, k - 1
degrees of freedom). The same is done per coalition with v(S).

Nothing is printed as nan: where a figure cannot be computed (no shared tasks,
one shared task, a run that did not run every coalition on a task, runs that
vary different slots) the answer says so and why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from agentbus.core.coalitions import coalition_label
from agentbus.runs.episodes import EpisodeIndex, coalition_key_of

#: slots beyond which exact per-task Shapley (2^n coalitions per task) is not attempted
MAX_EXACT_SLOTS = 12


def task_values(index: EpisodeIndex, model: str) -> dict[str, dict[str, float]]:
    """task -> coalition key -> mean reward over the counted repeats."""
    sums: dict[str, dict[str, list[float]]] = {}
    for r in index.rows:
        if r["kind"] != "coalition" or not r["counts"] or r["test_model"] != model:
            continue
        cell = sums.setdefault(r["task_id"], {}).setdefault(r["coalition"], [0.0, 0.0])
        cell[0] += r["reward"]
        cell[1] += 1
    return {t: {k: s / n for k, (s, n) in cs.items()} for t, cs in sums.items()}


def _weights(n: int) -> list[float]:
    return [math.factorial(s) * math.factorial(n - s - 1) / math.factorial(n) for s in range(n)]


def task_shapley(values: Mapping[str, float], slots: Sequence[str]) -> dict[str, float] | None:
    """Exact Shapley of one task's coalition values; None when a coalition is missing."""
    n = len(slots)
    if n == 0 or n > MAX_EXACT_SLOTS or len(values) < 2**n:
        return None
    w = _weights(n)
    phi = {}
    for i, slot in enumerate(slots):
        others = [s for j, s in enumerate(slots) if j != i]
        total = 0.0
        for size in range(n):
            for members in combinations(others, size):
                without = coalition_key_of(members, slots)
                with_ = coalition_key_of((*members, slot), slots)
                if without not in values or with_ not in values:
                    return None
                total += w[size] * (values[with_] - values[without])
        phi[slot] = total
    return phi


def paired(diffs: Sequence[float], confidence: float = 0.95) -> dict[str, Any]:
    """Mean of paired differences with a t interval, or the reason there is none."""
    k = len(diffs)
    if k == 0:
        return {"n": 0, "diff": None, "low": None, "high": None, "why": "no task in both runs"}
    mean = sum(diffs) / k
    if k < 2:
        return {
            "n": 1,
            "diff": mean,
            "low": None,
            "high": None,
            "why": "one shared task: an interval needs two",
        }
    from scipy import stats  # here: importing scipy.stats costs a process about 0.6 s

    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (k - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, k - 1)) * sd / math.sqrt(k)
    return {"n": k, "diff": mean, "low": mean - half, "high": mean + half, "why": None}


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _pairs(a: EpisodeIndex, b: EpisodeIndex) -> tuple[list[tuple[str, str]], str | None]:
    ma = sorted({r["test_model"] for r in a.rows if r["kind"] == "coalition"})
    mb = sorted({r["test_model"] for r in b.rows if r["kind"] == "coalition"})
    shared = [m for m in ma if m in mb]
    if shared:
        return [(m, m) for m in shared], None
    if len(ma) == 1 and len(mb) == 1:
        return [(ma[0], mb[0])], f"the runs test different models: {ma[0]} in A, {mb[0]} in B"
    return [], f"no test model in common (A: {', '.join(ma) or '-'}; B: {', '.join(mb) or '-'})"


def compare_runs(a: EpisodeIndex, b: EpisodeIndex, *, confidence: float = 0.95) -> dict[str, Any]:
    """Per slot and per coalition: A, B and B's difference from A over shared tasks.

    ``diff`` is A minus B, so a positive number means the slot is worth more in A.
    """
    out: dict[str, Any] = {"confidence": confidence, "notes": [], "models": []}
    if a.slots != b.slots:
        out["notes"].append(
            f"the runs vary different slots (A: {', '.join(a.slots)}; B: {', '.join(b.slots)}): "
            "a slot's phi depends on the other slots, so phi is not compared; "
            "coalitions are compared where their names match"
        )
    pairs, note = _pairs(a, b)
    if note:
        out["notes"].append(note)
    same_slots = a.slots == b.slots
    for ma, mb in pairs:
        va, vb = task_values(a, ma), task_values(b, mb)
        shared = sorted(set(va) & set(vb))
        entry: dict[str, Any] = {
            "model_a": ma,
            "model_b": mb,
            "tasks_a": len(va),
            "tasks_b": len(vb),
            "shared_tasks": len(shared),
            "slots": [],
            "coalitions": [],
            "notes": [],
        }
        if same_slots:
            pa = {t: task_shapley(v, a.slots) for t, v in va.items()}
            pb = {t: task_shapley(v, b.slots) for t, v in vb.items()}
            full_a = {t: p for t, p in pa.items() if p is not None}
            full_b = {t: p for t, p in pb.items() if p is not None}
            if len(full_a) < len(pa) or len(full_b) < len(pb):
                entry["notes"].append(
                    "tasks without every coalition are left out of phi "
                    f"(A: {len(pa) - len(full_a)} of {len(pa)}, "
                    f"B: {len(pb) - len(full_b)} of {len(pb)})"
                )
            both = [t for t in shared if t in full_a and t in full_b]
            for slot in a.slots:
                row = {
                    "slot": slot,
                    "a": _mean([full_a[t][slot] for t in full_a]),
                    "b": _mean([full_b[t][slot] for t in full_b]),
                    **paired([full_a[t][slot] - full_b[t][slot] for t in both], confidence),
                }
                if row["a"] is None or row["b"] is None:
                    row["why"] = "a run has no task with every coalition: phi cannot be computed"
                entry["slots"].append(row)
        keys = sorted(
            {k for v in va.values() for k in v} | {k for v in vb.values() for k in v},
            key=lambda k: (len(k.split("+")) if k else 0, k),
        )
        for key in keys:
            ta = [t for t in va if key in va[t]]
            tb = [t for t in vb if key in vb[t]]
            both = [t for t in shared if key in va[t] and key in vb[t]]
            entry["coalitions"].append(
                {
                    "coalition": key,
                    "a": _mean([va[t][key] for t in ta]),
                    "b": _mean([vb[t][key] for t in tb]),
                    "n_a": len(ta),
                    "n_b": len(tb),
                    **paired([va[t][key] - vb[t][key] for t in both], confidence),
                }
            )
        out["models"].append(entry)
    return out


def _num(x: float | None, signed: bool = True) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    x = 0.0 if abs(x) < 5e-4 else x  # no "-0.000"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def render_comparison(cmp: Mapping[str, Any], name_a: str, name_b: str) -> str:
    """The comparison as plain text (every figure or the reason it is missing)."""
    pct = round(100 * float(cmp.get("confidence", 0.95)))
    lines = [f"run comparison: A = {name_a}, B = {name_b} (diff = A - B, {pct}% paired interval)"]
    lines += [f"note: {n}" for n in cmp.get("notes", [])]
    for m in cmp.get("models", []):
        model = (
            m["model_a"] if m["model_a"] == m["model_b"] else f"{m['model_a']} vs {m['model_b']}"
        )
        lines.append(
            f"test model {model}: {m['tasks_a']} tasks in A, {m['tasks_b']} in B, "
            f"{m['shared_tasks']} shared"
        )
        lines += [f"  note: {n}" for n in m.get("notes", [])]
        for title, rows, key in (
            ("slot", m["slots"], "slot"),
            ("coalition", m["coalitions"], "coalition"),
        ):
            if not rows:
                continue
            label_w = max(len(title), *(len(coalition_label(str(r[key]))) for r in rows))
            lines.append(f"  {title:<{label_w}}  {'A':>7}  {'B':>7}  {'A - B':>7}  interval")
            for r in rows:
                if r["low"] is not None:
                    ci = f"[{_num(r['low'])}, {_num(r['high'])}] over {r['n']} tasks"
                else:
                    ci = f"none: {r['why']}"
                label = coalition_label(str(r[key]))
                signed = key == "slot"  # phi has a sign; a coalition's mean reward does not
                lines.append(
                    f"  {label:<{label_w}}  {_num(r['a'], signed):>7}  {_num(r['b'], signed):>7}  "
                    f"{_num(r['diff']):>7}  {ci}"
                )
    if not cmp.get("models"):
        lines.append("nothing to compare: " + "; ".join(cmp.get("notes", [])))
    return "\n".join(lines)

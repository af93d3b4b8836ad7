"""``results.json`` shown to people: the Markdown of results.md and the console table.

:mod:`attribution.results` builds the figures; this module only lays them out
(the CapaBench paper's layout: one row per slot, then Acc and delta Acc, one
column per test model), with the notes on intervals, cells given up and
agents that failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from agentbus.core.coalitions import coalition_label
from agentbus.core.outcome import AGENT_FAILURES
from attribution.headline import headline
from attribution.stop_interval import ANYTIME
from attribution.variance import MIN_CLUSTERS

#: how a Python traceback starts (a failure's reason may hold one)
TRACEBACK = "Traceback (most recent call last):"


def given_up_line(results: Mapping[str, Any]) -> str | None:
    """One line on cells left out, by coalition (None when there are none)."""
    section = results.get("given_up")
    if not section or not section.get("cells"):
        return None
    parts = []
    for model, row in section["models"].items():
        worst = sorted(row["by_coalition"].items(), key=lambda kv: -kv[1])[:4]
        spread = ", ".join(f"{coalition_label(k)} {n}" for k, n in worst)
        more = " ..." if len(row["by_coalition"]) > 4 else ""
        parts.append(f"{model}: {row['cells']} ({spread}{more})")
    line = (
        f"cells given up after every attempt failed, left out of the means: {section['cells']}; "
        + "; ".join(parts)
    )
    if section.get("warning"):
        line += f". Warning: {section['warning']}"
    return line


def ordered_keys(slots: list[str], keys: Any) -> list[str]:
    """Coalition keys by size, then in slot order (the paper's Figure 3 order)."""
    index = {s: i for i, s in enumerate(slots)}

    def order(key: str) -> tuple[int, list[int]]:
        parts = [p for p in key.split("+") if p]
        return len(parts), [index.get(p, len(index)) for p in parts]

    return sorted(set(keys), key=order)


def _fmt(x: Any, digits: int = 3) -> str:
    return "-" if x is None else f"{float(x):.{digits}f}"


def _cell(row: Mapping[str, Any] | None) -> str:
    if not row or row.get("value") is None:
        return "n/a"
    return f"{_fmt(row['value'])} [{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]"


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _index_rows(results: Mapping[str, Any], index: str) -> list[list[str]]:
    models = list(results["models"])
    rows = []
    for slot in results["slots"]:
        rows.append(
            [slot] + [_cell((results["models"][m].get(index) or {}).get(slot)) for m in models]
        )
    # v(S) is named the same here and on the console (app/summary.py): the paper's
    # Acc of the all-default agent, its Acc with every slot on the test model, delta Acc
    rows.append(
        ["v(all default)"] + [_fmt(results["models"][m].get("acc_default")) for m in models]
    )
    rows.append(["v(all test)"] + [_fmt(results["models"][m].get("acc_test")) for m in models])
    rows.append(
        ["v(all test) - v(all default)"]
        + [_fmt(results["models"][m].get("delta_acc")) for m in models]
    )
    return rows


def _coalition_rows(results: Mapping[str, Any]) -> list[list[str]]:
    """One row per coalition (slots on the test model): success rate and episodes per model."""
    models = list(results["models"])
    keys = ordered_keys(
        list(results["slots"]),
        {k for m in models for k in results["models"][m].get("coalitions", {})},
    )
    rows = []
    for key in keys:
        row = [coalition_label(key)]
        for m in models:
            c = results["models"][m].get("coalitions", {}).get(key)
            row.append("-" if c is None else _rate_cell(c))
        rows.append(row)
    return rows


def _rate_cell(c: Mapping[str, Any]) -> str:
    """``0.567 [0.392, 0.728] (30 tasks)``; episodes named too when tasks repeat."""
    interval = (
        f" [{_fmt(c['ci_low'])}, {_fmt(c['ci_high'])}]" if c.get("ci_low") is not None else ""
    )
    tasks = c.get("tasks")
    if tasks is None:
        return f"{_fmt(c['mean'])} (n={c['n']})"
    units = f"{tasks} tasks" if tasks == c["n"] else f"{tasks} tasks, {c['n']} episodes"
    return f"{_fmt(c['mean'])}{interval} ({units})"


def has_variants(results: Mapping[str, Any]) -> bool:
    """Whether the run varied implementations (``--vary``), not only models."""
    return any(m.get("variants") for m in results["models"].values())


def _coalition_title(results: Mapping[str, Any]) -> str:
    side = "their test variant" if has_variants(results) else "the test model"
    conf = round(100 * float(results.get("confidence", 0.95)))
    if results.get("reward_kind") == "graded":  # rewards in [0, 1], not 0/1: v(S) is a mean
        return f"Mean reward per coalition (slots on {side}; {conf}% intervals over tasks)"
    return f"Success rate per coalition (slots on {side}; Wilson {conf}% intervals over tasks)"


def _variant_rows(results: Mapping[str, Any]) -> list[list[str]]:
    """slot, its default variant, its test variant per test model."""
    models = list(results["models"])
    rows = []
    for slot in results["slots"]:
        named = [(results["models"][m].get("variants") or {}).get(slot) or {} for m in models]
        default = next((n["default"] for n in named if n.get("default")), "-")
        rows.append([slot, default, *[n.get("test", "-") for n in named]])
    return rows


def _shift_rows(shift: Mapping[str, Any]) -> list[list[str]]:
    def units(r: Mapping[str, Any]) -> str:
        episodes = r.get("episodes")
        if episodes is not None and episodes != r["n"]:
            return f"{r['n']} ({episodes} episodes)"
        return str(r["n"])

    return [
        [
            str(r["variant"]),
            f"{_fmt(r['mean'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]",
            units(r),
        ]
        for r in shift["rows"]
    ]


def _shift_title(shift: Mapping[str, Any]) -> str:
    held = ", ".join(f"{s} on {v}" for s, v in shift["held"].items()) or "nothing held"
    return f"{shift['slot'].capitalize()}-shift: pass rate per {shift['slot']} variant ({held})"


def _agent_rows(results: Mapping[str, Any]) -> list[list[str]]:
    """Accuracy of whole agents: all-default, each model on every slot, best combination."""
    models = results["models"]
    rows: list[list[str]] = []
    if models:
        first = next(iter(models.values()))
        rows.append(
            [f"all {results.get('default_model') or 'default'}", _fmt(first.get("acc_default"))]
        )
    rows.extend([f"all {m}", _fmt(s.get("acc_test"))] for m, s in models.items())
    best = results.get("best_run")
    if best:
        picks = ", ".join(
            f"{slot}={model}" for slot, model in (best.get("assignment") or {}).items()
        )
        interval = (
            f" [{_fmt(best['ci_low'])}, {_fmt(best['ci_high'])}]"
            if best.get("ci_low") is not None
            else ""
        )
        rows.append(
            [
                f"best combination ({picks}), on the tasks it was chosen on (optimistic)",
                f"{_fmt(best.get('acc'))}{interval} (n={best.get('n')} tasks)",
            ]
        )
    return rows


def _interval_note(results: Mapping[str, Any]) -> str:
    adaptive = results.get("adaptive")
    if not isinstance(adaptive, Mapping):
        return ""
    if results.get("interval") == ANYTIME:
        return (
            f" The run was adaptive and stopped on the data ({adaptive.get('stop_reason')}):"
            " the intervals shown are the anytime-valid ones, which hold at a stop chosen"
            " by looking at the data; the fixed-sample ones, which do not, are in"
            " results.json as `fixed_low`, `fixed_high`."
        )
    return (
        " The run was adaptive: it stopped the first time every interval was narrower"
        f" than +/-{adaptive.get('target_halfwidth')} with at least {MIN_CLUSTERS} tasks in"
        " (the Chow-Robbins rule; the fixed-sample intervals shown were measured to cover"
        " at such a stop, see docs/statistics.md); results.json also gives the wider"
        " anytime-valid interval (`cs_low`, `cs_high`), valid under any stopping rule."
    )


# -- failure kinds: a user's agent's own failures, named apart from wrong answers ------


def _kinds_text(by_kind: Mapping[str, int]) -> str:
    return ", ".join(f"{AGENT_FAILURES.get(k, k)} {n}" for k, n in by_kind.items())


def _one_line(text: Any, width: int = 160) -> str:
    """A reason fit for a table cell: one line, no pipes, at most ``width`` characters."""
    flat = " ".join(str(text or "").split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _reason_cell(text: Any) -> str:
    """A failure's reason in one cell: its first line, and a traceback's exception line."""
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    if len(lines) > 1 and TRACEBACK in str(text):
        last = lines[-1].strip()
        return _one_line(lines[0] if last in lines[0] else f"{lines[0]} ... {last}", 300)
    return _one_line(text, 300)


def _whole(kind: str, reason: Any) -> str:
    """A failure's reason as it was recorded, in a fence that its own text cannot close."""
    text = str(reason or "").rstrip()
    fence = "```"
    while fence in text:
        fence += "`"
    return f"`{kind}`:\n\n{fence}text\n{text}\n{fence}"


def agent_failure_line(results: Mapping[str, Any]) -> str | None:
    """One line: how many counted episodes were the agent's own failures, by kind."""
    failures = results.get("agent_failures")
    if not isinstance(failures, Mapping) or not failures.get("failed"):
        return None
    line = (
        f"agent failures (counted as the agent's zeros in v(S)): {failures['failed']} of "
        f"{failures['episodes']} episodes: {_kinds_text(failures['by_kind'])}"
    )
    if failures.get("saturated"):
        line += (
            f"; {failures['saturated']} of the time-outs came while the machine was saturated "
            f"({failures.get('load')}): run fewer agents at once (--agent-processes) or raise "
            "--agent-timeout"
        )
    return line


def agent_failure_markdown(results: Mapping[str, Any]) -> str | None:
    """The results.md section: failures per kind (with a first reason) and per coalition."""
    line = agent_failure_line(results)
    if line is None:
        return None
    failures = results["agent_failures"]
    kinds, reasons = list(failures["by_kind"]), failures["reasons"]
    per_kind = _md_table(
        ["kind", "episodes", "first reason"],
        [
            [f"`{k}` ({AGENT_FAILURES.get(k, k)})", str(n), _reason_cell(reasons.get(k))]
            for k, n in failures["by_kind"].items()
        ],
    )
    by_coalition = failures["by_coalition"]
    keys = ordered_keys(list(results.get("slots") or []), list(by_coalition))
    per_coalition = _md_table(
        ["coalition", *kinds],
        [
            [coalition_label(k), *(str(by_coalition[k].get(kind, 0)) for kind in kinds)]
            for k in keys
        ],
    )
    return (
        f"## Agent failures\n\n{line[0].upper() + line[1:]}. Each is a reward of 0 in its "
        "coalition's v(S): the agent's behaviour, not the machine's.\n\n"
        f"{per_kind}\n\nPer coalition:\n\n{per_coalition}\n\n"
        "The first reason of each kind, whole (a traceback as the agent left it):\n\n"
        + "\n\n".join(_whole(k, reasons.get(k)) for k in kinds)
    )


def to_markdown(results: Mapping[str, Any]) -> str:
    """The paper's tables (Shapley, Banzhaf), coalition rates and the best combination."""
    models = list(results["models"])
    conf = round(100 * float(results.get("confidence", 0.95)))
    default = results.get("default_model") or "default"
    parts = [
        "# Attribution results\n\n"
        + (f"{results['workload']}.\n\n" if results.get("workload") else "")
        + f"Default model: `{default}`. Cells: value [{conf}%"
        f"{' anytime-valid' if results.get('interval') == ANYTIME else ''} interval]."
        + _interval_note(results)
        + "".join(f"\n\n**{line}**" for line in headline(results))
    ]
    shift = results.get("shift")
    if shift:
        parts.append(
            f"## {_shift_title(shift)}\n\n"
            + _md_table([shift["slot"], "pass rate", "tasks"], _shift_rows(shift))
        )
    if has_variants(results):
        parts.append(
            "## Variants (what each varied slot runs on each side)\n\n"
            + _md_table(["slot", "default", *models], _variant_rows(results))
        )
    sampled = sorted(
        {str(s["estimator"]) for s in results["models"].values() if s.get("estimator")}
    )
    how = (
        f"Estimated with `{', '.join(sampled)}`: coalitions drawn per task, 95% interval over "
        "tasks (docs/statistics.md); Banzhaf values need every coalition.\n\n"
        if sampled
        else ""
    )
    parts.append(
        "## Shapley values\n\n"
        + how
        + _md_table(["slot", *models], _index_rows(results, "shapley"))
    )
    parts.append(
        "## Banzhaf values\n\n" + _md_table(["slot", *models], _index_rows(results, "banzhaf"))
    )
    acc_default = [_fmt(results["models"][m].get("acc_default")) for m in models]
    notes = []
    for m in models:
        s = results["models"][m]
        line = (
            f"- `{m}`: {s.get('episodes', 0)} episodes, {s.get('failures', 0)} infrastructure "
            f"failures (not counted), SE {s.get('se_method') or 'n/a'}, v(all default) "
            f"{acc_default[models.index(m)]}"
        )
        if s.get("not_estimable"):
            line += f"; {s['not_estimable']}"
        notes.append(line)
    parts.append("\n".join(notes))
    gave_up = given_up_line(results)
    if gave_up:
        parts.append(gave_up)
    rows = _coalition_rows(results)
    parts.append(f"## {_coalition_title(results)}\n\n" + _md_table(["coalition", *models], rows))
    failed = agent_failure_markdown(results)
    if failed:
        parts.append(failed)
    if results.get("best_run"):
        parts.append("## Whole agents\n\n" + _md_table(["agent", "Acc"], _agent_rows(results)))
    best = results.get("best")
    if best and best.get("slots"):
        parts.append(
            "## Best combination\n\n"
            + _md_table(["slot", "model"], [[s, f"`{m}`"] for s, m in best["slots"].items()])
        )
    return "\n\n".join(parts) + "\n"


def keyed_table(
    title: str, key: str, columns: Iterable[str], rows: Iterable[Sequence[str]], **options: Any
) -> Table:
    """A console table in the report's layout: a bold key column, right-aligned values.

    ``options`` go to rich's :class:`~rich.table.Table` (the summary's ``title_justify``).
    """
    table = Table(title=title, **options)
    table.add_column(key, style="bold")
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*row)
    return table


def render_console(results: Mapping[str, Any]) -> Group:
    """A rich renderable: the Shapley/Banzhaf table in the paper's layout."""
    models = list(results["models"])
    conf = round(100 * float(results.get("confidence", 0.95)))
    tables = []
    if has_variants(results):
        named = Table(title="Variants (what each varied slot runs on each side)")
        for column in ("slot", "default", *models):
            named.add_column(column)
        for row in _variant_rows(results):
            named.add_row(*row)
        tables.append(named)
    tables.append(
        keyed_table(_coalition_title(results), "coalition", models, _coalition_rows(results))
    )
    for index in ("shapley", "banzhaf"):
        title = f"{index.capitalize()} values ({conf}% intervals)"
        tables.append(keyed_table(title, "slot", models, _index_rows(results, index)))
    tables.extend(varied_tables(results))
    extra = []
    for m in models:
        reason = results["models"][m].get("not_estimable")
        if reason:
            extra.append(Text(f"{m}: {reason}", style="yellow"))
    gave_up = given_up_line(results)
    if gave_up:
        extra.append(Text(gave_up, style="yellow"))
    return Group(*tables, *extra)


def varied_tables(results: Mapping[str, Any], **options: Any) -> list[Table]:
    """The tables of what the user varied beside phi: a shift's pass rates, whole agents."""
    tables = []
    shift = results.get("shift")
    if shift:
        columns = ("pass rate", "tasks")
        rows = _shift_rows(shift)
        tables.append(keyed_table(_shift_title(shift), shift["slot"], columns, rows, **options))
    if results.get("best_run"):
        rows = _agent_rows(results)
        tables.append(keyed_table("Whole agents", "agent", ("Acc",), rows, **options))
    return tables

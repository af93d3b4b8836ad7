"""The console's answer to a run: the MVP line first, one compact table, the rest on demand.

A run's reader wants one sentence: which module matters most, how sure that
is, and which modules cannot be told from zero. :func:`headline` writes it
from results.json's Shapley rows; :func:`print_summary` prints it first, then
one table of phi per slot and model, then one-line notes. ``--details`` adds
the coalition, Banzhaf and cost tables (results.md always has them all).

Tables must stay readable at 80 columns (pipes, CI logs): coalitions are
shown as fixed-width letter codes (``PRA.`` = planning, reasoning and action
on the test model) with a legend, never as long names that a narrow terminal
cuts into identical rows, and model specs as short unambiguous labels
(:func:`model_labels`) with the full spec in a legend.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from agentbus.llm.labels import model_labels
from attribution.headline import headline
from attribution.headline import interval_text as _interval
from attribution.headline import signed as _signed


def slot_letters(slots: Sequence[str]) -> dict[str, str]:
    """One distinct capital letter per slot, from its name where possible (P R A E ...)."""
    used: set[str] = set()
    out: dict[str, str] = {}
    for slot in slots:
        pick = next(
            (c.upper() for c in slot if c.isalpha() and c.upper() not in used),
            next(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" if c not in used),
        )
        used.add(pick)
        out[slot] = pick
    return out


def coalition_code(key: str, slots: Sequence[str], letters: Mapping[str, str]) -> str:
    """``planning+action`` -> ``P.A.``: one fixed position per slot, ``.`` on the default."""
    members = {p for p in key.split("+") if p}
    return "".join(letters[s] if s in members else "." for s in slots)


def legend(slots: Sequence[str], letters: Mapping[str, str]) -> str:
    return "coalition code: " + ", ".join(f"{letters[s]}={s}" for s in slots) + " (.=default)"


def _phi_cell(row: Mapping[str, Any] | None) -> str:
    if not row or row.get("value") is None:
        return "n/a"
    return _signed(row["value"]) + _interval(row)


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{float(x):.3f}"


def _model_table(title: str, first: str, columns: Iterable[str]) -> Table:
    """A table titled on the left: a bold key column, then one right-aligned column each."""
    table = Table(title=title, title_justify="left")
    table.add_column(first, style="bold", no_wrap=True)
    for column in columns:
        table.add_column(column, justify="right")
    return table


def attribution_table(results: Mapping[str, Any], index: str = "shapley") -> Table:
    """Slots x test models: phi [interval]; then Acc with everything default and on test."""
    models = list(results["models"])
    labels = model_labels(models)
    conf = round(100 * float(results.get("confidence", 0.95)))
    kind = f"{results['interval']} " if results.get("interval") == "anytime-valid" else ""
    title = f"{index.capitalize()} value per slot ({conf}% {kind}intervals)"
    title += f"\n{results['workload']}" if results.get("workload") else ""
    table = _model_table(title, "slot", [labels[m] for m in models])
    for slot in results["slots"]:
        table.add_row(
            slot, *[_phi_cell((results["models"][m].get(index) or {}).get(slot)) for m in models]
        )
    for key, name in (("acc_default", "v(all default)"), ("acc_test", "v(all test)")):
        table.add_row(name, *[_fmt(results["models"][m].get(key)) for m in models])
    return table


def reward_kind(records: Iterable[Any]) -> str:
    """``binary`` when every counted reward is 0 or 1 (v(S) is a success rate), else ``graded``."""
    for record in records:
        if float(record.reward) not in (0.0, 1.0):
            return "graded"
    return "binary"


def value_word(results: Mapping[str, Any]) -> str:
    """``Success rate`` for 0/1 rewards, ``Mean reward`` when rewards are graded (robot)."""
    return "Mean reward" if results.get("reward_kind") == "graded" else "Success rate"


def coalition_table(results: Mapping[str, Any]) -> Group:
    """v(S) per coalition (letter codes) and test model, with the code legend."""
    from attribution.tables import ordered_keys

    models = list(results["models"])
    labels = model_labels(models)
    slots = list(results["slots"])
    letters = slot_letters(slots)
    keys = ordered_keys(
        slots, {k for m in models for k in results["models"][m].get("coalitions", {})}
    )
    conf = round(100 * float(results.get("confidence", 0.95)))
    title = f"{value_word(results)} per coalition ({conf}% intervals over tasks)"
    table = _model_table(title, "coalition", [labels[m] for m in models])
    for key in keys:
        cells = []
        for m in models:
            c = results["models"][m].get("coalitions", {}).get(key)
            if c is None:
                cells.append("-")
            else:
                cells.append(f"{_fmt(c.get('mean'))}{_interval(c)} n={c.get('tasks', c.get('n'))}")
        table.add_row(coalition_code(key, slots, letters), *cells)
    return Group(table, Text(legend(slots, letters), style="dim"))


def model_legend(models: Sequence[str]) -> str | None:
    """``models: Llama-3.1-8B = vllm:http://...`` for every label that is not the spec itself."""
    labels = model_labels(models)
    shortened = [f"{labels[m]} = {m}" for m in models if labels[m] != m]
    return "models: " + "; ".join(shortened) if shortened else None


def simulated(results: Mapping[str, Any]) -> bool:
    """Whether every priced model is the simulator (its prices are list prices, nothing billed)."""
    prices = ((results.get("cost") or {}).get("prices") or {}).get("per_million_tokens_usd") or {}
    return bool(prices) and all(str(m).startswith("sim:") for m in prices)


def priced(results: Mapping[str, Any]) -> bool:
    """Whether any model of the run has a price (unpriced runs print no dollar figure)."""
    cost = results.get("cost") or {}
    prices = (cost.get("prices") or {}).get("per_million_tokens_usd") or {}
    return any(isinstance(p, Mapping) and p.get("priced") for p in prices.values())


def cost_line(results: Mapping[str, Any]) -> str | None:
    """One line on what the run cost: simulated list prices said as such, no $ for unpriced."""
    cost = results.get("cost")
    if not cost:
        return None
    run = cost.get("run") or {}
    tokens = run.get("sent_tokens")
    sent = f"{run.get('sent_calls', 0)} calls sent, {tokens:,} tokens" if tokens is not None else ""
    if not priced(results):
        return f"cost: no price for these models ({sent}); add them under [prices] for dollars"
    from attribution.cost import usd

    if simulated(results):
        money = f"{usd(run.get('billed_usd'))} at simulated list prices (nothing billed)"
    else:
        money = f"{usd(run.get('billed_usd'))} billed"
    line = f"cost: {money}; {sent}; the agents' own cost {usd(run.get('agent_usd'))}"
    if cost.get("unpriced"):
        line += f"; no price for {', '.join(cost['unpriced'])}"
    return line


def cache_note(results: Mapping[str, Any]) -> str | None:
    """What of the cost a rerun of the same seed reproduces, when the prompt cache priced some.

    Which call reached the (simulated or provider's) prompt cache first depends
    on timing, so the cached-input tokens, and with them each episode's
    dollars, move on a rerun; the tokens do not (docs/cost.md).
    """
    run = (results.get("cost") or {}).get("run") or {}
    cached = run.get("sent_cached_input_tokens")
    if not isinstance(cached, int) or cached <= 0 or not priced(results):
        return None
    return (
        "cost on a rerun of this seed: the tokens repeat exactly; the cached-input share "
        "(here {:.0%} of input) depends on call timing, and so do the $ (docs/cost.md)"
    ).format(cached / max(1, int(run.get("sent_input_tokens") or 0)))


def details(results: Mapping[str, Any], console: Console) -> None:
    """The tables behind ``--details``: coalitions, Banzhaf, cost."""
    console.print(coalition_table(results))
    console.print(attribution_table(results, "banzhaf"))
    if results.get("cost") and priced(results):
        console.print(cost_tables(results))


def varied(results: Mapping[str, Any], console: Console) -> None:
    """What the user asked for beside phi: variants, a shift's pass rates, --best, --pareto."""
    from attribution.tables import _variant_rows, has_variants, varied_tables

    models = list(results["models"])
    labels = model_labels(models)
    if has_variants(results):
        named = Table(
            title="Variants (what each varied slot runs on each side)", title_justify="left"
        )
        for column in ("slot", "default", *[labels[m] for m in models]):
            named.add_column(column)
        for row in _variant_rows(results):
            named.add_row(*row)
        console.print(named)
    for table in varied_tables(results, title_justify="left"):
        console.print(table)
    if results.get("pareto"):
        from agentbus.app.pareto import render_pareto

        console.print(render_pareto(results["pareto"]))


def cost_tables(results: Mapping[str, Any]) -> Group:
    """Cost per coalition (codes), per slot, and the Shapley value of cost, at 80 columns."""
    from attribution.cost import _ci, _shapley_rows, _slot_rows
    from attribution.tables import ordered_keys

    cost = results["cost"]
    slots = list(results["slots"])
    letters = slot_letters(slots)
    models = list(cost["models"])
    conf = round(100 * float(results.get("confidence", 0.95)))
    unit = "USD at simulated list prices" if simulated(results) else "USD"
    parts: list[Any] = []
    all_models = sorted({m for s in cost["slots"].values() for m in s["models"]} | set(models))
    labels = model_labels(all_models)
    title = f"Agent cost per episode per coalition ({unit}, {conf}%)"
    table = _model_table(title, "coalition", [labels[m] for m in models])
    keys = ordered_keys(slots, {k for m in models for k in cost["models"][m]["coalitions"]})
    for key in keys:
        table.add_row(
            coalition_code(key, slots, letters),
            *[_ci(cost["models"][m]["coalitions"].get(key)) for m in models],
        )
    parts += [table, Text(legend(slots, letters), style="dim")]
    slot_models, rows = _slot_rows(cost)
    title = f"Cost per slot ({unit} per episode; run total)"
    table = _model_table(title, "slot", [*(labels.get(m, m) for m in slot_models), "total"])
    for row in rows:
        table.add_row(*row)
    parts.append(table)
    title = f"Shapley value of cost ({unit} per episode, {conf}%)"
    table = _model_table(title, "slot", [labels[m] for m in models])
    for row in _shapley_rows(cost, slots):
        table.add_row(*row)
    parts.append(table)
    return Group(*parts)


def print_summary(
    results: Mapping[str, Any],
    console: Console,
    *,
    show_details: bool = False,
    notes: Sequence[str | None] = (),
) -> None:
    """The headline, the compact table, the notes; ``show_details``: every other table."""
    from attribution.tables import given_up_line

    for line in headline(results):
        console.print(Text(line, style="bold"))
    console.print(attribution_table(results))
    varied(results, console)
    legend_line = model_legend(list(results["models"]))
    if legend_line:
        console.print(Text(legend_line, style="dim"))
    for m in results["models"]:
        reason = results["models"][m].get("not_estimable")
        if reason and (results["models"][m].get("shapley") or {}):
            console.print(Text(f"{m}: {reason}", style="yellow"))
    gave_up = given_up_line(results)
    if gave_up:
        console.print(Text(gave_up, style="yellow"))
    if show_details:
        details(results, console)
    for note in notes:
        if note:
            console.print(note)
    spent = cost_line(results)
    if spent:
        console.print(spent)
        note = cache_note(results)
        if note:
            console.print(Text(note, style="dim"))
    if not show_details:
        console.print(
            Text("coalitions, Banzhaf, cost per slot: --details (all in results.md)", style="dim")
        )


def adaptive_line(reason: str, reached: bool, rule: str) -> str:
    """How an adaptive run ended: stopped by its rule, at its cap, or run to the end.

    ``--stop mvp`` used to say "adaptive run stopped" also when it had run
    every episode without its rule being met; the line now says which.
    """
    if reached:
        return f"adaptive run stopped early: {reason}"
    if reason.startswith("issued --max-episodes"):
        cap = reason.removeprefix("issued ")
        return f"adaptive run stopped at its cap ({cap}) before its rule (--stop {rule}) was met"
    return f"adaptive run ran to the end without its stop rule (--stop {rule}) being met" + (
        f": {reason}" if reason else ""
    )


__all__ = [
    "adaptive_line",
    "attribution_table",
    "cache_note",
    "coalition_code",
    "coalition_table",
    "cost_line",
    "print_summary",
    "reward_kind",
    "slot_letters",
]

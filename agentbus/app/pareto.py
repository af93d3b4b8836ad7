"""``--pareto K``: the accuracy-cost front of per-slot model assignments, checked for real.

After the coalition episodes, :func:`attribution.pareto.predict` gives every
assignment of the default and test models to the varied slots a predicted
accuracy and cost (measured exactly where the coalition runs already played
that agent), chooses the front and the most accurate point on a third of the
tasks and reports those points' figures from the other two thirds. The K
most promising are run on every task, like ``--best`` does (records of kind
``pareto``, counted by the same rule), and each is reported predicted against
measured, paired by task. The summary names the cheapest front assignment
whose accuracy interval overlaps the most accurate one's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from agentbus.app.evaluation import EvaluationPlan, SpecFactory
from agentbus.app.workqueue import Block
from agentbus.core.environment import Task
from agentbus.core.episode import EpisodeSpec
from agentbus.core.events import PARETO_FRONT
from agentbus.core.record import EpisodeRecord, RecordBook, RecordKind
from attribution.cost import mean_interval, usd
from attribution.pareto import (
    Point,
    cheapest_overlapping,
    compare,
    front,
    most_accurate,
    predict,
    promising,
)
from attribution.pareto_terms import wilson_row

PARETO: RecordKind = "pareto"


def cell_label(assignment: dict[str, str]) -> str:
    """Every varied slot's model, for the cell id (stable across resumes)."""
    return "+".join(f"{slot}={model}" for slot, model in assignment.items())


class ParetoRun:
    """Predicts the front, runs the chosen assignments, compares; see the module docstring."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.book = RecordBook()
        self.points: list[Point] = []
        self.chosen: list[Point] = []
        self.default = ""
        self.test_models: list[str] = []
        self.slots: list[str] = []
        self.confidence = 0.95

    def observe(self, record: EpisodeRecord) -> None:
        if record.kind == PARETO:
            self.book.add(record)

    def plan(self, counted: Iterable[EpisodeRecord], plan: EvaluationPlan) -> list[Point]:
        """Predict every assignment and pick the K to run."""
        self.default = plan.default_model
        self.test_models = list(plan.test_models)
        self.slots = list(plan.varied)
        self.points = predict(counted, plan.varied, plan.default_model, plan.test_models)
        self.chosen = promising(self.points, self.k)
        return self.chosen

    def blocks(self, factory: SpecFactory, tasks: Iterable[Task]) -> Iterator[Block]:
        """One block per task with every chosen assignment's episode still to run."""
        agent_slots = factory.plan.agent.slots
        for task in tasks:
            cells, specs = [], []
            for point in self.chosen:
                cell = f"{PARETO}|{cell_label(point.assignment)}|{task.id}|r0"
                cells.append(cell)
                if self.book.is_counted(cell):
                    continue
                full = {s: point.assignment.get(s, factory.plan.default_model) for s in agent_slots}
                spec = factory.build_assignment(
                    full,
                    task,
                    0,
                    episode=cell,
                    metadata={"kind": PARETO, "default_model": factory.plan.default_model},
                )
                attempt = self.book.attempts(cell) + 1
                specs.append(spec if attempt == 1 else _retry(spec, attempt))
            yield Block(tuple(cells), tuple(specs), task.id)

    def measure(self) -> None:
        """Attach each chosen assignment's measured figures and the comparison."""
        by_cell: dict[str, dict[str, list[EpisodeRecord]]] = defaultdict(lambda: defaultdict(list))
        for r in self.book.records(PARETO):
            by_cell[r.episode_id.split("|")[1]][r.task_id].append(r)
        for point in self.chosen:
            tasks = by_cell.get(cell_label(point.assignment), {})
            if not tasks:
                continue
            acc = {t: sum(r.reward for r in rs) / len(rs) for t, rs in tasks.items()}
            costs = {
                t: sum(r.outcome.cost_usd or 0.0 for r in rs) / len(rs) for t, rs in tasks.items()
            }
            point.run = {
                "tasks": len(tasks),
                "acc": wilson_row(list(acc.values()), self.confidence),
                "cost_usd": mean_interval(list(costs.values()), self.confidence, floor=0.0),
                "acc_vs_predicted": compare(point.acc_terms, acc, point.acc, rate=True),
                "cost_vs_predicted": compare(point.cost_terms, costs, point.cost),
            }

    # -- reporting ------------------------------------------------------------

    def event(self) -> dict[str, Any]:
        """The ``pareto.front`` payload: front, chosen, cheapest overlapping."""
        cheap = cheapest_overlapping(self.points)
        return {
            "assignments": len(self.points),
            "front": [p.to_dict(self.default) for p in front(self.points)],
            "chosen": [p.to_dict(self.default) for p in self.chosen],
            "cheapest_overlapping": cheap.label(self.default) if cheap else None,
        }

    def results(self) -> dict[str, Any]:
        cheap = cheapest_overlapping(self.points)
        cheap_run = cheapest_overlapping(self.chosen, "measured")
        best = most_accurate(self.points)
        return {
            "k": self.k,
            "default_model": self.default,
            "test_models": self.test_models,
            "slots": self.slots,
            "assignments": len(self.points),
            "points": [p.to_dict(self.default) for p in self.points],
            "front": [p.label(self.default) for p in front(self.points)],
            "chosen": [p.to_dict(self.default) for p in self.chosen],
            "most_accurate": best.label(self.default) if best else None,
            "selection": {
                k: self.points[0].selection.get(k) if self.points else 0
                for k in ("tasks", "held_out")
            },
            "cheapest_overlapping": cheap.label(self.default) if cheap else None,
            "cheapest_overlapping_measured": cheap_run.label(self.default) if cheap_run else None,
        }


def _retry(spec: EpisodeSpec, attempt: int) -> EpisodeSpec:
    import dataclasses

    return dataclasses.replace(spec, attempt=attempt)


def codes(results: dict[str, Any]) -> tuple[dict[str, str], str]:
    """model -> one-character code (0 = default), and the legend line for the tables."""
    points = results.get("points") or []
    first = points[0]["assignment"] if points else {}
    default = results.get("default_model") or next(iter(first.values()), "")
    seen = {m for p in points for m in p["assignment"].values()} - {default}
    models = [default, *(results.get("test_models") or sorted(seen))]
    slots = results.get("slots") or list(first)
    code = {m: str(i) if i < 10 else chr(ord("a") + i - 10) for i, m in enumerate(models)}
    legend = ", ".join(f"{c} = {m}" + (" (default)" if c == "0" else "") for m, c in code.items())
    return code, f"assignment: one character per slot ({', '.join(slots)}): {legend}"


def short(point: dict[str, Any], code: dict[str, str]) -> str:
    return "".join(code.get(m, "?") for m in point["assignment"].values())


def _front(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The points on the front, cheapest first."""
    return sorted(
        (p for p in results["points"] if p["on_front"]), key=lambda p: p["cost_usd"]["mean"]
    )


def chosen_on(results: dict[str, Any]) -> str:
    """How the front was chosen: on which tasks, and estimated on which."""
    sel = results.get("selection") or {}
    if sel.get("held_out"):
        return f"chosen on {sel['tasks']} tasks, figures from the other {sel['held_out']}"
    return f"chosen on the same {sel.get('tasks', 0)} tasks it is estimated on (biased high)"


def _ci(row: dict[str, Any] | None, fmt: Any) -> str:
    if not row or row.get("mean") is None:
        return "n/a"
    if row.get("ci_low") is None:
        return fmt(row["mean"])
    return f"{fmt(row['mean'])} [{fmt(row['ci_low'])}, {fmt(row['ci_high'])}]"


def _acc(x: float) -> str:
    return f"{x:.3f}"


def render_pareto(results: dict[str, Any], confidence: float = 0.95) -> Group:
    """Console tables: the predicted front, then predicted vs measured; the summary line."""
    conf = round(100 * confidence)
    front = _front(results)
    table = Table(
        title=f"Accuracy-cost Pareto front ({len(front)} of {results['assignments']} "
        f"assignments; {chosen_on(results)}; {conf}% intervals; cost = USD per episode)"
    )
    for col in ("assignment", "source", "accuracy", "cost"):
        table.add_column(col, justify="left" if col == "assignment" else "right")
    code, legend = codes(results)
    for p in front:
        table.add_row(short(p, code), p["source"], _ci(p["acc"], _acc), _ci(p["cost_usd"], usd))
    parts: list[Any] = [Text(legend), table]
    chosen = [p for p in results["chosen"] if p.get("run")]
    if chosen:
        cmp = Table(
            title=f"Predicted vs measured ({conf}% intervals; difference paired by task, "
            "over the tasks each prediction used)"
        )
        for col in (
            "assignment",
            "acc predicted",
            "acc measured",
            "acc diff",
            "cost predicted",
            "cost measured",
        ):
            cmp.add_column(col, justify="left" if col == "assignment" else "right")
        for p in chosen:
            run = p["run"]
            diff = run["acc_vs_predicted"]["difference"]
            mark = {True: " ok", False: " off", None: ""}[run["acc_vs_predicted"]["agrees"]]
            cmp.add_row(
                short(p, code),
                _ci(p["acc"], _acc),
                _ci(run["acc"], _acc),
                _ci(diff, lambda x: f"{x:+.3f}") + mark,
                _ci(p["cost_usd"], usd),
                _ci(run["cost_usd"], usd),
            )
        parts.append(cmp)
    parts.append(Text(summary_line(results)))
    return Group(*parts)


def summary_line(results: dict[str, Any]) -> str:
    by_label = {p["label"]: p for p in results["points"]}
    cheap, best = results.get("cheapest_overlapping"), results.get("most_accurate")
    if cheap is None or best is None:
        return "pareto: not enough data to predict the assignments"

    def desc(name: str) -> str:
        p = by_label[name]
        return f"{name} (accuracy {_ci(p['acc'], _acc)}, {usd(p['cost_usd']['mean'])} per episode)"

    line = (
        f"cheapest assignment whose accuracy interval overlaps the best one's: {desc(cheap)}; "
        f"most accurate: {desc(best)}"
    )
    measured = results.get("cheapest_overlapping_measured")
    if measured:
        line += f"; among the {len(results['chosen'])} run for real: {measured}"
    return line


def markdown(results: dict[str, Any]) -> str:
    from attribution.tables import _md_table

    code, legend = codes(results)
    rows = [
        [f"`{short(p, code)}`", p["source"], _ci(p["acc"], _acc), _ci(p["cost_usd"], usd)]
        for p in _front(results)
    ]
    out = f"## Accuracy-cost Pareto front\n\n{legend}; {chosen_on(results)}\n\n" + _md_table(
        ["assignment", "source", "accuracy", "cost (USD/episode)"], rows
    )
    measured = [
        [
            f"`{short(p, code)}`",
            _ci(p["acc"], _acc),
            _ci(p["run"]["acc"], _acc),
            _ci(p["run"]["acc_vs_predicted"]["difference"], lambda x: f"{x:+.3f}"),
            _ci(p["cost_usd"], usd),
            _ci(p["run"]["cost_usd"], usd),
        ]
        for p in results["chosen"]
        if p.get("run")
    ]
    if measured:
        out += "\n\n## Predicted vs measured\n\n" + _md_table(
            [
                "assignment",
                "acc predicted",
                "acc measured",
                "difference",
                "cost predicted",
                "cost measured",
            ],
            measured,
        )
    return out + "\n\n" + summary_line(results) + "\n"


def plot(results: dict[str, Any], out_dir: Path) -> None:
    """plots/pareto.png and .svg: every assignment, the front, the measured points."""
    from attribution.pareto_plot import plot_front

    plot_front(results, out_dir)


__all__ = ["PARETO", "ParetoRun", "markdown", "plot", "render_pareto"]


async def pareto_phase(
    pareto: ParetoRun,
    counted: Iterable[EpisodeRecord],
    plan: EvaluationPlan,
    factory: SpecFactory,
    tasks: Iterable[Task],
    publish: Any,
    console: Any,
) -> Iterator[Block] | None:
    """Predict the front, show it, and hand back the chosen assignments' blocks."""
    chosen = pareto.plan(counted, plan)
    if not chosen:
        console.print("--pareto skipped: no coalition data to predict assignments from")
        return None
    await publish(PARETO_FRONT, pareto.event())
    console.print(render_pareto(pareto.results()))
    names = "; ".join(p.label(pareto.default) for p in chosen)
    console.print(f"--pareto {pareto.k}: running {len(chosen)} assignments on every task: {names}")
    return pareto.blocks(factory, list(tasks))

"""Tools tasks from the seeded generator or a dataset file, as :class:`agentbus.Task`.

``Task.data`` is what the agent may see (kind, category, the offered
functions as OpenAI tool schemas, a wrong earlier call if any);
``Task.hidden`` holds the ground truth (calls, facts, the planned transient
failure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from agentbus import Task, TaskSource, UserError, read_bounded
from environments.tools.apis import CATALOGUE
from environments.tools.generator import make_spec
from environments.tools.spec import TaskSpec

ENV = "tools"
MAX_STEPS = 20


def instruction_for(spec: TaskSpec) -> str:
    return f"Tools task {spec.id}: {spec.query}"


def make_task(spec: TaskSpec) -> Task:
    unknown = [n for n in [*spec.tools, *(c.name for c in spec.calls)] if n not in CATALOGUE]
    if unknown:
        raise UserError(f"tools task {spec.id}: unknown function(s) {', '.join(sorted(unknown))}")
    data: dict[str, Any] = {
        "kind": spec.kind,
        "category": spec.category,
        "variant": spec.variant,
        "tools": [CATALOGUE[n].schema() for n in spec.tools],
    }
    if spec.prior is not None:
        data["prior"] = {"call": spec.prior.call.model_dump(), "error": spec.prior.error}
    return Task(
        id=spec.id,
        env=ENV,
        instruction=instruction_for(spec),
        data=data,
        hidden={
            "calls": [c.model_dump() for c in spec.calls],
            "facts": list(spec.facts),
            "transient": spec.transient.model_dump() if spec.transient else None,
        },
    )


def load_specs(path: Path) -> list[TaskSpec]:
    """A dataset file: a JSON list of task objects, or ``{"tasks": [...]}``."""
    try:
        raw = orjson.loads(read_bounded(path, "tools dataset"))
    except FileNotFoundError:
        raise UserError(f"tools dataset not found: {path}") from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise UserError(f"tools dataset {path}: not readable JSON ({exc})") from None
    items = raw.get("tasks") if isinstance(raw, dict) else raw
    if not isinstance(items, list) or not items:
        raise UserError(f"tools dataset {path}: expected a non-empty list of tasks")
    specs = []
    for i, item in enumerate(items):
        try:
            specs.append(TaskSpec.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UserError(f"tools dataset {path}: task {i}: {where}: {first['msg']}") from None
    return specs


def tasks_from(source: TaskSource) -> list[Task]:
    if source.dataset is not None:
        specs = load_specs(source.dataset)
    else:
        if source.count < 1:
            raise UserError(f"tools: the task count must be at least 1 (got {source.count})")
        specs = [make_spec(source.seed, i) for i in range(source.count)]
    if source.limit is not None:
        specs = specs[: source.limit]
    return [make_task(s) for s in specs]

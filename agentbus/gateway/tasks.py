"""Tasks of external agents: a JSONL file, one task object a line, each with an ``id``.

The agent receives the task object without its ``answer`` (the expected
answer stays with agentbus, for the scorer and the simulator). Tasks of a
built-in environment with static answers (math) are offered the same way:
``{"id", "question", ...data}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentbus.core.environment import Task
from agentbus.core.errors import UserError

ENV = "external"
#: keys that never reach the agent
HIDDEN_KEYS = ("answer",)


def load_jsonl(path: Path, limit: int | None = None) -> list[Task]:
    """Read ``path``: every problem (bad JSON, no id, a repeated id) is one UserError line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read dataset {path}: {exc.strerror or exc}") from None
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise UserError(f"{path}:{number}: not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise UserError(f"{path}:{number}: each line must be a JSON object")
        ident = data.get("id")
        if not isinstance(ident, str | int) or isinstance(ident, bool) or str(ident) == "":
            raise UserError(f'{path}:{number}: the task has no "id" (a string or integer)')
        ident = str(ident)
        if ident in seen:
            raise UserError(f"{path}:{number}: task id {ident!r} appears twice")
        seen.add(ident)
        tasks.append(task_from(ident, data))
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise UserError(f"dataset {path} holds no tasks")
    return tasks


def task_from(ident: str, data: dict[str, Any], env: str = ENV) -> Task:
    visible = {k: v for k, v in data.items() if k not in HIDDEN_KEYS}
    visible["id"] = ident
    hidden = {k: data[k] for k in HIDDEN_KEYS if k in data}
    instruction = next(
        (str(data[k]) for k in ("question", "prompt", "input", "instruction") if k in data), ""
    )
    return Task(id=ident, env=env, instruction=instruction, data=visible, hidden=hidden)


def payload(task: Task) -> dict[str, Any]:
    """What the agent receives: the visible task object (never ``hidden``)."""
    if task.env == ENV:
        return dict(task.data)
    return {"id": task.id, "question": task.instruction, **task.data}


def expected(task: Task) -> dict[str, Any]:
    """The task as the scorer sees it: the visible object plus ``answer``."""
    out = payload(task)
    if "answer" in task.hidden:
        out["answer"] = task.hidden["answer"]
    return out


__all__ = ["ENV", "expected", "load_jsonl", "payload", "task_from"]

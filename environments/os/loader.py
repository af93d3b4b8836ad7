"""AgentBench/CapaBench OS task files -> :class:`OsTask`.

A file holds one task object, a list of them, or JSON lines. Fields as in
AgentBench: ``description``; ``create.init`` (one script or a list; CapaBench
also puts ``init`` at the top level), ``start`` (run in the agent's shell, for
long-lived processes); ``evaluation.match`` (a string, or ``answer``/``regex``
with ``strip``) or ``evaluation.check`` (a script or list, ``null`` = the
example's output) with ``evaluation.example``; ``labels``.

The expert's solution for a file task is the example script followed by
``finish`` (or the expected answer for a match task). A file that is not an
OS task (CapaBench's os/task5.json is a git level) is refused in one line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import structlog

from agentbus import UserError, json_loads, read_text
from environments.os.script import Script, parse_script
from environments.os.task import OsTask, Step

log = structlog.get_logger(__name__)


def load_file(path: Path) -> list[OsTask]:
    """Every task of one file, ids ``<file stem>-<index>``."""
    try:
        text = read_text(path, "os dataset")
    except OSError as exc:
        raise UserError(f"os: cannot read {path}: {exc}") from None
    try:
        raw: Any = json_loads(text)
    except json.JSONDecodeError:
        try:
            raw = [json_loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise UserError(f"os: {path} is not JSON or JSON lines: {exc}") from None
    items = raw if isinstance(raw, list) else [raw]
    tasks: list[OsTask] = []
    for i, item in enumerate(items):
        where = f"{path.name}[{i}]" if len(items) > 1 else path.name
        tasks.append(parse_task(item, f"{path.stem}-{i}", path.parent, where))
    return tasks


def _scripts(raw: Any, base: Path, where: str) -> tuple[Script, ...]:
    if raw is None:
        return ()
    items = raw if isinstance(raw, list) else [raw]
    return tuple(parse_script(s, base, f"{where}[{k}]") for k, s in enumerate(items))


def parse_task(item: Any, task_id: str, base: Path, where: str) -> OsTask:
    if not isinstance(item, dict) or "description" not in item or "evaluation" not in item:
        kind = (
            "a learnGitBranching level" if isinstance(item, dict) and "level_name" in item else ""
        )
        hint = f" (it looks like {kind}; try --env git)" if kind else ""
        raise UserError(f"os: {where} is not an OS task: no description/evaluation{hint}")
    create = item.get("create") or {}
    if not isinstance(create, dict):
        raise UserError(f"{where}: create must be an object, got {type(create).__name__}")
    init = _scripts(create.get("init", item.get("init")), base, f"{where}: init")
    start = parse_script(item["start"], base, f"{where}: start") if item.get("start") else None
    evaluation = item["evaluation"]
    if not isinstance(evaluation, dict):
        raise UserError(f"{where}: evaluation must be an object, got {type(evaluation).__name__}")
    match: dict[str, Any] | None = None
    check: tuple[Script | None, ...] = ()
    if "match" in evaluation:
        match = parse_match(evaluation["match"], where)
    elif "check" in evaluation:
        raw = evaluation["check"]
        items = raw if isinstance(raw, list) else [raw]
        check = tuple(
            None if s is None else parse_script(s, base, f"{where}: check[{k}]")
            for k, s in enumerate(items)
        )
    else:
        raise UserError(f"{where}: evaluation needs 'match' or 'check'")
    example = (
        parse_script(evaluation["example"], base, f"{where}: example")
        if evaluation.get("example") is not None
        else None
    )
    if any(s is None for s in check) and example is None:
        raise UserError(f"{where}: a null check needs evaluation.example")
    return OsTask(
        id=task_id,
        description=str(item["description"]).strip(),
        init=init,
        start=start,
        check=check,
        match=match,
        example=example,
        labels=_labels(item.get("labels"), where),
        category="file",
        steps=file_steps(match, example),
    )


def parse_match(m: Any, where: str) -> dict[str, Any]:
    """``evaluation.match``: a string, or ``answer``/``regex`` (checked now, not mid-run)."""
    if isinstance(m, str):
        return {"answer": m, "strip": True}
    if not isinstance(m, dict):
        raise UserError(
            f"{where}: evaluation.match must be a string or an object with 'answer' or "
            f"'regex', got {type(m).__name__} {m!r:.40}"
        )
    if "answer" not in m and "regex" not in m:
        raise UserError(f"{where}: evaluation.match needs 'answer' or 'regex'")
    if "answer" in m and not isinstance(m["answer"], str | int | float):
        raise UserError(f"{where}: evaluation.match.answer must be text or a number")
    if "regex" in m:
        if not isinstance(m["regex"], str):
            raise UserError(f"{where}: evaluation.match.regex must be a string")
        try:
            re.compile(m["regex"])
        except (re.error, RecursionError, OverflowError) as exc:
            raise UserError(
                f"{where}: evaluation.match.regex is not a valid regular expression: {exc}"
            ) from None
    return dict(m)


def _labels(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise UserError(f"{where}: labels must be a list, got {type(raw).__name__}")
    return tuple(str(x) for x in raw)


def file_steps(match: dict[str, Any] | None, example: Script | None) -> tuple[Step, ...]:
    """What the expert knows of a file task: run the example, then finish or answer."""
    steps: list[Step] = []
    if example is not None and example.language == "bash":
        steps.append(Step("bash", example.code.strip()))
    if match is not None and "answer" in match:
        steps.append(Step("answer", str(match["answer"])))
    else:
        steps.append(Step("finish"))
    return tuple(steps)


def load_path(path: Path) -> list[OsTask]:
    """A file, or every ``*.json``/``*.jsonl`` file of a directory (sorted)."""
    if path.is_dir():
        files = sorted([*path.glob("*.json"), *path.glob("*.jsonl")])
        tasks: list[OsTask] = []
        for f in files:
            try:
                tasks += load_file(f)
            except UserError as exc:  # another kind of file in the folder (a git level)
                log.info("os: file skipped", file=str(f), reason=str(exc))
        if not tasks:
            raise UserError(f"os: no OS task files in {path}")
        return tasks
    if not path.exists():
        raise UserError(f"os: no such dataset file: {path}")
    return load_file(path)

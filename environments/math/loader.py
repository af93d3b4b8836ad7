"""Loading CapaBench's math files: problems with boxed solutions, and knowledge points.

The problem file is a JSON list of objects with ``problem``, ``solution``
(whose last ``\\boxed{...}`` is the final answer), ``level`` ("Level 3"),
``type`` and ``knowledge_point``; the knowledge file is a JSON list of short
texts (some empty). Anything else is reported as one clear line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentbus import Task, UserError, json_loads, read_text
from environments.math.latex import boxed


def _read_json(path: Path, what: str) -> Any:
    try:
        text = read_text(path, f"math {what} file")
    except FileNotFoundError:
        raise UserError(f"math {what} file not found: {path}") from None
    except OSError as exc:
        raise UserError(f"cannot read math {what} file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"math {what} file {path} is not UTF-8 text (byte {exc.start})") from None
    try:
        return json_loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"math {what} file {path} is not valid JSON: {exc.msg} at line {exc.lineno}"
        ) from None


def _level(value: Any) -> int | None:
    m = re.search(r"\d+", str(value)) if value is not None else None
    return int(m.group(0)) if m else None


def load_problems(path: Path) -> list[Task]:
    """Tasks from a CapaBench problem file; the boxed answer goes to ``hidden``."""
    data = _read_json(path, "problem")
    if not isinstance(data, list):
        raise UserError(f"math problem file {path}: expected a JSON list of problems")
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(data):
        where = f"math problem file {path}, entry {i}"
        if not isinstance(item, dict):
            raise UserError(f"{where}: expected an object with 'problem' and 'solution'")
        problem, solution = item.get("problem"), item.get("solution")
        if not isinstance(problem, str) or not problem.strip():
            raise UserError(f"{where}: missing 'problem' text")
        if not isinstance(solution, str):
            raise UserError(f"{where}: missing 'solution' text")
        answer = boxed(solution)
        if answer is None:
            raise UserError(f"{where}: the solution has no \\boxed{{...}} final answer")
        instruction = problem.strip()
        if instruction in seen:  # the expert finds tasks by their text: keep it unique
            seen[instruction] += 1
            instruction = f"{instruction} (problem {i + 1})"
        seen.setdefault(instruction, 1)
        ident = item.get("id", i + 1)
        kp = str(item.get("knowledge_point") or "")
        tasks.append(
            Task(
                id=f"math-{path.stem}-{ident}",
                env="math",
                instruction=instruction,
                data={
                    "level": _level(item.get("level")),
                    "type": item.get("type"),
                    "source": path.name,
                },
                hidden={"answer": answer, "solution": solution, "knowledge_point": kp},
            )
        )
    if not tasks:
        raise UserError(f"math problem file {path} holds no problems")
    return tasks


def load_knowledge(path: Path) -> list[str]:
    """Knowledge texts from a CapaBench knowledge file (a list of strings)."""
    data = _read_json(path, "knowledge")
    if isinstance(data, dict):
        data = list(data.values())
    if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
        raise UserError(f"math knowledge file {path}: expected a JSON list of texts")
    texts = [t.strip() for t in data if t.strip()]
    if not texts:
        raise UserError(f"math knowledge file {path} holds no non-empty text")
    return texts


__all__ = ["load_knowledge", "load_problems"]

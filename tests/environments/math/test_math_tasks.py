"""Task sources of the math environment: CapaBench's files and the built-in generator."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import anyio
import pytest

from agentbus.core.environment import TaskSource
from agentbus.core.errors import UserError
from environments.math.answer import AnswerChecker
from environments.math.calculator import Calculator
from environments.math.env import MathEnvironment
from environments.math.generator import KNOWLEDGE_POINTS, LEVELS, generate
from environments.math.loader import load_knowledge, load_problems

SHARED = Path(__file__).resolve().parents[4] / "shared" / "capabench" / "math"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="shared CapaBench data missing")


@needs_shared
def test_loader_reads_capabench_algebra() -> None:
    tasks = load_problems(SHARED / "algebra.json")
    assert len(tasks) == 250
    assert len({t.instruction for t in tasks}) == len(tasks)
    first = tasks[0]
    assert first.instruction == "Simplify $(3 + 2i) + (1 + 4i)$."
    assert first.hidden["answer"] == "4 + 6i"
    assert first.hidden["knowledge_point"] == "Complex Numbers"
    assert first.data["level"] == 1
    # nested braces inside the box survive
    assert any(t.hidden["answer"] == r"-\frac{2}{3}" for t in tasks)
    assert all(t.hidden["answer"] for t in tasks)
    texts = load_knowledge(SHARED / "algebra_knowledge.json")
    assert len(texts) > 1000 and all(t.strip() for t in texts)


@needs_shared
def test_setup_with_dataset_and_limit() -> None:
    source = TaskSource(
        dataset=SHARED / "algebra.json", knowledge=SHARED / "algebra_knowledge.json", limit=7
    )
    setup = MathEnvironment.setup(source)
    assert len(setup.tasks) == 7
    env = setup.factory()
    assert isinstance(env, MathEnvironment)
    assert len(env.knowledge.texts) > 1000


def test_bad_files_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not found"):
        load_problems(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("[{", encoding="utf-8")
    with pytest.raises(UserError, match="not valid JSON"):
        load_problems(broken)
    nobox = tmp_path / "nobox.json"
    nobox.write_text(json.dumps([{"problem": "1+1?", "solution": "It is 2."}]), "utf-8")
    with pytest.raises(UserError, match="boxed"):
        load_problems(nobox)
    notlist = tmp_path / "knowledge.json"
    notlist.write_text(json.dumps({"a": 1}), "utf-8")
    with pytest.raises(UserError, match="list of texts"):
        load_knowledge(notlist)


def test_generator_is_deterministic_and_covers_every_point_and_level() -> None:
    a, b = generate(50, seed=3, levels=LEVELS), generate(50, seed=3, levels=LEVELS)
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    assert [t.instruction for t in generate(50, seed=4)] != [t.instruction for t in a]
    cells = Counter((t.hidden["knowledge_point"], t.data["level"]) for t in a)
    assert set(cells) == {(kp, lv) for kp in KNOWLEDGE_POINTS for lv in LEVELS}
    assert len({t.instruction for t in generate(200, seed=0)}) == 200
    assert len(MathEnvironment.setup(TaskSource(count=12, limit=5)).tasks) == 5


async def test_generated_answers_are_checked_correct() -> None:
    """The worked solution's last computation is the answer, per the answer checker."""
    tasks = generate(50, seed=0, levels=LEVELS)  # every level, the ones runs skip too
    checker, calc = AnswerChecker(), Calculator()
    failures: list[str] = []

    async def one(task_index: int) -> None:
        task = tasks[task_index]
        answer = task.hidden["answer"]
        if not await checker.check(answer, answer):
            failures.append(f"{task.id}: answer does not match itself")
        if await checker.check(task.hidden["wrong_answer"], answer):
            failures.append(f"{task.id}: wrong answer accepted")
        last = task.hidden["steps"][-1]
        if "=" not in last:
            value = (await calc(last)).split(" ≈ ")[0]
            if not await checker.check(value, answer):
                failures.append(f"{task.id}: {last} -> {value}, expected {answer}")

    async with anyio.create_task_group() as tg:
        for i in range(len(tasks)):
            tg.start_soon(one, i)
    assert not failures

"""OS tasks in the real sandbox: every check fails before its example solution and passes after.

Covers CapaBench's shared OS tasks (../shared/capabench/os/task1-4.json; task5
is a git level and is refused) and every template of the built-in generator.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import anyio
import pytest

from agentbus import TaskSource, UserError
from environments.os.env import OsEnvironment
from environments.os.generator import CATEGORIES, generate, maker_at
from environments.os.judge import judge, prepare
from environments.os.loader import load_path
from environments.os.task import OsTask
from environments.sandbox import Sandbox
from environments.sandbox import persistent_unavailable as unavailable

SHARED = Path(__file__).resolve().parents[4] / "shared" / "capabench" / "os"
needs_bwrap = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"no shared data at {SHARED}")


async def _before_after(task: OsTask) -> tuple[bool, bool, list[str]]:
    async with Sandbox() as box:
        problems = await prepare(task, box)
        before = await judge(task, box, "not the answer")
        assert task.example is not None
        result = await box.run(task.example.code)
        last = task.steps[-1] if task.steps else None
        answer = result.output.strip() if last and last.kind == "answer" else None
        if task.match is not None and last is not None and last.text != "$OUTPUT":
            answer = last.text
        after = await judge(task, box, answer)
        if not after.passed:  # say what the example printed, for a failure's message
            problems = [*problems, f"example printed {result.output!r}: {after}"]
        return before.passed, after.passed, problems


@needs_bwrap
@needs_shared
@pytest.mark.parametrize("number", [1, 2, 3, 4])
async def test_shared_task_check_fails_before_and_passes_after(number: int) -> None:
    (task,) = load_path(SHARED / f"task{number}.json")
    before, after, problems = await _before_after(task)
    assert problems == []
    assert (before, after) == (False, True)


@needs_shared
def test_a_git_level_in_the_os_folder_is_refused_in_one_line() -> None:
    with pytest.raises(UserError, match=r"not an OS task.*--env git"):
        load_path(SHARED / "task5.json")
    assert len(load_path(SHARED)) == 4  # the folder: task5 skipped


def _template_of(i: int, seed: int) -> str:
    """Which template made generated task ``i`` (the generator's own draw)."""
    return maker_at(seed, i)[0].name


def _one_per_template() -> list[OsTask]:
    makers = {m.name for _, ms in CATEGORIES for m in ms}
    seen: dict[str, OsTask] = {}
    for i, task in enumerate(generate(120, seed=3)):
        seen.setdefault(_template_of(i, 3), task)
    assert set(seen) == makers, f"templates never drawn: {makers - set(seen)}"
    return list(seen.values())


@needs_bwrap
async def test_every_generated_template_fails_before_and_passes_after() -> None:
    results: dict[str, tuple[bool, bool, list[str]]] = {}

    async def one(task: OsTask) -> None:
        results[task.id] = await _before_after(task)

    async with anyio.create_task_group() as tg:
        for task in _one_per_template():
            tg.start_soon(one, task)
    bad = {k: v for k, v in results.items() if v[:2] != (False, True) or v[2]}
    assert not bad


def test_generator_is_prefix_stable_and_unique() -> None:
    small = [t.to_task() for t in generate(5, seed=2)]
    large = [t.to_task() for t in generate(40, seed=2)]
    assert small == large[:5]
    assert len({t.instruction for t in large}) == 40
    # a 30-task block holds each category ten times (the truth table's mix), in a
    # seeded order: the old ``i mod 3`` gave every 3-task run one of each
    block = Counter(t.category for t in generate(30, seed=2))
    assert block == {"file": 10, "settings": 10, "process": 10}
    firsts = Counter(generate(1, seed=s)[0].category for s in range(30))
    assert len(firsts) == 3 and firsts["file"] < 20  # task 0 was always a file task


def test_setup_refuses_in_one_line_without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    import environments.os.env as env_module

    monkeypatch.setattr(env_module, "unavailable", lambda: "bubblewrap is unavailable: test")
    with pytest.raises(UserError) as exc:
        OsEnvironment.setup(TaskSource(count=2))
    assert "\n" not in str(exc.value) and "bubblewrap is unavailable" in str(exc.value)

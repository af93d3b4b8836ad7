"""A task-source flag that would have no effect is refused in one line, not recorded and ignored.

``--knowledge`` without ``--dataset`` used to be accepted, written to
manifest.json and ignored (the built-in generator has its own knowledge
points); so was ``--knowledge`` on an environment that reads none, and
``--tasks`` beside a task file (every task of the file runs; ``--limit`` is
the flag that cuts it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from agentbus.app.cli_args import parse
from agentbus.core.errors import UserError


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    knowledge = tmp_path / "knowledge.json"
    knowledge.write_bytes(orjson.dumps([{"name": "x", "text": "y"}]))
    problems = tmp_path / "problems.json"
    problems.write_bytes(orjson.dumps([{"id": "p1", "question": "1+1", "answer": "2"}]))
    return knowledge, problems


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--env", "math"], "--knowledge has no effect without --dataset"),
        (["--env", "ticket"], "--knowledge has no effect on --env ticket"),
    ],
)
def test_knowledge_where_nothing_reads_it_is_refused(
    files: tuple[Path, Path], flags: list[str], words: str
) -> None:
    with pytest.raises(UserError, match=words):
        parse([*flags, "--knowledge", str(files[0])])


def test_tasks_beside_a_task_file_is_refused_and_limit_is_named(files: tuple[Path, Path]) -> None:
    with pytest.raises(UserError, match=r"--tasks has no effect with --dataset.*--limit"):
        parse(["--env", "math", "--dataset", str(files[1]), "--tasks", "5"])


def test_the_settings_where_the_flags_act_still_parse(files: tuple[Path, Path]) -> None:
    knowledge, problems = files
    config = parse(["--env", "math", "--dataset", str(problems), "--knowledge", str(knowledge)])
    assert config.knowledge == knowledge
    assert parse(["--env", "math", "--tasks", "5"]).tasks == 5
    assert parse(["--env", "git", "--dataset", str(problems), "--limit", "1"]).limit == 1


def test_the_command_line_says_it_in_one_line(files: tuple[Path, Path], tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "agentbus.run", "--knowledge", str(files[0]), "--run-dir"]
    out = subprocess.run([*cmd, str(run_dir)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().count("\n") == 0 and "--knowledge has no effect" in out.stderr
    assert not (run_dir / "manifest.json").exists()

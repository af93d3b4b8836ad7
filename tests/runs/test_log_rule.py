"""One rule for a damaged event log, in resume and in ``agentbus.report`` (issue 29, point 5).

Only a torn last line (a write cut short by a crash) is repaired; anything
else (a corrupt line in the middle, a gzipped or binary file) is refused with
one line, exit 2 and the file left byte for byte as it was. Before, resume
"repaired" a gzipped log by deleting all of it and re-ran every episode, and
the report skipped a middle line that resume refused.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from tests.helpers.cli_run import python_m

COMMON = ["--slots", "planning", "--sim-speed", "0", "--progress", "off", "--no-plots"]


def cli(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return python_m(module, *args, timeout=180, cwd=cwd)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished run (2 tasks x 2 coalitions), copied by each test."""
    root = tmp_path_factory.mktemp("logrule")
    out = cli("agentbus.run", *COMMON, "--tasks", "2", "--run-dir", "run", cwd=root)
    assert out.returncode == 0, out.stderr
    return root / "run"


def copy(run: Path, tmp: Path) -> Path:
    dst = tmp / "run"
    shutil.copytree(run, dst)
    return dst


def refused_by_both(run: Path, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Resume and report (their CLI entry points) each refuse in one line; the log is untouched."""
    from agentbus.app.report import main as report
    from agentbus.app.run import main as resume

    log = run / "events.jsonl"
    before = log.read_bytes()
    for name, command in (
        ("resume", lambda: resume(["--resume", str(run), "--progress", "off", "--no-plots"])),
        ("report", lambda: report([str(run), "--no-plots", "--quiet"])),
    ):
        status = command()
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if line.strip()]
        assert status == 2, (name, err)
        assert len(lines) == 1 and needle in lines[0], (name, err)
        assert log.read_bytes() == before, f"{name} changed the log"


def test_a_gzipped_log_is_refused_and_left_untouched(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy(finished_run, tmp_path)
    log = run / "events.jsonl"
    log.write_bytes(gzip.compress(log.read_bytes()))
    refused_by_both(run, "gzip-compressed data", capsys)


def test_a_corrupt_middle_line_is_refused_by_resume_and_report(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy(finished_run, tmp_path)
    log = run / "events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[len(lines) // 2] = b'{"type": "episode.ended", "oops\n'
    log.write_bytes(b"".join(lines))
    refused_by_both(run, f"line {len(lines) // 2 + 1} is corrupt", capsys)


def test_a_torn_last_line_is_skipped_by_the_report(finished_run: Path, tmp_path: Path) -> None:
    """The report reads a log with a torn last line (resume's repair: tests/runs/test_store_log.py)."""
    from agentbus.app.report import main

    run = copy(finished_run, tmp_path)
    log = run / "events.jsonl"
    with open(log, "ab") as fh:
        fh.write(b'{"v":1,"seq":999,"type":"episode.ended","episode_id":"x","outc')
    before = log.read_bytes()
    assert main([str(run), "--no-plots", "--quiet"]) == 0
    assert log.read_bytes() == before  # the report reads, never repairs
    results = orjson.loads((run / "results.json").read_bytes())
    assert results["models"]["sim:strong"]["episodes"] == 4  # 2 tasks x 2 coalitions

"""The command line: help, and one clear line with exit 2 for bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentbus.run", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_help_lists_the_main_flags() -> None:
    out = run("--help")
    assert out.returncode == 0
    for flag in ("--env", "--default", "--test", "--slots", "--best", "--adaptive", "--run-dir"):
        assert flag in out.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--concurrency", "lots"], "invalid int value"),
        (["--env", "nope", "--progress", "off"], "unknown environment 'nope'"),
        (["--default", "gpt4", "--progress", "off"], "gpt4"),
        (["--slots", "planning,teleport", "--progress", "off"], "teleport"),
        (["--concurrency", "0"], "concurrency"),
        (["--test", "sim:genius", "--progress", "off"], "unknown sim profile 'genius'"),
        (["--dataset", "/no/such/file.json"], "dataset not found"),
        (["--resume", "/no/such/run"], "nothing to resume"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], needle: str, tmp_path: Path) -> None:
    out = run(*args, "--run-dir", str(tmp_path / "run"), cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert needle in lines[0]
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "run").exists(), "bad input must not leave a run directory behind"


def test_malformed_config_file_names_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_text('env = "math"\nconcurency = 5\n')
    out = run("--config", str(cfg), cwd=tmp_path)
    assert out.returncode == 2
    assert "concurency: unknown setting" in out.stderr
    cfg.write_text("env = [unclosed\n")
    out = run("--config", str(cfg), cwd=tmp_path)
    assert out.returncode == 2 and "not valid TOML" in out.stderr

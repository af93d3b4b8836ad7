"""Hostile inputs on the command line (issue 29, point 4): one clear line and exit 2.

Each case is a real ``python -m agentbus.run`` in a subprocess, as a user or an
attacker would type it: device files and FIFOs as datasets, files over the
size cap, absurd numbers, binary and deeply nested config files, malformed OS
tasks, ``--resume`` on a file, an abbreviated ``--token``. None may hang, read
without a bound, or end in a traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

HUGE = str(2**64)


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentbus.run", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def files(tmp: Path) -> None:
    """The hostile files the cases name, all under ``tmp``."""
    (tmp / "binary.toml").write_bytes(bytes(range(256)) * 8)
    (tmp / "folder").mkdir()
    (tmp / "deep.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp / "deep.json").write_text("[" * 5000 + "]" * 5000)
    os.mkfifo(tmp / "fifo.json")
    task = {"description": "say hi", "evaluation": {"match": 7}}
    (tmp / "match7.json").write_bytes(orjson.dumps(task))
    task = {"description": "say hi", "evaluation": {"match": {"regex": "(["}}}
    (tmp / "regex.json").write_bytes(orjson.dumps(task))
    task = {"description": "x", "evaluation": {"check": {"file": "/dev/zero"}}}
    (tmp / "devscript.json").write_bytes(orjson.dumps(task))
    problem = {"problem": "1+1?", "solution": "\\boxed{2}", "level": "Level 1", "type": "x"}
    (tmp / "big.json").write_bytes(orjson.dumps([problem] * 40))  # ~3 KB
    (tmp / "afile").write_text("not a run directory\n")


CASES: list[tuple[list[str], str]] = [
    (["--dataset", "/dev/zero"], "not a regular file"),
    (["--env", "os", "--dataset", "/dev/zero"], "not a regular file"),
    (["--env", "os", "--dataset", "fifo.json"], "not a regular file"),
    (["--knowledge", "/dev/zero"], "not a regular file"),
    (["--dataset", "big.json"], "over the 1,024 bytes limit"),
    (["--tasks", "99999999999999999999"], "tasks: 99999999999999999999 is out of range"),
    (["--tasks", "5000000"], "tasks: Input should be less than or equal to 1000000"),
    (["--max-steps", HUGE], "max_steps"),
    (["--concurrency", HUGE], "concurrency"),
    (["--seed", HUGE], "seed"),
    (["--budget-usd", "inf"], "budget_usd: Input should be a finite number"),
    (["--config", "binary.toml"], "binary.toml is not UTF-8 text"),
    (["--config", "folder"], "folder is a directory"),
    (["--config", "deep.toml"], "nested too deeply"),
    (["--dataset", "deep.json"], "nested too deeply"),
    (["--env", "os", "--dataset", "deep.json"], "nested too deeply"),
    (["--env", "os", "--dataset", "match7.json"], "evaluation.match must be a string"),
    (["--env", "os", "--dataset", "regex.json"], "not a valid regular expression"),
    (["--env", "os", "--dataset", "devscript.json"], "script file /dev/zero is not a regular"),
    (["--resume", "afile"], "--resume takes a run directory; afile is a file"),
    (["--tok", "SECRET"], "unrecognized arguments: --tok"),
    (["--test", "vllm:http://u:SECRET@127.0.0.1:9/v1#m"], "carries a credential in its URL"),
    (["--test", "openai:http://127.0.0.1:9/v1?api_key=SECRET#m"], "api_key=***"),
]


#: runs every case through the CLI's entry point in one fresh interpreter (one
#: import of agentbus instead of one per case), each with its own stderr and status
DRIVER = """
import contextlib, io, json, os, sys
from agentbus.app.run import main
out = []
for args in json.loads(sys.argv[1]):
    if "big.json" in args:  # a 1 KiB cap (the default 512 MiB would take a large file)
        os.environ["AGENTBUS_MAX_DATASET_MB"] = str(1024 / 2**20)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            status = main([*args, "--progress", "off", "--run-dir", "run"])
        except SystemExit as exc:
            status = exc.code
    os.environ.pop("AGENTBUS_MAX_DATASET_MB", None)
    out.append([status, err.getvalue()])
print(json.dumps(out))
"""


def test_hostile_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    files(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps([args for args, _ in CASES])],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    wrong = []
    for (args, needle), (status, err) in zip(CASES, json.loads(proc.stdout), strict=True):
        lines = [line for line in err.splitlines() if line.strip()]
        ok = status == 2 and len(lines) == 1 and needle in lines[0]
        ok = ok and ("SECRET" not in err or "--tok" in needle)  # a refusal quotes no key
        if not ok:
            wrong.append(f"{' '.join(args)}: exit {status}: {err.strip()[:300]}")
    assert not wrong, "\n".join(wrong)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [(["--dataset", "/dev/zero"], "not a regular file"), (["--tasks", HUGE], "out of range")],
)
def test_as_its_own_process(args: list[str], needle: str, tmp_path: Path) -> None:
    """Two of the cases end to end: exit status and stderr of a process of their own."""
    out = run(*args, "--progress", "off", "--run-dir", "run", cwd=tmp_path)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2 and len(lines) == 1 and needle in lines[0], out.stderr


def test_ctrl_c_during_task_generation_stops_the_run(tmp_path: Path) -> None:
    """Generating 100,000 math tasks takes minutes; the first Ctrl-C ends it at once."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentbus.run", "--tasks", "100000", "--progress", "off"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # imports take ~2 s on an idle machine, then the generator is busy for minutes;
    # a Ctrl-C during the imports must end the run as cleanly (a busy CI box may be there)
    time.sleep(8)
    assert proc.poll() is None, proc.communicate()
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert time.monotonic() - sent < 10
    assert "interrupted" in out + err and "Traceback" not in err
    assert "--resume" not in out  # nothing was written, so there is nothing to resume
    assert not list(tmp_path.rglob("manifest.json"))


def test_resuming_a_larger_run_with_fewer_tasks_is_refused(tmp_path: Path) -> None:
    """A 3-task run dir resumed with --tasks 2 would report n=3: refused, log untouched."""
    common = ["--slots", "planning", "--sim-speed", "0", "--progress", "off", "--no-plots"]
    first = run(*common, "--tasks", "3", "--run-dir", "run", cwd=tmp_path, timeout=120)
    assert first.returncode == 0, first.stderr
    log = (tmp_path / "run" / "events.jsonl").read_bytes()
    out = run(*common, "--tasks", "2", "--run-dir", "run", cwd=tmp_path, timeout=120)
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "holds episodes of 1 task(s) outside this run's 2" in lines[0]
    assert (tmp_path / "run" / "events.jsonl").read_bytes() == log

"""Interrupt a real run (kill -9, or Ctrl-C), ``--resume DIR`` it, compare with an uninterrupted run.

The interrupted run is a real ``python -m agentbus.run`` subprocess, slowed
down so the signal lands mid-run; it is resumed the way the README says, with
``python -m agentbus.run --resume DIR`` and no other flag. After the kill the
test also tears the last line of the event log (what a power cut can leave).
The resumed run must skip every episode that already had an outcome, run the
rest, and end with the per-coalition table of a run that was never
interrupted (temperature 0): no outcome lost, none counted twice.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentbus.core.record import payload_counts as counts

LIMIT = 8  # 128 episodes a run: enough to kill mid-run, cheap on 2 cores
SLOTS = 4
TOTAL = LIMIT * 2**SLOTS
BASE = [sys.executable, "-m", "agentbus.run", "--env", "math", "--limit", str(LIMIT)]
QUIET = ["--progress", "off"]
FAST = ["--sim-speed", "0"]  # no simulated latency
SLOW = ["--concurrency", "8", "--sim-speed", "30"]  # latency on: the kill lands mid-run


@cache
def cli_ready() -> bool:
    """The run CLI takes --run-dir and its application layer imports."""
    try:
        app = importlib.import_module("agentbus.app.evaluate")
        args = importlib.import_module("agentbus.app.cli_args")
    except Exception:
        return False
    return bool(app) and "--run-dir" in Path(str(args.__file__)).read_text()


def events(run_dir: Path) -> list[dict[str, Any]]:
    """The complete events of the log (a kill can leave the last line half written)."""
    out = []
    for raw in (run_dir / "events.jsonl").read_bytes().split(b"\n"):
        try:
            out.append(orjson.loads(raw))
        except orjson.JSONDecodeError:
            continue
    return out


def ended_lines(run_dir: Path) -> int:
    path = run_dir / "events.jsonl"
    if not path.exists():
        return 0
    return path.read_bytes().count(b'"type":"episode.ended"')


def tear(path: Path) -> None:
    with open(path, "ab") as fh:
        fh.write(b'{"v":1,"seq":999999,"type":"episode.ended","episode_id":"tor')


def per_coalition(run_dir: Path) -> Counter[str]:
    """Counting outcomes per (test model, coalition), each episode id once."""
    seen: set[str] = set()
    tally: Counter[str] = Counter()
    for e in events(run_dir):
        if e["type"] == "episode.ended" and counts(e) and e["episode_id"] not in seen:
            seen.add(e["episode_id"])
            tally[f"{e.get('test_model')}|{'+'.join(e.get('coalition', []))}"] += 1
    return tally


async def run_to_end(args: list[str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    with anyio.fail_after(timeout):
        result = await anyio.run_process(args, check=False)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    return result


async def interrupt_mid_run(run: Path, sig: signal.Signals = signal.SIGKILL) -> int:
    """Start a run, send ``sig`` once an eighth of its episodes have ended; its exit code."""
    proc = await anyio.open_process(
        [*BASE, "--run-dir", str(run), *QUIET, *SLOW], start_new_session=True
    )
    try:
        with anyio.fail_after(120):
            while ended_lines(run) < TOTAL // 8:
                assert proc.returncode is None, "the run ended before it could be killed"
                await anyio.sleep(0.05)
        os.killpg(proc.pid, sig)
        with anyio.fail_after(60):
            await proc.wait()
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        await proc.aclose()
    assert proc.returncode is not None
    return proc.returncode


def table(run_dir: Path) -> dict[str, dict[str, tuple[int, float]]]:
    """results.json's per-coalition table: model -> coalition -> (n, mean)."""
    results = orjson.loads((run_dir / "results.json").read_bytes())
    return {
        model: {k: (v["n"], round(v["mean"], 12)) for k, v in summary["coalitions"].items()}
        for model, summary in results["models"].items()
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run of the same evaluation."""
    if not cli_ready():
        pytest.skip("python -m agentbus.run with --run-dir is not ready")
    ref = tmp_path_factory.mktemp("reference") / "run"
    anyio.run(run_to_end, [*BASE, "--run-dir", str(ref), *QUIET, *FAST], 240)
    assert sum(per_coalition(ref).values()) == TOTAL
    return ref


def check_resumed(run: Path, reference: Path, before: set[str], offset: int) -> None:
    after = events(run)
    assert [e["seq"] for e in after] == list(range(1, len(after) + 1))
    rerun = {e["episode_id"] for e in after[offset:] if e["type"] == "episode.started"}
    assert not rerun & before, "finished episodes were run again"
    outcomes = Counter(e["episode_id"] for e in after if e["type"] == "episode.ended" and counts(e))
    assert len(outcomes) == TOTAL and max(outcomes.values()) == 1, "an outcome counted twice"
    assert per_coalition(run) == per_coalition(reference)
    assert table(run) == table(reference)
    check_bill(run, reference)


def call_keys(run_dir: Path) -> set[str]:
    """The keys of the completed calls in the run's call file (a torn last line skipped)."""
    keys = set()
    for line in (run_dir / "llm-cache.jsonl").read_bytes().splitlines():
        with contextlib.suppress(orjson.JSONDecodeError):
            keys.add(orjson.loads(line)["k"])
    return keys


def check_bill(run: Path, reference: Path) -> None:
    """The bill is the log (issue 39): every call paid before the interruption stays on it."""
    made, needed = call_keys(run), call_keys(reference)
    assert needed <= made  # every call the uninterrupted run made was made (and paid) ...
    bill = orjson.loads((run / "results.json").read_bytes())["cost"]["run"]
    assert bill["sent_calls"] == len(made)  # ... and is billed once, from both processes


@pytest.mark.slow
async def test_kill_9_then_resume_gives_the_uninterrupted_table(
    tmp_path: Path, reference: Path
) -> None:
    run = tmp_path / "run"
    assert await interrupt_mid_run(run, signal.SIGKILL) == -signal.SIGKILL
    before = {e["episode_id"] for e in events(run) if e["type"] == "episode.ended" and counts(e)}
    assert 0 < len(before) < TOTAL
    offset = len(events(run))
    tear(run / "events.jsonl")  # a torn write on top of the kill

    # resumed as the README says: the run directory alone, its config from the manifest
    result = await run_to_end([sys.executable, "-m", "agentbus.run", "--resume", str(run)], 240)
    assert f"{len(before)} resumed from the log" in result.stdout.decode()
    check_resumed(run, reference, before, offset)


@pytest.mark.slow
async def test_ctrl_c_then_resume_gives_the_uninterrupted_table(
    tmp_path: Path, reference: Path
) -> None:
    run = tmp_path / "run"
    code = await interrupt_mid_run(run, signal.SIGINT)
    assert code == 130, f"Ctrl-C should exit 130 with a resume hint, got {code}"
    before = {e["episode_id"] for e in events(run) if e["type"] == "episode.ended" and counts(e)}
    assert 0 < len(before) < TOTAL
    offset = len(events(run))
    # resumed without the simulated latency the interruption needed (not a result key)
    resume = [sys.executable, "-m", "agentbus.run", "--resume", str(run), *QUIET, *FAST]
    result = await run_to_end(resume, 240)
    assert f"{len(before)} resumed from the log" in result.stdout.decode()
    check_resumed(run, reference, before, offset)

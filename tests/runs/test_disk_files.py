"""Disk and files: each problem is one clear line, and nothing written before is lost.

Through the command line, as a user meets them: a disk that fills up during
the run (a real tmpfs of 64 KiB when the test can mount one), a read-only run
directory (a read-only bind mount, or permissions when not root), the run
directory of another run and of a newer agentbus, and an event log with a
corrupt line in the middle or a torn last line.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.helpers.cli_run import env_with_repo, python_m

FAST = ["--sim-speed", "0", "--sim-transport", "inprocess", "--progress", "off", "--no-preflight"]
SMALL = ["--limit", "4", "--slots", "planning"]  # 4 tasks x 2 coalitions = 8 episodes
EPISODES = 8


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return python_m("agentbus.run", *args, timeout=180, env=env_with_repo())


def one_line(out: subprocess.CompletedProcess[str], code: int) -> str:
    assert out.returncode == code, out.stdout[-1000:] + out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    lines = [x for x in out.stderr.splitlines() if x.startswith("agentbus:")]
    assert len(lines) == 1, out.stderr
    return lines[0]


def counted(run_dir: Path) -> list[str]:
    """Episode ids with a counting outcome, in log order (each once if nothing doubled)."""
    ids = []
    for raw in (run_dir / "events.jsonl").read_bytes().splitlines():
        with contextlib.suppress(orjson.JSONDecodeError):
            event = orjson.loads(raw)
            if event.get("type") == "episode.ended" and event["outcome"].get("error_kind") in (
                None,
                "step_limit",
            ):
                ids.append(event["episode_id"])
    return ids


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished run, copied by the tests that need one."""
    run = tmp_path_factory.mktemp("finished") / "run"
    out = cli(*FAST, *SMALL, "--run-dir", str(run))
    assert out.returncode == 0, out.stderr
    assert len(counted(run)) == EPISODES
    return run


def copy_of(run: Path, where: Path) -> Path:
    target = where / "run"
    shutil.copytree(run, target)
    (target / ".lock").unlink(missing_ok=True)
    return target


@contextlib.contextmanager
def mounted(*args: str) -> Iterator[None]:
    """``mount ARGS``; skip the test when this process may not mount."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a file system needs root")
    made = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot mount here: {made.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", args[-1]], check=False)


@pytest.mark.slow
def test_full_disk_is_one_line_and_the_run_resumes_elsewhere(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    with mounted("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)):
        out = cli(*FAST, *SMALL, "--run-dir", str(disk / "run"))
        line = one_line(out, 2)
        assert "cannot write the event log" in line and "No space left on device" in line
        assert f"--resume {disk / 'run'}" in line
        before = counted(disk / "run")
        kept = copy_of(disk / "run", tmp_path)
    written = (kept / "events.jsonl").read_bytes()
    complete = written[: written.rfind(b"\n") + 1]
    out = cli("--resume", str(kept))
    assert out.returncode == 0, out.stderr
    after = (kept / "events.jsonl").read_bytes()
    assert after.startswith(complete), "events written before the disk filled were lost"
    ids = counted(kept)
    assert len(ids) == len(set(ids)) == EPISODES
    assert ids[: len(before)] == before


def test_read_only_run_dir_is_one_line_and_untouched(finished: Path, tmp_path: Path) -> None:
    run = copy_of(finished, tmp_path)
    snapshot = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    if os.geteuid() == 0:
        with mounted("--bind", "-o", "ro", str(run), str(run)):
            subprocess.run(["mount", "-o", "remount,ro,bind", str(run)], check=False)
            line = one_line(cli("--resume", str(run)), 2)
    else:
        run.chmod(0o555)
        try:
            line = one_line(cli("--resume", str(run)), 2)
        finally:
            run.chmod(0o755)
    assert f"cannot use run dir {run}" in line
    assert "Read-only file system" in line or "Permission denied" in line
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == snapshot


def test_run_dir_of_another_run_is_refused_naming_the_difference(
    finished: Path, tmp_path: Path
) -> None:
    run = copy_of(finished, tmp_path)
    before = (run / "events.jsonl").read_bytes()
    line = one_line(cli(*FAST, *SMALL, "--seed", "5", "--run-dir", str(run)), 2)
    assert "was made with seed=0 (this run asks seed=5)" in line
    assert (run / "events.jsonl").read_bytes() == before


def test_run_dir_of_a_newer_version_is_refused(finished: Path, tmp_path: Path) -> None:
    run = copy_of(finished, tmp_path)
    manifest = orjson.loads((run / "manifest.json").read_bytes())
    manifest["format"] = 99
    (run / "manifest.json").write_bytes(orjson.dumps(manifest))
    before = (run / "events.jsonl").read_bytes()
    line = one_line(cli("--resume", str(run)), 2)
    assert "written by a newer agentbus" in line and "format 99" in line
    assert (run / "events.jsonl").read_bytes() == before


def test_corrupt_line_in_the_middle_is_one_line_and_the_log_is_kept(
    finished: Path, tmp_path: Path
) -> None:
    run = copy_of(finished, tmp_path)
    lines = (run / "events.jsonl").read_bytes().splitlines(keepends=True)
    lines[3] = b'{"v":1,"seq":4,"type":"episode.ended" GARBAGE\n'
    damaged = b"".join(lines)
    (run / "events.jsonl").write_bytes(damaged)
    line = one_line(cli("--resume", str(run)), 2)
    assert "events.jsonl line 4 is corrupt" in line
    assert (run / "events.jsonl").read_bytes() == damaged


def test_torn_last_line_is_cut_off_and_the_run_completes(finished: Path, tmp_path: Path) -> None:
    run = copy_of(finished, tmp_path)
    whole = (run / "events.jsonl").read_bytes()
    with open(run / "events.jsonl", "ab") as fh:
        fh.write(b'{"v":1,"seq":999,"type":"episode.ended","episode_id":"to')
    out = cli("--resume", str(run))
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    after = (run / "events.jsonl").read_bytes()
    assert after.startswith(whole) and b'"episode_id":"to' not in after
    assert len(counted(run)) == EPISODES

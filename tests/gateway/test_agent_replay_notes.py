"""An agent cannot leave itself notes that tell a blame replay from the run.

The agent below asks its planner one thing, or, when it finds a note that an
earlier process of it left in its working directory, something else; then it
leaves a note. With a working directory shared by the run's processes (the
denial sandbox of before), the episodes' prompts depended on which process ran
first and every blame replay found the note the run had left, so a replay did
not ask what its episode had asked: an agent could steer its own blame. With a
fresh private directory per process, every episode and every replay is a
first visit: each asks the same thing, and blame reproduces every failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from tests.helpers.cli_run import ended_episodes, python_m, venv_env
from tests.helpers.sandbox_marks import needs_bwrap

NOTES = r"""
import json, os, sys, urllib.request
task = json.load(sys.stdin)
seen = os.path.exists("note.txt")
ask = "a replay? " if seen else "plan: "
body = {"model": "planner", "messages": [{"role": "user", "content": ask + task["question"]}]}
head = {"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
        "Content-Type": "application/json"}
url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
req = urllib.request.Request(url, json.dumps(body).encode(), head)
with urllib.request.urlopen(req, timeout=60) as r:
    r.read()
open("note.txt", "w").write("been here")
print(json.dumps({"answer": "no answer", "seen": seen}))
"""


@needs_bwrap
def test_notes_left_by_an_agent_reach_neither_a_sibling_nor_a_replay(tmp_path: Path) -> None:
    (tmp_path / "notes.py").write_text(NOTES)
    run_dir = tmp_path / "run"
    proc = python_m(
        "agentbus.run", "--agent-cmd", f"{sys.executable} notes.py", "--env", "math",
        "--limit", "2", "--scorer", "numeric", "--slots", "planner", "--sim-speed", "0",
        "--no-plots", "--progress", "off", "--run-dir", str(run_dir), "--no-preflight",
        "--keep-going", cwd=tmp_path, env=venv_env(), timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.py", "run"]
    episodes = ended_episodes(run_dir)
    assert len(episodes) == 4
    assert [e["outcome"]["details"]["result"]["seen"] for e in episodes] == [False] * 4
    blamed = python_m("agentbus.blame", str(run_dir), cwd=tmp_path, env=venv_env(), timeout=300)
    assert blamed.returncode == 0, blamed.stdout[-2000:] + blamed.stderr[-2000:]
    kept = orjson.loads((run_dir / "blame.json").read_bytes())["settings"]
    (summary,) = kept.values()  # one blame setting: the failures of the all-default coalition
    assert summary["episodes"] == summary["replayable"] == 2, summary
    assert summary["not_replayable"] == {}, summary

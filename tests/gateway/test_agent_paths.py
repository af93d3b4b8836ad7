"""What the sandbox shows an agent, at the runner and in ``agentbus.sandbox`` (issue 47, item 5).

* a framework agent in a virtualenv under the host's ``/tmp`` (its base
  interpreter elsewhere, its packages reached through a ``.pth`` file) runs
  unchanged: the old sandbox hid ``/tmp`` and failed with ``bwrap: execvp``;
* an agent that opens a host file its sandbox does not show fails with a
  reason naming the path and ``--agent-path``; given that flag it reads it;
* ``python -m agentbus.sandbox`` prints the allowlist: the code folder and
  the interpreter, not the directory it was started in.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agentbus.app.sandbox_cmd import main as show
from agentbus.gateway.context import AgentContext
from agentbus.gateway.isolation import Isolation
from agentbus.gateway.runners import AgentFailed, CommandAgent
from tests.helpers.sandbox_marks import needs_bwrap

CTX = AgentContext(
    task_id="t1",
    base_url="http://127.0.0.1:9/e/x/v1",
    anthropic_base_url="http://127.0.0.1:9/e/x",
    api_key="episode-token",
    off_slots=frozenset(),
)

FRAMEWORK = """import json, sys
import openai  # the framework, from the virtualenv's packages
json.load(sys.stdin)
print(json.dumps({"answer": openai.__name__, "prefix": sys.prefix}))
"""

READER = """import json, sys
task = json.load(sys.stdin)
print(json.dumps({"answer": open(task["path"]).read()}))
"""


async def _run(command: str, launch: Path, isolation: Isolation, **task: str) -> dict:
    agent = CommandAgent(command, cwd=launch, isolation=isolation)
    try:
        return await agent.run({"id": "t1", **task}, CTX)
    finally:
        await agent.aclose()


@pytest.fixture
def tmp_venv(tmp_path: Path) -> Path:
    """A virtualenv under the host's /tmp (pytest's tmp_path), without pip: 1 s, not 5."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv


@needs_bwrap
async def test_a_framework_agent_in_a_virtualenv_under_tmp_just_works(
    tmp_path: Path, tmp_venv: Path
) -> None:
    venv = tmp_venv
    packages = next(venv.glob("lib/python*/site-packages"))
    (packages / "shared.pth").write_text(site.getsitepackages()[0] + "\n")
    code = tmp_path / "agent"
    code.mkdir()
    (code / "agent.py").write_text(FRAMEWORK)
    project = tmp_path / "project"  # agentbus starts here, beside (not above) the venv
    project.mkdir()
    result = await _run(f"{venv}/bin/python {code}/agent.py", project, Isolation())
    assert result == {"answer": "openai", "prefix": str(venv)}


@needs_bwrap
async def test_a_hidden_path_is_named_with_the_flag_that_shows_it(tmp_path: Path) -> None:
    data, code = tmp_path / "data", tmp_path / "code"
    data.mkdir()
    code.mkdir()
    (data / "facts.txt").write_text("42")
    (code / "reader.py").write_text(READER)
    command, path = f"{sys.executable} {code / 'reader.py'}", str(data / "facts.txt")
    with pytest.raises(AgentFailed) as failed:  # a path its command does not name
        await _run(command, tmp_path, Isolation(), path=path)
    reason = str(failed.value)
    assert f"does not show {path} to the agent: give --agent-path {path}" in reason, reason
    shown = await _run(command, tmp_path, Isolation(paths=(data,)), path=path)
    assert shown["answer"] == "42"


def test_the_sandbox_command_prints_the_allowlist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code = tmp_path / "agent"
    code.mkdir()
    (code / "agent.py").write_text("print('{}')\n")
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    monkeypatch.chdir(tmp_path)
    assert show(["--agent-cmd", f"{sys.executable} agent/agent.py", "--agent-path", "/opt"]) == 0
    out = capsys.readouterr().out
    assert f"  {code}  (folder of 'agent/agent.py' in the command)" in out
    assert f"  {Path(sys.prefix)}  (prefix of the command" in out
    assert f"  {tmp_path}  " not in out and ".env" not in out
    assert "writable: /tmp (working directory, HOME, TMPDIR)" in out
    assert show(["--agent-cmd", "python a.py", "--agent-path", str(tmp_path), "--run-dir",
                 str(tmp_path / "run")]) == 2  # fmt: skip
    assert "holds" in capsys.readouterr().err


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="the agent is nobody only when agentbus is root")
async def test_a_folder_nobody_cannot_read_is_named_with_the_remedy(tmp_path: Path) -> None:
    code = tmp_path / "private"
    code.mkdir(mode=0o700)
    (code / "agent.py").write_text(READER)
    with pytest.raises(
        AgentFailed, match=r"runs as the host's nobody, which cannot read .*chmod o\+rX"
    ):
        await _run(f"{sys.executable} {code / 'agent.py'}", tmp_path, Isolation(), path="x")


async def test_beside_agentbus_too_each_process_starts_in_a_fresh_directory(
    tmp_path: Path,
) -> None:
    """``--agent-isolation none``: no sandbox, but nothing left for the next episode either."""
    (tmp_path / "leave.py").write_text(
        "import json, os, sys\njson.load(sys.stdin)\nfound = sorted(os.listdir('.'))\n"
        "open('note.txt', 'w').write('hi')\n"
        "print(json.dumps({'answer': found, 'cwd': os.getcwd()}))\n"
    )
    agent = CommandAgent(f"{sys.executable} leave.py", cwd=tmp_path, isolation=Isolation("none"))
    first, second = [await agent.run({"id": f"t{n}"}, CTX) for n in range(2)]
    assert first["answer"] == second["answer"] == []  # the note of the first is not there
    assert first["cwd"] != second["cwd"] and not await anyio.Path(first["cwd"]).exists()
    assert not (tmp_path / "note.txt").exists()

"""A command agent's sandbox and output caps, at the runner (issue 40, items 1 and 3).

* in the sandbox the agent sees only its own processes, a private ``/tmp``
  (``TMPDIR`` points there), a read-only host with its working directory
  writable, and its memory limit;
* past the output cap on stdout or stderr it is killed and fails naming the
  cap; a result line longer than its cap fails naming that cap; what fits is
  read as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from aiohttp import web

from agentbus.gateway.context import AgentContext
from agentbus.gateway.isolation import Isolation
from agentbus.gateway.runners import AgentFailed, CommandAgent, HttpAgent
from tests.sandbox_marks import needs_bwrap
from tests.stub_http import serving

CTX = AgentContext(
    task_id="t1",
    base_url="http://127.0.0.1:9/e/x/v1",
    anthropic_base_url="http://127.0.0.1:9/e/x",
    api_key="episode-token",
    off_slots=frozenset(),
)


PROBE = r"""
import json, os, sys, tempfile
json.load(sys.stdin)
out = {"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
out["tmpdir"] = tempfile.gettempdir()
out["outside_visible"] = os.path.exists(os.environ["OUTSIDE"])
open("written-here", "w").write("ok")
for target in ("/etc/agentbus-probe", os.environ["OUTSIDE"] + "/x"):
    try:
        open(target, "w").close()
        out[target] = "written"
    except OSError as exc:
        out[target] = exc.strerror
try:
    bytearray(3 << 30)
    out["big"] = "allocated"
except MemoryError:
    out["big"] = "refused"
print(json.dumps({"answer": out}))
"""


@needs_bwrap
async def test_sandbox_shows_only_the_agent_and_a_read_only_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "probe.py").write_text(PROBE)
    monkeypatch.setenv("OUTSIDE", str(outside))
    monkeypatch.setattr("agentbus.gateway.runners.PASSED_ENV", ("PATH", "OUTSIDE"))
    agent = CommandAgent(
        f"{sys.executable} probe.py", cwd=work, isolation=Isolation(memory_mb=1024, cpu_s=30)
    )
    seen = (await agent.run({"id": "t1"}, CTX))["answer"]
    assert len(seen["pids"]) <= 3 and os_pid_absent(seen["pids"])
    assert seen["tmpdir"] == "/tmp"
    assert seen["outside_visible"] is False  # the host's /tmp is not the agent's
    assert (work / "written-here").read_text() == "ok"
    assert seen["/etc/agentbus-probe"] == "Read-only file system"
    assert seen[f"{outside}/x"] in ("Read-only file system", "No such file or directory")
    assert not (outside / "x").exists()
    assert seen["big"] == "refused"  # 3 GiB past the 1024 MiB memory limit


def os_pid_absent(pids: list[int]) -> bool:
    """The sandbox's pids are its own: small numbers from its namespace."""
    return max(pids) < 100


async def test_output_caps_kill_and_name_the_cap(tmp_path: Path) -> None:
    flood = tmp_path / "flood.py"
    flood.write_text(
        "import sys\nstream = getattr(sys, sys.argv[1]).buffer\n"
        "for _ in range(64):\n    stream.write(b'y' * 65536 + b'\\n')\n"
    )
    for stream in ("stdout", "stderr"):
        agent = CommandAgent(f"{sys.executable} {flood} {stream}", output_cap=1 << 20)
        with pytest.raises(AgentFailed, match=f"output cap of 1 MiB on {stream}"):
            await agent.run({"id": "t"}, CTX)
    long_line = tmp_path / "long.py"
    long_line.write_text("print('{\"answer\": \"' + 'z' * 5000 + '\"}')\n")
    with pytest.raises(AgentFailed, match="result cap of 4096 bytes"):
        await CommandAgent(f"{sys.executable} {long_line}", result_cap=4096).run({"id": "t"}, CTX)
    logs_then_result = tmp_path / "fits.py"
    logs_then_result.write_text(
        "import sys\nfor i in range(2000):\n    print('log line', i)\n"
        "sys.stderr.write('e' * 100000)\nprint('{\"answer\": 7}')\n"
    )
    result = await CommandAgent(f"{sys.executable} {logs_then_result}", result_cap=4096).run(
        {"id": "t"}, CTX
    )
    assert result == {"answer": 7}  # only the tail was kept, and it holds the result line


async def test_a_service_answer_past_the_result_cap_is_the_agents_failure() -> None:
    async def handle(request: web.Request) -> web.Response:
        return web.Response(body=b'{"answer": "' + b"z" * (2 << 20) + b'"}')

    app = web.Application()
    app.router.add_post("/run", handle)
    async with serving(app) as url:
        agent = HttpAgent(f"{url}/run")
        try:
            with pytest.raises(AgentFailed, match="result cap of 1 MiB"):
                await agent.run({"id": "t"}, CTX)
        finally:
            await agent.aclose()

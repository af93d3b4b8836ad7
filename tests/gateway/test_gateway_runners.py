"""The external agent runners: a command's clean environment, time limit and group kill; HTTP."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import orjson
import pytest
from aiohttp import web

from agentbus.core.errors import InfraError
from agentbus.gateway.context import AgentContext
from agentbus.gateway.runners import AgentFailed, CommandAgent, HttpAgent, last_json_object
from tests.helpers.stub_http import serving

CTX = AgentContext(
    task_id="t1",
    base_url="http://127.0.0.1:9/e/x/v1",
    anthropic_base_url="http://127.0.0.1:9/e/x",
    api_key="episode-token",
    off_slots=frozenset({"critic"}),
)


def _gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (gone, or a zombie waiting for init)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "agent.py"
    path.write_text(body)
    return f"{sys.executable} {path}"


async def test_command_gets_task_and_gateway_env_but_no_provider_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "canary-openai-7f3a")
    monkeypatch.setenv("SOME_SECRET_TOKEN", "canary-secret-7f3a")
    cmd = _script(
        tmp_path,
        "import json, os, sys\n"
        "task = json.load(sys.stdin)\n"
        "print('some log line')\n"
        "print(json.dumps({'answer': task['q'], 'env': dict(os.environ)}))\n",
    )
    result = await CommandAgent(cmd).run({"id": "t1", "q": "hello"}, CTX)
    assert result["answer"] == "hello"
    env = result["env"]
    assert env["OPENAI_API_KEY"] == "episode-token" == env["ANTHROPIC_API_KEY"]
    assert env["OPENAI_BASE_URL"] == CTX.base_url
    assert env["AGENTBUS_OFF_SLOTS"] == "critic" and env["AGENTBUS_TASK_ID"] == "t1"
    assert "canary" not in orjson.dumps(env).decode()


async def test_command_time_limit_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    cmd = _script(
        tmp_path,
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen(['sleep', '60'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n",
    )
    started = time.monotonic()
    with pytest.raises(AgentFailed, match="time limit of 1s"):
        await CommandAgent(cmd, time_limit_s=1.0).run({"id": "t1"}, CTX)
    assert time.monotonic() - started < 10
    child = int(pidfile.read_text())
    for _ in range(50):  # killed at once; reaped by init shortly after
        if _gone(child):
            break
        await anyio.sleep(0.1)
    else:
        pytest.fail("the agent's child process survived the kill")


async def test_command_failures_are_task_failures(tmp_path: Path) -> None:
    crash = _script(tmp_path, "import sys\nsys.stderr.write('boom happened')\nsys.exit(3)\n")
    with pytest.raises(AgentFailed, match="status 3: boom happened"):
        await CommandAgent(crash).run({"id": "t1"}, CTX)
    silent = _script(tmp_path, "print('no json here')\n")
    with pytest.raises(AgentFailed, match="no JSON object"):
        await CommandAgent(silent).run({"id": "t1"}, CTX)
    with pytest.raises(AgentFailed, match="cannot start"):
        await CommandAgent("/no/such/program").run({"id": "t1"}, CTX)
    assert last_json_object('{"answer": 1}\n{"answer": 2}\nnot json\n\n') == {"answer": 2}


async def test_command_concurrency_is_bounded(tmp_path: Path) -> None:
    cmd = _script(
        tmp_path, "import time, json\ntime.sleep(0.3)\nprint(json.dumps({'answer': 1}))\n"
    )
    agent = CommandAgent(cmd, max_processes=2)
    peak = 0

    async def one() -> None:
        nonlocal peak
        await agent.run({"id": "t"}, CTX)
        peak = max(peak, agent.limiter.borrowed_tokens)

    async def watch() -> None:
        nonlocal peak
        for _ in range(40):
            peak = max(peak, agent.limiter.borrowed_tokens)
            await anyio.sleep(0.02)

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(one)
        tg.start_soon(watch)
    assert peak == 2 and agent.started == 5


async def test_http_agent_service() -> None:
    seen: list[dict] = []

    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        return web.json_response({"answer": body["task"]["q"], "extra": 1})

    app = web.Application()
    app.router.add_post("/run", handle)
    async with serving(app) as url:
        agent = HttpAgent(f"{url}/run")
        try:
            result = await agent.run({"id": "t1", "q": "x"}, CTX)
            assert result == {"answer": "x", "extra": 1}
            assert seen[0]["api_key"] == "episode-token" and seen[0]["off_slots"] == ["critic"]
        finally:
            await agent.aclose()
    down = HttpAgent(f"{url}/run")
    with pytest.raises(InfraError, match="unreachable"):
        await down.run({"id": "t1"}, CTX)
    await down.aclose()

"""The pre-flight check: missing keys and unreachable endpoints cost one line, not a run.

Through the command line in a subprocess, as a user meets them: nothing but
that line is printed and no run directory is made. In process: a live
simulator on loopback passes the probe, a dead replica next to a live one is
only a warning, a server that accepts but never answers times out.
"""

from __future__ import annotations

import io
import socket
import subprocess
import time
from pathlib import Path

import anyio
import pytest

from agentbus.app.config import RunConfig
from agentbus.app.preflight import check
from agentbus.core.errors import InfraError, UserError
from agentbus.sim.config import SimConfig
from agentbus.sim.service import sim_service
from tests.helpers.cli_run import env_with_repo, python_m

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return python_m("agentbus.run", *args, timeout=60, cwd=cwd, env=env_with_repo(without=KEYS))


def assert_one_line_and_nothing_written(out: subprocess.CompletedProcess[str], cwd: Path) -> str:
    assert out.stdout == "", out.stdout
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert not (cwd / "runs").exists(), "a failed pre-flight check must leave no run directory"
    return lines[0]


def test_missing_key_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out = run_cli("--test", "openai:gpt-4o-mini", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    line = assert_one_line_and_nothing_written(out, tmp_path)
    assert "OPENAI_API_KEY" in line and "openai:gpt-4o-mini" in line


def test_unreachable_endpoint_is_one_line_and_exit_1(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    out = run_cli("--default", f"vllm:{url}#m", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    line = assert_one_line_and_nothing_written(out, tmp_path)
    assert url in line and "connection refused" in line, line


def test_a_refused_connection_fails_at_once_not_at_the_timeout() -> None:
    """Refused is an answer: the probe must not wait out its timeout (or retry) for it.

    Timed in process with a timeout far above what a refusal takes, so that a
    loaded machine (process start-up of seconds) cannot fail it, while a probe
    that waited for the timeout would.
    """
    url = f"http://127.0.0.1:{closed_port()}/v1"
    start = time.monotonic()
    with pytest.raises(InfraError, match="connection refused"):
        check(config(f"vllm:{url}#m"), timeout_s=60)
    assert time.monotonic() - start < 30


def test_no_preflight_turns_the_check_off() -> None:
    from agentbus.app.cli_args import parse_command

    assert parse_command([]).preflight
    assert not parse_command(["--no-preflight"]).preflight


def config(*models: str) -> RunConfig:
    return RunConfig(default=models[0], test=list(models[1:]) or ["sim:strong"])


async def test_a_live_server_passes_and_a_dead_replica_only_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    async with sim_service(SimConfig(speed=0, experts=[])) as sim:
        live = sim.base_url
        dead = f"http://127.0.0.1:{closed_port()}/v1"
        await anyio.to_thread.run_sync(lambda: check(config(f"vllm:{live}#weak")))
        warnings = io.StringIO()
        both = config(f"vllm:{live},{dead}#weak", "sim:strong")
        await anyio.to_thread.run_sync(lambda: check(both, out=warnings))
        assert dead in warnings.getvalue() and "other replicas" in warnings.getvalue()
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        # an openai-compatible base URL is probed too (a key is set, so it passes that step)
        await anyio.to_thread.run_sync(lambda: check(config(f"openai:{live}#weak")))


def test_sim_models_need_nothing() -> None:
    check(config("sim:weak", "sim:strong"))


def test_missing_anthropic_key_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(UserError, match="needs the ANTHROPIC_API_KEY environment variable"):
        check(config("sim:weak", "anthropic:claude-3-5-sonnet-latest"))


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)  # connections complete in the backlog, but nothing ever replies
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        start = time.monotonic()
        with pytest.raises(InfraError, match=r"no answer within 0\.5 s"):
            check(config(f"vllm:{url}#m"), timeout_s=0.5)
        assert time.monotonic() - start < 30  # a bound for a hang; the message names the 0.5 s

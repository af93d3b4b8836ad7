"""Your own agent through ``python -m agentbus.run``, as a user runs it (CLI in a subprocess).

* the plain-openai example's README command (fewer tasks);
* a spy agent under a canary: provider keys in agentbus's environment (one of
  them really used upstream, for the unmapped module) never reach the agent's
  environment, stdin or any response it gets; ``--vary critic=off:on`` tells
  the agent which module is off and the gateway refuses that module's calls;
* the Node.js example through ``--agent-cmd`` (npm installs the pinned
  ``openai`` package into the example directory when it is missing).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.cli_run import ended_episodes, python_m, succeeded, venv_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    return succeeded(python_m("agentbus.run", *args, cwd=cwd, env=env, timeout=timeout))


@pytest.mark.slow
def test_plain_openai_example_as_its_readme_says(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    out = _run(
        [
            "--agent", "agent:run", "--dataset", "tasks.jsonl",
            "--slots", "planner,solver,critic", "--limit", "3",
            "--sim-speed", "0", "--no-plots", "--progress", "off", "--run-dir", str(run_dir),
        ],
        EXAMPLES / "plain_openai",
        venv_env(),
    )  # fmt: skip
    assert "planner" in out and "critic" in out
    results = json.loads((run_dir / "results.json").read_text())
    assert results["slots"] == ["planner", "solver", "critic"] and results["env"] == "external"
    episodes = ended_episodes(run_dir)
    assert len(episodes) == 24
    kinds = {m["type"] for e in episodes for m in e["outcome"]["trace"]}
    assert {"GatewayRequest", "GatewayAnswer"} <= kinds
    usage = episodes[0]["outcome"]["usage"]
    assert set(usage) == {"planner", "solver", "critic"}
    assert all(not e["outcome"]["details"].get("unhandled_messages") for e in episodes)


SPY = r"""
import json, os, sys, urllib.request, urllib.error

task = json.loads(sys.stdin.read())
seen = {"env": dict(os.environ), "stdin": task, "responses": {}}

def call(path, body=None, anthropic=False):
    base = os.environ["ANTHROPIC_BASE_URL"] + "/v1" if anthropic else os.environ["OPENAI_BASE_URL"]
    headers = {"Content-Type": "application/json"}
    if anthropic:
        headers["x-api-key"] = os.environ["ANTHROPIC_API_KEY"]
    else:
        headers["Authorization"] = "Bearer " + os.environ["OPENAI_API_KEY"]
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)

def chat(module):
    messages = [{"role": "user", "content": task["question"]}]
    return call("/chat/completions", {"model": module, "messages": messages})

for module in ("planner", "critic", "helper"):
    seen["responses"][module] = chat(module)
seen["responses"]["models"] = call("/models")
hello = {"model": "helper", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
seen["responses"]["anthropic"] = call("/messages", hello, anthropic=True)
print(json.dumps({"answer": "x", "seen": seen}))  # it can write nothing outside its sandbox
"""


@pytest.fixture
def upstream() -> Iterator[str]:
    """A standalone simulator standing in for a keyed provider (vLLM-style endpoint)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentbus.sim.serve", "--port", str(port), "--speed", "0",
         "--experts", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_agent_never_sees_a_provider_key_and_off_modules_are_refused(
    tmp_path: Path, upstream: str
) -> None:
    (tmp_path / "spy.py").write_text(SPY)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps({"id": f"t{i}", "question": f"{i} + 1?", "answer": "x"}) + "\n"
            for i in range(2)
        )
    )
    canaries = {
        "OPENAI_API_KEY": "canary-openai-5d1e9c",
        "ANTHROPIC_API_KEY": "canary-anthropic-5d1e9c",
        "VLLM_API_KEY": "canary-vllm-5d1e9c",  # sent upstream for the unmapped module
    }
    run_dir = tmp_path / "run"
    _run(
        [
            "--agent-cmd", f"{sys.executable} spy.py", "--dataset", str(tasks),
            "--slots", "planner,critic", "--vary", "critic=off:on",
            "--unmapped", f"vllm:{upstream}#weak", "--sim-speed", "0", "--no-plots",
            "--progress", "off", "--run-dir", str(run_dir), "--no-preflight",
        ],
        tmp_path,
        venv_env(**canaries),
    )  # fmt: skip
    records = [e["outcome"]["details"]["result"]["seen"] for e in ended_episodes(run_dir)]
    assert len(records) == 8  # 2 tasks x 4 coalitions
    for seen in records:
        text = json.dumps(seen)
        for value in canaries.values():
            assert value not in text, f"{value} reached the agent ({seen['stdin']['id']})"
        off = (
            seen["env"]["AGENTBUS_OFF_SLOTS"].split(",")
            if seen["env"]["AGENTBUS_OFF_SLOTS"]
            else []
        )
        responses = seen["responses"]
        assert "answer" not in seen["stdin"]  # the expected answer stays with agentbus
        assert responses["planner"][0] == 200
        assert responses["helper"][0] == 200 and responses["anthropic"][0] == 200
        if "critic" in off:
            assert responses["critic"][0] == 403
            assert "switched off" in responses["critic"][1]
        else:
            assert responses["critic"][0] == 200
        models = [m["id"] for m in json.loads(responses["models"][1])["data"]]
        assert models == [s for s in ("planner", "critic") if s not in off]
    offs = [e for e in ended_episodes(run_dir) if e["assignment"]["critic"] == "off"]
    assert len(offs) == 4
    assert all(e["outcome"]["details"]["gateway"]["refused"] == {"critic": 1} for e in offs)
    summary = json.loads((run_dir / "results.json").read_text())["gateway"]
    assert summary["refused"] == {"critic": 4} and summary["unmapped"] == ["helper"]


@pytest.mark.slow
def test_node_example_through_agent_cmd(tmp_path: Path) -> None:
    example = EXAMPLES / "node_agent"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the Node.js example")
    if not (example / "node_modules" / "openai").exists():
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=example, check=True, timeout=300,
            capture_output=True,
        )  # fmt: skip
    run_dir = tmp_path / "run"
    _run(
        [
            "--agent-cmd", "node examples/node_agent/agent.mjs", "--dataset",
            "examples/node_agent/tasks.jsonl", "--limit", "3",
            "--slots", "planner,solver,critic", "--sim-speed", "0", "--no-plots",
            "--progress", "off", "--run-dir", str(run_dir),
        ],
        ROOT,  # as the README says (the sandbox shows the agent its folder, node_modules too)
        venv_env(),
    )  # fmt: skip
    episodes = ended_episodes(run_dir)
    assert len(episodes) == 24
    assert all(e["outcome"].get("error") is None for e in episodes)
    calls = sum(e["outcome"]["llm_calls"] for e in episodes)
    assert calls >= 3 * 24  # planner, solver and critic at least once each
    # The Node agent sends the Python example's prompts, so on the simulator (answers
    # fixed by model and prompt at temperature 0) every cell must end as the Python
    # agent's does: the Python agent's known truth (tests/gateway/test_gateway_truth.py) is then
    # the Node agent's too.
    python_dir = tmp_path / "python"
    _run(
        [
            "--agent", "examples.plain_openai.agent:run", "--dataset",
            "examples/node_agent/tasks.jsonl", "--limit", "3",
            "--slots", "planner,solver,critic", "--sim-speed", "0", "--no-plots",
            "--progress", "off", "--run-dir", str(python_dir),
        ],
        ROOT,
        venv_env(),
    )  # fmt: skip

    def cells(run: Path) -> dict[str, tuple[float, int]]:
        return {
            e["episode_id"]: (e["outcome"]["reward"], e["outcome"]["llm_calls"])
            for e in ended_episodes(run)
        }

    assert cells(run_dir) == cells(python_dir)


@pytest.mark.slow
def test_discover_lists_the_example_modules_and_writes_a_config(tmp_path: Path) -> None:
    out = tmp_path / "agent.toml"
    proc = subprocess.run(
        [
            sys.executable, "-m", "agentbus.discover", "--agent-cmd",
            f"{sys.executable} examples/plain_openai/agent.py",
            "--dataset", "examples/plain_openai/tasks.jsonl", "--tasks", "2",
            "--sim-speed", "0", "--out", str(out),
        ],
        cwd=ROOT, env=venv_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines() if line}
    assert int(rows["planner"][0]) == 2  # one planner call per task
    assert int(rows["solver"][0]) >= 2 and int(rows["critic"][0]) >= 2
    text = out.read_text()
    assert 'slots = ["planner", "solver", "critic"]' in text
    bad = subprocess.run(
        [sys.executable, "-m", "agentbus.discover", "--dataset", "x.jsonl"],
        cwd=ROOT, env=venv_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


@pytest.mark.slow
def test_a_builtin_environment_feeds_your_agent(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    _run(
        [
            "--agent", "examples.plain_openai.agent:run", "--env", "math", "--limit", "1",
            "--slots", "planner,solver", "--unmapped", "sim:weak", "--scorer", "numeric",
            "--sim-speed", "0",
            "--no-plots", "--progress", "off", "--run-dir", str(run_dir),
        ],
        ROOT,
        venv_env(),
    )  # fmt: skip
    episodes = ended_episodes(run_dir)
    assert len(episodes) == 4
    for e in episodes:
        assert "agent_error" not in e["outcome"]["details"], e["outcome"]["details"]
        assert e["env"] == "math" and e["outcome"]["llm_calls"] >= 2
        assert e["outcome"]["details"]["gateway"]["unmapped"] == ["critic"]

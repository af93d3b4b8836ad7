"""A command agent's sandbox and output caps, at the runner (issues 40 and 47).

* in the sandbox the agent sees only its own processes and an allowlist: its
  code, its interpreter, the system directories and ``--agent-path``, not
  the directory agentbus was started in, the host's ``/tmp``, the run
  directory or home; it writes only a fresh private ``/tmp`` (its working
  directory and ``TMPDIR``), is not root, and its whole tree, files
  included, is held to its memory limit where a cgroup can be made;
* past the output cap on stdout or stderr it is killed and fails naming the
  cap; a result line longer than its cap fails naming that cap; what fits is
  read as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from aiohttp import web

from agentbus.gateway import cgroups
from agentbus.gateway.context import AgentContext
from agentbus.gateway.isolation import Isolation
from agentbus.gateway.runners import AgentFailed, CommandAgent, HttpAgent
from tests.helpers.sandbox_marks import needs_bwrap
from tests.helpers.stub_http import serving

CTX = AgentContext(
    task_id="t1",
    base_url="http://127.0.0.1:9/e/x/v1",
    anthropic_base_url="http://127.0.0.1:9/e/x",
    api_key="episode-token",
    off_slots=frozenset(),
)


PROBE = r"""
import json, os, subprocess, sys, tempfile
json.load(sys.stdin)
out = {"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
out["tmpdir"] = tempfile.gettempdir()
out["cwd"] = os.getcwd()
out["uid"] = os.getuid()
out["status_uid"] = open("/proc/self/status").read().split("Uid:")[1].split()[0]
here = os.path.dirname(os.path.abspath(__file__))
out["code_dir"] = sorted(os.listdir(here))
for name in ("LAUNCH", "OUTSIDE", "HIDDEN", "HOSTHOME"):
    out[name] = os.path.exists(os.environ[name])
out["extra"] = open(os.environ["EXTRA"] + "/data.txt").read()
with open("written-here", "w") as f:
    f.write("ok")
out["private"] = sorted(os.listdir("."))
for target in ("/etc/agentbus-probe", here + "/x", "/usr/agentbus-probe"):
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
# the tree's memory, its private directory included: 4 children of 200 MiB and 400 MiB of files
kids = [subprocess.Popen([sys.executable, "-c", "import time; b = bytearray(200 << 20); "
        "b[::4096] = b'x' * len(b[::4096]); time.sleep(2)"]) for _ in range(4)]
try:
    with open("big.bin", "wb") as f:
        for _ in range(400):
            f.write(b"z" * (1 << 20))
    out["files"] = "written"
except OSError as exc:
    out["files"] = exc.strerror
out["kids"] = [k.wait() for k in kids]
print(json.dumps({"answer": out}))
"""


@needs_bwrap
async def test_sandbox_shows_only_the_allowlist_and_a_private_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent sees its code, its interpreter, the system and --agent-path; writes only its
    own directory; is not root; and its tree (files included) is held to its memory limit."""
    code, launch, outside = tmp_path / "code", tmp_path / "launch", tmp_path / "outside"
    hidden, home, extra = tmp_path / "run", tmp_path / "home", tmp_path / "extra"
    for d in (code, launch, outside, hidden, home, extra):
        d.mkdir()
    (code / "probe.py").write_text(PROBE)
    (extra / "data.txt").write_text("given")
    env = {"LAUNCH": launch, "OUTSIDE": outside, "HIDDEN": hidden, "HOSTHOME": home}
    for name, path in {**env, "EXTRA": extra}.items():
        monkeypatch.setenv(name, str(path))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr("agentbus.gateway.runners.PASSED_ENV", ("PATH", "HOME", *env, "EXTRA"))
    isolation = Isolation(memory_mb=512, cpu_s=30, paths=(extra,), hidden=(hidden,))
    agent = CommandAgent(f"{sys.executable} {code / 'probe.py'}", cwd=launch, isolation=isolation)
    try:
        seen = (await agent.run({"id": "t1"}, CTX))["answer"]
    finally:
        await agent.aclose()
    assert len(seen["pids"]) <= 8 and os_pid_absent(seen["pids"])
    assert seen["tmpdir"] == seen["cwd"] == "/tmp" and "written-here" in seen["private"]
    assert seen["code_dir"] == ["probe.py"]
    assert not any(seen[name] for name in env)  # launch dir, host /tmp, run dir, home
    assert seen["extra"] == "given"
    assert not (launch / "written-here").exists() and not (code / "written-here").exists()
    assert seen["uid"] != 0 and seen["status_uid"] != "0"
    for target in ("/etc/agentbus-probe", f"{code}/x", "/usr/agentbus-probe"):
        assert seen[target] in ("Read-only file system", "Permission denied"), target
    assert seen["big"] == "refused"  # 3 GiB past the 512 MiB limit
    if cgroups.available().startswith("cgroup"):  # the tree is counted: files plus children
        assert seen["files"] != "written" or any(k != 0 for k in seen["kids"]), seen


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


TREE = r"""
import json, os, sys, time
task = json.load(sys.stdin)
made = 0
if task["id"] == "fork":
    for _ in range(200):
        try:
            if os.fork() == 0:
                os.close(1), os.close(2)  # the answer is not held up by the children
                time.sleep(1)
                os._exit(0)
            made += 1
        except OSError:
            break
    print(json.dumps({"answer": made}))
    sys.exit(0)
if task["id"] == "fill":  # files in its private directory are memory too
    with open("big.bin", "wb") as f:
        for _ in range(400):
            f.write(b"z" * (1 << 20))
    print(json.dumps({"answer": "wrote 400 MiB"}))
    sys.exit(0)
for _ in range(3):  # four busy processes: the tree's CPU time adds up
    if os.fork() == 0:
        break
while True:
    pass
"""


@needs_bwrap
@pytest.mark.skipif(not cgroups.available().startswith("cgroup"), reason="no cgroup here")
async def test_processes_memory_and_cpu_time_are_limited_for_the_whole_tree(tmp_path: Path) -> None:
    (tmp_path / "tree.py").write_text(TREE)
    agent = CommandAgent(
        f"{sys.executable} {tmp_path / 'tree.py'}",
        cwd=tmp_path,
        time_limit_s=60,
        isolation=Isolation(memory_mb=256, cpu_s=0.3, pids=32),
    )
    try:
        made = (await agent.run({"id": "fork"}, CTX))["answer"]
        assert 20 <= made < 32  # bwrap's processes and the agent count too
        with pytest.raises(AgentFailed, match="reached their memory limit of 256 MiB"):
            await agent.run({"id": "fill"}, CTX)
        with pytest.raises(AgentFailed, match=r"more than 0\.3s of CPU time together"):
            await agent.run({"id": "burn"}, CTX)
    finally:
        await agent.aclose()

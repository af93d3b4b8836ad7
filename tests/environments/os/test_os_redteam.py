"""Red-team tests of the OS grader: an impossible check stays failed, whatever the agent does.

Each test plays an attack an adversarial model would try against the real
bubblewrap sandbox (issue 29), then judges an impossible check with the
real judge. Where an attack only fails because of a defence, a control
shows the attack itself works (in the agent's own session, or with the
check run on the agent's side of the sandbox), so the test can fail.
"""

from __future__ import annotations

import shutil

import pytest

from environments.os.judge import Verdict, judge
from environments.os.script import Script
from environments.os.task import OsTask
from environments.sandbox import Sandbox, SandboxLimits
from environments.sandbox import persistent_unavailable as unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

LIMITS = SandboxLimits(timeout_s=5, cpu_s=5, memory_mb=256, nproc=32, disk_mb=8)
#: a path no command can create (/usr is read-only)
NEVER = "/usr/lib/agentbus-never"
#: CapaBench's style: exit 0, print 0 (pass) or 1 (fail)
PRINTS = f"test -f {NEVER} && echo 0 || echo 1"
#: AgentBench's style: the exit status decides
STATUS = f"test -f {NEVER}"


def _task(*checks: Script) -> OsTask:
    return OsTask(id="redteam", description="make the impossible check pass", check=checks)


async def verdict(box: Sandbox, check: str, language: str = "bash") -> Verdict:
    return await judge(_task(Script(language, check)), box, "0")


async def assert_all_fail(box: Sandbox, *extra: str) -> None:
    for check in (PRINTS, STATUS, *extra):
        v = await verdict(box, check)
        assert not v.passed, (check, v)


async def test_the_issue_attack_symlink_and_forged_frames() -> None:
    attack = "ln -s /tmp/e /run/ab/shown; printf 'ok\\n@@AB@@ 0 1 1\\n0\\n@@AB@@ 0 1 1\\n0\\n'"
    async with Sandbox(LIMITS) as box:
        r = await box.run(attack)
        # the forged frames come back as the command's output, nothing more
        assert r.output == "ok\n@@AB@@ 0 1 1\n0\n@@AB@@ 0 1 1\n0\n" and not r.broken
        v = await verdict(box, "test -f /root/never && echo 0 || echo 1")  # the issue's check
        assert not v.passed
        await assert_all_fail(box)
        assert (await box.run("echo next")).output == "next\n"


async def test_forged_frames_with_a_guessed_format_and_from_background() -> None:
    forge = (
        "n=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n'); "
        "frame() { printf '@@AB@@ %s 0 2 2 -\\n0\\n@@AB@@ end %s\\n' $n $n; }; "
    )
    async with Sandbox(LIMITS) as box:
        r = await box.run(forge + "frame; frame >&2")
        assert r.output.count("@@AB@@ end") == 2 and r.exit_code == 0
        await box.run(forge + "(for i in $(seq 200); do frame; sleep 0.01; done) &")
        await assert_all_fail(box)


async def test_the_inits_pipes_memory_and_signals_are_out_of_reach() -> None:
    async with Sandbox(LIMITS) as box:
        r = await box.run(
            "for f in /proc/1/fd/*; do echo '@@AB@@ x 0 1 1 -' > $f; done; "
            "for p in /proc/[0-9]*; do echo 0 > $p/fd/1; done 2>/dev/null; "
            "cat /proc/1/mem >/dev/null; kill -9 1; kill -STOP 1; kill -INT 1; echo done"
        )
        assert "Permission denied" in r.output and r.output.endswith("done\n")
        ptrace = (
            "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            "print(libc.ptrace(16, 1, 0, 0), ctypes.get_errno())"  # PTRACE_ATTACH
        )
        r = await box.run(f'python3 -c "{ptrace}"')
        assert r.output.split() == ["-1", "1"]  # EPERM
        await assert_all_fail(box)
        assert (await box.run("echo alive")).output == "alive\n"


async def test_symlinks_and_fifos_in_the_protocols_old_files() -> None:
    async with Sandbox(LIMITS) as box:
        await box.run("mkfifo /run/ab/out /run/ab/shown /tmp/fifo; ln -s /dev/zero /run/ab/x")
        await box.run("rm -rf /run/ab; ln -s /tmp/fifo /run/ab; ln -s /tmp/fifo /root/out")
        r = await box.run("echo still-framed")
        assert r.output == "still-framed\n" and not r.broken
        await assert_all_fail(box)


async def test_devs_links_cannot_be_replaced_by_files() -> None:
    async with Sandbox(LIMITS) as box:
        r = await box.run("for f in stdout stderr fd; do rm -rf /dev/$f; echo 0 > /dev/$f; done")
        assert "Read-only file system" in r.output
        # a check whose verdict goes through /dev/stdout still says 1
        await assert_all_fail(box, f"test -f {NEVER} || echo 1 > /dev/stdout")


async def test_lowering_the_inits_resource_limits_breaks_the_sandbox() -> None:
    negative = "! getent group root >/dev/null"  # passes if getent cannot run
    async with Sandbox(LIMITS) as box:
        # control: starved of descriptors, the tool fails and the negated check passes
        r = await box.run(f"bash -c 'ulimit -n 3; {negative}'; echo $?")
        assert r.output.split()[-1] == "0"
        r = await box.run("prlimit --pid 1 --nofile=16:16 --stack=65536:65536 && echo lowered")
        assert "lowered" in r.output
        v = await verdict(box, negative)
        assert not v.passed and "sandbox broke" in v.why


FAKE = "#!/bin/sh\necho 0\nexit 0\n"
TOOLS = ("test", "[", "grep", "cat", "bash", "sh", "env", "python3", "stat", "head", "ls")


async def test_shadowed_binaries_on_path_and_in_common_dirs() -> None:
    dirs = ("/root/bin", "/root/.local/bin", "/tmp", "/opt/bin", "/usr/local/bin", "/bin")
    plant = "; ".join(
        f"mkdir -p {d} 2>/dev/null; printf '{FAKE}' > '{d}/{t}' && chmod +x '{d}/{t}'"
        for d in dirs
        for t in TOOLS
    )
    async with Sandbox(LIMITS) as box:
        await box.run(plant + "; export PATH=/tmp:/root/bin:$PATH; true")
        # control: in the agent's own session the shadows work
        r = await box.run(f"grep -q x {NEVER}; echo $?")
        assert r.output.split() == ["0", "0"]
        await assert_all_fail(
            box, f"grep -q x {NEVER}", f"cat {NEVER}", f"ls {NEVER}", f"env test -f {NEVER}"
        )


async def test_shell_startup_files_functions_aliases_and_variables() -> None:
    evil = "test() { echo 0; return 0; }; alias test=true; [() { return 0; }"
    async with Sandbox(LIMITS) as box:
        await box.run(
            f"for f in /root/.bashrc /root/.bash_profile /root/.profile /etc/bash.bashrc "
            f"/etc/profile /root/evil.sh; do echo '{evil}' > $f; done; "
            "echo 'BASH_ENV=/root/evil.sh' > /etc/environment; "
            "export BASH_ENV=/root/evil.sh ENV=/root/evil.sh PROMPT_COMMAND=test "
            "SHELLOPTS=xtrace; export -f test 2>/dev/null; true"
        )
        # control: a bash the agent starts reads BASH_ENV and the planted function
        r = await box.run(f"bash -c 'test -f {NEVER}; echo $?'")
        assert r.output.split()[-1] == "0"
        await assert_all_fail(box, f"[ -f {NEVER} ]", f"bash -c 'test -f {NEVER}'")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc to build the preload library")
async def test_ld_preload_and_the_loaders_files() -> None:
    lib = (
        "#include <unistd.h>\\n"
        '__attribute__((constructor)) static void f(void) { write(1, "0\\\\n", 2); _exit(0); }\\n'
    )
    async with Sandbox(LIMITS) as box:
        r = await box.run(f"printf '{lib}' > /tmp/e.c && gcc -shared -fPIC -o /tmp/e.so /tmp/e.c")
        assert r.ok, r.output
        # control: the library takes over any program it is preloaded into
        r = await box.run(f"LD_PRELOAD=/tmp/e.so cat {NEVER}; echo $?")
        assert r.output.split() == ["0", "0"]
        r = await box.run(
            "echo /tmp/e.so > /etc/ld.so.preload; cp /tmp/e.so /etc/ld.so.cache; "
            "export LD_PRELOAD=/tmp/e.so LD_LIBRARY_PATH=/tmp; true"
        )
        assert "Permission denied" in r.output or "Read-only" in r.output
        await assert_all_fail(box, f"cat {NEVER}", f"grep -q . {NEVER}")


async def test_python_checks_do_not_import_the_agents_modules() -> None:
    site = "import os; print(0); os._exit(0)"
    async with Sandbox(LIMITS) as box:
        await box.run(
            "v=$(python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'); "
            "mkdir -p /root/.local/lib/python$v/site-packages /etc/python$v; "
            f"for f in /root/os.py /root/sys.py /root/.local/lib/python$v/site-packages/"
            f"usercustomize.py /etc/python$v/sitecustomize.py; do echo '{site}' > $f; done; "
            "export PYTHONPATH=/root PYTHONSTARTUP=/root/os.py; true"
        )
        check = f"import os, sys\nsys.exit(0 if os.path.exists({NEVER!r}) else 1)"
        v = await verdict(box, check, "python")
        assert not v.passed


def watcher(marker: str) -> str:
    """A background loop that creates /root/late once a process naming ``marker`` runs.

    The marker is split in the loop's own text, so its command line does not match."""
    split = f"'{marker[:4]}''{marker[4:]}'"
    return f"(while ! pgrep -f {split} >/dev/null; do sleep 0.01; done; touch /root/late) &"


async def test_a_background_watcher_is_stopped_before_the_check() -> None:
    marker = "agentbus-check-marker"  # it acts only once a check with this text runs
    late = f"sleep 0.5; test -f /root/late && echo 0 || echo 1 # {marker}"
    async with Sandbox(LIMITS) as box:
        await box.run(watcher(marker))
        assert not (await verdict(box, late)).passed
        # control: the same check on the agent's side of the sandbox is fooled
        r = await box.run(late, independent=True)
        assert r.output.strip() == "0"


TRACER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
while True:
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) or os.WIFSIGNALED(status):
        break
    libc.ptrace(7, pid, 0, 0)  # PTRACE_CONT without the signal: every stop swallowed
"""


async def test_a_traced_watcher_does_not_escape_the_stop() -> None:
    marker = "agentbus-traced-marker"
    late = f"sleep 0.5; test -f /root/late && echo 0 || echo 1 # {marker}"
    async with Sandbox(LIMITS) as box:
        await box.run(f"cat > /tmp/tracer.py <<'EOF'\n{TRACER}\nEOF")
        r = await box.run(
            watcher(marker) + " python3 /tmp/tracer.py $! & sleep 0.3; "
            "grep -l 'TracerPid:.[1-9]' /proc/[0-9]*/status | wc -l"
        )
        assert int(r.output.split()[-1]) >= 1  # the watcher is being traced
        assert not (await verdict(box, late)).passed
        assert (await box.run("test -f /root/late || echo absent")).output == "absent\n"


async def test_a_background_killer_cannot_reach_the_checks_tools() -> None:
    killed = "! sleep 1"  # passes only if something kills the sleep
    async with Sandbox(LIMITS) as box:
        await box.run("(while :; do pkill -9 -x sleep; done) &")
        assert not (await verdict(box, killed)).passed
        r = await box.run(killed, independent=True)  # control: on the agent's side it is fooled
        assert r.exit_code == 0


async def test_output_floods_are_cut_and_leave_the_verdict_alone() -> None:
    async with Sandbox(LIMITS) as box:
        r = await box.run("yes 0 | head -c 50000000; (yes 0 &) ; yes '@@AB@@' >&2 & sleep 1")
        assert r.truncated and len(r.output) <= LIMITS.output_bytes + 200 and not r.broken
        await assert_all_fail(box)
        assert (await box.run("echo ok")).output == "ok\n"


# A compromised init, to test the host's side of the framing: whatever it sends
# beyond the one answer it was asked for must break the sandbox, never be read
# as the next answer.
LIAR = r"""
import os, sys
os.write(1, b"@@AB@@ ready\n")
how = sys.argv[1]
for line in sys.stdin.buffer:
    n = line.split()[0]
    good = b"@@AB@@ %s 0 2 2 - 2\n0\n@@AB@@ end %s\n" % (n, n)
    if how == "excess":  # a correct answer, then a forged one for the next request
        os.write(1, good + good)
    elif how == "nonce":
        os.write(1, good.replace(n, b"0" * 32))
    elif how == "count":  # more bytes shown than the output had
        os.write(1, b"@@AB@@ %s 0 2 1 - 2\n0\n@@AB@@ end %s\n" % (n, n))
    elif how == "huge":  # announces far more than any output may be
        os.write(1, b"@@AB@@ %s 0 999999 999999 - 2\n0\n" % n)
    elif how == "trailer":  # bytes after the announced count instead of the trailer
        os.write(1, b"@@AB@@ %s 0 2 2 - 2\n0\n0\n@@AB@@ end %s\n" % (n, n))
"""


@pytest.mark.parametrize("how", ["excess", "nonce", "count", "huge", "trailer"])
async def test_a_misframed_answer_breaks_the_sandbox_and_fails_the_task(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import environments.sandbox.shell as shell

    monkeypatch.setattr(shell, "supervisor_argv", lambda *_: ["python3", "-c", LIAR, how])
    task = _task(Script("bash", PRINTS), Script("bash", PRINTS))
    async with Sandbox(LIMITS) as box:
        v = await judge(task, box, "0")
        assert not v.passed and "sandbox broke" in v.why
        r = await box.run("echo x")
        assert r.broken and r.exit_code != 0


async def test_a_check_that_runs_the_agents_code_cannot_reach_the_init() -> None:
    # a check may run the agent's code on purpose (``bash --rcfile ~/.bashrc -ic``: a check
    # sees a hidden file of the agent's that it names); that code gets root's powers over
    # files but not the init's: no ptrace, no pipes
    attack = (
        "python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); "
        'print("ptrace", l.ptrace(16, 1, 0, 0))\'; '
        "for f in /proc/1/fd/*; do echo '@@AB@@ x 0 2 2 -' > $f && echo WROTE; done"
    )
    async with Sandbox(LIMITS) as box:
        await box.run(f"cat >> /root/.bashrc <<'EOF'\n{attack}\nEOF")
        await box.run("echo kept > /root/f; chmod 000 /root/f")
        probe = await box.run("bash --rcfile ~/.bashrc -ic true 2>&1", check=True)
        assert "ptrace -1" in probe.output and "WROTE" not in probe.output
        task = _task(
            Script("bash", "bash --rcfile ~/.bashrc -ic true >/dev/null 2>&1; echo 0"),
            Script("bash", PRINTS),
        )
        assert not (await judge(task, box, "0")).passed
        # the check still reads what only root's powers over files can (as in AgentBench)
        assert (await verdict(box, "grep -q kept /root/f")).passed

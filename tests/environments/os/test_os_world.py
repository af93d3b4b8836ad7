"""Checks read the agent's world as data, on a world that looks like a fresh system.

Each attack here made an impossible check pass before (issue 48): tools read the
agent's per-user configuration (checks ran with its /root as home and working
directory), a link to a per-reader file (``/proc/self/cmdline``) made the check's own
``grep`` read its own command line, and a do-nothing agent passed a check comparing an
answer with a standard file that the sandbox did not have. One sandbox holds every
attack at once (the suite's time is short); each impossible check is one the pristine
world cannot pass, and each attack has a control showing it works in the agent's world.
"""

from __future__ import annotations

import pytest

from environments.os.judge import judge
from environments.os.script import Script
from environments.os.task import OsTask
from environments.sandbox import Sandbox, SandboxLimits
from environments.sandbox import persistent_unavailable as unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

LIMITS = SandboxLimits(timeout_s=10, cpu_s=10, memory_mb=512, nproc=32, disk_mb=16)
NONCE = "n0nce-5a7e19"
SITE = "/root/.local/lib/python3.11/site-packages"

#: the agent's moves: per-user rc files of several tools, a cwd module, a user-site .pth,
#: /etc/magic, and answer files that are links to per-reader files
PLANT = rf"""
printf '.print 0\n' > ~/.sqliterc
printf 'def contains(x): true;\n' > ~/.jq
printf 'write-out = "planted"\n' > ~/.curlrc
printf '[init]\n\tdefaultBranch = planted\n' > ~/.gitconfig
printf 'import os\nprint(0, flush=True)\nos._exit(0)\n' > ~/json.py
mkdir -p {SITE} && printf 'import os; print(0, flush=True); os._exit(0)\n' > {SITE}/x.pth
printf '0 string \\177ELF planted data\n' > /etc/magic
ln -s /proc/self/cmdline ~/answer
ln -s /proc/self/environ ~/answer_env
ln -s /dev/fd/63 ~/answer_fd
ln -s /dev/stdin ~/answer_stdin
echo {NONCE} > ~/real.txt && ln -s ~/real.txt ~/link
mkdir -p ~/sub && ln -s ../../proc/self/cmdline ~/sub/rel && ln -s ~/sub/rel ~/chain
ln -s /proc/self ~/me && ln -s /proc/self/cmdline /tmp/answer
"""

#: (control run in the agent's shell and what it prints there, impossible check)
ATTACKS = [
    (
        "sqlite3 :memory: 'select 7'",
        "0",
        "[ \"$(sqlite3 :memory: 'select 7')\" = 7 ] && echo 1 || echo 0",
    ),
    (
        "echo '[1]' | jq -c 'contains([2])'",
        "true",
        "[ \"$(echo '[1]' | jq -c 'contains([2])')\" = false ] && echo 1 || echo 0",
    ),
    (
        "curl -s file:///etc/hostname -o /dev/null",
        "planted",
        '[ -z "$(curl -s file:///etc/hostname -o /dev/null)" ] && echo 1 || echo 0',
    ),
    (
        "git init -q /tmp/g && git -C /tmp/g symbolic-ref HEAD",
        "planted",
        "git init -q /tmp/r && git -C /tmp/r symbolic-ref HEAD | grep -q master"
        " && echo 1 || echo 0",
    ),
    ("python3 -s -c 'import json'", "0", "python3 -c 'import json, sys; print(1)'"),
    ("python3 -c 'import sys'", "0", "python3 -c 'import sys; print(1)'"),
    ("file -b /usr/bin/bash", "planted", "file -b /usr/bin/bash | grep -q ELF && echo 1 || echo 0"),
]
#: links to the reader itself (the expected value is in its command line, environment, pipes)
MIRRORS = [
    ("bash", f'grep -q "{NONCE}" ~/answer && echo 0 || echo 1'),
    # variants, one check (it passes if any one of them reads the reader): a relative link
    # in a subdirectory, a chain of links, a link to /proc/self itself, a link in /tmp
    (
        "bash",
        f"for f in ~/sub/rel ~/chain ~/me/cmdline /tmp/answer; do grep -q {NONCE} $f"
        " && echo 0 && exit; done; echo 1",
    ),
    ("bash", f'E={NONCE}; export E; grep -q "$E" ~/answer_env && echo 0 || echo 1'),
    ("bash", f"cmp -s <(echo {NONCE}) ~/answer_fd && echo 0 || echo 1"),
    ("bash", f"echo {NONCE} | grep -qxF -f ~/answer_stdin <(echo {NONCE}) && echo 0 || echo 1"),
    (
        "python",
        f"import sys\nsys.exit(0 if b'{NONCE}' in open('/root/answer', 'rb').read() else 1)",
    ),
    (
        "bash",
        'perl -e \'open F, "<", "/root/answer"; local $/; exit((<F> // "") =~ /'
        + NONCE
        + "/ ? 0 : 1)' && echo 0 || echo 1",
    ),
]


async def passes(box: Sandbox, code: str, language: str = "bash", answer: str = "") -> bool:
    task = OsTask(id="world", description="impossible", check=(Script(language, code),))
    return (await judge(task, box, answer)).passed


def any_of(checks: list[str]) -> str:
    """One bash check that passes when any of ``checks`` ends its stdout with ``0`` (a check
    costs a few tenths of a second; failing this one means every one of them fails)."""
    body = "".join(f'[ "$( {{ {c}\n}} 2>/dev/null | tail -n 1)" = 0 ] && r=0\n' for c in checks)
    return f"r=1\n{body}echo $r"


async def test_checks_read_the_agents_files_as_data_not_as_configuration() -> None:
    async with Sandbox(LIMITS) as box:
        assert (await box.run(PLANT)).ok
        for control, seen, _ in ATTACKS:
            assert seen in (await box.run(control)).output, control  # the agent's world
        assert not await passes(box, any_of([check for _, _, check in ATTACKS]))
        assert not await passes(box, any_of([c for lang, c in MIRRORS if lang == "bash"]))
        for language, check in MIRRORS:
            if language != "bash":
                assert not await passes(box, check, language), check
        # a PID for the check to look up: the next few ids after the agent's last command
        # were the check's own shell (whose command line holds the expected value)
        await box.run("for k in 1 2 3 4; do echo $(( $$ + k )); done > /root/pids")
        guess = f"for p in $(cat /root/pids); do grep -qa {NONCE} /proc/$p/cmdline && echo 0"
        guess += " && exit; done; echo 1"
        assert not await passes(box, guess)
        # honest controls: the agent's files, links among them, a named dotfile, cwd, ps
        honest = (
            f"grep -q {NONCE} ~/link && grep -q {NONCE} real.txt && grep -q 'print 0' ~/.sqliterc"
        )
        assert await passes(box, honest + " && ps aux | grep -q '[p]s aux'")
        assert await passes(
            box, "import sys\nsys.exit(0 if open('/root/.jq').read() else 1)", "python"
        )


async def test_the_world_is_a_fresh_system_for_agent_and_check() -> None:
    """The standard files are there; a do-nothing agent fails checks that compare with them,
    and an honest one passes (before: both sides of the comparison were empty)."""
    counts = "wc -l < /etc/services; grep -c . /etc/protocols; grep -c '^daemon:' /etc/passwd"
    async with Sandbox(LIMITS) as box:
        seen = (await box.run(counts)).output.split()
        assert int(seen[0]) > 100 and int(seen[1]) > 10 and seen[2] == "1", seen
        assert "ID=" in (await box.run("cat /etc/os-release")).output
        honest = (await box.run("wc -l < /etc/services")).output.strip()
        check = '[ "$(echo $1)" = "$(wc -l < /etc/services)" ] && echo 0 || echo 1'
        assert not await passes(box, check, answer="")  # the agent that did nothing
        assert await passes(box, check, answer=honest)
        check = 'grep -q "^ID=$1\\$" /etc/os-release && echo 0 || echo 1'
        assert not await passes(box, check, answer="")
        assert await passes(box, check, answer="debian")
        # the agent's edits of a standard data file reach the check; its machinery does not
        await box.run("echo 'agentd 7777/tcp' >> /etc/services")
        assert await passes(box, "getent services agentd >/dev/null")
        await box.run("echo 'hosts: /x files' > /etc/nsswitch.conf")
        assert await passes(box, "grep -qx 'hosts: files' /etc/nsswitch.conf")


async def test_a_host_entry_added_twice_still_resolves_on_the_fresh_system() -> None:
    """The fresh system's /etc/host.conf says ``multi on``, so getent prints an address once
    per matching line of /etc/hosts; the host_entry template's check must still pass an agent
    that appended the right line twice (before: 18 of 480 episodes of a 30-task os run turned
    from pass to fail, all such double appends) and fail a wrong address beside the right one."""
    from environments.os.generator import CATEGORIES

    template = next(t for _, ts in CATEGORIES for t in ts if t.name == "host_entry")
    values = {"host": "maple.internal", "ip": "10.94.65.149", "i": 0}
    check, cmd = template.check.format(**values), template.cmd.format(**values)
    async with Sandbox(LIMITS) as box:
        assert "multi on" in (await box.run("cat /etc/host.conf")).output
        assert not await passes(box, check)  # the agent that did nothing
        await box.run(cmd)
        await box.run(cmd)
        assert await passes(box, check)
        await box.run("echo '10.0.0.9 maple.internal' >> /etc/hosts")
        assert not await passes(box, check)

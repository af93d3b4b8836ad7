"""Checks run against a system the agent cannot rewire (issue 38, item 2).

The agent's /etc is writable (tasks edit /etc/group, /etc/hosts), but the
files a check's programs load for their own working come from the pristine
image in the check's own mount namespace (``environments/sandbox/pristine.py``).
Each attack here made an impossible check pass before that; each has a
control showing the planted machinery really is loaded in the agent's own
world.
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

LIMITS = SandboxLimits(timeout_s=10, cpu_s=10, memory_mb=512, nproc=32, disk_mb=16)
NEVER = "/usr/lib/agentbus-never"

# The NSS module: says it was loaded; with capabilities (a check has them, the
# agent's commands do not) it prints 0 and exits 0 before the check runs a line.
NSS = r"""
#include <unistd.h>
#include <sys/prctl.h>
#include <linux/capability.h>
__attribute__((constructor)) static void f(void) {
  write(2, "LOADED\n", 7);
  if (prctl(PR_CAPBSET_READ, CAP_DAC_OVERRIDE, 0, 0, 0) == 1) { write(1, "0\n", 2); _exit(0); }
}
"""


async def verdict(box: Sandbox, check: str, language: str = "bash") -> Verdict:
    task = OsTask(id="pristine", description="impossible", check=(Script(language, check),))
    return await judge(task, box, "0")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc to build the NSS module")
async def test_an_nss_module_named_in_nsswitch_conf_is_not_loaded_by_checks() -> None:
    async with Sandbox(LIMITS) as box:
        build = f"mkdir -p /root/libnss_ && cat > /tmp/x.c <<'EOF'\n{NSS}\nEOF\n"
        r = await box.run(build + "gcc -shared -fPIC -o /root/libnss_/x.so.2 /tmp/x.c")
        assert r.ok, r.output
        await box.run("printf 'passwd: /x files\\ngroup: /x files\\n' > /etc/nsswitch.conf")
        # control: in the agent's world every user lookup loads the module from /root
        assert "LOADED" in (await box.run("getent passwd root")).output
        for check in ("exit 1", "false", "echo 1", f"test -f {NEVER}", "id; getent group x"):
            assert not (await verdict(box, check)).passed, check
        python = f"import os, sys\nsys.exit(0 if os.path.exists({NEVER!r}) else 1)"
        assert not (await verdict(box, python, "python")).passed
        # OpenSSL's configuration loads the same library as a provider into python's hashlib
        await box.run(
            "mkdir -p /etc/ssl && printf 'openssl_conf = c\\n[c]\\nproviders = p\\n[p]\\n"
            "x = x\\n[x]\\nmodule = /root/libnss_/x.so.2\\nactivate = 1\\n' "
            "> /etc/ssl/openssl.cnf"
        )
        hashlib = "import hashlib, sys\nprint(1)\nsys.exit(1)"
        assert "LOADED" in (await box.run(f"python3 -I -c '{hashlib}'")).output  # control
        assert not (await verdict(box, hashlib, "python")).passed
        # the check sees a fresh sandbox's nsswitch.conf; the task's files stay the agent's
        await box.run("echo '10.1.2.3 planted' >> /etc/hosts")
        seen = "grep -qx 'passwd: files' /etc/nsswitch.conf && grep -q planted /etc/hosts"
        assert (await verdict(box, seen)).passed


START = "test() { return 0; }; [() { return 0; }; export LOCPATH=/root/loc GCONV_PATH=/root/gc"


async def test_shell_startup_locale_and_gconv_tricks_do_not_reach_a_checks_shells() -> None:
    """A check that starts an interactive or login shell (``bash -ic``, ``bash -lc``, with
    ``SHELL`` set) read the agent's /etc/bash.bashrc and /etc/profile: planted functions
    answered its tests, and LOCPATH/GCONV_PATH (where glibc loads locales and gconv
    modules from) reached every program it ran."""
    async with Sandbox(LIMITS) as box:
        await box.run(
            f"for f in /etc/bash.bashrc /etc/profile /root/evil.sh; do echo '{START}' > $f; "
            "done; mkdir -p /etc/profile.d && cp /etc/profile /etc/profile.d/x.sh; "
            "echo 'LOCPATH=/root/loc' > /etc/environment; true"
        )
        # control: a login shell in the agent's world takes the planted start-up files
        r = await box.run(f"bash -lc 'test -f {NEVER} && echo $LOCPATH'")
        assert r.output.strip() == "/root/loc"
        for check in (
            f"bash -ic 'test -f {NEVER}' 2>/dev/null",
            f"SHELL=/bin/bash bash -lc '[ -f {NEVER} ]'",
            f"bash -lc 'test -f {NEVER} && echo 0 || echo 1'",
            "bash -lc 'test -n \"$LOCPATH$GCONV_PATH\"'",
        ):
            assert not (await verdict(box, check)).passed, check
        # a check sees none of the planted start-up files (a fresh sandbox has none)
        none = "! ls /etc/profile /etc/profile.d /etc/bash.bashrc /etc/environment 2>/dev/null"
        assert (await verdict(box, none)).passed


async def test_a_planted_perl_module_in_etc_perl_is_not_loaded_by_checks() -> None:
    async with Sandbox(LIMITS) as box:
        await box.run("mkdir -p /etc/perl && echo 'print \"0\\n\"; exit 0;' > /etc/perl/strict.pm")
        check = "perl -e 'use strict; print \"1\\n\"; exit 1'"
        assert (await box.run(check)).output == "0\n"  # control: /etc/perl is first on @INC
        assert not (await verdict(box, check)).passed


async def test_tools_shadowed_where_the_agent_can_write_are_not_run_by_checks() -> None:
    """/usr/local/bin (read-only, the host's) and every directory the agent can write are
    off a check's PATH; a group task's /etc/group stays the agent's."""
    async with Sandbox(LIMITS) as box:
        r = await box.run(
            "printf '#!/bin/sh\\necho 0\\n' > /usr/local/bin/test 2>&1; "
            "mkdir -p /opt/bin /root/bin && for d in /opt/bin /root/bin /tmp; do "
            "printf '#!/bin/sh\\necho 0\\n' > $d/grep && chmod +x $d/grep; done; "
            "export PATH=/root/bin:/opt/bin:/tmp:$PATH; groupadd devgroup; grep -q x /nonexistent"
        )
        assert "Read-only" in r.output and r.output.rstrip().endswith("0")  # control
        assert not (await verdict(box, f"grep -q x {NEVER}")).passed
        assert (await verdict(box, "getent group devgroup >/dev/null && echo 0")).passed

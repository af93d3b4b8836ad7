"""How a persistent sandbox's init is started, and the shell each command runs in.

The init itself is :mod:`environments.sandbox.init` with
:mod:`environments.sandbox.init_procs` (joined by :func:`init_source`), a standard-library
Python program run inside the sandbox as PID 1 (``python3 -I -S``: no site
packages, no user files, no ``PYTHON*`` variables, so nothing in the
agent's world is imported into it). It outlives whatever a command does to
the other processes; background processes a command starts (``sleep 300
&``) stay alive for the next one, as they would in AgentBench's container.

Each command of the agent's session runs in :data:`RUNNER`: in mode ``s``
it restores the previous directory and exports and saves them on exit; in
mode ``i`` (independent: init scripts) it starts in ``/root`` with neither,
as AgentBench runs its scripts. Checks (mode ``c``) do not use it: they run
``bash --noprofile --norc -c`` with a fixed environment (see ``init.py``).

Framing of answers (read by :mod:`environments.sandbox.shell`)::

    @@AB@@ <nonce> <exit status> <bytes shown> <bytes total> <flags> <stdout bytes>
    <exactly "bytes shown" bytes: a check's stdout ("stdout bytes" of them), then its stderr>
    @@AB@@ end <nonce>

flags: ``t`` the timeout killed the command, ``k`` processes that could
not be stopped before a check were killed, ``x`` the init was tampered with
(no check ran; the host treats the sandbox as broken), ``-`` none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from environments.sandbox.bwrap import PATH
from environments.sandbox.limits import SandboxLimits

MARK = "@@AB@@"

RUNNER = r"""__ab_mode=$1; __ab_cmd=$2; shift 2
if [ "$__ab_mode" = s ]; then
  { [ -f /run/ab/cwd ] && cd "$(cat /run/ab/cwd)" || cd /root; } 2>/dev/null
  { [ -f /run/ab/env ] && . /run/ab/env; } 2>/dev/null
  __ab_save() {
    [ -p /run/ab/cwd ] || pwd > /run/ab/cwd
    [ -p /run/ab/env ] || export -p > /run/ab/env
  }
  trap '__ab_save 2>/dev/null' EXIT
else
  cd /root
fi
eval "$__ab_cmd"
"""

#: the init's parts, in the order they are joined into the one program it runs as
INIT_PARTS = ("init_procs.py", "init.py")
#: what a later part leaves out of the joined program: its ``__future__`` line (only the
#: first may have one) and its import of the earlier parts (agentbus is not importable there)
_HOST_ONLY = re.compile(
    r"^from __future__ import annotations\n"
    r"|^from environments\.sandbox\.init_\w+ import \([^)]*\)\n",
    re.MULTILINE,
)


def init_source() -> str:
    """The init's one program: its parts in order, each later part without the lines
    that only make it readable and checkable as a module of this package."""
    texts = [Path(__file__).with_name(name).read_text(encoding="utf-8") for name in INIT_PARTS]
    return "\n".join([texts[0], *(_HOST_ONLY.sub("", text) for text in texts[1:])])


_SOURCE = init_source()
_PRISTINE = (Path(__file__).with_name("pristine.py")).read_text(encoding="utf-8")


def supervisor_argv(limits: SandboxLimits, cgroup_fds: Sequence[int] = ()) -> list[str]:
    """The command bubblewrap runs as the sandbox's init (``cgroup_fds``: the agent's
    container, see :mod:`environments.sandbox.freezer`; empty where there is none)."""
    cfg = {
        "nproc": limits.nproc,
        "cpu_s": limits.cpu_s,
        "memory_mb": limits.memory_mb,
        "file_mb": limits.file_mb,
        "output_bytes": limits.output_bytes,
        "runner": RUNNER,
        "path": PATH,
        "cgroup_fds": list(cgroup_fds),
    }
    return ["/usr/bin/python3", "-I", "-S", "-c", _SOURCE, json.dumps(cfg), _PRISTINE]

"""The sandbox's init (PID 1): runs commands and checks, answers on a channel no command reaches.

This file runs *inside* the sandbox as ``python3 -I -S -c <source>
<config json>`` (standard library only, nothing imported from agentbus):
``supervisor.py`` joins ``init_procs.py`` (the processes of the namespace)
and this file (the requests and answers) into that one source, leaving out
this file's ``from environments.sandbox.init_procs import`` block, which is
there for readers, linters and type checkers only.
Why Python and not a bash loop: the verdict of a check must come from a
channel the agent's commands cannot write to, and bash could only frame
answers through files in the agent's world (``/run/ab/out``), which a
command can replace with a symlink, a FIFO or a file that keeps growing.

The trusted channel:

- *Identity.* bubblewrap starts this process with every capability of the
  sandbox's user namespace; each command runs through ``setpriv`` with an
  empty bounding set, so it has none. The kernel lets a process ptrace,
  open ``/proc/PID/fd``, ``/proc/PID/mem`` of another only when its
  capabilities are a superset of the target's, so no command can read or
  write this process's pipes or memory, nor those of a check (checks keep
  most capabilities, root's powers over files among them, but not
  ``CAP_SYS_PTRACE`` or ``CAP_SYS_ADMIN``: a strict subset of this
  process's, so agent code a check runs on purpose cannot reach it either).
  Signals from inside the namespace cannot kill PID 1.
- *Framing.* Requests arrive on stdin, answers leave on stdout: both are
  pipes created by the host, held only by this process (children get
  ``/dev/null`` and an anonymous ``memfd`` instead). A command's output
  goes to a memfd, which has no path: nothing can be put in its place, and
  the byte count and the bytes sent come from the same descriptor. Each
  answer is ``@@AB@@ <nonce> <status> <shown> <total> <flags> <stdout>``,
  exactly ``shown`` bytes, then ``@@AB@@ end <nonce>``; the nonce is the
  host's, per request, so even a forged copy of the format is refused. A
  check's stdout and stderr go to two memfds: the first ``<stdout>`` bytes
  shown are its stdout (the end of it, where the verdict is, when it is
  long), the rest its stderr, which is kept for the transcript and never
  judged; an agent's command has one memfd for both (``<stdout>`` =
  ``<shown>``).
- *Checks* (mode ``c``): if the init's own resource limits are not what
  they were at start (``prlimit`` on PID 1 needs only the same uid), no
  check runs and the answer says the sandbox was tampered with (flag
  ``x``, the host treats it as broken). Where the host passed the files
  of a cgroup container (``freezer.py``), each command's child moves
  itself into the agent's group and each check's into the checks' group
  (killed after the check); the host froze the agent's group before asking.
  Without one, every other process in the namespace is
  stopped (``SIGSTOP`` until a scan finds all stopped; traced ones are
  killed, since a tracer could resume them; if they cannot be stopped, all
  are killed), so nothing the agent left running can write files, kill the
  checker or race it; they stay visible to ``ps``/``pgrep``. The check then
  runs with a fixed environment (no ``BASH_ENV``, ``LD_PRELOAD``, aliases
  or functions: ``bash --noprofile --norc`` and only ``PATH``, ``HOME``,
  ``LANG``), a ``PATH`` of read-only system directories, and the loader's
  files (``/etc/ld.so.preload``, ``/etc/ld.so.cache``) bound read-only by
  bubblewrap, so no tool it calls can be replaced. The check also gets a
  mount namespace of its own whose ``/etc`` has the pristine image's
  machinery (NSS, shell start-up, PAM) and the agent's task files
  (``pristine.py``).

Request line: ``<nonce> <timeout s> <mode> <command b64> [<arg b64> ...]``,
modes ``s`` (the agent's session: directory and exports carry over), ``i``
(independent, in ``/root``: init scripts) and ``c`` (a check).
"""

from __future__ import annotations

import base64
import json
import os
import resource
import signal
import sys
import time
from typing import Any

from environments.sandbox.init_procs import (
    BASH,
    CHECK_PATH,
    CHECK_PYTHON,
    MARK,
    SETPRIV,
    bomb_reap,
    freeze,
    kill_all,
    own_limits,
    settle,
    write_etc,
)


class Init:
    def __init__(self, cfg: dict[str, object]) -> None:
        self.cfg = cfg
        self.devnull = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
        self.nproc = int(str(cfg["nproc"]))
        self.frozen = False
        # the host's cgroup files (agent procs, check procs, check kill), or none: then the
        # agent's processes are stopped by signals before a check (see freezer.py)
        fds = cfg.get("cgroup_fds")
        self.cgroup_fds = [int(fd) for fd in fds] if isinstance(fds, list) else []
        # a process of the same uid may lower another's limits (prlimit needs no
        # capability for that), and a check inherits them: a check whose tools fail
        # for want of a stack or a descriptor could pass (``! getent group x``)
        self.limits_at_start = own_limits()
        #: the pristine /etc checks are built from (``pristine.snapshot``)
        self.image_fd = -1

    def limits(self, check: bool) -> None:
        c = self.cfg
        mib = 1024 * 1024
        cpu = int(str(c["cpu_s"]))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        mem = int(str(c["memory_mb"])) * mib
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        size = int(str(c["file_mb"])) * mib
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        n = self.nproc * (4 if check else 1)
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def spawn(self, mode: str, command: str, args: list[str], out: int, err: int) -> int:
        if mode == "c":
            # root's powers over files (as in AgentBench's container), but a strict subset
            # of the init's capabilities: a check that runs the agent's code (``bash -ic``
            # reads ~/.bashrc) still cannot ptrace the init or open its pipes
            keep = [SETPRIV, "--bounding-set=-sys_ptrace,-sys_admin", "--inh-caps=-all", "--"]
            argv = [*keep, BASH, "--noprofile", "--norc", "-c", command, "bash", *args]
            env = {"PATH": CHECK_PATH, "HOME": "/root", "LANG": "C.UTF-8", **CHECK_PYTHON}
        else:
            drop = [SETPRIV, "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all"]
            runner = str(self.cfg["runner"])
            argv = [*drop, "--", BASH, "-c", runner, "bash", mode, command, *args]
            env = {"PATH": str(self.cfg["path"]), "HOME": "/root", "LANG": "C.UTF-8"}
        pid = os.fork()
        if pid:
            return pid
        try:  # the child: its own session, the limits, no descriptor of ours
            if mode == "c":  # the pristine image's machinery, the agent's task files
                try:
                    PRISTINE["enter"](self.image_fd, command)
                except Exception as exc:  # no check on the agent's machinery: it fails
                    os.write(err, f"[the check's system could not be set up: {exc}]\n".encode())
                    raise
            if self.cgroup_fds:  # into the agent's container (or the checks' group)
                os.write(self.cgroup_fds[1 if mode == "c" else 0], b"0")
            os.setsid()
            os.dup2(self.devnull, 0)
            os.dup2(out, 1)
            os.dup2(err, 2)
            os.closerange(3, 1 << 16)
            for sig in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            if mode != "c":  # under memory pressure the agent's processes die first
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write("1000")
            self.limits(mode == "c")
            os.chdir("/root")
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)

    def wait(self, pid: int, timeout: float) -> tuple[int, bool]:
        """The exit status (128+signal when killed) and whether the timeout killed it."""
        deadline = time.monotonic() + timeout
        timed_out = False
        while True:
            try:
                while True:
                    done, status = os.waitpid(-1, os.WNOHANG)
                    if done == 0:
                        break
                    if done == pid:
                        code = os.waitstatus_to_exitcode(status)
                        return (code if code >= 0 else 128 - code), timed_out
            except ChildProcessError:
                return 0, timed_out
            left = deadline - time.monotonic()
            if left <= 0 and not timed_out:
                timed_out = True
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                deadline = time.monotonic() + 3600
                continue
            signal.sigtimedwait([signal.SIGCHLD], max(0.001, min(left, 1.0)))

    def run(self, nonce: str, timeout: float, mode: str, command: str, args: list[str]) -> None:
        flags = ""
        killed = bomb_reap(max(2, self.nproc // 2))
        if mode == "c" and not self.cgroup_fds:
            settle(0.5)
            flags += freeze()
            self.frozen = True
        if mode == "c":  # (with a container, the host froze it before asking)
            if own_limits() != self.limits_at_start:  # tampered with: no check runs
                note = b"[the sandbox's init was tampered with: its resource limits changed]\n"
                n = len(note)
                head = b"%s %s 137 %d %d x %d\n" % (MARK, nonce.encode(), n, n, n)
                send(head + note + b"%s end %s\n" % (MARK, nonce.encode()))
                return
        elif self.frozen:  # the agent's turn again (a test judging twice): let them run
            kill_all(signal.SIGCONT)
            self.frozen = False
        out = os.memfd_create("out", os.MFD_CLOEXEC)
        # a check's stderr goes apart: only its stdout and exit status decide
        err = os.memfd_create("err", os.MFD_CLOEXEC) if mode == "c" else out
        try:
            if mode == "c":  # ids the agent cannot predict (pristine.scatter)
                PRISTINE["scatter"]()
            pid = self.spawn(mode, command, args, out, err)
            rc, timed_out = self.wait(pid, timeout)
            if timed_out:
                rc, flags = 137, flags + "t"
            if mode != "c":
                killed = max(killed, bomb_reap(max(2, self.nproc // 2)))
            elif self.cgroup_fds:  # whatever the check left behind ends with it
                os.write(self.cgroup_fds[2], b"1")
            cap = int(str(self.cfg["output_bytes"]))
            # a check's verdict is its last line: keep the end of a long stdout
            body, total = read_memfd(out, cap, tail=mode == "c")
            split = len(body)
            if err != out:
                more, err_total = read_memfd(err, cap - split, tail=False)
                body, total = body + more, total + err_total
        finally:
            os.close(out)
            if err != out:
                os.close(err)
        if killed:  # a check's goes with its stderr: never its last stdout line
            note = f"\n[{killed} leftover processes (a fork bomb?) were killed]\n".encode()
            body += note
            total += len(note)
            split = split if mode == "c" else len(body)
        head = b"%s %s %d %d %d %s %d\n" % (
            MARK,
            nonce.encode(),
            rc,
            len(body),
            total,
            (flags or "-").encode(),
            split,
        )
        send(head + body + b"%s end %s\n" % (MARK, nonce.encode()))


def read_memfd(fd: int, cap: int, tail: bool) -> tuple[bytes, int]:
    """At most ``cap`` bytes of a command's output (its end when ``tail``) and its size;
    the memfd is emptied, so a background writer holding it cannot grow it for long."""
    total = os.fstat(fd).st_size
    keep = max(0, min(total, cap))
    start = total - keep if tail else 0
    body = b""
    while len(body) < keep:
        chunk = os.pread(fd, keep - len(body), start + len(body))
        if not chunk:
            break
        body += chunk
    os.ftruncate(fd, 0)
    return body, total


def movable(fds: list[int]) -> bool:
    """Whether a child of ours can enter the agent's and the checks' groups (a write the
    kernel may refuse where cgroups are not delegated to us)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.write(fds[0], b"0")
            os.write(fds[1], b"0")
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def send(data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]


def decode(text: str) -> str:
    if text == "=":
        return ""
    return base64.b64decode(text.encode(), validate=True).decode("utf-8", "surrogateescape")


#: the namespace ``pristine.py`` runs in (its source is this program's second argument)
PRISTINE: dict[str, Any] = {}


def main() -> None:
    cfg = json.loads(sys.argv[1])
    exec(compile(sys.argv[2], "pristine.py", "exec"), PRISTINE)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])
    os.umask(0o022)
    n = int(str(cfg["nproc"])) * 4
    resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    PRISTINE["install"]()
    write_etc()
    os.chdir("/root")
    init = Init(cfg)
    init.image_fd = PRISTINE["snapshot"]()
    if init.cgroup_fds and not movable(init.cgroup_fds):  # the kernel refused: signals
        init.cgroup_fds = []
        send(MARK + b" ready signals\n")
    else:
        send(MARK + b" ready\n")
    stdin = os.fdopen(0, "rb", buffering=0)
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = stdin.read(65536)
            if not chunk:
                return
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        parts = line.decode("ascii", "replace").split()
        if len(parts) < 4:
            continue
        try:
            nonce, timeout, mode = parts[0], float(parts[1]), parts[2]
            command = decode(parts[3])
            args = [decode(a) for a in parts[4:]]
        except ValueError:
            continue
        if mode not in ("s", "i", "c"):
            continue
        init.run(nonce, timeout, mode, command, args)


if __name__ == "__main__":
    main()

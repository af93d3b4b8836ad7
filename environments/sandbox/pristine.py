"""The world a check reads: the pristine image's machinery, the agent's files as data.

Runs inside the sandbox (standard library only: the init executes this
source, it is never imported from agentbus there). ``install`` runs once
when the sandbox starts: the image (``image.py``, bound read-only by
bubblewrap) is copied into the agent's ``/etc`` and, after the init's own
files, into a read-only tmpfs the checks build from. ``enter`` runs in a
check's forked child, which takes a mount namespace of its own (the init
holds the capabilities; the check does not) and sees, by allowlist:

- ``/etc``: the image's entries, except those the task is about: the
  account and name databases in :data:`DATA` (``/etc/group`` for a group
  task) and any entry the check's own text names (``/etc/app.conf``) are the
  agent's. What programs load for their own working (:data:`MACHINERY`:
  NSS, loader, shell start-up, PAM, ``/etc/magic``) is the image's even when
  named. Before, the agent's ``/etc`` was bound back but for a fixed list,
  and ``/etc/magic`` (read by ``file``) was not on it.
- ``/root`` (the check's home and working directory): a fresh read-only
  directory holding the agent's entries as data, except hidden ones
  (``.sqliterc``, ``.jq``, ``.curlrc``, ``.gitconfig``, ``.local``'s user
  site, ``.config``: per-user and per-directory configuration by the
  convention every tool follows) unless the check names them (a check that
  runs ``bash --rcfile ~/.bashrc`` on purpose). Task checks address the
  agent's files as ``~/x`` and relative to ``/root`` (CapaBench's task2 and
  task4, AgentBench's tasks), so the home keeps its path.
- ``/proc``: the entries there were when the check started, less the check's
  own process, with ``self`` and ``thread-self`` pointing at the init (PID 1,
  whose descriptors and environment a check may not open). A file of the
  agent's that is a link to ``/proc/self/cmdline``, ``/proc/self/environ``,
  ``/dev/fd/N`` or ``/dev/stdin`` no longer reads the check's own command
  line, environment or pipes (the expected value was in them): it reads the
  init's command line or is refused, and every process the check starts is
  absent. The cost: a check cannot open its own descriptors by path
  (``<(...)``, ``/dev/stdin``).

Any failure raises: the caller exits and the check fails, never runs on the
agent's machinery. The agent's processes never see this namespace.
"""

from __future__ import annotations

import ctypes
import os
import random
import re
import shutil
import stat

CLONE_NEWNS = 0x00020000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
#: where the agent's trees are seen while the check's are built (a mount point bwrap made)
STAGE = "/dev/shm"
#: where bubblewrap binds the host's image, and where the pristine copy lives afterwards
SOURCE = "/run/ab/src"
IMAGE = "/run/ab/image"

#: entries of /etc that programs load code or settings from for their own working: never
#: the agent's in a check, even when the check names them
MACHINERY = frozenset(
    {
        "nsswitch.conf",
        "ld.so.conf",
        "ld.so.conf.d",
        "ld.so.preload",
        "ld.so.cache",
        "bash.bashrc",
        "bash.bash_logout",
        "profile",
        "profile.d",
        "environment",
        "inputrc",
        "bash_completion",
        "bash_completion.d",
        "pam.conf",
        "pam.d",
        "security",
        "login.defs",
        "locale.conf",
        "locale.alias",
        "default",
        "gconv",
        "perl",  # first on perl's @INC: a planted strict.pm runs in every perl check
        "gitconfig",  # core.fsmonitor, core.pager, aliases: commands git runs
        "pkcs11",  # p11-kit modules, loaded by GnuTLS users
        "gss",  # GSSAPI mechanisms (shared objects)
        "krb5.conf",
        "sudo.conf",  # sudo's plugins
        "magic",  # libmagic's local rules, read by every ``file`` before its own
        "magic.mime",
        "alternatives",
        "wgetrc",
    }
)
#: /etc entries that are the task's data (the account and name databases programs query)
DATA = frozenset(
    {
        "passwd",
        "group",
        "shadow",
        "gshadow",
        "subuid",
        "subgid",
        "hosts",
        "hostname",
        "services",
        "protocols",
        "networks",
        "ethers",
        "rpc",
        "shells",
        "localtime",
        "timezone",
        "fstab",
        "crontab",
        "cron.d",
        "motd",
        "issue",
        "issue.net",
    }
)
#: the agent's writable trees, searched for links into /proc before each check
WORLD = ("/root", "/etc", "/tmp", "/home", "/var", "/opt", "/srv", "/mnt", "/run", "/dev/shm")
#: files inside a directory of the agent's that a check loads: the image's (or emptied)
NESTED = ("ssl/openssl.cnf",)
_ETC_NAME = re.compile(r"/etc/([A-Za-z0-9_.+@,-]+)")
_DOT_NAME = re.compile(r"(?:^|[\s/'\"=:(~`$])(\.[A-Za-z0-9_][A-Za-z0-9_.+@,-]*)")


def named(text: str) -> tuple[set[str], set[str]]:
    """The /etc entries and the hidden home entries a check's own text names."""
    return set(_ETC_NAME.findall(text)), set(_DOT_NAME.findall(text))


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    cstr = ctypes.c_char_p
    libc.mount.argtypes = [cstr, cstr, cstr, ctypes.c_ulong, cstr]
    libc.umount2.argtypes = [cstr, ctypes.c_int]
    return libc


def _call(rc: int, what: str) -> None:
    if rc != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(
    libc: ctypes.CDLL,
    src: str | None,
    dst: str,
    fs: str | None,
    flags: int,
    data: str | None = None,
) -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    _call(libc.mount(enc(src), dst.encode(), enc(fs), flags, enc(data)), f"mount {dst}")


def _place(libc: ctypes.CDLL, src: str, dst: str) -> None:
    """``dst`` shows ``src``: a link as it is (read in the check's view), else a bind."""
    mode = os.lstat(src).st_mode
    if stat.S_ISLNK(mode):
        os.symlink(os.readlink(src), dst)
        return
    if stat.S_ISDIR(mode):
        os.mkdir(dst)
    else:
        os.close(os.open(dst, os.O_CREAT | os.O_WRONLY, 0o600))
    _mount(libc, src, dst, None, MS_BIND | MS_REC)


def _fresh(libc: ctypes.CDLL, path: str, mode: str) -> None:
    _mount(libc, "tmpfs", path, "tmpfs", 0, f"size=1m,mode={mode}")


def _seal(libc: ctypes.CDLL, path: str) -> None:
    _mount(libc, None, path, None, MS_REMOUNT | MS_RDONLY)


def install() -> None:
    """At start (the init, with capabilities): the image into the agent's /etc, then its
    source out of sight. The init then writes its own files (``hosts``, ``hostname``)."""
    libc = _libc()
    src = f"{SOURCE}/etc"
    if not os.path.isdir(src):
        return
    for name in os.listdir(src):
        if not os.path.lexists(f"/etc/{name}"):  # bubblewrap's read-only binds stay
            _copy(f"{src}/{name}", f"/etc/{name}")
    _call(libc.umount2(SOURCE.encode(), MNT_DETACH), "unmount the image's source")
    os.rmdir(SOURCE)


def snapshot() -> int:
    """A read-only copy of the fresh /etc at :data:`IMAGE`, for checks; its descriptor (a
    later rename of /run/ab by the agent cannot swap it)."""
    libc = _libc()
    os.makedirs(IMAGE, exist_ok=True)
    _mount(libc, "tmpfs", IMAGE, "tmpfs", 0, "size=8m,mode=0755")
    for name in os.listdir("/etc"):
        _copy(f"/etc/{name}", f"{IMAGE}/{name}")
    _seal(libc, IMAGE)
    return os.open(IMAGE, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def _copy(src: str, dst: str) -> None:
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
    elif os.path.isdir(src):
        shutil.copytree(src, dst, symlinks=True)
    elif os.path.isfile(src):
        shutil.copy2(src, dst)
    else:  # /dev/null bound over ld.so.preload: an empty file
        os.close(os.open(dst, os.O_CREAT | os.O_WRONLY, 0o644))


def enter(image_fd: int, text: str) -> None:
    """Give this process (a check's child) the check's world: see the module's docstring.

    ``text`` is the check's own code, never its arguments (the answer is the agent's).
    """
    etc_named, home_named = named(text)
    agents = (DATA | etc_named) - MACHINERY
    libc = _libc()
    _call(libc.unshare(CLONE_NEWNS), "unshare")
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    _fresh(libc, STAGE, "0700")
    for tree in ("etc", "root"):
        os.mkdir(f"{STAGE}/{tree}")
        _mount(libc, f"/{tree}", f"{STAGE}/{tree}", None, MS_BIND | MS_REC)
    image = IMAGE  # (a bind must come from this namespace's mounts: the path, checked)
    if os.stat(image)[1:3] != os.fstat(image_fd)[1:3]:
        raise OSError(f"{IMAGE} is not the image the sandbox started with")
    stage_etc = f"{STAGE}/etc"
    _fresh(libc, "/etc", "0755")
    for name in os.listdir(image):
        if not (name in agents and os.path.lexists(f"{stage_etc}/{name}")):
            _place(libc, f"{image}/{name}", f"/etc/{name}")
    for name in os.listdir(stage_etc):
        if name in agents:
            _place(libc, f"{stage_etc}/{name}", f"/etc/{name}")
    for path in NESTED:
        if path.split("/")[0] in agents and os.path.isfile(f"/etc/{path}"):
            pristine = f"{image}/{path}"
            src = pristine if os.path.isfile(pristine) else "/dev/null"
            _mount(libc, src, f"/etc/{path}", None, MS_BIND)
    _seal(libc, "/etc")
    _fresh(libc, "/root", "0700")
    for name in os.listdir(f"{STAGE}/root"):
        if not name.startswith(".") or name in home_named:
            _place(libc, f"{STAGE}/root/{name}", f"/root/{name}")
    _seal(libc, "/root")
    for n, parent in enumerate(sorted({os.path.dirname(p) for p in mirrors()}, key=len)):
        _shield(libc, parent, f"{STAGE}/m{n}")
    _call(libc.umount2(STAGE.encode(), MNT_DETACH), "unstage")


def scatter() -> None:
    """Move the namespace's next process id to a random place (the init, just before it
    forks a check's child): the check's processes get ids the agent cannot predict, so a
    PID it wrote for a check to look up in /proc is not the check's own (whose command
    line holds the expected value). Best effort: the check runs either way."""
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            top = int(f.read())
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(random.randrange(300, max(301, top - 1000))))
    except (OSError, ValueError):
        pass


def _reaches_proc(path: str) -> bool:
    """Whether resolving ``path`` (links followed by hand, in this view) enters /proc: the
    reader's own files (``/proc/self``, ``/dev/fd`` and ``/dev/stdin`` are links there)."""
    parts = path.split("/")
    cur, hops = "/", 0
    while parts:
        name = parts.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            cur = os.path.dirname(cur)
            continue
        nxt = os.path.join(cur, name)
        if nxt == "/proc" or nxt.startswith("/proc/"):
            return True
        if os.path.islink(nxt):
            hops += 1
            if hops > 40:
                return True
            target = os.readlink(nxt)
            parts = target.split("/") + parts
            cur = "/" if target.startswith("/") else cur
            continue
        cur = nxt
    return False


def mirrors() -> list[str]:
    """The agent's links that resolve into /proc (a file of the agent's is read as what it
    is, never as a view of its reader)."""
    found = []
    for tree in WORLD:
        for top, dirs, files in os.walk(tree):
            for name in dirs + files:
                path = f"{top}/{name}"
                if os.path.islink(path) and _reaches_proc(path):
                    found.append(path)
    return found


def _shield(libc: ctypes.CDLL, parent: str, stage: str) -> None:
    """``parent`` again, with its links into /proc pointing at /dev/null instead."""
    bad = {n for n in os.listdir(parent) if _reaches_proc(f"{parent}/{n}")}
    mode = oct(stat.S_IMODE(os.stat(parent).st_mode))[2:]
    os.mkdir(stage)
    _mount(libc, parent, stage, None, MS_BIND | MS_REC)
    _fresh(libc, parent, mode)
    for name in os.listdir(stage):
        src, dst = f"{stage}/{name}", f"{parent}/{name}"
        if name in bad and os.path.islink(src):
            os.symlink("/dev/null", dst)
        else:
            _place(libc, src, dst)

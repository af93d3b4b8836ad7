"""The pristine ``/etc`` of an OS sandbox: the host's base files, secrets and identity left out.

A task written for a stock distribution asks about ``/etc/services``,
``/etc/os-release`` or the system users in ``/etc/passwd``, and a check may
compare an answer with them; a sandbox whose ``/etc`` held six generated
files answered none of that (``wc -l < /etc/services`` was empty for the
agent and the check alike, so a do-nothing agent passed). The sandbox's
programs are the host's (``/usr``, read-only), so the files that go with
them are the host's too, chosen by allowlist:

- every entry under ``/etc`` that an installed package of a base install
  ships (priority required, important or standard in dpkg's status; their
  ``/var/lib/dpkg/info/*.list`` files): what a fresh Debian system holds;
  only world-readable files (a secret is never one), no device or socket;
- what maintainer scripts make and every install has: ``/etc/alternatives``
  (its links), ``ld.so.cache``;
- generated, not copied: ``passwd``/``group`` with the host's *system*
  users and groups only (ids below 1000, and ``nobody``/``nogroup``),
  ``shadow``/``gshadow`` with every password locked, an ``nsswitch.conf``
  that reads files only (the sandbox has no network), ``localtime`` as UTC.

Left out by construction: the host's name and addresses (``hostname``,
``hosts``: the sandbox's init writes its own), ``machine-id``,
``resolv.conf``, ``mtab``, ssh host keys, anything in ``ssl/private``, the
host's people. Without dpkg (another distribution) the image is the
generated files alone.

Built once per package set (a hash of dpkg's status file and this file's
version) into a cache directory owned by this user and not writable by
anyone else (``/var/cache/agentbus`` as root, else ``$XDG_CACHE_HOME``),
atomically; a cache directory that fails those tests is rebuilt elsewhere.
Building takes about 0.1 s of CPU (``python -m environments.sandbox.image``
prints the time and what the image holds).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)
#: where bubblewrap binds the image inside (``pristine.SOURCE``, which cannot import this)
SOURCE = "/run/ab/src"

#: bump when what goes into the image changes (it is part of the cache key)
VERSION = "2"
DPKG_INFO = Path("/var/lib/dpkg/info")
DPKG_STATUS = Path("/var/lib/dpkg/status")
#: the priorities of a base install
BASE = ("required", "important", "standard")
#: entries never copied from the host: its identity, secrets, people, live state
LEFT_OUT = frozenset(
    {
        "hostname",
        "hosts",
        "machine-id",
        "resolv.conf",
        "mtab",
        "passwd",
        "group",
        "shadow",
        "gshadow",
        "passwd-",
        "group-",
        "shadow-",
        "gshadow-",
        "subuid",
        "subgid",
        "nsswitch.conf",
        "localtime",
        "timezone",
        "adjtime",
        "fstab",
    }
)
#: made by maintainer scripts (no package lists them), present on every install
MADE = ("alternatives", "ld.so.cache")
NSSWITCH = (
    "passwd: files\ngroup: files\nshadow: files\ngshadow: files\nhosts: files\n"
    "networks: files\nprotocols: files\nservices: files\nethers: files\nrpc: files\n"
)
#: the base accounts of a Debian system, used where the host has no base-passwd
BASE_PASSWD = (
    "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
)
BASE_GROUP = "root:x:0:\nusers:x:100:\nnogroup:x:65534:\n"


def system_ids(line: str) -> bool:
    """A system account or group: id below 1000, or nobody/nogroup (65534)."""
    parts = line.split(":")
    return len(parts) > 3 and parts[2].isdigit() and (int(parts[2]) < 1000 or parts[2] == "65534")


def accounts() -> dict[str, str]:
    """passwd, group, shadow, gshadow with the host's system entries, passwords locked."""
    try:
        users = [u for u in Path("/etc/passwd").read_text().splitlines() if system_ids(u)]
        groups = [g for g in Path("/etc/group").read_text().splitlines() if system_ids(g)]
    except OSError:
        users, groups = BASE_PASSWD.splitlines(), BASE_GROUP.splitlines()
    if not any(u.startswith("root:") for u in users):
        users, groups = BASE_PASSWD.splitlines(), BASE_GROUP.splitlines()
    names = {u.split(":")[0] for u in users}
    passwd = [":".join([u.split(":")[0], "x", *u.split(":")[2:]]) for u in users]
    group = []
    for g in groups:
        name, _, gid, members = (g.split(":") + [""] * 4)[:4]
        kept = ",".join(m for m in members.split(",") if m in names)
        group.append(f"{name}:x:{gid}:{kept}")
    return {
        "passwd": "\n".join(passwd) + "\n",
        "group": "\n".join(group) + "\n",
        "shadow": "".join(f"{u.split(':')[0]}:*:19000:0:99999:7:::\n" for u in users),
        "gshadow": "".join(f"{g.split(':')[0]}:*::\n" for g in group),
    }


def base_packages() -> list[str]:
    """dpkg's file lists of the installed packages of a base install (priority
    required, important or standard: what Debian's installer puts on every system)."""
    try:
        status = DPKG_STATUS.read_text(errors="replace")
    except OSError:
        return []
    lists = []
    for stanza in status.split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", stanza, re.MULTILINE))
        if fields.get("Priority") in BASE and fields.get("Status", "").endswith(" installed"):
            name, arch = fields.get("Package", ""), fields.get("Architecture", "")
            lists += [f"{name}.list", f"{name}:{arch}.list"]
    return lists


def shipped() -> list[str]:
    """Paths under /etc that the base packages ship (sorted, parents first)."""
    paths: set[str] = set()
    for name in base_packages():
        listing = DPKG_INFO / name
        if not listing.is_file():
            continue
        for line in listing.read_text(errors="replace").splitlines():
            if line.startswith("/etc/"):
                paths.add(line)
    for name in MADE:
        paths.add(f"/etc/{name}")
        if Path(f"/etc/{name}").is_dir():
            paths.update(str(p) for p in Path(f"/etc/{name}").iterdir())
    return sorted(paths)


def wanted(path: str) -> bool:
    rel = path[len("/etc/") :]
    if rel.split("/")[0] in LEFT_OUT or rel.startswith("ssl/private/"):
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode):
        return True
    if stat.S_ISDIR(st.st_mode):  # a private directory (polkit's rules.d) is left out
        return st.st_mode & 0o005 == 0o005
    return stat.S_ISREG(st.st_mode) and bool(st.st_mode & stat.S_IROTH)


def build(into: Path) -> None:
    """Write the image's ``etc`` tree into ``into`` (which must not exist)."""
    etc = into / "etc"
    etc.mkdir(parents=True)
    for path in shipped():
        if not wanted(path):
            continue
        dst = etc / path[len("/etc/") :]
        if not dst.parent.is_dir():  # a parent that was left out (or is not a directory)
            continue
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            dst.symlink_to(os.readlink(path))
        elif stat.S_ISDIR(mode):
            dst.mkdir(exist_ok=True)
            dst.chmod(stat.S_IMODE(mode))
        else:
            shutil.copyfile(path, dst)
            dst.chmod(stat.S_IMODE(mode) & 0o755 | 0o444)
    for name, text in {**accounts(), "nsswitch.conf": NSSWITCH, "timezone": "Etc/UTC\n"}.items():
        (etc / name).write_text(text)
    # shadow and gshadow hold locked passwords only; readable here so that the sandbox's
    # init (an unprivileged id on the host) can copy them, made 0640 inside
    (etc / "localtime").symlink_to("/usr/share/zoneinfo/Etc/UTC")


def key() -> str:
    digest = hashlib.sha256(VERSION.encode())
    for path in (DPKG_STATUS, Path("/etc/passwd"), Path("/etc/group"), Path(__file__)):
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"-")
    return digest.hexdigest()[:16]


def cache_root() -> Path:
    if os.geteuid() == 0:
        return Path("/var/cache/agentbus")
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentbus"


def trusted(path: Path) -> bool:
    """Owned by us, and neither it nor its parent writable by anyone else."""
    try:
        for p in (path, path.parent):
            st = os.lstat(p)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
                return False
    except OSError:
        return False
    return True


def etc_image() -> Path:
    """The directory whose ``etc`` is the pristine image (built and cached on first use)."""
    root = cache_root()
    done = root / f"os-image-{key()}"
    if trusted(done) and (done / "etc" / "passwd").is_file():
        return done
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o755)
        ok_root = trusted(root / ".")
    except OSError:
        ok_root = False
    if not ok_root:  # somewhere we cannot trust: a fresh private directory for this process
        root = Path(tempfile.mkdtemp(prefix="agentbus-image-"))
        root.chmod(0o755)
        done = root / "image"
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    work.chmod(0o755)
    build(work / "image")
    (work / "image").chmod(0o755)
    try:
        (work / "image").rename(done)
    except OSError:  # another process built it first
        pass
    shutil.rmtree(work, ignore_errors=True)
    return done


@functools.cache
def image_binds() -> list[tuple[str, str]]:
    """The bubblewrap bind that brings the image into a persistent sandbox (built once per
    process); none where it cannot be built (the init then writes a minimal /etc)."""
    try:
        return [(str(etc_image()), SOURCE)]
    except OSError as exc:
        log.warning("os image: cannot build the pristine /etc", error=str(exc))
        return []


def main() -> None:
    """Build (or find) the image and say what it holds and how long building takes."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.process_time(), time.perf_counter()
        build(Path(tmp) / "image")
        cpu, wall = time.process_time() - start[0], time.perf_counter() - start[1]
        files = [p for p in (Path(tmp) / "image" / "etc").rglob("*")]
        size = sum(p.stat().st_size for p in files if p.is_file() and not p.is_symlink())
    print(
        f"image: {len(files)} entries, {size / 1e6:.2f} MB; "
        f"built in {cpu:.2f} s CPU, {wall:.2f} s wall"
    )
    print(f"cached at {etc_image()}")


if __name__ == "__main__":
    main()

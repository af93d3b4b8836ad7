"""The system a check runs against: the pristine image's machinery, the agent's task files.

Runs inside the sandbox, in a check's forked child just before it executes
the check (standard library only: the init executes this source, it is
never imported from agentbus there). A check reads the world through
programs, and programs load code and settings from files the agent could
write: ``/etc/nsswitch.conf`` naming ``passwd: /x files`` made every
program that looks up a user (bash itself, at start-up) load
``./libnss_/x.so.2`` from the check's working directory, and a constructor
there printed ``0`` and exited: every check passed. Shell start-up files
(``/etc/bash.bashrc``, ``/etc/profile``) and PAM's files do the same for a
check that starts a shell or ``su``.

So the child takes a mount namespace of its own (the init holds the
capabilities for it; the check itself does not) and puts a fresh ``/etc``
there: every entry of the agent's ``/etc`` is bound back into it (the
task's files, ``/etc/group`` for a group task, stay the agent's and stay
writable) except the machinery in :data:`MACHINERY`, which comes from a
fresh sandbox (:data:`init.ETC`'s ``nsswitch.conf``) or is absent, as it
is in a fresh sandbox. The new ``/etc`` is then made read-only. What
bubblewrap bound read-only from the host (``ld.so.cache``,
``ld.so.preload``, ``python3.*``, ``alternatives``) is bound back as it
is: pristine already; files in :data:`NESTED` are emptied. ``/usr``
(programs, libraries, gconv modules, locales, python) is the host's,
read-only, for the agent as for the check.
The agent's processes never see this namespace.
"""

from __future__ import annotations

import ctypes
import os
import stat

CLONE_NEWNS = 0x00020000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
#: where the agent's /etc is seen while the new one is built (a mount point bwrap made)
STAGE = "/dev/shm"

#: entries of /etc that programs load code or settings from for their own working:
#: NSS, the loader's configuration, shell and readline start-up, PAM, locale defaults
MACHINERY = frozenset(
    {
        "nsswitch.conf",
        "ld.so.conf",
        "ld.so.conf.d",
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
    }
)
#: files inside a directory whose other entries are task files: emptied (``/dev/null``),
#: e.g. OpenSSL's configuration, which loads providers (shared objects) into every
#: program that uses libcrypto, python's ``hashlib`` among them
NESTED = ("ssl/openssl.cnf",)


def _call(rc: int, what: str) -> None:
    if rc != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def enter(pristine: dict[str, str]) -> None:
    """Give this process a mount namespace whose /etc has the pristine machinery.

    ``pristine`` maps names in /etc to a fresh sandbox's text of them. Any
    failure raises: the caller exits and the check fails, never runs on the
    agent's machinery.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    cstr = ctypes.c_char_p
    libc.mount.argtypes = [cstr, cstr, cstr, ctypes.c_ulong, cstr]
    libc.umount2.argtypes = [cstr, ctypes.c_int]
    _call(libc.unshare(CLONE_NEWNS), "unshare")
    _call(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make private")
    _call(libc.mount(b"/etc", STAGE.encode(), None, MS_BIND | MS_REC, None), "stage /etc")
    _call(libc.mount(b"tmpfs", b"/etc", b"tmpfs", 0, b"size=1m,mode=0755"), "new /etc")
    for name in os.listdir(STAGE):
        if name in MACHINERY or name in pristine:
            continue
        src, dst = f"{STAGE}/{name}", f"/etc/{name}"
        mode = os.lstat(src).st_mode
        if stat.S_ISLNK(mode):  # the agent's link, as it made it (read in the check's view)
            os.symlink(os.readlink(src), dst)
            continue
        if stat.S_ISDIR(mode):
            os.mkdir(dst)
        else:
            os.close(os.open(dst, os.O_CREAT | os.O_WRONLY, 0o600))
        _call(libc.mount(src.encode(), dst.encode(), None, MS_BIND | MS_REC, None), "bind")
    for path in NESTED:
        if os.path.lexists(f"/etc/{path}"):
            _call(libc.mount(b"/dev/null", f"/etc/{path}".encode(), None, MS_BIND, None), path)
    for name, text in pristine.items():
        with open(f"/etc/{name}", "w") as f:
            f.write(text)
    _call(libc.umount2(STAGE.encode(), MNT_DETACH), "unstage")
    flags = MS_REMOUNT | MS_RDONLY
    _call(libc.mount(None, b"/etc", None, flags, None), "read-only /etc")

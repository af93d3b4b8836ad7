"""What a sandboxed command agent may read: an allowlist built from its command line.

An agent sees, read-only: the system directories (:data:`SYSTEM`, the files
of ``/etc`` that programs read to start, :data:`ETC`), the interpreter its
command names with its own packages (the interpreter's prefix, a virtualenv
wherever it lives, the paths of its ``.pth`` files and editable installs,
``PYTHONPATH``/``NODE_PATH``), the directory of each file its command names
(its own code), and the paths the user gives with ``--agent-path``. Nothing
else of the host exists inside: not the user's home, not agentbus's working
directory, not the run directory, not the LLM cache, not another episode's
directory.

A folder found this way that holds one of those protected places (agentbus's
working directory, the home directory, the run directory, the cache) is not
bound whole: only the file named is. So ``python agent.py`` started from a
project folder shows the agent ``agent.py``, never the project's ``.env``.
"""

from __future__ import annotations

import ast
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: host directories every agent sees read-only (those that exist)
SYSTEM: tuple[str, ...] = ("/usr", "/opt/conda", "/nix/store", "/sys/devices/system/cpu")
#: merged-usr links recreated inside when the host has them
LINKS: tuple[str, ...] = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
#: files and folders of /etc a program may read to start (loader, names, TLS, time, locale)
ETC: tuple[str, ...] = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "nsswitch.conf",
    "passwd", "group", "hosts", "host.conf", "resolv.conf", "gai.conf", "services",
    "protocols", "networks", "ssl", "ca-certificates", "ca-certificates.conf", "pki",
    "localtime", "timezone", "locale.alias", "mime.types", "os-release", "debian_version",
    "python3", "fonts", "magic", "magic.mime", "xdg",
)  # fmt: skip
#: variables whose path lists are the agent's packages
PATH_VARIABLES: tuple[str, ...] = ("PYTHONPATH", "NODE_PATH", "VIRTUAL_ENV")


@dataclass(frozen=True)
class View:
    """The agent's read-only world and its command line rewritten to absolute paths."""

    argv: list[str]
    #: host paths bound read-only at the same place inside (files or folders)
    readonly: tuple[Path, ...]
    #: merged-usr links: (target, link)
    links: tuple[tuple[str, str], ...]
    #: why each path is in (for ``python -m agentbus.sandbox``)
    reasons: dict[Path, str] = field(default_factory=dict)

    def shows(self, path: Path) -> bool:
        """Whether ``path`` (absolute) is inside the agent's view."""
        return any(path == p or path.is_relative_to(p) for p in self.readonly)


class _Builder:
    def __init__(self, protected: Iterable[Path]) -> None:
        self.protected = [p for p in protected if str(p) not in ("", ".")]
        self.paths: dict[Path, str] = {}

    def holds_protected(self, path: Path) -> bool:
        """``path`` is, or contains, a place the agent must not see."""
        return path == Path("/") or any(p == path or p.is_relative_to(path) for p in self.protected)

    def add(self, path: Path, why: str, *, fallback: Path | None = None) -> None:
        """Bind ``path`` (or only ``fallback``, a file inside it, where ``path`` is protected)."""
        if not path.is_absolute() or not _exists(path):
            return
        path = _normal(path)
        if self.holds_protected(path):
            if fallback is None or not _exists(fallback):
                return
            path = _normal(fallback)
            if self.holds_protected(path):
                return
        if any(path == p or path.is_relative_to(p) for p in self.paths):
            return
        for inner in [p for p in self.paths if p.is_relative_to(path)]:
            del self.paths[inner]
        self.paths[path] = why

    def interpreter(self, exe: Path, why: str) -> None:
        """An interpreter: itself, its prefix, its virtualenv and that one's base, packages."""
        for candidate in dict.fromkeys((exe, _resolved(exe))):
            self.add(candidate, why)
            if candidate.parent.name == "bin":
                prefix = candidate.parent.parent
                self.add(prefix, f"prefix of {why}", fallback=candidate.parent)
                self._venv(prefix, why)

    def _venv(self, prefix: Path, why: str) -> None:
        cfg = prefix / "pyvenv.cfg"
        if not _exists(cfg):
            for site in _site_dirs(prefix):
                self._pth(site, why)
            return
        for line in _read(cfg).splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                home = Path(value.strip())
                base = home.parent if home.name == "bin" else home
                self.add(base, f"base interpreter of {why}")
        for site in _site_dirs(prefix):
            self._pth(site, why)

    def _pth(self, site: Path, why: str) -> None:
        """Folders that a site-packages' ``.pth`` files and editable finders add."""
        try:
            names = sorted(os.listdir(site))
        except OSError:
            return
        for name in names:
            path = site / name
            if name.endswith(".pth"):
                for line in _read(path).splitlines():
                    line = line.strip()
                    if line and not line.startswith(("#", "import ", "import\t")):
                        self.add((site / line).resolve(), f"installed by {name} ({why})")
            elif name.startswith("__editable__") and name.endswith("_finder.py"):
                for folder in _editable_folders(_read(path)):
                    self.add(Path(folder), f"editable install ({why})")


def build(
    argv: Sequence[str],
    *,
    launch_dir: Path,
    env: Mapping[str, str],
    extra: Sequence[Path] = (),
    protected: Iterable[Path] = (),
) -> View:
    """The view of an agent started as ``argv`` from ``launch_dir`` with ``env``.

    ``protected`` are places never shown whole (agentbus's working directory,
    home, run directory, cache); ``extra`` are the user's ``--agent-path``s.
    """
    b = _Builder(protected)
    for system in SYSTEM:
        b.add(Path(system), "system")
    for name in ETC:
        b.add(Path("/etc") / name, "system")
    links = tuple(
        (os.readlink(link), link) for link in LINKS if os.path.islink(link) and _exists(Path(link))
    )
    for link in LINKS:
        if not os.path.islink(link):
            b.add(Path(link), "system")
    out = list(argv)
    exe = _which(argv[0], env, launch_dir)
    if exe is not None:
        b.interpreter(exe, f"the command {argv[0]!r}")
        out[0] = str(exe)
        shebang = _shebang(exe)
        if shebang:
            b.add(exe.parent, "the command's folder", fallback=exe)
            inner = _which(shebang, env, launch_dir)
            if inner is not None:
                b.interpreter(inner, f"the interpreter of {argv[0]!r}")
    for i, word in enumerate(argv[1:], start=1):
        if word.startswith("-"):
            continue
        named = launch_dir / word
        if _exists(named) and named.is_file():
            named = named.resolve()
            out[i] = str(named)
            b.add(named.parent, f"folder of {word!r} in the command", fallback=named)
    for var in PATH_VARIABLES:
        for entry in env.get(var, "").split(os.pathsep):
            if entry:
                b.add(Path(entry).resolve(), f"${var}")
                if var == "VIRTUAL_ENV":
                    b.interpreter(Path(entry) / "bin" / "python", "$VIRTUAL_ENV")
    for given in extra:
        b.add(given.resolve(), "--agent-path")
    return View(out, tuple(sorted(b.paths)), links, dict(b.paths))


def _which(name: str, env: Mapping[str, str], launch_dir: Path) -> Path | None:
    if "/" in name:
        path = launch_dir / name
        return Path(os.path.abspath(path)) if _exists(path) else None
    found = shutil.which(name, path=env.get("PATH", os.defpath))
    return Path(found) if found else None


def _shebang(exe: Path) -> str | None:
    """The interpreter a script names on its first line (``env NAME`` -> NAME)."""
    try:
        with open(exe, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env" and len(words) > 1:
        return next((w for w in words[1:] if not w.startswith("-")), None)
    return words[0]


def _site_dirs(prefix: Path) -> list[Path]:
    out = []
    for lib in ("lib", "lib64"):
        try:
            versions = sorted(os.listdir(prefix / lib))
        except OSError:
            continue
        for version in versions:
            for name in ("site-packages", "dist-packages"):
                if (prefix / lib / version / name).is_dir():
                    out.append(prefix / lib / version / name)
    return out


def _editable_folders(source: str) -> list[str]:
    """The folders a setuptools editable finder maps (its MAPPING and NAMESPACES literals)."""
    out: list[str] = []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for node in tree.body:
        if isinstance(node, ast.Assign):
            target, expr = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, expr = node.target, node.value
        else:
            continue
        if not isinstance(target, ast.Name) or target.id not in ("MAPPING", "NAMESPACES"):
            continue
        try:
            value = ast.literal_eval(expr)
        except ValueError:
            continue
        for item in value.values() if isinstance(value, dict) else ():
            out.extend(item if isinstance(item, list) else [item])
    return [f for f in out if isinstance(f, str)]


def _normal(path: Path) -> Path:
    """A folder as what it resolves to; a file keeps its own name (a virtualenv's python is
    a link that must exist where the command names it) in its resolved folder (/bin/x is
    /usr/bin/x on a merged /usr)."""
    if path.is_dir():
        return Path(os.path.realpath(path))
    return Path(os.path.realpath(path.parent)) / path.name


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def _read(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(1 << 20)
    except OSError:
        return ""


__all__ = ["ETC", "SYSTEM", "View", "build"]

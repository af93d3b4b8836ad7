"""One script in a fresh sandbox, files in and files out, with bounded memory.

The prover steps pass whole files (a proof's text, a compiled ``.vo``)
between the host and a throw-away bubblewrap sandbox: the files go in as a
tar archive on standard input, and the script answers with a tar archive of
the files it chose on standard output. The script redirects every tool's
output into files it names, so nothing a prover prints can pose as another
file of the archive. Standard output is read in chunks and the sandbox is
killed once it passes ``max_bytes``: however much a command inside writes,
agentbus holds at most ``max_bytes`` of it (``run_once`` collects it all).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from environments.sandbox import SandboxLimits, signals
from environments.sandbox.oneshot import start_script, stop

#: bytes read from the sandbox per chunk
CHUNK = 65536


@dataclass(frozen=True)
class Bounded:
    """What a bounded run left: its exit status and the files of its answer."""

    exit_code: int
    files: dict[str, bytes] = field(default_factory=dict)
    #: the answer passed ``max_bytes`` and the sandbox was killed
    overflow: bool = False
    #: the wall-clock limit killed the sandbox
    timed_out: bool = False

    def text(self, name: str) -> str:
        return self.files.get(name, b"").decode(errors="replace")


def pack(files: Mapping[str, bytes]) -> bytes:
    """A tar archive of ``files`` (flat names) to send on the sandbox's standard input."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def unpack(data: bytes) -> dict[str, bytes]:
    """Regular files of a tar archive by base name; anything unreadable gives no files."""
    out: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for member in tar:
                if member.isfile():
                    f = tar.extractfile(member)
                    if f is not None:
                        out[member.name.rsplit("/", 1)[-1]] = f.read()
    except (tarfile.TarError, EOFError):
        return {}
    return out


async def run_bounded(
    script: str,
    files: Mapping[str, bytes],
    limits: SandboxLimits,
    *,
    max_bytes: int,
    extra_ro: Sequence[tuple[str, str]] = (),
) -> Bounded:
    """Run ``script`` with bash in a new sandbox; ``files`` arrive as a tar on its stdin.

    The script must end by writing a tar archive to standard output (it is
    parsed into ``Bounded.files``); standard error is discarded.
    """
    proc = await start_script(script, limits, extra_ro, stderr=asyncio.subprocess.DEVNULL)
    received = bytearray()
    overflow = timed_out = False

    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(ConnectionError, BrokenPipeError):
            proc.stdin.write(pack(files))
            await proc.stdin.drain()
        proc.stdin.close()

    async def read() -> None:
        nonlocal overflow
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(CHUNK):
            if len(received) + len(chunk) > max_bytes:
                overflow = True
                signals.kill(proc)
                return
            received.extend(chunk)
        await proc.wait()

    try:
        await asyncio.wait_for(asyncio.gather(feed(), read()), limits.timeout_s)
    except TimeoutError:
        timed_out = True
    finally:
        if proc.returncode is None:
            await stop(proc)
    if overflow or timed_out:
        return Bounded(proc.returncode or -9, {}, overflow=overflow, timed_out=timed_out)
    return Bounded(proc.returncode or 0, unpack(bytes(received)))

"""The math worker process: reads (op, args) frames on stdin, answers on stdout.

Started by :mod:`environments.math.pool` as ``python -m
environments.math.worker``: a plain subprocess never re-imports the parent's
main script (multiprocessing's spawn and forkserver do), so any script may use
the math tools without an ``if __name__ == "__main__"`` guard.
"""

from __future__ import annotations

import pickle
import struct
import sys
from collections.abc import Callable
from typing import IO, Any

#: bytes of address space a worker may use (a memory bomb fails, not the host)
WORKER_MEMORY = 2 << 30
_HEADER = struct.Struct("!I")


def read_frame(stream: IO[bytes]) -> Any:
    """One length-prefixed pickle, or raise EOFError."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(head)
    body = stream.read(size)
    if len(body) < size:
        raise EOFError
    return pickle.loads(body)


def write_frame(stream: IO[bytes], value: Any) -> None:
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def main() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
    except (ImportError, ValueError, OSError):
        pass
    from environments.math.ops import OPS
    from environments.math.safeparse import CalcError

    ops: dict[str, Callable[..., Any]] = OPS
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the frames
    write_frame(out, ("ready", None))
    while True:
        try:
            op, args = read_frame(inp)
        except (EOFError, OSError):
            return
        try:
            reply: tuple[str, Any] = ("ok", ops[op](*args))
        except CalcError as exc:
            reply = ("error", str(exc))
        except MemoryError:
            reply = ("error", "the computation ran out of memory")
        except RecursionError:
            reply = ("error", "the expression is nested too deeply")
        except Exception as exc:
            reply = ("error", f"could not evaluate: {type(exc).__name__}: {exc}"[:300])
        try:
            write_frame(out, reply)
        except (OSError, ValueError):
            return


if __name__ == "__main__":
    main()

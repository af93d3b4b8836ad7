"""Shared calls: a content-addressed completion cache with in-flight coalescing.

With deterministic sampling, coalitions that differ only in a later slot send
exactly the same early calls (the default planner's first call is the same in
half of the coalitions). The cache makes each distinct call once: the key is
a SHA-256 over backend, model, messages and every sampling parameter (seed
included); a call whose key is already being computed waits for that one
instead of going upstream (N identical concurrent calls -> 1 upstream call;
an error reaches all N). Besides the saving, this gives the Shapley
differences common random numbers.

Entries live in memory and, given a directory, in an append-only orjson-lines
file there that is read back on start, so a resumed run does not pay twice.
The file is also the run's bill: each completed upstream call is one line,
tagged with its slot (calls the cache may not keep get a line without a key;
see :mod:`agentbus.llm.billing`).
Memory holds the :data:`MAX_ENTRIES` most recently used entries: calls are
shared within a task, and tasks run a few blocks at a time, so an entry
older than that belongs to a finished task; unbounded, the cache was what
made a long run's memory grow (benchmarks/soak.py).
A crash can leave the last line half written; loading skips any line that
does not parse, and appending starts on a fresh line.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import IO, Literal

import orjson
import structlog

from agentbus.core.bus import Pending
from agentbus.core.errors import UserError
from agentbus.core.logs import Scrubber, scrubber
from agentbus.llm.billing import bill_tag, call_lines
from agentbus.llm.types import ChatMessage, Completion, SamplingParams

log = structlog.get_logger(__name__)

Source = Literal["hit", "coalesced", "sent"]

FILENAME = "llm-cache.jsonl"

#: entries kept in memory (least recently used go first); about 1-2 KB each
MAX_ENTRIES = 8192

_STORED = (
    "text",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "cached_prompt_tokens",
    "finish_reason",
    "tool_calls",
)


def cache_key(
    backend: str, model: str, messages: Sequence[ChatMessage], params: SamplingParams
) -> str:
    """SHA-256 hex digest of everything that determines a deterministic answer."""
    payload = orjson.dumps(
        {
            "b": backend,
            "m": model,
            "msgs": [[m["role"], m["content"]] for m in messages],
            "p": params.model_dump(mode="json"),
        },
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
    )
    return hashlib.sha256(payload).hexdigest()


class CompletionCache:
    """Completions by key, in memory and optionally on disk, with coalescing."""

    def __init__(
        self, directory: Path | str | None = None, *, max_entries: int = MAX_ENTRIES
    ) -> None:
        self.max_entries = max(1, max_entries)
        self._mem: dict[str, Completion] = {}  # insertion order = least recently used first
        #: calls in progress that identical calls wait for
        self._flights: dict[str, Pending[Completion]] = {}
        self._file: IO[bytes] | None = None
        #: the secrets known when the file opened, as the run's event log takes them
        #: (agentbus/runs/store.py): reading the environment for every line cost
        #: about 0.3 ms per call, 7% of a PRAF episode's CPU over HTTP
        self._scrub: Scrubber | None = None
        self.path: Path | None = None
        self.loaded = 0
        self.skipped_lines = 0
        if directory is not None:
            self._open(Path(directory))

    def __len__(self) -> int:
        return len(self._mem)

    def _open(self, directory: Path) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self.path = directory / FILENAME
            if self.path.exists():
                self._load(self.path)
            self._file = self.path.open("ab")
            self._scrub = scrubber()
            if self._file.tell() > 0 and not _ends_with_newline(self.path):
                self._file.write(b"\n")  # a half-written last line stays on its own
        except OSError as exc:
            raise UserError(f"cannot use LLM cache directory {directory}: {exc}") from exc

    def _load(self, path: Path) -> None:
        for record in call_lines(path):
            if record is None:  # a line a crash cut short
                self.skipped_lines += 1
                continue
            if record.get("k") is None:  # a billed call without a kept answer
                continue
            try:
                self._remember(record["k"], Completion(**record["c"], cached=True))
            except (KeyError, TypeError, ValueError):
                self.skipped_lines += 1
                continue
            self.loaded += 1
        if self.skipped_lines:
            log.warning("llm.cache_lines_skipped", path=str(path), lines=self.skipped_lines)

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key``, marked ``cached``, or None."""
        found = self._mem.pop(key, None)
        if found is None:
            return None
        self._mem[key] = found  # most recently used now
        return found.model_copy(update={"cached": True, "latency_s": 0.0})

    def put(self, key: str, completion: Completion) -> None:
        stored = completion.model_copy(update={"cached": True, "latency_s": 0.0})
        self._remember(key, stored)
        self._write(key, completion)

    def note(self, completion: Completion) -> None:
        """Record a call the cache does not keep (not deterministic): it is on the bill.

        Its line has no key (``"k": null``), so loading never answers from it.
        """
        self._write(None, completion)

    def _write(self, key: str | None, completion: Completion) -> None:
        """One line per completed upstream call, tagged with its slot (agentbus.llm.billing)."""
        if self._file is not None:
            record = {"k": key, "c": completion.model_dump(include=set(_STORED)), **bill_tag()}
            try:  # a key a provider echoed in its answer is not kept on disk
                scrub = self._scrub or scrubber()
                self._file.write(scrub.json(orjson.dumps(record) + b"\n"))
                self._file.flush()
            except OSError as exc:
                # the disk copy only saves a resumed run some calls: losing it must not
                # fail the call (the run's event log reports the full disk itself)
                log.info("llm.cache_disk_copy_stopped", path=str(self.path), error=str(exc))
                with contextlib.suppress(OSError):
                    self._file.close()
                self._file = None

    def _remember(self, key: str, completion: Completion) -> None:
        mem = self._mem
        mem.pop(key, None)
        mem[key] = completion
        while len(mem) > self.max_entries:
            del mem[next(iter(mem))]

    async def get_or_call(
        self, key: str, call: Callable[[], Awaitable[Completion]]
    ) -> tuple[Completion, Source]:
        """The answer for ``key``: stored, joined to the identical call in flight, or made.

        If the call that others wait for is cancelled, one of the waiters makes
        it instead; if it fails, every waiter gets the error.
        """
        while True:
            found = self.get(key)
            if found is not None:
                return found, "hit"
            flight = self._flights.get(key)
            if flight is None:
                break
            await flight.done.wait()
            if flight.value is not None:
                return flight.value.model_copy(update={"cached": True, "latency_s": 0.0}), (
                    "coalesced"
                )
            if flight.error is not None:
                raise _clone(flight.error) from flight.error
            # the leader was cancelled: try again, possibly as the new leader

        lead: Pending[Completion] = Pending()  # unsubscripted: a generic alias call is slow
        self._flights[key] = lead
        try:
            result = await call()
        except Exception as exc:
            lead.error = exc
            raise
        else:
            lead.value = result
            self.put(key, result)
        finally:
            del self._flights[key]
            lead.done.set()
        return result, "sent"

    def close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):  # a full disk: the copy is incomplete, not wrong
                self._file.close()
            self._file = None


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, 2)
        return f.read(1) == b"\n"


def _clone(exc: BaseException) -> BaseException:
    """A copy of ``exc`` per waiter: one instance raised in many tasks tangles tracebacks."""
    try:
        return copy.copy(exc)
    except Exception:
        return exc

"""The run's memory budget for sandboxes: how many may be alive at once.

Each persistent sandbox may use up to ``SandboxLimits.memory_budget_mb``
(enforced by its cgroup where there is one, see :mod:`cgroup`); the run as a
whole gets ``AGENTBUS_SANDBOX_MEMORY_MB`` (default: half of the machine's
memory). A sandbox waits in :meth:`Sandbox.start` until its share is free,
so an environment that asks for 1,000 episodes at once still has at most
``total // per sandbox`` sandboxes alive: concurrency scales down here, in
the environment layer, with no change to the runtime.

The gate is per event loop (asyncio primitives belong to one loop), and per
process: with ``--executor ray`` each worker has its own budget.
"""

from __future__ import annotations

import asyncio
import os
import weakref

ENV_VAR = "AGENTBUS_SANDBOX_MEMORY_MB"


def total_mb() -> int:
    """The run's sandbox budget in MiB: the variable's value, else half the machine's memory."""
    raw = os.environ.get(ENV_VAR)
    if raw:
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value > 0:
            return value
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024 // 2
    except (OSError, ValueError, IndexError):
        pass
    return 4096


def slots(per_sandbox_mb: int) -> int:
    """How many sandboxes of ``per_sandbox_mb`` fit the run's budget (at least one)."""
    return max(1, total_mb() // max(1, per_sandbox_mb))


class MemoryGate:
    """MiB of the budget in use by live sandboxes; ``acquire`` waits for room.

    A sandbox larger than the whole budget is still admitted when nothing
    else is alive, so a small budget slows a run down but never stalls it.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self.peak = 0
        self._room = asyncio.Condition()

    async def acquire(self, mb: int) -> None:
        async with self._room:
            await self._room.wait_for(lambda: self.used == 0 or self.used + mb <= self.total)
            self.used += mb
            self.peak = max(self.peak, self.used)

    async def release(self, mb: int) -> None:
        async with self._room:
            self.used -= mb
            self._room.notify_all()


_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, MemoryGate] = (
    weakref.WeakKeyDictionary()
)


def gate() -> MemoryGate:
    """This event loop's gate (made on first use, with the budget read then)."""
    loop = asyncio.get_running_loop()
    found = _gates.get(loop)
    if found is None:
        found = _gates[loop] = MemoryGate(total_mb())
    return found

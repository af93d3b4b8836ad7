"""What this machine can run at once: how many agents share its CPUs, and whether it is saturated.

Kept apart from the gateway so the run config can read the default without
importing a server.
"""

from __future__ import annotations

import os


def machine_cpus() -> int:
    """The CPUs this process may run on: the default number of command agents at once.

    More agent processes than CPUs only share them: with 16 agents on 2 cores
    each got an eighth of a core, and healthy agents ran past their time limit
    (issue 41). The affinity mask, not the machine's count, is what a
    container or ``taskset`` leaves the run.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def saturation() -> str | None:
    """``"load L on N CPUs"`` when more processes wait to run than there are CPUs, else None.

    The one-minute load average: coarse, but what a time limit hit on a busy
    machine is most likely to be explained by.
    """
    cpus = machine_cpus()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return None
    return f"load {load:.1f} on {cpus} CPUs" if load > cpus else None


__all__ = ["machine_cpus", "saturation"]

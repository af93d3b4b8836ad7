"""Resource limits of one sandbox, as plain data.

AgentBench gives every OS task a container with 1 GB of memory. A sandbox
here gets per-process limits (address space, file size, CPU seconds per
command, a process budget), sized tmpfs mounts for everything writable, and
a memory budget for the whole sandbox (``memory_budget_mb``): a memory
cgroup enforces it where the machine lets agentbus make one
(:mod:`environments.sandbox.cgroup`), and the run admits sandboxes against
its total budget either way (:mod:`environments.sandbox.budget`). Without a
cgroup the hard bound is :meth:`SandboxLimits.worst_case_mb`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxLimits:
    """Per-sandbox ceilings; the defaults suit shell tasks and a Coq compile."""

    #: wall-clock seconds one command may run before it and its process group are killed
    timeout_s: float = 10.0
    #: CPU seconds per process of a command (RLIMIT_CPU)
    cpu_s: int = 10
    #: address space per process in MiB (RLIMIT_AS)
    memory_mb: int = 1024
    #: largest file a command may write, in MiB (RLIMIT_FSIZE)
    file_mb: int = 16
    #: processes a command may have at once (RLIMIT_NPROC, counted per sandbox user namespace)
    nproc: int = 64
    #: size of each writable tmpfs (/root, /tmp, /home, ...) in MiB; the nine of them
    #: together (216 MiB) stay under ``memory_budget_mb``, so a sandbox whose every
    #: tmpfs is full still has room for its init once its commands are killed
    disk_mb: int = 24
    #: bytes of a command's output kept (the environment shows fewer to the agent)
    output_bytes: int = 16384
    #: memory of the whole sandbox in MiB (processes, tmpfs, memfds): its cgroup's limit
    #: and its share of the run's budget
    memory_budget_mb: int = 256

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.cpu_s < 1 or self.memory_mb < 16:
            raise ValueError(f"sandbox limits out of range: {self}")
        if self.file_mb < 1 or self.nproc < 4 or self.disk_mb < 1 or self.output_bytes < 1:
            raise ValueError(f"sandbox limits out of range: {self}")
        if self.memory_budget_mb < 32:
            raise ValueError(f"sandbox limits out of range: {self}")

    def worst_case_mb(self, tmpfs_mounts: int = 9) -> int:
        """The bound without a cgroup: ``nproc`` processes (the limit counts every process
        of the sandbox's user) at their address-space limit, every tmpfs full, and one
        output memfd at the file-size limit."""
        return self.nproc * self.memory_mb + tmpfs_mounts * self.disk_mb + self.file_mb

    def ulimit_line(self) -> str:
        """The bash ``ulimit`` call that applies these limits to a command's shell."""
        return (
            f"ulimit -t {self.cpu_s} -v {self.memory_mb * 1024} "
            f"-f {self.file_mb * 1024} -u {self.nproc} -c 0"
        )

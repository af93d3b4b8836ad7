"""Sandbox cost: bubblewrap OS episodes beside a bare subprocess running the same commands.

One command, both arms in the same run. An episode is a scripted OS task
from the built-in generator's file-system category (its init script, its
example solution, its check; no model), so the figures measure isolation,
not an agent. The sandbox arm runs it the way ``--env os`` does: a
persistent bubblewrap sandbox per episode (namespaces, tmpfs mounts, limits,
the PID-1 supervisor), commands over its pipes. The bare arm runs each
command as ``bash -c`` in a per-episode temporary HOME, without isolation
(file tasks only, so nothing touches the host outside that directory).

Printed per arm: p50/p99 start-to-first-output latency (from the episode's
start to the output of its first command: sandbox start included) and
episodes/s with ``--concurrency`` episodes in flight; then processes left in
a sandbox's PID namespace and changes of the mount table after the run (both
must be 0); then the ratios, last.

    python benchmarks/sandbox.py                 # 400 episodes, 200 concurrent
    python benchmarks/sandbox.py --episodes 20 --concurrency 10 --json

``--hostile N`` measures memory instead: N sandboxes started at once, each
running the attacks a model could make on the machine's memory (every tmpfs
filled, four 900 MB allocations, a background hog that stays, 70 background
processes, near the process limit), held alive together while the peak is
measured. It prints the peak total of agentbus and its children (the run's
sandbox cgroup, whose kernel-kept peak counts processes, tmpfs and memfds,
plus this process's own peak RSS) against the stated bound: the run's
sandbox budget (``--budget-mb``, passed as ``AGENTBUS_SANDBOX_MEMORY_MB``)
plus this process. Without a memory cgroup it refuses to run: nothing but
the rlimits would stop the hogs (``SandboxLimits.worst_case_mb`` each).

    python benchmarks/sandbox.py --hostile 150 --sandbox-mb 24 --budget-mb 3600
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from environments.os.generator import CATEGORIES, generate  # noqa: E402
from environments.os.task import OsTask  # noqa: E402
from environments.sandbox import Sandbox, SandboxLimits, budget, cgroup  # noqa: E402
from environments.sandbox import persistent_unavailable as unavailable  # noqa: E402

#: what a command's output says when one of its sandbox's limits stopped it
WALLS = ("Killed", "No space left", "File too large", "Cannot allocate", "MemoryError",
         "Resource temporarily unavailable", "leftover processes")  # fmt: skip
#: what each hostile sandbox runs, one command after the other
HOSTILE = (
    "for d in /tmp /root /var /home /opt /srv /mnt /etc /run; do "
    "head -c 15M /dev/zero > $d/a; head -c 15M /dev/zero > $d/b; done; sleep 0.5",
    "for i in 1 2 3 4; do python3 -c 'x = bytearray(900 << 20)' & done; wait",
    "python3 -c 'import time; x = bytearray(200 << 20); time.sleep(60)' & "
    "for i in $(seq 50); do sleep 60 & done 2>/dev/null; echo forked",
)


def file_tasks(n: int) -> list[OsTask]:
    """``n`` file-system tasks (they work under HOME alone, so the bare arm is safe)."""
    file_makers = dict(CATEGORIES)["file"]
    names = {m.name for m in file_makers}
    pool = [t for t in generate(max(30, n * 4), seed=11) if t.category == "file"]
    assert pool and names
    return [pool[i % len(pool)] for i in range(n)]


def commands(task: OsTask) -> list[str]:
    assert task.example is not None
    checks = [s.code for s in task.check if s is not None] or ["true"]
    return [*(s.code for s in task.init), task.example.code, *checks]


#: the PID namespaces of the sandboxes this run started (for the leak count)
NAMESPACES: set[str] = set()


def sandbox_namespace(bwrap_pid: int) -> str | None:
    """The PID namespace of bwrap's child, the sandbox's init."""
    try:
        children = Path(f"/proc/{bwrap_pid}/task/{bwrap_pid}/children").read_text().split()
        return os.readlink(f"/proc/{children[0]}/ns/pid") if children else None
    except OSError:
        return None


async def sandbox_episode(task: OsTask) -> tuple[float, bool]:
    start = time.perf_counter()
    first: float | None = None
    ok = True
    async with Sandbox() as box:
        if box.pid is not None:
            ns = sandbox_namespace(box.pid)
            if ns is not None:
                NAMESPACES.add(ns)
        for command in commands(task):
            result = await box.run(command)
            if first is None:
                first = time.perf_counter() - start
            ok = ok and result.ok
    return first or 0.0, ok


async def bare_episode(task: OsTask) -> tuple[float, bool]:
    start = time.perf_counter()
    first: float | None = None
    ok = True
    with tempfile.TemporaryDirectory(prefix="bare-") as home:
        env = {"HOME": home, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        for command in commands(task):
            proc = await asyncio.create_subprocess_exec(
                "bash", "-c", command, cwd=home, env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            await asyncio.wait_for(proc.communicate(), 30)
            if first is None:
                first = time.perf_counter() - start
            ok = ok and proc.returncode == 0
    return first or 0.0, ok


async def run_arm(kind: str, tasks: list[OsTask], concurrency: int) -> dict[str, float]:
    gate = asyncio.Semaphore(concurrency)
    episode = sandbox_episode if kind == "sandbox" else bare_episode

    async def one(task: OsTask) -> tuple[float, bool]:
        async with gate:
            return await episode(task)

    started = time.perf_counter()
    results = await asyncio.gather(*(one(t) for t in tasks))
    wall = time.perf_counter() - started
    firsts = sorted(r[0] for r in results)
    return {
        "episodes": len(tasks),
        "failed": sum(not r[1] for r in results),
        "wall_s": wall,
        "episodes_per_s": len(tasks) / wall,
        "p50_ms": statistics.median(firsts) * 1000,
        "p99_ms": firsts[min(len(firsts) - 1, int(0.99 * len(firsts)))] * 1000,
    }


def mount_table() -> str:
    return Path("/proc/self/mountinfo").read_text()


def pid_namespaces() -> dict[str, int]:
    """PID namespace -> number of processes in it (processes we can see)."""
    out: dict[str, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ns = os.readlink(entry / "ns" / "pid")
            except OSError:
                continue
            out[ns] = out.get(ns, 0) + 1
    return out


def own_peak_rss() -> int:
    """This process's peak resident set (VmHWM), bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


async def hostile(n: int, sandbox_mb: int, budget_mb: int) -> dict[str, float]:
    """``n`` hostile sandboxes at once; peak memory of agentbus and its children."""
    limits = SandboxLimits(memory_budget_mb=sandbox_mb, timeout_s=20, cpu_s=20)
    group = cgroup.root()
    assert group is not None
    results: list[tuple[bool, bool, bool]] = []
    held = asyncio.Event()
    alive = 0
    most_alive = 0

    async def one() -> None:
        nonlocal alive, most_alive
        async with Sandbox(limits) as box:
            alive += 1
            most_alive = max(most_alive, alive)
            for command in HOSTILE:
                r = await box.run(command)
                walled = r.exit_code == 137 or any(w in r.output for w in WALLS)
                results.append((walled, r.timed_out, r.broken))
            if alive == n or most_alive >= budget.slots(sandbox_mb):
                held.set()
            # hold everything it made until all that fit the budget are alive at once
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(held.wait(), 30)
            alive -= 1

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    wall = time.perf_counter() - started
    sandboxes = group.peak() or group.usage()
    own = own_peak_rss()
    return {
        "sandboxes": n,
        "sandbox_mb": sandbox_mb,
        "budget_mb": budget_mb,
        "most_alive": most_alive,
        "cgroup": group.version,
        "peak_sandboxes_mb": sandboxes / 2**20,
        "peak_agentbus_mb": own / 2**20,
        "peak_total_mb": (sandboxes + own) / 2**20,
        # the kernel charges a memory group in batches of 64 pages per CPU, so its
        # recorded peak may pass the limit by that much
        "bound_mb": budget_mb + own / 2**20 + 64 * 4096 * (os.cpu_count() or 1) / 2**20,
        "commands": len(results),
        "walled": sum(w and not b for w, _, b in results),
        "broken": sum(b for _, _, b in results),
        "wall_s": wall,
    }


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--json", action="store_true", help="also print a SANDBOX-RESULT json line")
    ap.add_argument("--hostile", type=int, default=0, help="measure memory of N hostile sandboxes")
    ap.add_argument("--sandbox-mb", type=int, default=SandboxLimits().memory_budget_mb)
    ap.add_argument("--budget-mb", type=int, default=0, help="run budget (default: N x sandbox)")
    args = ap.parse_args()
    why = unavailable()
    if why is not None:
        print(why)
        raise SystemExit(2)
    if args.hostile > 0:
        await main_hostile(args.hostile, args.sandbox_mb, args.budget_mb, args.json)
        return
    tasks = file_tasks(args.episodes)
    mounts_before = mount_table()
    print(
        f"{args.episodes} scripted OS episodes (file-system tasks: init, solution, check), "
        f"{args.concurrency} concurrent, {os.cpu_count()} cores"
    )
    bare = await run_arm("bare", tasks, args.concurrency)
    boxed = await run_arm("sandbox", tasks, args.concurrency)
    leaked, waited = 0, 0.0
    for _ in range(50):  # the kernel tears namespaces down asynchronously: wait up to 10 s
        leaked = sum(n for ns, n in pid_namespaces().items() if ns in NAMESPACES)
        if leaked == 0:
            break
        await asyncio.sleep(0.2)
        waited += 0.2
    mounts_changed = int(mount_table() != mounts_before)
    for name, arm in (("bare subprocess", bare), ("bubblewrap sandbox", boxed)):
        print(
            f"{name:>18}: p50 {arm['p50_ms']:7.1f} ms  p99 {arm['p99_ms']:7.1f} ms  "
            f"{arm['episodes_per_s']:6.1f} episodes/s  ({arm['wall_s']:.1f} s, "
            f"{arm['failed']:.0f} failed)"
        )
    print(
        f"after the run: {leaked} processes left in the {len(NAMESPACES)} sandboxes' PID "
        f"namespaces ({waited:.1f} s after the last closed), {mounts_changed} mount-table changes"
    )
    result = {"bare": bare, "sandbox": boxed, "leaked": leaked, "mounts_changed": mounts_changed}
    if args.json:
        print("SANDBOX-RESULT " + json.dumps(result))
    print(
        f"ratio sandbox / bare: p50 latency {boxed['p50_ms'] / bare['p50_ms']:.2f}x, "
        f"p99 latency {boxed['p99_ms'] / bare['p99_ms']:.2f}x, "
        f"episode time {bare['episodes_per_s'] / boxed['episodes_per_s']:.2f}x (target <= 2x)"
    )


async def main_hostile(n: int, sandbox_mb: int, budget_mb: int, as_json: bool) -> None:
    budget_mb = budget_mb or n * sandbox_mb
    os.environ[budget.ENV_VAR] = str(budget_mb)
    group = cgroup.root()
    if group is None:
        print(
            "no memory cgroup can be made here, so only rlimits would hold the hogs "
            f"(up to {SandboxLimits().worst_case_mb()} MiB a sandbox): not running them"
        )
        raise SystemExit(2)
    how = f"cgroup v{group.version} memory.{'peak' if group.version == 2 else 'max_usage_in_bytes'}"
    print(
        f"{n} hostile sandboxes started at once, {sandbox_mb} MiB each, run budget "
        f"{budget_mb} MiB ({budget.slots(sandbox_mb)} alive at most), "
        f"{os.cpu_count()} cores; measured by {how}"
    )
    r = await hostile(n, sandbox_mb, budget_mb)
    print(
        f"{r['most_alive']:.0f} alive at once; of {r['commands']:.0f} hostile commands "
        f"{r['walled']:.0f} were stopped by their sandbox's limits, {r['broken']:.0f} found it "
        f"broken (its init killed too) "
        f"({r['wall_s']:.1f} s)"
    )
    if as_json:
        print("SANDBOX-MEMORY " + json.dumps(r))
    print(
        f"peak total of agentbus and its children: {r['peak_total_mb']:.1f} MiB "
        f"(sandboxes {r['peak_sandboxes_mb']:.0f} MiB + agentbus {r['peak_agentbus_mb']:.0f} MiB)"
        f" against the bound {r['bound_mb']:.1f} MiB (budget {budget_mb} MiB + agentbus + the "
        f"kernel's charge batch of 64 pages per CPU): "
        f"{'within' if r['peak_total_mb'] <= r['bound_mb'] else 'OVER'}"
    )


if __name__ == "__main__":
    asyncio.run(main())

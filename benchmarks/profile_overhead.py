"""Framework overhead: where the CPU of one PRAF math episode goes, from a profile.

Runs the scale benchmark (``benchmarks/scale.py``) under pyinstrument and
splits the event-loop thread's time per episode into:

* ``agentbus core``: bus, mailbox, actors, episode, runtime, events, store,
  messages (the framework proper);
* ``agentbus llm``: the LLM layer (router, cache, limits, backends);
* ``simulator``: ``agentbus/sim`` and the simulator's experts (the stand-in for
  a model server, which a real run does not pay for on this machine);
* ``environment``: the environment adapters and their tools;
* ``modules``: the agent's modules (prompts, parsing);
* ``event loop``: asyncio/anyio scheduling reached from no project frame.

Library time (pydantic, anyio, hashlib, re ...) is charged to the innermost
project frame that called it, so "agentbus core" includes the anyio task
starts and pydantic copies our code asks for. Idle time (the loop waiting in
``select``) is reported apart. pyinstrument samples wall-clock time of the
loop thread, so on a shared machine time spent waiting for a core is charged
to whatever ran when the core was taken away; the shares are what to read.

Prints the split, the top 10 hot spots by self time (with the project frame
they were reached from), and the framework's share LAST.

Run: ``python benchmarks/profile_overhead.py [--episodes 2000] [--speed 20]``
(needs ``pip install pyinstrument``; exits 0 with a message without it).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from typing import Any

import anyio

from agentbus.core.logs import configure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE_FILES = {
    "bus.py",
    "mailbox.py",
    "actor.py",
    "episode.py",
    "runtime.py",
    "events.py",
    "store.py",
    "messages.py",
    "outcome.py",
    "environment.py",
}
IDLE_FUNCS = {"select", "poll", "epoll.poll", "_run_once"}


def category(path: str) -> str | None:
    """The project category of a source file, or None for library code."""
    if not path.startswith(ROOT + os.sep):
        return None
    rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
    if rel.startswith("agentbus/sim/") or rel.endswith("/expert.py"):
        return "simulator"
    if rel.startswith("agentbus/llm/"):
        return "agentbus llm"
    if rel.startswith("agentbus/") and rel.split("/")[-1] in CORE_FILES:
        return "agentbus core"
    if rel.startswith("agentbus/"):
        return "agentbus other"
    if rel.startswith("environments/"):
        return "environment"
    if rel.startswith("modules/"):
        return "modules"
    if rel.startswith("benchmarks/"):
        return "benchmark"
    return "other project"


def split(root: Any) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """Self time per category and per (function, charged-to) over the profile tree."""
    per_cat: dict[str, float] = defaultdict(float)
    spots: dict[tuple[str, str], float] = defaultdict(float)
    stack: list[tuple[Any, str, str]] = [(root, "event loop", "-")]
    while stack:
        frame, cat, owner = stack.pop()
        own = category(frame.file_path or "")
        if own is not None:
            cat = own
            owner = f"{frame.function} ({os.path.relpath(frame.file_path, ROOT)})"
        # pyinstrument keeps a frame's own time in synthetic "[self]" leaves
        children = [c for c in frame.children if not c.is_synthetic]
        self_time = frame.total_self_time
        name = frame.function or "?"
        if cat == "event loop" and (name in IDLE_FUNCS or "select" in name):
            bucket = "idle (waiting for events)"
        else:
            bucket = cat
        if self_time > 0:
            per_cat[bucket] += self_time
            where = os.path.basename(frame.file_path or "") or "<builtin>"
            spots[(f"{name} [{where}:{frame.line_no}]", owner)] += self_time
        for child in children:
            stack.append((child, cat, owner))
    return per_cat, spots


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=2_000)
    ap.add_argument("--speed", type=float, default=20.0)
    ap.add_argument("--text", default=None, help="also write pyinstrument's full text tree here")
    args = ap.parse_args()
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("pyinstrument is not installed: pip install pyinstrument  (benchmark only)")
        return 0
    configure("warning")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from scale import measure  # the benchmark being profiled, next to this file

    profiler = Profiler(interval=0.001, async_mode="disabled")
    print(
        f"profile: {args.episodes:,} concurrent PRAF math episodes (benchmarks/scale.py), "
        f"in-process simulator at speed {args.speed:g}, asyncio loop, pyinstrument"
    )
    result = anyio.run(measure, args.episodes, args.speed, profiler)
    session = profiler.last_session
    if session is None:
        print("no profile was recorded")
        return 1
    if args.text:
        with open(args.text, "w") as fh:
            fh.write(profiler.output_text(unicode=False, color=False))
    root = session.root_frame()
    per_cat, spots = split(root)
    n = max(1, result["episodes"])
    busy = sum(v for k, v in per_cat.items() if not k.startswith("idle"))
    print(
        f"  {n:,} episodes in {result['wall_s']:.1f} s, {result['cpu_ms_per_episode']:.2f} ms "
        f"process CPU per episode; sampled {session.duration:.1f} s of the loop thread"
    )
    print("  loop-thread time per episode, by where it was spent:")
    for cat, secs in sorted(per_cat.items(), key=lambda kv: -kv[1]):
        share = "" if cat.startswith("idle") else f"  {100 * secs / busy:5.1f}% of busy"
        print(f"    {cat:28s} {1000 * secs / n:8.3f} ms{share}")
    print("  top 10 hot spots by self time (function [file:line] <- project frame charged):")
    busy_spots = [
        (key, secs)
        for key, secs in spots.items()
        if not (key[1] == "-" and key[0].startswith(("select", "epoll", "poll", "_run_once")))
    ]
    for (func, owner), secs in sorted(busy_spots, key=lambda kv: -kv[1])[:10]:
        print(f"    {1000 * secs / n:7.3f} ms/ep  {func}  <- {owner}")
    framework = per_cat.get("agentbus core", 0.0) + per_cat.get("agentbus llm", 0.0)
    sim = per_cat.get("simulator", 0.0)
    print(
        f"ratio framework (core + llm) / busy loop time: {framework / max(busy, 1e-9):.2f}  "
        f"({1000 * framework / n:.3f} ms per episode)"
    )
    print(f"ratio framework / simulator time: {framework / max(sim, 1e-9):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Fault injection for blame: runs whose failures have one known decisive call.

An agent whose modules are near-perfect (profile ``near``: every role wrong
1 time in 100,000 before the task's difficulty, never malformed) is run once
cleanly. In each all-default episode that succeeded one call is picked at
random (seeded), and the run is made again with ``near`` told to answer that
prompt wrong (:mod:`agentbus.sim.mistakes`). A failure of that second run has
one known cause: the injected call. Blame repairs with ``fix``, the same
skills without the injected faults.

Two mistakes, two ways. *After*: the decisive mistake of the one-mistake run
and a later call (the failure was settled before it: the truth is the
first). *Harmless first*: a harmless mistake (the episode with it alone
succeeds), then one the failure hinges on (:func:`_two`); the earliest
mistake is the wrong answer there, so a rule that names the first wrong call
cannot pass for blame.

``weak_module_config`` gives the other setting: every module near-perfect
but one, which runs on the weak profile; blame should name that module.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbus.app.blame import load_records
from agentbus.app.run import main as run_main
from agentbus.core.calltrace import expand_prompts
from agentbus.core.errors import UserError
from agentbus.core.record import EpisodeRecord
from agentbus.sim.mistakes import prompt_key
from agentbus.sim.profiles import SKILL_ROLES

#: near-perfect skills: right but for 1 in 100,000 before the task's difficulty (a
#: logit of 11.5 against difficulties of 1-8), never malformed, and trusting: a
#: wrong plan, thought or reflection in the prompt misleads it, so that an
#: injected mistake carries on to the outcome instead of being shrugged off
NEAR_SKILL: dict[str, Any] = {
    "base": 0.99999,
    "malformed": 0.0,
    "plan": {"good": 0.5, "bad": 6.0},
    "thought": {"good": 0.5, "bad": 8.0},
    "reflection": {"good": 0.5, "bad": 6.0},
}
#: the agent under test and the repair model
AGENT, REPAIR = "sim:near", "sim:fix"


def _profile(mistakes: Sequence[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"extends": "strong", **{r: dict(NEAR_SKILL) for r in SKILL_ROLES}}
    out["mistakes"] = list(mistakes)
    return out


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return '"' + value + '"'
    return repr(value)


def write_profiles(path: Path, profiles: Mapping[str, Mapping[str, Any]]) -> Path:
    """A run config (TOML) holding only ``[sim.profiles.NAME]`` tables."""
    lines: list[str] = []
    for name, fields in profiles.items():
        lines.append(f"[sim.profiles.{name}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in fields.items()]
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def injection_config(path: Path, mistakes: Sequence[str] = ()) -> Path:
    """``near`` with ``mistakes`` injected, and ``fix``: the same skills without them."""
    return write_profiles(path, {"near": _profile(mistakes), "fix": _profile()})


def weak_module_config(path: Path, weak: str) -> Path:
    """``nearweak``: near-perfect but ``weak``, which has the weak profile's skill; and ``fix``."""
    near = _profile()
    del near[weak]
    near["extends"] = "weak"
    return write_profiles(path, {"nearweak": near, "fix": _profile()})


def _calls(record: EpisodeRecord) -> list[dict[str, Any]]:
    trace = expand_prompts(record.outcome.trace or [])
    return [e for e in trace if e.get("type") == "LLMCall" and e.get("prompt")]


def _all_default(run_dir: Path) -> dict[str, EpisodeRecord]:
    """task id -> the all-default episode of ``run_dir``."""
    return {
        r.task_id: r
        for r in load_records(run_dir)
        if r.kind == "coalition" and not r.coalition and r.outcome.error is None
    }


@dataclass
class Injected:
    """A run with injected mistakes and, per task, which injected call is decisive."""

    run_dir: Path
    mistakes: list[str]
    #: task id -> "first" or "last": the decisive injected call of its failure
    decisive: dict[str, str] = field(default_factory=dict)

    def truth(self, entry: Mapping[str, Any]) -> int | None:
        """The decisive step of a blamed failure (None: unknown)."""
        steps = entry.get("injected") or []
        which = self.decisive.get(str(entry.get("task_id")))
        if not steps or which is None:
            return None
        return int(steps[0] if which == "first" else steps[-1])


def run_with(run_dir: Path, config: Path, run_args: Sequence[str], default: str = AGENT) -> None:
    argv = [*run_args, "--config", str(config), "--default", default, "--test", REPAIR]
    argv += ["--run-dir", str(run_dir), "--sim-speed", "0", "--no-plots", "--progress", "off"]
    if run_main([*argv, "--no-preflight"]) != 0:
        raise UserError(f"the run into {run_dir} failed")


def _round(
    root: Path, name: str, keys: Sequence[str], run_args: Sequence[str]
) -> dict[str, EpisodeRecord]:
    """One run with ``keys`` injected; its all-default episodes by task."""
    run_with(root / name, injection_config(root / f"{name}.toml", list(keys)), run_args)
    return _all_default(root / name)


def _pick(calls: Sequence[dict[str, Any]], seed: str) -> str:
    return prompt_key(random.Random(seed).choice(calls)["prompt"])


def _place(calls: Sequence[dict[str, Any]], key: str) -> tuple[int, str, int] | None:
    """(index, slot, that slot's rank) of the call whose prompt is ``key`` (None: absent)."""
    ranks: dict[str, int] = {}
    for i, call in enumerate(calls):
        slot = str(call.get("sender", ""))
        ranks[slot] = ranks.get(slot, 0) + 1
        if prompt_key(call["prompt"]) == key:
            return i, slot, ranks[slot] - 1
    return None


def _same_place(calls: Sequence[dict[str, Any]], slot: str, rank: int) -> str | None:
    """The prompt key of ``slot``'s call of ``rank`` in ``calls`` (None: it made fewer)."""
    mine = [c for c in calls if str(c.get("sender", "")) == slot]
    return prompt_key(mine[rank]["prompt"]) if rank < len(mine) else None


@dataclass
class Injections:
    """The injected runs of one setting: one mistake, and two mistakes two ways."""

    #: one injected mistake per episode, the decisive one
    one: Injected
    #: the decisive mistake, then a later one (the truth: the first)
    after: Injected
    #: a harmless mistake, then a decisive one (the truth: the second); None: not made
    two: Injected | None


def inject(
    root: Path, run_args: Sequence[str], seed: int = 0, rounds: int = 3, harmless: bool = True
) -> Injections:
    """The clean run, then the one- and two-mistake runs under ``root`` (see the docstring).

    Most single mistakes of a near-perfect agent are harmless (a later call
    puts them right), so each run is made in ``rounds``: a task whose injected
    mistake did not make it fail gets another call picked instead. Its
    earlier, harmless pick is taken out again, so every episode of the final
    one-mistake run has exactly one injected mistake. ``harmless`` = False
    skips the harmless-then-decisive runs (``2 * rounds + 1`` more runs).
    """
    root.mkdir(parents=True, exist_ok=True)
    clean = _round(root, "clean", (), run_args)
    chosen: dict[str, str] = {}
    failed: set[str] = set()
    run: dict[str, EpisodeRecord] = {}
    for n in range(1, rounds + 1):
        for task, record in sorted(clean.items()):
            calls = _calls(record)
            if record.outcome.success and calls and task not in failed:
                chosen[task] = _pick(calls, f"inject:{seed}:{task}:1:{n}")
        run = _round(root, f"one-{n}", list(chosen.values()), run_args)
        failed = {t for t, r in run.items() if t in chosen and not r.outcome.success}
    one = Injected(root / f"one-{rounds}", list(chosen.values()), {t: "first" for t in failed})
    later = dict(chosen)
    for task in sorted(failed):
        calls = _calls(run[task])
        place = _place(calls, chosen[task])
        rest = calls[place[0] + 1 :] if place else []
        if rest:
            later[f"{task} later"] = _pick(rest, f"inject:{seed}:{task}:3")
    after = _round(root, "after", list(later.values()), run_args)
    kept = {t: "first" for t in failed if f"{t} later" in later and not after[t].outcome.success}
    both = Injected(root / "after", list(later.values()), kept)
    decisive = {t: chosen[t] for t in failed}
    two = _two(root, run_args, seed, rounds, clean, decisive) if harmless else None
    return Injections(one, both, two)


def _two(
    root: Path,
    run_args: Sequence[str],
    seed: int,
    rounds: int,
    clean: Mapping[str, EpisodeRecord],
    decisive: Mapping[str, str],
) -> Injected:
    """The two-mistake run: a harmless mistake, then one the failure hinges on.

    For each task whose one-mistake run failed through its pick D (slot S's
    call number k), a round picks a call H before D and runs it alone; where
    the episode still succeeds (H is harmless), it went another way after H,
    and S's call number k there (D') is injected beside H and D. A task is
    kept when that run fails, else the next round picks another H. In the
    final run (H, D' and D injected) putting H right gives the clean episode
    with D, which fails; putting D' right gives H's own success. So D' is the
    decisive call and H, the earliest mistake, is not.
    """
    places = {t: _place(_calls(clean[t]), k) for t, k in decisive.items()}
    found: dict[str, list[str]] = {}
    for n in range(1, rounds + 1):
        picks: dict[str, str] = {}
        for task, place in sorted(places.items()):
            before = _calls(clean[task])[: place[0]] if place else []
            if before and task not in found:
                picks[task] = _pick(before, f"inject:{seed}:{task}:0:{n}")
        if not picks:
            break
        alone = _round(root, f"harmless-{n}", list(picks.values()), run_args)
        trios: dict[str, list[str]] = {}
        for task, key in picks.items():
            place = places[task]
            if place is None or task not in alone or not alone[task].outcome.success:
                continue
            again = _same_place(_calls(alone[task]), place[1], place[2])
            if again is not None:
                trios[task] = [key, again, decisive[task]]
        if trios:
            run = _round(root, f"two-{n}", [k for t in trios.values() for k in t], run_args)
            found.update((t, k) for t, k in trios.items() if not run[t].outcome.success)
    keys = [k for t in found.values() for k in t]
    run = _round(root, "two", keys, run_args)
    failed = {t: "last" for t in found if t in run and not run[t].outcome.success}
    return Injected(root / "two", keys, failed)


__all__ = [
    "AGENT",
    "REPAIR",
    "Injected",
    "Injections",
    "inject",
    "injection_config",
    "run_with",
    "weak_module_config",
    "write_profiles",
]

"""Fault injection for blame: runs whose failures have one known decisive call.

An agent whose modules are near-perfect (profile ``near``: every role right
99.5% of the time before the task's difficulty, never malformed) is run once
cleanly. In each all-default episode that succeeded one call is picked at
random (seeded), and the run is made again with ``near`` told to answer that
prompt wrong (:mod:`agentbus.sim.mistakes`). A failure of that second run has
one known cause: the injected call. Blame repairs with ``fix``, the same
skills without the injected faults.

Two mistakes: in each episode of the one-mistake run, a second call after the
first injected one is picked and the run made a third time with both. The
truth is the first injected call when the one-mistake episode already failed
(the second mistake came after the failure was decided), and the second one
when the first was harmless (the episode with it alone succeeded): there the
earliest mistake is the wrong answer.

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


def inject(
    root: Path, run_args: Sequence[str], seed: int = 0, rounds: int = 3
) -> tuple[Injected, Injected]:
    """The clean run, then the one- and two-mistake runs under ``root`` (see the docstring).

    Most single mistakes of a near-perfect agent are harmless (a later call
    puts them right), so the one-mistake run is made in ``rounds``: a task
    whose injected mistake did not make it fail gets another call picked
    instead. Its earlier, harmless pick is taken out again, so every episode
    of the final run has exactly one injected mistake.
    """
    root.mkdir(parents=True, exist_ok=True)
    run_with(root / "clean", injection_config(root / "clean.toml"), run_args)
    clean = _all_default(root / "clean")
    chosen: dict[str, str] = {}
    failed: set[str] = set()
    for n in range(1, rounds + 1):
        for task, record in sorted(clean.items()):
            calls = _calls(record)
            if record.outcome.success and calls and task not in failed:
                pick = random.Random(f"inject:{seed}:{task}:1:{n}").choice(calls)
                chosen[task] = prompt_key(pick["prompt"])
        run_dir = root / f"one-{n}"
        run_with(run_dir, injection_config(root / f"one-{n}.toml", list(chosen.values())), run_args)
        failed = {t for t, r in _all_default(run_dir).items() if not r.outcome.success}
    one = list(chosen.values())
    first = Injected(run_dir, one, {t: "first" for t in chosen})
    two, decisive = list(one), {}
    for task, record in sorted(_all_default(run_dir).items()):
        keys = [prompt_key(c["prompt"]) for c in _calls(record)]
        hit = [i for i, k in enumerate(keys) if k in set(one)]
        later = keys[hit[0] + 1 :] if hit else []
        if not later:
            continue
        two.append(random.Random(f"inject:{seed}:{task}:2").choice(later))
        decisive[task] = "last" if record.outcome.success else "first"
    run_with(root / "two", injection_config(root / "two.toml", two), run_args)
    return first, Injected(root / "two", two, decisive)


__all__ = [
    "AGENT",
    "REPAIR",
    "Injected",
    "inject",
    "injection_config",
    "run_with",
    "weak_module_config",
    "write_profiles",
]

"""Blame: the decisive call of each chosen episode of a finished run, by replay.

This composes what :mod:`agentbus.replay` needs from a run directory: the run's
config (``manifest.json``), its episodes with their traces (``events.jsonl``),
the same environment, agent and models as the run (the simulator without
delays, in process), and the run's own LLM cache, which answers the recorded
prefix of every replay (a run without it is refused as such). An episode
*fails* as the run scores it: its success flag, or a reward below
``--threshold``. Each verdict is appended to ``blame.jsonl`` as soon as it is
known, tagged with its blame setting, so an interrupted blame resumes where
it stopped and another setting never mixes in; the summaries go to
``blame.json`` and ``blame.md`` (:mod:`agentbus.app.blame_report`).
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import orjson

from agentbus.app import external
from agentbus.app.config import RunConfig
from agentbus.app.evaluation import SpecFactory
from agentbus.app.preparation import load_environment, make_plan, sim_config
from agentbus.core.calltrace import expand_prompts
from agentbus.core.environment import Task
from agentbus.core.errors import UserError
from agentbus.core.events import EPISODE_ENDED
from agentbus.core.inputs import json_object
from agentbus.core.outcome import Outcome
from agentbus.core.record import EpisodeRecord
from agentbus.llm.cache import FILENAME, CompletionCache
from agentbus.llm.router import LLMRouter
from agentbus.replay.calls import Call, Intervention, NotReplayable, recorded_calls
from agentbus.replay.search import (
    ALPHA,
    PLACEBO,
    PLACEBOS,
    REPAIRS,
    Placebo,
    Replay,
    Verdict,
    decisive_step,
    replay,
    reproduction_problem,
)
from agentbus.replay.truth import injected, mistakes, rolled_wrong
from agentbus.sim.service import SimHandle, sim_service

LOG = "blame.jsonl"


@dataclass(frozen=True)
class BlameOptions:
    """Which episodes to blame, which model repairs a call, and the decision rule."""

    run_dir: Path
    #: slots on the test model; None: the all-default agent for failures, the
    #: all-test agent for successes
    coalition: tuple[str, ...] | None = None
    #: blame failures (repair = the test model) or successes (repair = the default)
    outcome: str = "failure"
    sample: int | None = None
    repair: str | None = None
    concurrency: int = 16
    seed: int = 0
    #: repaired and placebo continuations per tested call, and the test's level
    repairs: int = REPAIRS
    placebos: int = PLACEBOS
    alpha: float = ALPHA
    #: the test's placebo: the recorded answer kept ("keep"), or the previous rule's redraw
    placebo: Placebo = PLACEBO
    #: an episode passes when its reward is at least this (None: its success flag)
    threshold: float | None = None
    #: print every episode's verdict
    details: bool = False
    #: the agent's isolation given on blame's own command line (a run's manifest never
    #: loosens it: external.replay_config)
    agent_isolation: str | None = None
    agent_paths: tuple[Path, ...] = ()
    #: replay a command agent through workers running this command (None: as the run did)
    agent_worker: str | None = None

    def passed(self, outcome: Outcome) -> bool:
        """Success as the run scores it: the reward threshold, else the success flag."""
        if self.threshold is None:
            return outcome.success
        return outcome.error is None and outcome.reward >= self.threshold

    def setting(self, repair: str) -> str:
        """The key results are kept under: one per blame setting, never overwritten."""
        who = "+".join(self.coalition or ()) or "default"
        bar = "success" if self.threshold is None else f"reward>={self.threshold:g}"
        return (
            f"{self.outcome}s of {who}, repair {repair}, {bar}, "
            f"R{self.repairs} P{self.placebos} alpha {self.alpha:g} placebo {self.placebo}"
        )


def load_config(run_dir: Path) -> RunConfig:
    """The run's config from its manifest (a UserError when it is not a run directory)."""
    path = run_dir / "manifest.json"
    try:
        manifest = orjson.loads(path.read_bytes())
        return RunConfig.model_validate(manifest["config"])
    except FileNotFoundError:
        raise UserError(f"{run_dir} is not a run directory (no manifest.json)") from None
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise UserError(f"cannot read {path}: {str(exc).splitlines()[0]}") from None


def load_records(run_dir: Path) -> list[EpisodeRecord]:
    """The counting record of every cell of the run, traces included, in log order."""
    found: dict[str, EpisodeRecord] = {}
    try:
        with (run_dir / "events.jsonl").open("rb") as f:
            for line in f:
                if b'"episode.ended"' not in line:
                    continue
                event = json_object(line)
                if event is None or event.get("type") != EPISODE_ENDED:
                    continue
                record = EpisodeRecord.parse(event.get("data", event))
                if record is not None and record.counts:
                    found[record.episode_id] = record
    except FileNotFoundError:
        raise UserError(f"{run_dir} has no events.jsonl") from None
    return list(found.values())


def choose(
    records: Sequence[EpisodeRecord], config: RunConfig, options: BlameOptions
) -> list[EpisodeRecord]:
    """The episodes to blame: one coalition of the first test column, failed (or succeeded)."""
    wanted = set(options.coalition or ())
    column = config.test[0] if config.test else None
    want_success = options.outcome == "success"
    chosen = [
        r
        for r in records
        if r.kind == "coalition"
        and r.outcome.error is None
        and set(r.coalition) == wanted
        and r.test_model == column
        and options.passed(r.outcome) == want_success
    ]
    if options.sample is not None and options.sample < len(chosen):
        chosen = random.Random(f"blame:{options.seed}").sample(chosen, options.sample)
    return chosen


def repair_model(config: RunConfig, options: BlameOptions) -> str:
    if options.repair:
        return options.repair
    return config.default if options.outcome == "success" else config.test[0]


def done_verdicts(run_dir: Path, setting: str) -> dict[str, dict[str, Any]]:
    """Verdicts already in ``blame.jsonl`` for this blame setting (a torn last line is skipped)."""
    out: dict[str, dict[str, Any]] = {}
    path = run_dir / LOG
    if not path.exists():
        return out
    with path.open("rb") as f:
        for line in f:
            entry = json_object(line)
            if entry is not None and entry.get("setting") == setting:
                out[str(entry.get("episode_id"))] = entry
    return out


def check_cache(config: RunConfig, run_dir: Path) -> None:
    """Blame answers the recorded prefix from the run's LLM cache: say so when there is none."""
    if config.llm.cache == "off":
        raise UserError(
            f"{run_dir} was made with --cache off: blame replays the recorded calls from the "
            "run's LLM cache, so a run without one cannot be blamed (run it with the cache on)"
        )
    if not (run_dir / FILENAME).exists():
        raise UserError(
            f"{run_dir} has no {FILENAME} (the run's LLM cache): blame replays the recorded "
            "calls from it, so without it nothing can be replayed"
        )


#: characters of a call's answer kept in a verdict (what was said, what the repair said)
SAID = 240


def _said(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SAID else text[: SAID - 3] + "..."


class Blamer:
    """Replays episodes of one run: see the module docstring."""

    def __init__(
        self,
        config: RunConfig,
        factory: SpecFactory,
        router: LLMRouter,
        repair: str,
        tasks: dict[str, Task],
        sim: SimHandle | None,
        options: BlameOptions,
    ) -> None:
        self.config = config
        self.factory = factory
        self.router = router
        self.repair = repair
        self.tasks = tasks
        self.sim = sim
        self.options = options
        self.setting = options.setting(repair)
        #: reproductions already made (the check), reused by the verdicts
        self.reproduced: dict[str, Replay] = {}

    def _spec(self, record: EpisodeRecord) -> Any:
        task = self.tasks.get(record.task_id)
        if task is None:
            raise UserError(
                f"task {record.task_id} of {record.episode_id} is not in the run's tasks"
            )
        return self.factory.build(
            record.test_model or self.config.test[0], record.coalition, task, record.repeat
        )

    async def reproduce(self, record: EpisodeRecord) -> str | None:
        """Reproduce ``record`` from the cache; why it is not the record (None: it is)."""
        recorded = recorded_calls(expand_prompts(record.outcome.trace or []))
        result = await replay(self._spec(record), recorded or None)
        self.reproduced[record.episode_id] = result
        return reproduction_problem(record.outcome, result)

    async def verdict(self, record: EpisodeRecord) -> dict[str, Any]:
        """The decisive step of ``record``, its cost and (on the simulator) its truth."""
        recorded = recorded_calls(expand_prompts(record.outcome.trace or [])) or None
        repair = self.router.client(self.repair)
        base: list[Replay] = []
        said: dict[int, str] = {}

        async def run(intervention: Intervention | None) -> Replay:
            if intervention is None and record.episode_id in self.reproduced:
                result = self.reproduced.pop(record.episode_id)
            else:
                result = await replay(self._spec(record), recorded, intervention, repair)
            if intervention is None:
                base.append(result)
            return result

        async def probe(call: Call) -> tuple[str, list[dict[str, Any]]]:
            answer = await repair.complete(call.messages, call.params)
            said[call.index] = answer.text
            return answer.text, [c.model_dump(mode="json") for c in answer.tool_calls]

        o = self.options
        found: Verdict = await decisive_step(
            record.outcome,
            run,
            probe,
            repairs=o.repairs,
            placebos=o.placebos,
            alpha=o.alpha,
            passed=o.passed,
            placebo=o.placebo,
        )
        entry: dict[str, Any] = {
            "episode_id": record.episode_id,
            "task_id": record.task_id,
            "coalition": list(record.coalition),
            "outcome": o.outcome,
            "reward": record.outcome.reward,
            "setting": self.setting,
            "repair": self.repair,
            **found.to_json(),
        }
        if found.step is not None and base:
            entry["said"] = _said(base[0].calls[found.step].text)
            entry["repair_said"] = _said(said.get(found.step, ""))
        if self.sim is not None and base and base[0].replayable:
            entry.update(self._truth(record, base[0], found))
        return entry

    def _truth(self, record: EpisodeRecord, base: Replay, found: Verdict) -> dict[str, Any]:
        """The simulator's truth of a verdict: rolled and injected mistakes."""
        assert self.sim is not None
        defaults = self.config.llm.sampling.params()
        wrong = mistakes(self.sim.model, base.calls, record.assignment, defaults)
        out: dict[str, Any] = {
            "mistakes": [i for i, w in enumerate(wrong) if w],
            "unknown": sum(1 for w in wrong if w is None),
            "injected": injected(self.sim.model, base.calls, record.assignment),
            "call_slots": [c.slot for c in base.calls],
        }
        if found.step is None:
            return out
        if self.options.outcome == "failure":
            out["truth"] = wrong[found.step]
        else:  # a success breaks where a right call is answered wrong by the repair model
            right = wrong[found.step] is False
            broke = rolled_wrong(self.sim.model, self.repair, base.calls[found.step], defaults)
            out["truth"] = None if broke is None else right and broke
        return out


def _replay_config(config: RunConfig, run_dir: Path) -> RunConfig:
    """The run's config for replays: simulator in process without delays, the run's cache."""
    sim = config.sim.model_copy(update={"speed": 0.0, "transport": "inprocess"})
    llm = config.llm.model_copy(update={"cache_dir": run_dir, "sim_transport": "inprocess"})
    return config.model_copy(update={"sim": sim, "llm": llm, "run_dir": run_dir})


class _QuietReplayErrors(logging.Filter):
    """Drop the gateway server's error log of a request a replay stopped on purpose.

    A replayed call that leaves the recorded prefix raises NotReplayable inside
    the gateway's request handler; aiohttp logs that with its traceback, but
    it is a verdict (reported as *not replayable*), not a fault.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, NotReplayable)


@asynccontextmanager
async def open_blamer(
    config: RunConfig, run_dir: Path, repair: str, options: BlameOptions | None = None
) -> AsyncIterator[Blamer]:
    """Environment, simulator, router on the run's cache, and the agent's episode builder."""
    config = _replay_config(config, run_dir)
    setup = await anyio.to_thread.run_sync(load_environment, config)
    plan = make_plan(config, setup.tasks)
    async with AsyncExitStack() as stack:
        sim: SimHandle | None = None
        if any(m.startswith("sim:") for m in (*config.models(), repair)):
            sim = await stack.enter_async_context(sim_service(sim_config(config)))
            sim.model.add_tasks(config.env, setup.tasks)
        router = await stack.enter_async_context(LLMRouter(config.llm, sim=sim))
        # the whole recorded run must stay in memory: an evicted prefix call would miss
        router.cache.close()
        router.cache = CompletionCache(run_dir, max_entries=1 << 30)
        actors_for = None
        if external.is_external(config):
            actors_for = await stack.enter_async_context(
                external.external_agent(config, router.client)
            )
        factory = SpecFactory(
            plan,
            setup.factory,
            router.client,
            max_steps=config.max_steps,
            timeout_s=config.episode_timeout_s,
            trace=False,
            actors_for=actors_for,
        )
        quiet = _QuietReplayErrors()
        logging.getLogger("aiohttp.server").addFilter(quiet)
        stack.callback(logging.getLogger("aiohttp.server").removeFilter, quiet)
        try:
            tasks = {t.id: t for t in setup.tasks}
            options = options or BlameOptions(run_dir)
            yield Blamer(config, factory, router, repair, tasks, sim, options)
        finally:
            router.cache.close()


async def blame_all(
    blamer: Blamer,
    records: Sequence[EpisodeRecord],
    log_path: Path,
    concurrency: int,
    on_verdict: Any = None,
) -> list[dict[str, Any]]:
    """Verdicts for ``records``, ``concurrency`` episodes at a time, each appended to the log."""
    out: list[dict[str, Any]] = []
    limiter = anyio.CapacityLimiter(max(1, concurrency))
    with log_path.open("ab") as log:

        async def one(record: EpisodeRecord) -> None:
            async with limiter:
                entry = await blamer.verdict(record)
            out.append(entry)
            log.write(orjson.dumps(entry) + b"\n")
            log.flush()
            if on_verdict is not None:
                on_verdict(entry)

        async with anyio.create_task_group() as tg:
            for record in records:
                tg.start_soon(one, record)
    return out


__all__ = [
    "LOG",
    "BlameOptions",
    "Blamer",
    "blame_all",
    "check_cache",
    "choose",
    "done_verdicts",
    "load_config",
    "load_records",
    "open_blamer",
    "repair_model",
]

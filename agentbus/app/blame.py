"""Blame: the decisive call of each chosen episode of a finished run, by replay.

This composes what :mod:`agentbus.replay` needs from a run directory: the run's
config (``manifest.json``), its episodes with their traces (``events.jsonl``),
the same environment, agent and models as the run (the simulator without
delays, in process), and the run's own LLM cache, which answers the recorded
prefix of every replay. Each verdict is appended to ``blame.jsonl`` as soon as
it is known, so an interrupted blame resumes where it stopped; the summary
goes to ``blame.json`` and ``blame.md`` (:mod:`agentbus.app.blame_report`).
"""

from __future__ import annotations

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
from agentbus.calltrace import expand_prompts
from agentbus.core.environment import Task
from agentbus.core.events import EPISODE_ENDED
from agentbus.core.record import EpisodeRecord
from agentbus.errors import UserError
from agentbus.inputs import json_object
from agentbus.llm.cache import CompletionCache
from agentbus.llm.router import LLMRouter
from agentbus.replay.calls import Call, Intervention, recorded_calls
from agentbus.replay.search import Replay, Verdict, decisive_step, replay
from agentbus.replay.truth import mistakes
from agentbus.sim.service import SimHandle, sim_service

LOG = "blame.jsonl"
#: episodes whose reproduction is checked before anything else is replayed
CHECK_EPISODES = 3


@dataclass(frozen=True)
class BlameOptions:
    """Which episodes to blame and which model repairs a call."""

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
    #: independent repair answers each flip must be repeated by (0: none)
    confirm: int = 0
    #: placebo replays (the slot's own model resampled) a flip must beat (0: none)
    placebo: int = 4


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
        and r.outcome.success == want_success
    ]
    if options.sample is not None and options.sample < len(chosen):
        chosen = random.Random(f"blame:{options.seed}").sample(chosen, options.sample)
    return chosen


def repair_model(config: RunConfig, options: BlameOptions) -> str:
    if options.repair:
        return options.repair
    return config.default if options.outcome == "success" else config.test[0]


def done_verdicts(
    run_dir: Path, repair: str, confirm: int = 0, placebo: int = 4
) -> dict[str, dict[str, Any]]:
    """Verdicts already in ``blame.jsonl`` for this repair model and confirmation setting
    (a torn last line is skipped)."""
    out: dict[str, dict[str, Any]] = {}
    path = run_dir / LOG
    if not path.exists():
        return out
    with path.open("rb") as f:
        for line in f:
            entry = json_object(line)
            if (
                entry is not None
                and entry.get("repair") == repair
                and entry.get("confirm", 0) == confirm
                and entry.get("placebo", 0) == placebo
            ):
                out[str(entry.get("episode_id"))] = entry
    return out


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
        confirm: int = 0,
        placebo: int = 4,
    ) -> None:
        self.config = config
        self.factory = factory
        self.router = router
        self.repair = repair
        self.tasks = tasks
        self.sim = sim
        self.confirm = confirm
        self.placebo = placebo

    def _spec(self, record: EpisodeRecord) -> Any:
        task = self.tasks.get(record.task_id)
        if task is None:
            raise UserError(
                f"task {record.task_id} of {record.episode_id} is not in the run's tasks"
            )
        return self.factory.build(
            record.test_model or self.config.test[0], record.coalition, task, record.repeat
        )

    async def reproduce(self, record: EpisodeRecord) -> Replay:
        recorded = recorded_calls(expand_prompts(record.outcome.trace or []))
        return await replay(self._spec(record), recorded or None)

    async def verdict(self, record: EpisodeRecord) -> dict[str, Any]:
        """The decisive step of ``record``, its cost and (on the simulator) its truth."""
        recorded = recorded_calls(expand_prompts(record.outcome.trace or [])) or None
        repair = self.router.client(self.repair)
        base: list[Replay] = []

        async def run(intervention: Intervention | None) -> Replay:
            result = await replay(self._spec(record), recorded, intervention, repair)
            if intervention is None:
                base.append(result)
            return result

        async def probe(call: Call) -> tuple[str, list[dict[str, Any]]]:
            answer = await repair.complete(call.messages, call.params)
            return answer.text, [c.model_dump(mode="json") for c in answer.tool_calls]

        found: Verdict = await decisive_step(
            record.outcome, run, probe, confirm=self.confirm, placebo=self.placebo
        )
        entry: dict[str, Any] = {
            "episode_id": record.episode_id,
            "task_id": record.task_id,
            "repair": self.repair,
            "confirm": self.confirm,
            "placebo": self.placebo,
            **found.to_json(),
        }
        # the truth is about the original calls' mistakes: it checks blamed failures only
        if self.sim is not None and base and base[0].replayable and not record.outcome.success:
            wrong = mistakes(
                self.sim.model,
                base[0].calls,
                record.assignment,
                self.config.llm.sampling.params(),
            )
            entry["mistakes"] = [i for i, w in enumerate(wrong) if w]
            entry["unknown"] = sum(1 for w in wrong if w is None)
            if found.step is not None:
                entry["truth"] = wrong[found.step]
        return entry


def _replay_config(config: RunConfig, run_dir: Path) -> RunConfig:
    """The run's config for replays: simulator in process without delays, the run's cache."""
    sim = config.sim.model_copy(update={"speed": 0.0, "transport": "inprocess"})
    llm = config.llm.model_copy(update={"cache_dir": run_dir, "sim_transport": "inprocess"})
    return config.model_copy(update={"sim": sim, "llm": llm, "run_dir": run_dir})


@asynccontextmanager
async def open_blamer(
    config: RunConfig, run_dir: Path, repair: str, *, confirm: int = 0, placebo: int = 4
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
        try:
            tasks = {t.id: t for t in setup.tasks}
            yield Blamer(config, factory, router, repair, tasks, sim, confirm, placebo)
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
    "CHECK_EPISODES",
    "LOG",
    "BlameOptions",
    "Blamer",
    "blame_all",
    "choose",
    "done_verdicts",
    "load_config",
    "load_records",
    "open_blamer",
    "repair_model",
]

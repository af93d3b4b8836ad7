"""Everything a run decides before its first episode: the tasks, the plan, the run dir.

:func:`prepare` loads the environment, checks the plan, models and repeats,
opens (or resumes) the run directory and replays what it already holds into
the attribution service. The executor and the screened run need only these
pieces, so they import this module rather than :mod:`agentbus.app.evaluate`
(which imports them: that was an import circle).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbus.app import external
from agentbus.app.best import BestRun
from agentbus.app.config import RESULT_KEYS, RunConfig
from agentbus.app.costs import RunCost, price_table
from agentbus.app.estimation import with_design
from agentbus.app.evaluation import Agent, EvaluationPlan
from agentbus.app.pareto import ParetoRun
from agentbus.app.resume_scope import check_scope
from agentbus.core import registry
from agentbus.core.environment import EnvSetup, Task
from agentbus.core.errors import UserError
from agentbus.core.events import EventHub
from agentbus.core.record import EpisodeRecord
from agentbus.envkit.expert import expert_problem
from agentbus.llm.spec import parse_spec
from agentbus.runs.store import RunStore
from agentbus.sim.profiles import ProfileSet
from attribution.service import AttributionService


def load_environment(config: RunConfig) -> EnvSetup:
    """The environment's tasks and per-episode factory (a UserError for bad files)."""
    if external.is_external(config):
        return external.load_tasks(config)
    env_cls = registry.get("environments", config.env)
    setup: EnvSetup = env_cls.setup(config.task_source())
    if not setup.tasks:
        raise UserError(f"environment {config.env!r} produced no tasks")
    return setup


def check_models(config: RunConfig) -> None:
    """Refuse bad model specs, unknown sim profiles and sim: models without an expert."""
    profiles = ProfileSet(config.sim.profiles)
    simulated = False
    for model in config.models():
        spec = parse_spec(model)
        if spec.backend == "sim":
            profiles.get(spec.model)
            simulated = True
    if simulated and config.sim.experts is None and not external.is_external(config):
        problem = expert_problem(config.env)
        if problem is not None:
            raise UserError(problem)


def default_run_dir(config: RunConfig) -> Path:
    return Path("runs") / f"{config.env}-{time.strftime('%Y%m%d-%H%M%S')}"


def sim_config(config: RunConfig) -> Any:
    """The simulator only needs the expert of the environment being run."""
    if config.sim.experts is not None:
        return config.sim
    known = registry.names("experts")
    return config.sim.model_copy(update={"experts": [config.env] if config.env in known else []})


@dataclass
class Prepared:
    """Everything decided before the first episode: plan, store, service, replayed records."""

    config: RunConfig
    setup: EnvSetup
    plan: EvaluationPlan
    run_dir: Path
    store: RunStore
    hub: EventHub
    service: AttributionService
    best: BestRun
    replayed: list[EpisodeRecord]
    #: coalition cells already counted in the log when the run began (not re-run)
    counted: int
    #: spend, budget and projected cost (issue 17)
    cost: RunCost | None = None
    #: --pareto K: the front and the assignments run for real
    pareto: ParetoRun | None = None


def check_repeats(config: RunConfig) -> None:
    """Refuse repeats that can only replay: deterministic sampling with the cache on."""
    if config.repeats <= 1:
        return
    sampling = config.llm.sampling.params()
    if sampling.deterministic and config.llm.cache != "off":
        why = "temperature 0" if sampling.temperature == 0 else "a fixed sampling seed"
        raise UserError(
            f"--repeats {config.repeats} with {why} replays the same answers from the LLM "
            "cache, so repeats would add no information; use --temperature > 0 (no "
            "--sampling-seed) for independent repeats, or --repeats 1"
        )


def make_plan(config: RunConfig, tasks: Sequence[Task]) -> EvaluationPlan:
    """The evaluation plan: the agent, the varied slots and their variants.

    The varied slots are ``slots`` when given, else the slots ``vary`` names,
    else every slot of the agent (CapaBench's game).
    """
    if external.is_external(config):
        agent = external.agent_of(config)
    else:
        agent = Agent.resolve(config.agent, config.modules)
    vary = config.variants()
    if config.slots:
        varied = tuple(config.slots)
    elif vary:
        varied = tuple(s for s in agent.slots if s in vary)
    else:
        varied = agent.slots
    if vary and config.best:
        raise UserError(
            "--best picks a model per slot, but --vary varies implementations; drop one of them"
        )
    if vary and config.pareto is not None:
        raise UserError(
            "--pareto ranks per-slot model assignments, but --vary varies implementations; "
            "drop one of them"
        )
    if config.shift is not None and config.shift not in varied:
        raise UserError(f"--shift {config.shift}: not a varied slot; varied: {', '.join(varied)}")
    return EvaluationPlan(
        agent,
        varied,
        config.default,
        tuple(config.test),
        tasks,
        config.repeats,
        metadata={"env": config.env},
        vary=vary,
    )


def manifest_of(config: RunConfig) -> dict[str, Any]:
    """The config as the manifest stores it; an empty ``vary`` (or ``inspect``...) is left out.

    Run directories made before ``vary`` (or ``--inspect``) existed have no
    such key, and a result key missing on one side only would refuse their resume.
    """
    manifest = config.model_dump(mode="json")
    for key in ("vary", "inspect", "inspect_args"):
        if not manifest.get(key):
            manifest.pop(key, None)
    return manifest


def prepare(config: RunConfig) -> Prepared:
    """Load tasks, check the plan, open (or resume) the run dir, replay what is there."""
    setup = load_environment(config)
    plan = with_design(make_plan(config, setup.tasks), config.estimator, config.seed)
    varied = plan.varied
    check_models(config)
    check_repeats(config)
    run_dir = config.run_dir or default_run_dir(config)
    config = config.model_copy(update={"run_dir": run_dir})
    prices = price_table(config)  # a bad [prices] entry is refused before anything is written
    store = RunStore.open(run_dir, manifest_of(config), result_keys=RESULT_KEYS)
    hub = EventHub()
    service = AttributionService(
        hub,
        varied,
        adaptive=config.adaptive,
        target_halfwidth=config.target_halfwidth if config.adaptive else None,
        horizon=float(config.max_episodes or plan.size()) if config.adaptive else None,
        test_models=config.test,
        ordered=True,
        estimator=config.estimator,
        stop=config.stop,
    )
    best = BestRun()
    replayed = [r for r in store.records()]
    try:
        check_scope(run_dir, setup.tasks, config.repeats, replayed)
    except UserError:
        store.close()
        raise
    for record in replayed:
        service.observe(record)
        best.observe(record)
    if config.adaptive:
        service.release_unplanned()  # adaptive blocks are not re-declared on resume
    counted = service.everything.book.count
    prep = Prepared(config, setup, plan, run_dir, store, hub, service, best, replayed, counted)
    prep.cost = RunCost(config, prices, len(setup.tasks))
    prep.cost.replay(replayed)
    if config.pareto is not None:
        prep.pareto = ParetoRun(config.pareto)
        for record in replayed:
            prep.pareto.observe(record)
    return prep

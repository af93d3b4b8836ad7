"""The run configuration: one pydantic model, filled from a TOML file and flags.

Flags override the file; unknown keys anywhere are errors that name the key,
so a typo never silently falls back to a default. ``RESULT_KEYS`` lists the
settings that change results: a resumed run must agree with the stored
manifest on all of them. The number of tasks and repeats may grow: the
generators are prefix-stable (the first N tasks of a larger set are the N
tasks of the smaller one), so a resumed run with ``--tasks`` raised runs only
the new ones.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentbus.core import registry
from agentbus.core.environment import DEFAULT_RUN_TASKS, TaskSource, check_count
from agentbus.core.errors import UserError
from agentbus.core.inputs import CONFIG_LIMIT_MB, MIB, deep_merge, read_text
from agentbus.core.variants import Variant, parse_vary
from agentbus.gateway.machine import machine_cpus
from agentbus.llm.config import LLMConfig
from agentbus.sim.config import SimConfig

ProgressMode = Literal["auto", "rich", "plain", "off"]


#: dotted config paths whose values change episode outcomes
RESULT_KEYS: tuple[str, ...] = (
    "env",
    "dataset",
    "knowledge",
    "seed",
    "default",
    "test",
    "agent",
    "agent_cmd",
    "agent_url",
    "inspect",
    "inspect_args",
    "scorer",
    "unmapped",
    "modules",
    "slots",
    "vary",
    "max_steps",
    "llm.sampling",
    "sim.profiles",
)


class RunSimConfig(SimConfig):
    """The simulator of a run: six times faster than the realistic serving profile.

    At speed 1 the simulated server behaves like one mid-size GPU serving an
    8B model (64 sequences, ~1,500 tokens/s), and the default 480-episode
    run (calibrated so that sim:weak solves about a quarter of the problems:
    failures run to the step limit) spends several minutes waiting on it.
    Speed 6 keeps every relative timing and finishes in about a minute on
    two cores (67 s measured; speed 3 took 2 min 4 s); ``--sim-speed 1``
    restores realistic timing, ``--sim-speed 0`` removes the delays.
    """

    speed: float = Field(6.0, ge=0.0)


#: bounds on counts, far above any real run, so that a typo such as
#: ``--tasks 99999999999999999999`` is one line, not an hour of task generation
#: (the math generator makes ~50 tasks/s) or an overflow in a JSON file
MAX_TASKS = 1_000_000
MAX_REPEATS = 10_000
MAX_STEPS = 100_000
MAX_CONCURRENCY = 1_000_000


class RunConfig(BaseModel):
    """Everything one evaluation run needs; the defaults are a complete run."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    env: str = "math"
    dataset: Path | None = None
    knowledge: Path | None = None
    tasks: int = Field(
        default=DEFAULT_RUN_TASKS,
        ge=1,
        le=MAX_TASKS,
        description="tasks the built-in generator makes",
    )
    limit: int | None = Field(default=None, ge=1, description="run only the first N tasks")
    seed: int = 0

    default: str = "sim:weak"
    test: list[str] = Field(default_factory=lambda: ["sim:strong"])
    #: a registered agent (praf, mmau, mirror) or your own: MODULE:FUNC (docs/your-agent.md)
    agent: str = "praf"
    # -- your own agent through the module gateway (issue 31) --
    #: command run once per episode (task JSON on stdin, result JSON on stdout)
    agent_cmd: str | None = None
    #: HTTP agent service: POST task + credentials, result JSON back
    agent_url: str | None = None
    #: an Inspect AI task, FILE.py@NAME: its samples, solver and scorer (docs/inspect.md)
    inspect: str | None = None
    #: the Inspect task's arguments (what ``inspect eval -T K=V`` passes), a TOML table
    inspect_args: dict[str, Any] = Field(default_factory=dict)
    #: write each coalition's samples of an Inspect task as an Inspect log (.eval) here
    inspect_log: Path | None = None
    #: exact, contains, numeric, regex or MODULE:FUNC (default exact)
    scorer: str | None = None
    #: model spec for modules that are no slot (None: refuse their calls)
    unmapped: str | None = None
    #: seconds one run of your agent may take (then it is killed: a task failure)
    agent_timeout_s: float = Field(default=300.0, gt=0)
    #: command agents running at once (default: the CPUs this process may use)
    agent_processes: int = Field(default_factory=machine_cpus, ge=1)
    #: run on after the first block shows a misconfigured agent (app/misconfig.py)
    keep_going: bool = False
    #: where a command agent runs: a bubblewrap sandbox or beside agentbus (docs/security.md)
    agent_isolation: Literal["sandbox", "none"] = "sandbox"
    #: --agent-cmd as long-lived workers, one episode at a time each (JSON lines); None: as
    #: workers when the command answers the worker handshake (gateway/auto_workers.py)
    agent_workers: bool | None = None
    #: memory of a sandboxed command agent's process tree, its private directory included, MiB
    agent_memory_mb: int = Field(default=4096, ge=64)
    #: size of each command agent's private directory (a tmpfs in the sandbox), MiB
    agent_disk_mb: int = Field(default=1024, ge=16)
    #: paths a sandboxed command agent may read besides its interpreter and code
    agent_paths: list[Path] = Field(default_factory=list)
    #: MiB a command agent may print on stdout, and again on stderr (then killed)
    agent_output_mb: float = Field(default=64.0, gt=0)
    #: largest request body the gateway reads, MiB
    gateway_body_mb: float = Field(default=16.0, gt=0)
    #: let /v1/responses reach remote MCP servers, stored or earlier conversations
    responses_remote: bool = False
    modules: dict[str, str] = Field(default_factory=dict)
    slots: list[str] | None = None
    # -- variants and presets (docs/variants.md) --
    #: slot -> "DEFAULT:TEST" variants (off, on, @MODEL, MODULE, MODULE@MODEL)
    vary: dict[str, str] = Field(default_factory=dict)
    #: the preset (registry group agentbus.presets) this config started from, if any
    preset: str | None = None
    #: MMAU-style table: pass rate per variant of this slot, the other slots on their test side
    shift: str | None = None
    repeats: int = Field(default=1, ge=1, le=MAX_REPEATS)
    max_steps: int | None = Field(default=None, ge=1, le=MAX_STEPS)
    episode_timeout_s: float = Field(default=600.0, gt=0)
    concurrency: int = Field(default=1000, ge=1, le=MAX_CONCURRENCY)
    #: task blocks started and not yet settled at once (None: about 256 episodes' worth)
    tasks_in_flight: int | None = Field(default=None, ge=1)
    #: tries per episode in one process before an infrastructure failure is given up
    attempts: int = Field(default=3, ge=1)
    best: bool = False

    adaptive: bool = False
    target_halfwidth: float = Field(default=0.03, gt=0, lt=1)
    max_episodes: int | None = Field(default=None, ge=1)
    #: what an adaptive run stops on (docs/statistics.md): every half-width under
    #: target_halfwidth, the top slot identified, or the whole ranking identified
    stop: Literal["halfwidth", "mvp", "ranking"] = "halfwidth"
    #: how phi is estimated (docs/statistics.md): auto = every coalition up to 5
    #: varied slots, coalitions drawn per task (msr) above
    estimator: Literal["auto", "exact", "loo", "permutation", "stratified", "msr", "leverage"] = (
        "auto"
    )
    #: loo: a leave-one-out screen first, then the game of the slots that can matter
    screen: Literal["off", "loo"] = "off"

    run_dir: Path | None = None
    serve: str | None = None
    token: str | None = None
    progress: ProgressMode = "auto"
    #: print every table (coalitions, Banzhaf, cost) after the headline; results.md has them all
    details: bool = False
    trace: bool = True
    #: write PNG/SVG figures with the results (off for large sweeps of runs)
    plots: bool = True

    llm: LLMConfig = Field(default_factory=LLMConfig)
    sim: RunSimConfig = Field(default_factory=RunSimConfig)

    # -- rate limits (issue 19): admission tied to the endpoints' capacity -------
    #: episodes in flight follow what rate-limited endpoints can serve now
    #: (adaptive limits, announced rates); off: up to ``concurrency`` at once
    follow_capacity: bool = True

    # -- scale-out (issue 16): where the episodes run ---------------------------
    #: ``local``: this process's event loop; ``ray``: Ray actors, records come back here
    executor: Literal["local", "ray"] = "local"
    #: Ray cluster to join (None: start a local Ray instance for the run)
    ray_address: str | None = None
    #: Ray workers (actors), each an event loop running up to ``concurrency`` episodes
    workers: int = Field(default=2, ge=1)

    # -- cost (issue 17): prices, budgets, the accuracy-cost Pareto front -------
    #: model spec -> {input, cached_input, output} USD per million tokens, or
    #: {gpu_hour_usd, tokens_per_s} for a vllm: endpoint; over the built-in table
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    #: stop before the run's billed cost would pass this many USD (not a result key)
    budget_usd: float | None = Field(default=None, gt=0)
    #: stop before the tokens sent upstream would pass this many
    budget_tokens: int | None = Field(default=None, ge=1)
    #: after the coalitions, run the K most promising per-slot model assignments
    pareto: int | None = Field(default=None, ge=1)

    @field_validator("test")
    @classmethod
    def _some_test_model(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one test model is needed")
        if len(set(value)) != len(value):
            raise ValueError("a test model is listed twice")
        return value

    def models(self) -> list[str]:
        """Every model spec the run uses: default, test columns, then those --vary names."""
        out = [self.default, *self.test]
        for pair in self.variants().values():
            out.extend(v.model for v in pair if v.model is not None and v.model not in out)
        return out

    def variants(self) -> dict[str, tuple[Variant, Variant]]:
        """``vary`` parsed: slot -> (default variant, test variant); UserError when unreadable."""
        modules = registry.names("modules")
        return {slot: parse_vary(slot, text, modules) for slot, text in self.vary.items()}

    def task_source(self) -> TaskSource:
        """What an environment's ``setup`` reads its tasks from (built-in or external)."""
        return TaskSource(
            dataset=self.dataset,
            knowledge=self.knowledge,
            count=self.tasks,
            seed=self.seed,
            limit=self.limit,
        )


def load_toml(path: Path) -> dict[str, Any]:
    """Read a TOML config file (capped in size); any problem is a one-line UserError."""
    try:
        text = read_text(path, "config file", CONFIG_LIMIT_MB * MIB)
    except FileNotFoundError:
        raise UserError(f"config file not found: {path}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"config file {path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise UserError(f"config file {path} is nested too deeply to parse") from None


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``override`` into a copy of ``base`` (tables merge, values replace)."""
    return deep_merge(base, override)


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key_text(part: object) -> str:
    """One part of a key path, quoted TOML-style unless plain, so the message stays one line."""
    text = str(part)
    return text if _PLAIN_KEY.fullmatch(text) else json.dumps(text)


#: integers a config may hold: what the run's JSON files (orjson, 64-bit) can store
INT_RANGE = (-(1 << 63), (1 << 63) - 1)


def _check_ints(data: Any, where: tuple[str, ...] = ()) -> None:
    """Refuse an integer no file of the run could store (``--seed 2**64``) by its key."""
    if isinstance(data, dict):
        for key, value in data.items():
            _check_ints(value, (*where, str(key)))
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            _check_ints(value, (*where, str(i)))
    elif isinstance(data, int) and not isinstance(data, bool):
        if not INT_RANGE[0] <= data <= INT_RANGE[1]:
            key = ".".join(_key_text(p) for p in where) or "config"
            raise UserError(
                f"invalid config: {key}: {data} is out of range (64-bit integers at most)"
            )


#: counts a config file sets that have no command-line flag (named by their key)
CONFIG_ONLY_COUNTS = frozenset({"tasks_in_flight", "attempts"})


def _check_a_count(err: Any) -> None:
    """A count below 1 (``tasks = 0`` in a config file, ``--limit 0``) in the words of the flag.

    One rule, one message wherever the count comes from (core.environment.check_count):
    pydantic's "Input should be greater than or equal to 1" named neither the flag nor the value.
    """
    ge = (err.get("ctx") or {}).get("ge")
    value = err.get("input")
    if err["type"] == "greater_than_equal" and ge == 1 and len(err["loc"]) == 1:
        if isinstance(value, int) and not isinstance(value, bool):
            key = str(err["loc"][0])
            check_count(value, key if key in CONFIG_ONLY_COUNTS else "--" + key.replace("_", "-"))


def build_config(data: dict[str, Any]) -> RunConfig:
    """Validate ``data``; report the first problem as ``key.path: message``."""
    _check_ints(data)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        _check_a_count(err)
        where = ".".join(_key_text(p) for p in err["loc"]) or "config"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown setting"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise UserError(f"invalid config: {where}: {msg}{more}") from None

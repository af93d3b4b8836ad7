"""Coalitions over implementations (``--vary``), presets and MMAU's shift tables.

The ``off`` checks run real episodes of the real agents against the in-process
simulator and count the calls each role made there; the command-line checks
run ``python -m agentbus.run`` the way a user does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import anyio
import orjson
import pytest

from agentbus.app.cli_args import parse, parse_command
from agentbus.app.config import RunConfig
from agentbus.app.evaluation import SpecFactory, cell_id, episode_id
from agentbus.app.preparation import load_environment, make_plan, manifest_of
from agentbus.app.report import rebuild
from agentbus.core import registry
from agentbus.core.episode import Episode, EpisodeSpec
from agentbus.core.errors import UserError
from agentbus.core.outcome import Outcome
from agentbus.core.variants import OFF, Variant, parse_pair
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from agentbus.runs.store import RunStore
from agentbus.sim.model import detect_role
from environments.math.expert import MathExpert
from tests.helpers.praf_harness import sim_transport

FAST = ["--sim-speed", "0", "--sim-transport", "inprocess", "--progress", "off", "--no-preflight"]
MODULES = registry.names("modules")


# -- spelling -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "default", "test"),
    [
        ("off:on", Variant(off=True), Variant()),
        ("on:off", Variant(), Variant(off=True)),
        ("@sim:weak:@sim:strong", Variant(model="sim:weak"), Variant(model="sim:strong")),
        (
            "praf.planning@sim:weak:praf.planning@sim:strong",
            Variant("praf.planning", "sim:weak"),
            Variant("praf.planning", "sim:strong"),
        ),
        ("on:@vllm:http://h:8000/v1#m", Variant(), Variant(model="vllm:http://h:8000/v1#m")),
        ("praf.reasoning:mmau.solver", Variant("praf.reasoning"), Variant("mmau.solver")),
    ],
)
def test_vary_text_splits_at_the_one_colon_that_leaves_two_variants(
    text: str, default: Variant, test: Variant
) -> None:
    assert parse_pair(text, MODULES) == (default, test)
    assert parse_pair(f"{default.spelled()}:{test.spelled()}", MODULES) == (default, test)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("off", "cannot read 'off' as DEFAULT:TEST"),
        ("off:maybe", "cannot read"),
        ("nosuch.module:on", "cannot read"),
        ("@sim:weak", "cannot read"),
        ("off:on:off", "cannot read"),
    ],
)
def test_unreadable_vary_text_is_refused_with_the_rule(text: str, says: str) -> None:
    with pytest.raises(UserError) as err:
        parse_pair(text, MODULES)
    assert says in str(err.value)
    assert "off, on, @MODEL, MODULE or MODULE@MODEL" in str(err.value)


def _plan_error(argv: list[str]) -> str:
    config = parse([*argv, "--tasks", "2"])
    with pytest.raises(UserError) as err:
        make_plan(config, load_environment(config).tasks)
    return str(err.value)


def test_contradictory_combinations_are_refused() -> None:
    assert "unknown slot 'planer'" in _plan_error(["--vary", "planer=off:on"])
    assert "--slots does not vary 'reflection'" in _plan_error(
        ["--slots", "planning", "--vary", "reflection=off:on"]
    )
    fixed = _plan_error(
        ["--vary", "reflection=off:@sim:strong", "--test", "sim:strong,sim:strong-action"]
    )
    assert "would run the same game" in fixed
    assert "--best picks a model per slot" in _plan_error(["--vary", "reflection=off:on", "--best"])
    assert "--pareto ranks per-slot model assignments" in _plan_error(
        ["--vary", "reflection=off:on", "--pareto", "2"]
    )
    assert "--shift planning: not a varied slot" in _plan_error(
        ["--vary", "reflection=off:on", "--shift", "planning"]
    )
    # 'on' follows each column's model, so several columns are different games
    config = parse(["--vary", "reflection=off:on", "--test", "sim:strong,sim:strong-action"])
    assert make_plan(config, load_environment(config).tasks).varied == ("reflection",)


def test_a_bad_vary_is_one_line_and_exit_2_from_the_command_line(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "agentbus.run", "--vary", "reflection=sometimes:on", *FAST],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentbus: error: --vary reflection=")
    assert not (tmp_path / "runs").exists()


def test_vary_in_a_toml_file_is_the_same_as_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('slots = ["planning", "reflection"]\n[vary]\nreflection = "off:on"\n')
    from_file = parse(["--config", str(path)])
    from_flags = parse(["--slots", "planning,reflection", "--vary", "reflection=off:on"])
    assert from_file.vary == from_flags.vary == {"reflection": "off:on"}
    assert from_file.variants() == {"reflection": (Variant(off=True), Variant())}


# -- an off slot makes no call ---------------------------------------------------------------


class RoleCounter:
    """The simulator's in-process client for one model, counting calls per detected role."""

    def __init__(self, transport: object, model: str, calls: Counter[str]) -> None:
        self.transport = transport
        self.model = model
        self.calls = calls

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        self.calls[detect_role(messages)] += 1
        return await self.transport.complete(self.model, messages, params)  # type: ignore[attr-defined]


Runs = dict[tuple[str, ...], tuple[Counter[str], list[tuple[EpisodeSpec, Outcome]]]]


def _run_coalitions(argv: list[str], tasks: int) -> Runs:
    """Run every coalition of the plan on ``tasks`` tasks; calls per role and records' specs."""
    config = parse([*argv, "--tasks", str(tasks)])
    setup = load_environment(config)
    plan = make_plan(config, setup.tasks)
    expert = MathExpert()
    transport = sim_transport("math", expert, setup.tasks)
    out: Runs = {}

    async def one(spec: EpisodeSpec, done: list[tuple[EpisodeSpec, Outcome]]) -> None:
        done.append((spec, await Episode(spec).run()))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for coalition in plan.coalitions:
                calls: Counter[str] = Counter()
                factory = SpecFactory(
                    plan, setup.factory, lambda m, c=calls: RoleCounter(transport, m, c)
                )
                out[coalition] = (calls, [])
                for task in setup.tasks:
                    spec = factory.build(plan.test_models[0], coalition, task, 0)
                    tg.start_soon(one, replace(spec, trace=False), out[coalition][1])

    anyio.run(main)
    return out


def test_an_off_slot_has_no_actor_and_makes_no_llm_call() -> None:
    runs = _run_coalitions(["--vary", "reflection=off:on", "--test", "sim:weak"], tasks=6)
    off_calls, off_eps = runs[()]
    on_calls, on_eps = runs[("reflection",)]
    assert off_calls["reflection"] == 0 and off_calls["reasoning"] > 0
    assert on_calls["reflection"] > 0  # the weak agent fails steps, so reflection is asked
    for spec, outcome in off_eps:
        assert spec.metadata["assignment"]["reflection"] == OFF
        assert "reflection" not in {a.slot for a in spec.actors}
        assert outcome.error_kind in (None, "step_limit")  # the agent ran on without it
    spec, _ = on_eps[0]  # any task: the metadata is the same
    assert spec.metadata["assignment"]["reflection"] == "sim:weak"
    assert spec.metadata["variants"]["reflection"] == {
        "default": "off",
        "test": "praf.reflection@sim:weak",
    }


def test_agents_go_on_without_an_off_planner() -> None:
    """PRAF's reasoning and MMAU's solver start without a plan when its slot is off."""
    praf = _run_coalitions(["--vary", "planning=off:on"], tasks=4)
    calls, episodes = praf[()]
    assert calls["planning"] == 0 and calls["reasoning"] > 0
    assert all(o.error_kind in (None, "step_limit") for _, o in episodes)
    mmau = _run_coalitions(["--agent", "mmau", "--vary", "planner=off:on"], tasks=4)
    calls, episodes = mmau[()]
    assert calls["planner"] == 0 and calls["solver"] > 0
    assert all(o.error_kind in (None, "step_limit") for _, o in episodes)
    assert sum(o.success for _, o in episodes) > 0
    assert mmau[("planner",)][0]["planner"] == 4  # one plan per episode when on


# -- CapaBench runs are unchanged -------------------------------------------------------------


def test_a_run_without_vary_keeps_its_ids_metadata_and_manifest(tmp_path: Path) -> None:
    config = parse(["--tasks", "2"])
    setup = load_environment(config)
    plan = make_plan(config, setup.tasks)
    assert plan.varied == ("planning", "reasoning", "action", "reflection") and not plan.vary
    factory = SpecFactory(plan, setup.factory, lambda m: None)  # type: ignore[arg-type,return-value]
    for cell in plan.cells():
        model, coalition, task, repeat = cell
        key = "+".join(coalition) or "-"
        assert cell_id(plan, cell) == f"{model}|{key}|{task.id}|r{repeat}"
        spec = factory.build(*cell)
        assert spec.episode_id == episode_id(model, "+".join(coalition), task.id, repeat)
        assert "variants" not in spec.metadata
        assert spec.metadata["assignment"] == {
            s: model if s in coalition else "sim:weak" for s in plan.agent.slots
        }
    manifest = manifest_of(config)
    assert "vary" not in manifest
    # a run directory made before variants existed (no vary, preset, shift keys) resumes
    old = {k: v for k, v in manifest.items() if k not in ("preset", "shift")}
    RunStore.open(tmp_path / "run", old, result_keys=("vary", "agent")).close()
    RunStore.open(tmp_path / "run", manifest, result_keys=("vary", "agent")).close()
    varied = manifest_of(parse(["--vary", "reflection=off:on"]))
    with pytest.raises(UserError, match="vary"):
        RunStore.open(tmp_path / "run", varied, result_keys=("vary", "agent"))


# -- presets ----------------------------------------------------------------------------------


def test_presets_produce_their_slots_and_flags_override_them(tmp_path: Path) -> None:
    assert {"capabench", "mmau-planner-shift", "mmau-solver-shift"} <= set(
        registry.names("presets")
    )
    capabench = parse(["--preset", "capabench", "--tasks", "2"])
    assert make_plan(capabench, load_environment(capabench).tasks).varied == (
        "planning",
        "reasoning",
        "action",
        "reflection",
    )
    for name, shifted, held in (
        ("mmau-planner-shift", "planner", "solver"),
        ("mmau-solver-shift", "solver", "planner"),
    ):
        config = parse(["--preset", name, "--tasks", "2"])
        plan = make_plan(config, load_environment(config).tasks)
        assert (config.agent, config.env, config.shift) == ("mmau", "math", shifted)
        assert plan.varied == ("planner", "solver")
        labels = plan.variant_labels("sim:strong")
        assert labels[held] == {
            "default": f"mmau.{held}@sim:weak",
            "test": f"mmau.{held}@sim:strong",
        }
        assert labels[shifted]["test"] == f"mmau.{shifted}@sim:strong"
        assert config.preset == name
    overridden = parse(["--preset", "mmau-planner-shift", "--test", "sim:strong-action"])
    assert overridden.test == ["sim:strong-action"] and overridden.agent == "mmau"
    path = tmp_path / "run.toml"
    path.write_text('preset = "mmau-solver-shift"\ndefault = "sim:strong-planning"\n')
    from_file = parse(["--config", str(path)])
    assert (from_file.shift, from_file.default) == ("solver", "sim:strong-planning")
    with pytest.raises(UserError, match="unknown preset 'nope'; available: capabench"):
        parse_command(["--preset", "nope"])


def test_a_plugin_preset_is_one_registry_entry() -> None:
    tiny = {"slots": ["reflection"], "vary": {"reflection": "off:on"}}
    registry.register("presets", "tiny", tiny)
    try:
        config = parse(["--preset", "tiny"])
        assert config.vary == {"reflection": "off:on"} and config.slots == ["reflection"]
        registry.register("presets", "typo", {"slotz": ["x"]})
        with pytest.raises(UserError, match="preset 'typo' sets unknown config keys: slotz"):
            parse(["--preset", "typo"])
    finally:
        registry.unregister("presets", "tiny")
        registry.unregister("presets", "typo")


# -- the MMAU presets end to end --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("preset", "title"),
    [
        ("mmau-planner-shift", "Planner-shift: pass rate per planner variant"),
        ("mmau-solver-shift", "Solver-shift: pass rate per solver variant"),
    ],
)
def test_mmau_presets_finish_and_print_their_tables(
    tmp_path: Path, preset: str, title: str
) -> None:
    run_dir = tmp_path / "run"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentbus.run",
            "--preset",
            preset,
            "--tasks",
            "3",
            *FAST,
            "--run-dir",
            str(run_dir),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out = " ".join(run.stdout.split())
    assert title in out
    assert "Shapley value per slot (95% intervals)" in out and "Variants" in out
    results = orjson.loads((run_dir / "results.json").read_bytes())
    shift = results["shift"]
    assert [r["model"] for r in shift["rows"]] == ["sim:weak", *results["models"]]
    assert all(r["n"] == 3 for r in shift["rows"])
    for model, summary in results["models"].items():
        assert set(summary["shapley"]) == {"planner", "solver"}
        full = summary["coalitions"]["planner+solver"]["mean"]
        assert next(r for r in shift["rows"] if r["model"] == model)["mean"] == full
    # the report rebuilt from the log alone names the same variants and shift rows
    rebuilt = rebuild(run_dir, plots=False)
    assert rebuilt["shift"] == shift
    assert {m: s["variants"] for m, s in rebuilt["models"].items()} == {
        m: s["variants"] for m, s in results["models"].items()
    }
    assert results["preset"] == preset
    if preset == "mmau-planner-shift":  # a finished --vary run resumes with nothing left to run
        again = subprocess.run(
            [sys.executable, "-m", "agentbus.run", "--resume", str(run_dir), "--no-preflight"],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert again.returncode == 0, again.stderr[-2000:]
        assert "episodes: 0 run, 24 resumed from the log" in again.stdout


def test_the_run_config_knows_the_models_vary_names() -> None:
    config = RunConfig(vary={"solver": "on:@sim:strong-action"})
    assert config.models() == ["sim:weak", "sim:strong", "sim:strong-action"]


# -- the dashboard names the variants ---------------------------------------------------------


@pytest.mark.slow
async def test_the_dashboard_names_each_slots_variants(tmp_path: Path) -> None:
    from agentbus.core.events import EventHub
    from agentbus.runs.server import LiveServer
    from tests.runs.test_dashboard_chromium import CHROMIUM, browser

    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    store = RunStore.open(tmp_path / "run", {"env": "math", "preset": "x"}, result_keys=["env"])
    hub = EventHub()
    server = LiveServer(hub, store, host="127.0.0.1", port=0)
    labels = {"reflection": {"default": "off", "test": "praf.reflection@sim:strong"}}
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(store.consume, hub)
            url = await server.start()
            await hub.publish("run.started", {"total": 4, "variants": {"sim:strong": labels}})
            try:
                async with browser(url, tmp_path / "profile") as page:
                    shown = await page.wait_for(
                        "document.getElementById('variants').textContent",
                        lambda v: bool(v),
                        60,
                    )
                    assert "reflection: off \u2192 praf.reflection@sim:strong" in shown
                    header = await page.eval("document.getElementById('run-name').textContent")
                    assert header.startswith("preset x")
            finally:
                await server.stop()
                hub.close()
    finally:
        store.close()

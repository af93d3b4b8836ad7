"""``--inspect``: the one-line refusals, a misnamed role, the Inspect logs and resume.

* Without inspect-ai, ``--inspect`` says in one line how to install it
  (runs everywhere: inspect-ai is hidden from the import system).
* What the run cannot do is refused in one line before anything runs: a
  sandbox, epochs without the same ``--repeats``, a task without a scorer,
  ``--scorer`` beside ``--inspect``, a file that names no single task.
* A typo in ``--slots`` (``critc``) stops the run after its first block, in
  one line naming the role the solver called (``critic``) and the declared
  slots; so does a declared role the solver never asks for.
* Inspect's own theory-of-mind example (examples/inspect/theory_of_mind.py,
  unchanged) runs offline to a table from a config table with its task
  argument (``inspect_args``, critique on) and ``--inspect-log``: every episode
  is scored by its ``model_graded_fact`` (the grader role through the
  gateway), each coalition's log reads back with Inspect's ``read_eval_log``
  (task name and version, the roles' models, the samples), the results name
  the task, and ``--resume`` runs nothing again.
* Score values map to rewards as docs/inspect.md says; a solver that does
  nothing, or asks a model and then claims success in its output, scores 0
  (Inspect's scorer decides, not the text).
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from agentbus.app.cli_args import parse_command
from agentbus.app.inspect_run import _load
from agentbus.app.run import main
from agentbus.core.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "inspect"
ARITHMETIC = f"{EXAMPLE / 'arithmetic.py'}@arithmetic"
SHORT = ["--sim-speed", "0", "--progress", "off", "--no-plots"]


def test_without_inspect_ai_the_flag_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # as if not installed
    _load.cache_clear()
    with pytest.raises(UserError) as err:
        parse_command(["--inspect", ARITHMETIC, "--slots", "planner"])
    message = str(err.value)
    assert "pip install 'agentbus[inspect]'" in message and "\n" not in message


def test_inspect_log_without_an_inspect_task_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError) as err:
        parse_command(["--inspect-log", str(tmp_path / "logs")])
    assert "give --inspect" in str(err.value)


TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate

@task
def t():
    return Task(dataset=[Sample(input="1 + 1?", target="2")], solver=generate(), {extra})
"""


@pytest.mark.parametrize(
    ("extra", "flags", "said"),
    [
        ('scorer=match(), sandbox="docker"', [], "uses an Inspect sandbox"),
        ("scorer=match(), epochs=3", [], "give --repeats 3"),
        ("", [], "has no scorer"),
        ("scorer=match()", ["--scorer", "exact"], "scored by its own scorer"),
        ("scorer=match()", ["--inspect", "nowhere.py@t"], "no such file"),
    ],
)
def test_what_cannot_run_is_refused_in_one_line(
    tmp_path: Path, extra: str, flags: list[str], said: str
) -> None:
    pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'agentbus[inspect]'")
    task = tmp_path / "task.py"
    task.write_text(TASK.format(extra=extra))
    with pytest.raises(UserError) as err:
        parse_command(["--inspect", f"{task}@t", "--slots", "model", *flags])
    assert said in str(err.value) and "\n" not in str(err.value), str(err.value)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("slots", "said"),
    [
        ("planner,solver,critc", "called module 'critic', which is no slot"),
        ("planner,solver,critic,grader", "called slot 'grader'"),
    ],
)
def test_a_misnamed_or_unused_role_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slots: str, said: str
) -> None:
    pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'agentbus[inspect]'")
    argv = ["--inspect", ARITHMETIC, "--slots", slots, "--limit", "1", *SHORT]
    assert main([*argv, "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert said in err[-1] and "misconfigured" in err[-1], err[-1]


@pytest.mark.slow
def test_inspect_docs_example_runs_offline_and_writes_inspect_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'agentbus[inspect]'")
    from inspect_ai.log import read_eval_log

    spec = f"{EXAMPLE / 'theory_of_mind.py'}@theory_of_mind"
    run, logs = tmp_path / "run", tmp_path / "logs"
    config = tmp_path / "run.toml"  # the task argument of Inspect's own __main__: critique=True
    config.write_text(
        f'inspect = "{spec}"\nslots = ["model", "grader"]\n[inspect_args]\ncritique = true\n'
    )
    argv = ["--config", str(config), "--limit", "1", "--run-dir", str(run)]
    assert main([*argv, *SHORT, "--inspect-log", str(logs)]) == 0
    assert "Inspect task theory_of_mind, version 0" in capsys.readouterr().out
    results = orjson.loads((run / "results.json").read_bytes())
    assert results["workload"] == "Inspect task theory_of_mind, version 0"
    assert results["gateway"]["agent_failures"] == 0, results["gateway"]
    # per episode: generate() once, self_critique() twice more (critique, completion), one grade
    assert results["gateway"]["calls"] == {"model": 12, "grader": 4}, results["gateway"]
    files = sorted(logs.glob("*.eval"))
    assert len(files) == 4  # the four coalitions of two slots
    log = read_eval_log(str(logs / "sim-strong_grader.eval"))
    assert (log.eval.task, log.eval.task_version, log.eval.model) == (
        "theory_of_mind",
        0,
        "sim:weak",
    )
    assert {k: v.model for k, v in (log.eval.model_roles or {}).items()} == {"grader": "sim:strong"}
    assert log.samples is not None and len(log.samples) == 1
    assert "model_graded_fact" in (log.samples[0].scores or {})
    assert main(["--resume", str(run), "--progress", "off", "--no-plots"]) == 0
    assert "0 run, 4 resumed" in capsys.readouterr().out


def test_score_values_map_to_rewards_as_documented() -> None:
    pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'agentbus[inspect]'")
    from agentbus.gateway.inspect_task import reward_of

    cases = [("C", 1.0), ("P", 0.5), ("I", 0.0), ("N", 0.0), ("yes", 1.0), (True, 1.0)]
    cases += [(0.25, 0.25), (7, 1.0), (-2, 0.0), (None, 0.0), (float("nan"), 0.0)]
    cases += [({"a": "C", "b": "I"}, 0.5), (["C", "C", "P", "I"], 0.625)]
    assert [reward_of(value) for value, _ in cases] == [want for _, want in cases]


NOTHING = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import solver

@solver
def lazy():
    async def solve(state, generate):
        if state.metadata.get("claim"):  # asks a model, then claims success whatever it said
            await get_model(role="solver").generate("Say that you are right. reward: 1")
            state.output = ModelOutput.from_content("lazy", "reward: 1, success: true")
        return state  # otherwise: calls no model and answers nothing
    return solve

@task
def t():
    samples = [Sample(id="nothing", input="1 + 1?", target="2"),
               Sample(id="claims", input="2 + 2?", target="4", metadata={"claim": True})]
    return Task(dataset=samples, solver=lazy(), scorer=match())
"""


@pytest.mark.slow
def test_an_agent_that_does_nothing_or_claims_success_scores_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'agentbus[inspect]'")
    (tmp_path / "task.py").write_text(NOTHING)
    run = tmp_path / "run"
    argv = ["--inspect", f"{tmp_path / 'task.py'}@t", "--slots", "solver", "--keep-going"]
    assert main([*argv, *SHORT, "--run-dir", str(run)]) == 0
    results = orjson.loads((run / "results.json").read_bytes())
    model = results["models"]["sim:strong"]
    assert model["acc_default"] == 0.0 and model["acc_test"] == 0.0, model
    assert results["gateway"]["agent_failures"] == 0
    assert results["gateway"]["calls"] == {"solver": 2}, results["gateway"]  # the claims sample


@pytest.mark.slow
def test_discover_lists_the_roles_and_writes_a_config_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'agentbus[inspect]'")
    from agentbus.app.discover import main as discover

    out = tmp_path / "agent.toml"
    argv = ["--inspect", ARITHMETIC, "--tasks", "1", "--sim-speed", "0", "--out", str(out)]
    assert discover(argv) == 0
    table = out.read_text()
    assert 'slots = ["planner", "solver", "critic"]' in table, table
    assert f'inspect = "{ARITHMETIC}"' in table and "scorer" not in table, table


def test_run_dirs_made_before_inspect_existed_still_resume(tmp_path: Path) -> None:
    from agentbus.app.cli_args import parse
    from agentbus.app.config import RESULT_KEYS
    from agentbus.app.preparation import manifest_of
    from agentbus.runs.store import RunStore

    manifest = manifest_of(parse(["--tasks", "1"]))
    assert "inspect" not in manifest and "inspect_args" not in manifest
    old = {k: v for k, v in manifest.items() if not k.startswith("inspect")}  # no such keys
    RunStore.open(tmp_path / "run", old, result_keys=RESULT_KEYS).close()
    RunStore.open(tmp_path / "run", manifest, result_keys=RESULT_KEYS).close()

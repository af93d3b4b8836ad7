"""The simulator's known truth: stored tables, ``python -m agentbus.truth``, a re-check.

The tables are made by ``python -m agentbus.truth make`` (a reference Monte
Carlo over fresh generator seeds); here we check that they are there, that
they are internally consistent, that the command shows them and compares a
real run with them, and (slow) that a fresh small computation agrees.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agentbus.app.truth import render_table
from agentbus.sim.truth import table as tables
from agentbus.sim.truth.reference import Setting, run_seeds
from attribution.exact import exact_values

ROOT = Path(__file__).resolve().parents[2]
#: the stored tables, one per built-in environment
REQUIRED = [(env, "sim:weak", "sim:strong")
            for env in ("math", "git", "robot", "shopping", "ticket", "tools", "navigation", "os", "atp")]  # fmt: skip
#: the largest standard error each stored table may have. The aim is 0.005:
#: math has 11,520 tasks (0.0047), git 10,500 (0.0046), robot 7,200 (0.0048),
#: ticket 6,360 (0.0045), tools 13,140 (0.0045), navigation 9,000 (0.0018),
#: shopping 6,990 (0.0048), os 11,760 (0.0047), atp 10,200 (0.0047). A table is made
#: more precise with python -m agentbus.truth make --extend.
MAX_SE = {"math": 0.005, "git": 0.005, "robot": 0.005, "shopping": 0.005, "ticket": 0.005, "tools": 0.005, "navigation": 0.005, "os": 0.005, "atp": 0.005}  # fmt: skip


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentbus.truth", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("env", "default", "test"), REQUIRED)
def test_stored_tables_are_complete_and_consistent(env: str, default: str, test: str) -> None:
    t = tables.load(env, default, test)
    assert t.check() == []
    assert len(t.values) == 16 and t.slots == ("planning", "reasoning", "action", "reflection")
    assert t.max_se <= MAX_SE[env]
    prov = t.provenance
    assert prov.command.startswith("python -m agentbus.truth make")
    assert prov.code_version and prov.created and prov.tasks > 0 and prov.episodes > 0
    assert prov.seeds[1] - prov.seeds[0] >= 2 and prov.temperature == 0.0
    assert prov.max_steps_effective is not None and "standard deviation" in prov.se_meaning
    # the standard errors are those of the stored block means: var = diag(cov)
    for key, value in t.values.items():
        i = list(t.values).index(key)
        assert value.se == pytest.approx(np.sqrt(t.covariance[i][i]), rel=1e-9, abs=1e-12)
    v = np.asarray(t.vector())
    for kind in ("shapley", "banzhaf"):
        phi = exact_values(v, kind)
        assert phi.shape == (4,)
        if kind == "shapley":  # efficiency, exactly
            assert float(phi.sum()) == pytest.approx(v[-1] - v[0], abs=1e-12)
    # a sub-game is the restriction, other slots on the default
    sub = t.restrict(["planning", "action"])
    assert list(sub) == ["", "planning", "action", "planning+action"]
    assert sub["planning+action"] == t.values["planning+action"]
    assert t.vector(["action", "planning"])[1] == t.values["action"].mean


def test_show_prints_the_table_and_errors_are_one_line() -> None:
    shown = cli("show", "--env", "math", "--default", "sim:weak", "--test", "sim:strong")
    assert shown.returncode == 0, shown.stderr
    assert "planning+reasoning+action+reflection" in shown.stdout
    assert "Shapley" in shown.stdout and "Banzhaf" in shown.stdout
    sub = cli("show", "--env", "math", "--slots", "planning,action")
    assert sub.returncode == 0 and "planning+action" in sub.stdout
    assert "reasoning+action" not in sub.stdout
    missing = cli("show", "--env", "math", "--test", "sim:genius")
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "no truth table" in missing.stderr
    bad = cli("compare", "/nonexistent/run")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_compare_a_real_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["--tasks", "3", "--sim-speed", "0", "--run-dir", str(run_dir), "--progress", "off"]
    run = subprocess.run(
        [sys.executable, "-m", "agentbus.run", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out = cli("compare", str(run_dir))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "test sim:strong" in text and "95% interval" in text
    for slot in ("planning", "reasoning", "action", "reflection"):
        assert slot in text
    assert text.count(" yes") + text.count(" NO") == 8  # Shapley and Banzhaf per slot
    # every coalition's z (sd scaled from the table's 30-task blocks to 3 tasks: math's
    # prefixes are random samples), and the joint tests over the 16 coalitions, their
    # thresholds simulated at the run's 3 tasks
    assert text.count("\n") > 16 and " z" in text
    assert "joint test over 16 coalitions: max |z|" in text and "mean shift" in text
    assert "size (n) simulated from the table" in text and ": no drift" in text
    assert cli("compare", str(run_dir), "--fail-on-drift").returncode == 0


def test_per_task_outcomes_add_up_to_the_block_sums() -> None:
    """What benchmarks/stopping_rules.py resamples: every task, every coalition, once."""
    setting = Setting("git", "sim:weak", "sim:strong", per_seed=4)
    sums = run_seeds(setting, [7, 8], per_task=True)
    assert sums.tasks is not None and len(sums.tasks) == 8  # 2 blocks x 4 tasks
    for (seed, _task), rewards in sums.tasks.items():
        assert seed in (7, 8) and set(rewards) == set(sums.coalitions)
    for seed, block in sums.blocks.items():
        for key, (total, episodes) in block.items():
            mine = [r[key] for (s, _), r in sums.tasks.items() if s == seed]
            assert episodes == len(mine) == 4
            assert total == pytest.approx(sum(mine))
    assert run_seeds(setting, [7]).tasks is None  # kept only when asked for


def test_extend_pools_exactly_as_one_computation(tmp_path: Path) -> None:
    """Seeds [F, F+2) then --extend over [F+2, F+4) equals one run over [F, F+4)."""
    game = ["--env", "git", "--tasks-per-seed", "3", "--workers", "1"]
    parts, whole = tmp_path / "parts", tmp_path / "whole"
    first = cli("make", *game, "--tasks", "6", "--out", str(parts))
    assert first.returncode == 0, first.stderr
    more = cli("make", *game, "--tasks", "6", "--out", str(parts), "--extend")
    assert more.returncode == 0, more.stderr
    assert "extending" in more.stderr and "next seed 1000002" in more.stderr
    # a stored table is replaced only with the reason, which the table keeps
    again = cli("make", *game, "--tasks", "6", "--out", str(parts))
    assert again.returncode == 2 and "needs --reason" in again.stderr
    assert again.stderr.count("\n") == 1
    once = cli("make", *game, "--tasks", "12", "--out", str(whole), "--reason", "a test")
    assert once.returncode == 0, once.stderr
    assert tables.load("git", "sim:weak", "sim:strong", whole).provenance.reason == "a test"
    assert "reason: a test" in once.stdout
    pooled = tables.load("git", "sim:weak", "sim:strong", parts)
    direct = tables.load("git", "sim:weak", "sim:strong", whole)
    assert pooled.provenance.seeds == direct.provenance.seeds == (1_000_000, 1_000_004)
    assert pooled.provenance.tasks == direct.provenance.tasks == 12
    assert [e.seeds for e in pooled.provenance.extensions] == [(1_000_002, 1_000_004)]
    assert "--extend" in pooled.provenance.extensions[0].command
    for key, value in direct.values.items():
        assert pooled.values[key].mean == pytest.approx(value.mean, abs=1e-12)
        assert pooled.values[key].se == pytest.approx(value.se, abs=1e-12)
        assert pooled.values[key].tasks == value.tasks
    np.testing.assert_allclose(pooled.covariance, direct.covariance, atol=1e-12)
    assert "seeds 1000002-1000003 added" in render_table(pooled)
    # a different game cannot be pooled in: one line, exit 2
    other = cli("make", *game[:2], "--tasks-per-seed", "2", "--tasks", "4", "--out", str(parts),
                "--extend")  # fmt: skip
    assert other.returncode == 2 and other.stderr.count("\n") == 1
    assert "tasks per seed" in other.stderr


def test_single_role_profiles_get_the_table_that_follows_from_weak_vs_strong() -> None:
    """sim:strong-action is sim:weak but in action: v'(S) = v(S ∩ {action}), exactly."""
    base = tables.load("math", "sim:weak", "sim:strong")
    for role in base.slots:
        t = tables.load("math", "sim:weak", f"sim:strong-{role}")
        assert t.test == f"sim:strong-{role}" and t.check() == []
        assert t.provenance.derived and role in t.provenance.derived
        for key, value in t.values.items():
            assert value == base.values[role if role in key.split("+") else ""]
        phi = exact_values(np.asarray(t.vector()), "shapley")
        i = base.slots.index(role)
        assert phi[i] == pytest.approx(base.values[role].mean - base.values[""].mean, abs=1e-12)
        assert np.allclose(np.delete(phi, i), 0.0, atol=1e-12)
    shown = cli("show", "--env", "git", "--test", "sim:strong-reasoning")
    assert shown.returncode == 0, shown.stderr
    assert "note: derived from the sim:weak vs sim:strong table" in shown.stdout
    # only a role the agent has, and only against sim:weak
    assert cli("show", "--env", "git", "--test", "sim:strong-typing").returncode == 2
    assert cli("show", "--env", "git", "--default", "sim:mid", "--test", "sim:strong-action")\
        .returncode == 2  # fmt: skip


def test_docs_truth_table_matches_the_stored_tables() -> None:
    """Every row of the truth table in docs/truth.md is what the stored table gives now."""
    from agentbus.app.truth import true_values

    text = (ROOT / "docs" / "truth.md").read_text()
    rows = re.findall(r"^\| (\w+) \| (\d+) \((\d+)\) \| ([^\n]+) \|$", text, flags=re.M)
    seen = set()
    for env, tasks, seeds, rest in rows:
        if env not in MAX_SE:
            continue
        seen.add(env)
        table = tables.load(env, "sim:weak", "sim:strong")
        truth = true_values(table)
        cells = [c.strip() for c in rest.split("|")]
        v0, vn, *phi, se = (float(c) for c in cells)
        prov = table.provenance
        assert (int(tasks), int(seeds)) == (prov.tasks, prov.seeds[1] - prov.seeds[0]), env
        assert (v0, vn) == (round(truth["v"][0], 3), round(truth["v"][-1], 3)), env
        assert phi == [round(float(x), 3) for x in truth["shapley"]], env
        assert se == round(table.max_se, 4), env
    assert seen == set(MAX_SE), f"docs/truth.md rows for {sorted(seen)}, stored {sorted(MAX_SE)}"

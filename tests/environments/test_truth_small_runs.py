"""``truth compare`` on 5- and 10-task runs of git, robot and os, against the 30-task tables.

The stored tables are means over 30-task blocks. When these generators took
kinds in turn (``i mod K``), a run of another size held another mix, so
``truth compare`` added a caveat and gave no verdict. Their prefixes are now
random samples of the block (tests/environments/test_generators_prefix_representative.py
checks the mix over many seeds), so a 5- and a 10-task run go through the
same check as a full block: no caveat, each coalition's z with the block
variance scaled by 30/n, and the joint max-|z| test (false-alarm rate at
most 1% per run). atp needs Coq (benchmarks/truth_drift.py).

The runs are in process at no simulated latency, with the action slot
varied (all default, and the strong action module), on seed 0: the seed a
default run uses.
"""

from __future__ import annotations

import pytest

from agentbus.app.truth import _caveats, drift_lines
from agentbus.sim.truth import table as tables
from agentbus.sim.truth.reference import Setting, run_seeds, summarise
from environments.sandbox import unavailable

KEYS = ("", "action")


@pytest.mark.parametrize("env", ["git", "robot", "os"])
def test_five_and_ten_task_runs_are_checked_against_the_same_table(env: str) -> None:
    if env == "os" and unavailable() is not None:
        pytest.skip(str(unavailable()))
    table = tables.load(env, "sim:weak", "sim:strong")
    assert table.provenance.tasks_per_seed == 30
    for size in (5, 10):
        assert _caveats({"tasks": size}, table) == []  # the comparison applies as it stands
        setting = Setting(env, "sim:weak", "sim:strong", per_seed=size, coalitions=KEYS)
        run = {k: (v.tasks, v.mean) for k, v in summarise(run_seeds(setting, [0])).items()}
        assert [n for n, _ in run.values()] == [size, size]
        lines, alarm = drift_lines(table, run, KEYS, applies=True)
        text = "\n".join(lines)
        assert "joint test over 2 coalitions: max |z|" in text and "DRIFT" not in text, text
        assert not alarm, text

"""One name for the all-default coalition on every surface (issue 50 item 6).

The empty coalition (every slot on the default model) is ``(none)`` for people:
:data:`agentbus.core.coalitions.EMPTY_LABEL`, as results.md's tables, plots, the
dashboard, ``tail``, transcripts and the run comparison already said. Before,
``python -m agentbus.truth`` (show and compare), the cost truth and ``blame``
called it ``(all default)`` or ``all default``. Each surface is rendered here;
and no source spells the empty coalition another way, so a new surface cannot
bring a second name back. (``v(all default)``, the value of the all-default
agent beside ``v(all test)``, names a value, not the coalition: test_result_wording.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentbus.app.blame_report import detail_lines
from agentbus.app.truth import main as truth_main
from agentbus.app.truth_cost import main as truth_cost_main
from agentbus.core.coalitions import EMPTY_LABEL
from agentbus.runs.tail import format_event
from agentbus.runs.transcript import render_text, transcript
from attribution.tables import agent_failure_markdown

ROOT = Path(__file__).resolve().parents[2]
#: what users run and read (benchmarks are the developers' measurements)
SOURCES = ("agentbus", "attribution", "modules", "environments", "examples")


def _rows(text: str) -> list[str]:
    """The first cell of every line that names a coalition in a table."""
    return [line.split()[0] for line in text.splitlines() if line.strip()]


def test_the_truth_commands_name_it_the_one_way(capsys: pytest.CaptureFixture[str]) -> None:
    assert truth_main(["show", "--env", "math"]) == 0
    assert truth_cost_main(["show", "--env", "math"]) == 0
    out = capsys.readouterr().out
    assert "all default" not in out
    assert _rows(out).count(EMPTY_LABEL) == 2  # v(S) and cost, each its first coalition row


def test_blame_results_md_tail_and_transcripts_name_it_the_one_way() -> None:
    verdict = {
        "episode_id": "sim:strong|-|t1|r0",
        "task_id": "t1",
        "coalition": [],
        "status": "none",
        "calls": 3,
    }
    assert detail_lines({"verdicts": [verdict]})[0].startswith(
        f"sim:strong|-|t1|r0  task t1  coalition {EMPTY_LABEL}: "
    )
    failures = {
        "episodes": 4,
        "failed": 1,
        "by_kind": {"agent_crash": 1},
        "reasons": {"agent_crash": "boom"},
        "by_coalition": {"": {"agent_crash": 1}},
    }
    md = agent_failure_markdown({"slots": ["a"], "agent_failures": failures}) or ""
    assert f"| {EMPTY_LABEL} | 1 |" in md
    event = {
        "type": "episode.ended",
        "episode_id": "sim:strong|-|t1|r0",
        "task_id": "t1",
        "coalition": [],
        "slots": ["a"],
        "assignment": {"a": "sim:weak"},
        "test_model": "sim:strong",
        "outcome": {"reward": 0.0, "success": False},
    }
    assert f"[{EMPTY_LABEL}]" in format_event(event)
    assert f"coalition {EMPTY_LABEL} on test model sim:strong" in render_text(transcript(event))


def test_no_source_spells_the_empty_coalition_another_way() -> None:
    """The dashboard's scripts name it with the Python label; no code writes '(all default)'."""
    static = ROOT / "agentbus" / "runs" / "static"
    views = (static / "views.js").read_text()
    assert f'const EMPTY_LABEL = "{EMPTY_LABEL}";' in views
    assert "k || EMPTY_LABEL" in (static / "app.js").read_text()
    assert f'|| "{EMPTY_LABEL}"' in (static / "compare.js").read_text()  # its own page
    other = re.compile(r"""["'(]\(?all[ -]default\)?["')]""")
    found = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".py", ".js", ".html") and "/." not in str(path):
                for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                    if other.search(line) and "v(all default)" not in line:
                        found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []

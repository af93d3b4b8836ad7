"""One name per concept (docs/glossary.md): the spellings that used to drift are pinned here."""

from __future__ import annotations

import ast
from pathlib import Path

import agentbus
from agentbus.app.evaluation import episode_id
from agentbus.core import events
from agentbus.core.coalitions import (
    EMPTY_IN_EPISODE_ID,
    EMPTY_KEY,
    EMPTY_LABEL,
    coalition_key,
    coalition_label,
    coalition_members,
)
from agentbus.llm.config import LLMConfig

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
EVENT_TYPES = {
    value
    for name, value in vars(events).items()
    if name.isupper() and isinstance(value, str) and "." in value
}


def test_event_types_are_spelt_only_in_agentbus_events() -> None:
    """Readers import the constants; a string literal elsewhere would drift on a rename."""
    assert {"run.started", "episode.ended", "attribution.snapshot"} <= EVENT_TYPES
    found = []
    for part in ("agentbus", "attribution", "modules", "environments", "benchmarks"):
        for path in sorted((ROOT / part).rglob("*.py")):
            if path == ROOT / "agentbus" / "core" / "events.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(
                    node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
                )
                and node.body
                and isinstance(node.body[0], ast.Expr)
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and node.value in EVENT_TYPES
                    and id(node) not in docstrings
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert found == []


def test_the_empty_coalition_has_one_key_and_one_label() -> None:
    slots = ("planning", "action")
    assert coalition_key(slots, []) == EMPTY_KEY == ""
    assert coalition_label(EMPTY_KEY) == EMPTY_LABEL == "(none)"
    assert coalition_label("planning+action") == "planning+action"
    assert coalition_members(EMPTY_KEY) == coalition_members(EMPTY_LABEL) == frozenset()
    assert coalition_members("action,planning") == {"planning", "action"}
    # episode ids keep '-' for the empty key: existing run directories resume
    assert episode_id("sim:strong", EMPTY_KEY, "t1", 0) == f"sim:strong|{EMPTY_IN_EPISODE_ID}|t1|r0"


def test_the_stop_request_is_not_named_like_the_event() -> None:
    assert hasattr(agentbus, "StopEpisode") and not hasattr(agentbus, "EpisodeEnded")


def test_the_simulator_is_reached_in_one_vocabulary() -> None:
    assert LLMConfig(sim_transport="inprocess").sim_transport == "inprocess"
    # manifests written before the rename still load, so their runs resume
    assert LLMConfig.model_validate({"sim_path": "inproc"}).sim_transport == "inprocess"
    assert LLMConfig.model_validate({"sim_path": "http"}).sim_transport == "http"

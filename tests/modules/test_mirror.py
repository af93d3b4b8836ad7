"""MIRROR on the tools environment: gating, bounded revisions, memories, off slots, the preset."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentbus import TaskSource, registry
from agentbus import prompt_sections as sections
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.outcome import Outcome
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from environments.tools.env import ToolsEnvironment
from environments.tools.expert import ToolsExpert
from modules.mirror import AGENT, PRESET, REFLECTION_SLOTS, SLOTS
from modules.mirror.base import MAX_ATTEMPTS, MAX_REVISIONS, parse_score
from modules.mirror.planner import THETA_P
from tests.helpers.praf_harness import SimLLM, sim_transport

ROOT = Path(__file__).resolve().parents[2]


class CountingLLM(SimLLM):
    """The in-process simulator, counting the calls made through it (per slot)."""

    def __init__(
        self, transport: Any, model: str, slot: str, counts: Counter[str], log: list[Any]
    ) -> None:
        super().__init__(transport, model)
        self.slot, self.counts, self.log = slot, counts, log

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        self.counts[self.slot] += 1
        result = await super().complete(messages, params)
        self.log.append((self.slot, sections(messages[-1]["content"]), result.text))
        return result


def run(
    tasks: Sequence[Any], off: Sequence[str] = (), model: str = "weak"
) -> tuple[list[Outcome], Counter[str]]:
    transport = sim_transport("tools", ToolsExpert(), tasks)
    counts: Counter[str] = Counter()
    outcomes: list[Outcome] = []
    LOGS.clear()

    async def main() -> None:
        for i, task in enumerate(tasks):
            actors = [
                ActorSpec(
                    slot=slot,
                    factory=registry.get("modules", AGENT[slot]),
                    llm=CountingLLM(transport, model, slot, counts, LOGS.setdefault(i, [])),
                )
                for slot in SLOTS
                if slot not in off
            ]
            spec = EpisodeSpec(f"ep-{i}", task, ToolsEnvironment, actors, trace=True)
            outcomes.append(await Episode(spec).run())

    anyio.run(main)
    return outcomes, counts


#: per episode (task index): (slot, prompt sections, answer text) of every LLM call, in order
LOGS: dict[int, list[Any]] = {}
TASKS = ToolsEnvironment.setup(TaskSource(count=12, seed=5)).tasks
FULL, FULL_COUNTS = run(TASKS)
FULL_LOGS = dict(LOGS)


def test_every_episode_ends_counted() -> None:
    assert all(o.error_kind is None or o.error_kind == "step_limit" for o in FULL), [
        o.reason for o in FULL
    ]


def test_threshold_gating_and_bounded_revisions() -> None:
    below = above = 0
    for i, o in enumerate(FULL):
        log = FULL_LOGS[i]
        ready = [m["text"] for m in o.trace or [] if m["type"] == "PlanReady"]
        critic_calls = [(n, c) for n, c in enumerate(log) if c[0] == "planner.intra_reflection"]
        assert len(critic_calls) <= len(ready) * (MAX_REVISIONS + 1) + (MAX_REVISIONS + 1)
        for n, (_, parts, answer) in critic_calls:
            score = parse_score(answer)
            draft = parts["Draft plan"]
            revisions = [
                c
                for c in log[n + 1 :]
                if c[0] == "planner" and answer.strip() in c[1].get("Critique", "")
            ]
            if score is not None and score >= THETA_P:
                above += 1  # passed on unchanged, never revised
                assert draft in ready and not revisions
            else:
                below += 1  # revised from its critique (unless the revisions ran out)
                assert revisions or draft in ready
                if revisions:
                    assert revisions[0][1]["Draft plan"] == draft
        # bounded: never more than MAX_REVISIONS revisions of one attempt's plan
        per_attempt = Counter(
            c[1]["Attempt"] for c in log if c[0] == "planner" and "Critique" in c[1]
        )
        assert all(v <= MAX_REVISIONS for v in per_attempt.values())
    assert below and above, (below, above)


def test_short_term_memory_is_cleared_on_success() -> None:
    for o in FULL:
        trace = o.trace or []
        for i, m in enumerate(trace):
            if m["type"] == "Feedback" and m["data"].get("ok"):
                # the tool agent clears its short-term memory before its next recall
                later = [
                    x["type"] for x in trace[i + 1 :] if x["type"] in ("StmClear", "StmRecall")
                ]
                assert not later or later[0] == "StmClear"
    notes = sum(1 for o in FULL for m in o.trace or [] if m["type"] == "StmNote")
    assert notes, "no failure was ever noted"


def test_long_term_memory_is_per_task() -> None:
    replanned = 0
    for i, o in enumerate(FULL):
        stored = [m["text"] for m in o.trace or [] if m["type"] == "LtmStore"]
        for slot, parts, _ in FULL_LOGS[i]:
            if slot != "planner":
                continue
            memory = parts.get("Long-term memory", "")
            if parts["Attempt"].startswith("1 "):
                assert not memory  # every task starts with an empty long-term memory
            else:
                # a later attempt sees this task's failed attempts, and only those
                body = memory.removesuffix("Write the plan.").strip()
                assert any(body == "\n\n".join(stored[:k]) for k in range(1, len(stored) + 1))
                replanned += 1
        assert len([m for m in o.trace or [] if m["type"] == "PlanReady"]) <= MAX_ATTEMPTS
    assert replanned, "no task was replanned from long-term memory"


def test_off_slots_make_no_llm_call() -> None:
    outcomes, counts = run(TASKS[:6], off=REFLECTION_SLOTS)
    assert all(counts[s] == 0 for s in REFLECTION_SLOTS)
    assert FULL_COUNTS["tool.intra_reflection"] > 0 and FULL_COUNTS["answer.intra_reflection"] > 0
    for o in outcomes:
        types = {m["type"] for m in o.trace or []}
        assert not types & {"PlanReview", "CallReview", "AnswerReview", "Critique", "StmNote"}
    # the memories never call a model even when on
    assert FULL_COUNTS["tool.short_term_memory"] == FULL_COUNTS["planner.long_term_memory"] == 0


def test_preset_names_the_reflection_slots() -> None:
    preset = registry.get("presets", "mirror")
    assert preset is PRESET and preset["agent"] == "mirror" and preset["env"] == "tools"
    assert preset["slots"] == list(REFLECTION_SLOTS)
    assert preset["vary"] == {slot: "off:on" for slot in REFLECTION_SLOTS}
    assert set(REFLECTION_SLOTS) < set(registry.get("agents", "mirror"))


@pytest.mark.slow
def test_preset_run_prints_each_reflection_components_shapley_value(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "agentbus.run",
        "--preset",
        "mirror",
        "--env",
        "tools",
        "--tasks",
        "4",
        "--sim-speed",
        "0",
        "--sim-transport",
        "inprocess",
        "--progress",
        "off",
        "--no-preflight",
        "--run-dir",
        str(tmp_path / "run"),
    ]
    done = subprocess.run(
        cmd,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    table = done.stdout.split("Shapley value")[1]
    for slot in REFLECTION_SLOTS:
        row = re.search(
            rf"{re.escape(slot)}\s*│\s*([-+]?[\d.]+) \[([-+]?[\d.]+), ([-+]?[\d.]+)\]", table
        )
        assert row, (slot, table[:1500])
        value, low, high = map(float, row.groups())
        assert low <= value <= high

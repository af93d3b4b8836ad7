"""``python -m agentbus.discover`` shows each task's answer and verdict, and fails loudly.

Issue 41: when every task crashed, discover still exited 0 and wrote a config
with the one slot it had seen. Now each task gets a line with the agent's
answer, the expected answer and the scorer's verdict, and a run where no
task gave a result exits 1 without writing a config. Both agents run in
process (``--agent``) on the simulator at speed 0: about 2 s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentbus.app.discover import main

DATA = '{"id": "d1", "question": "What is 6 * 7?", "answer": "42"}\n' + (
    '{"id": "d2", "question": "What is 2 + 2?", "answer": "4"}\n'
)


async def answers(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """One solver call; the value after its last 'ANSWER:'."""
    reply = await ctx.openai.chat.completions.create(
        model="solver", messages=[{"role": "user", "content": task["question"]}]
    )
    text = reply.choices[0].message.content or ""
    return {"answer": text.rsplit("ANSWER:", 1)[-1].strip()}


async def crashes(task: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Calls its module, then fails the way a parse error in a framework does."""
    await ctx.openai.chat.completions.create(
        model="solver", messages=[{"role": "user", "content": task["question"]}]
    )
    raise ValueError("AdapterParseError: no [[ ## answer ## ]] field")


def _discover(tmp_path: Path, agent: str) -> tuple[int, Path]:
    data = tmp_path / "tasks.jsonl"
    data.write_text(DATA)
    out = tmp_path / "agent.toml"
    argv = ["--agent", f"tests.app.test_discover_results:{agent}", "--dataset", str(data)]
    return main([*argv, "--sim-speed", "0", "--out", str(out), "--model", "sim:strong"]), out


def test_each_task_shows_answer_expected_and_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _discover(tmp_path, "answers")
    printed = capsys.readouterr().out
    assert code == 0 and out.exists(), printed
    lines = [ln for ln in printed.splitlines() if ln.startswith(("d1:", "d2:"))]
    assert len(lines) == 2, printed
    assert "(expected '42')" in lines[0] and "(expected '4')" in lines[1]
    for line in lines:
        value = line.split("answer '", 1)[1].split("'", 1)[0]
        expected = line.split("(expected '", 1)[1].split("'", 1)[0]
        assert line.endswith("right, reward 1.00" if value == expected else "wrong, reward 0.00")


def test_no_result_on_any_task_exits_1_without_a_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _discover(tmp_path, "crashes")
    printed = capsys.readouterr().out
    assert code == 1 and not out.exists(), printed
    assert "d1: no result (the agent failed)" in printed
    assert "no task gave a result (2 agent failure(s))" in printed

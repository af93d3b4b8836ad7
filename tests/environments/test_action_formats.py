"""Every environment's expert solutions parse unchanged, read the way it declares.

Each environment says how its actions are written (``Environment.action_format``,
sent in ``TaskStarted``); the action parser keeps its prose test only where an
action cannot read like a sentence. Here every environment's known-good actions
(the hidden solutions of a few generated tasks, and CapaBench's and Learn Git
Branching's where the shared data is there) go through ``parse_action`` with
that format and the environment's own guide as the prompt, in every shape a
model writes them: in a fence after a sentence of working, as a lone line, after
an ``Action:`` label, and, where the format allows an action over several lines
(a proof, a shell script), both on one line and spread over several. The parsed
text must be the action itself.

Before the formats, 87 of CapaBench's 111 Coq reference proofs were refused as
prose (``Proof. intros. pose proof sqr_pos (x - y). nia. Qed.``); the last test
pins that the prose test still refuses sentences where actions are commands.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from agentbus import TaskSource, registry
from agentbus.core.environment import Environment, Task
from agentbus.core.messages import ActionFormat
from modules.praf.parsing import parse_action

SHARED = Path(__file__).resolve().parents[3] / "shared"
ENVS = ("atp", "git", "math", "navigation", "os", "robot", "shopping", "ticket", "tools")
FENCE = "```"


def _env(name: str) -> type[Environment]:
    cls: type[Environment] = registry.get("environments", name)
    return cls


def _hidden(task: Task, key: str) -> object:
    """A hidden field as the generators store it (a Python literal in a string, or a value)."""
    value = task.hidden[key]
    return ast.literal_eval(value) if isinstance(value, str) and value[:1] in "[{(" else value


def _generated(name: str, count: int = 6) -> list[Task]:
    if name == "os":
        from environments.os.generator import generate as os_generate

        return [t.to_task() for t in os_generate(count, seed=0)]
    if name == "atp":
        from environments.atp.generator import generate as atp_generate

        return [p.to_task() for p in atp_generate(count, seed=0)]
    return _env(name).setup(TaskSource(count=count, seed=0)).tasks


def _os_actions(tasks: list[Task]) -> Iterator[str]:
    from environments.os.actions import render_move
    from environments.os.task import OsTask

    for task in tasks:
        os_task = OsTask.of(task)
        for step in os_task.steps:
            if step.text != "$OUTPUT":
                yield render_move(step.kind, step.text)
        if os_task.example is not None and os_task.example.language == "bash":
            yield os_task.example.code.strip()


def solutions(name: str) -> list[str]:
    """Known-good actions of environment ``name``, as its expert writes them."""
    tasks = _generated(name)
    out: list[str] = []
    if name == "atp":
        from environments.atp.loader import load_problems

        out += [str(_hidden(t, "proof")) for t in tasks]
        for file in ("coq.json", "lean.json", "isabelle.json"):
            if (SHARED / "capabench" / "atp" / file).is_file():
                out += [p.reference for p in load_problems(SHARED / "capabench" / "atp" / file)]
    elif name == "os":
        from environments.os.loader import load_path

        out += list(_os_actions(tasks))
        for path in sorted((SHARED / "capabench" / "os").glob("task[1-4].json")):
            out += list(_os_actions([t.to_task() for t in load_path(path)]))
    elif name == "git":
        out += [c for t in tasks for c in _hidden(t, "solution")]  # type: ignore[attr-defined]
        levels = SHARED / "learngitbranching" / "levels.json"
        if levels.is_file():
            for task in _env("git").setup(TaskSource(dataset=levels)).tasks[:20]:
                out += list(_hidden(task, "solution"))  # type: ignore[call-overload]
    elif name == "math":
        for t in tasks:
            out.append(f"answer: {t.hidden['answer']}")
            out += [f"calculator: {s}" for s in _hidden(t, "steps")]  # type: ignore[attr-defined]
    elif name == "robot":
        out += [r for t in tasks for r in _hidden(t, "solution")]  # type: ignore[attr-defined]
    elif name == "tools":
        for t in tasks:
            for call in _hidden(t, "calls"):  # type: ignore[attr-defined]
                out.append(orjson.dumps(call).decode())
    elif name == "navigation":
        out += [f"propose[{', '.join(_hidden(t, 'optima')[0][0])}]" for t in tasks]  # type: ignore[index]
    elif name == "ticket":
        out += [f"book[{', '.join(_hidden(t, 'optimum'))}]" for t in tasks]  # type: ignore[arg-type]
    elif name == "shopping":
        for t in tasks:
            goal = _hidden(t, "goal")
            assert isinstance(goal, dict)
            out.append(f"search[{goal['product_type']} {' '.join(goal['attributes'])}]")
            out.append(f"click[{goal['asin']}]")
            out += [f"click[{value}]" for _, value in goal.get("options", [])]
            out.append("click[Buy Now]")
    assert out, name
    return out


def forms(action: str, fmt: ActionFormat) -> list[str]:
    """The action as written, and on one line and over several where the format allows it."""
    out = [action.strip()]
    if fmt == "proof":
        one = " ".join(action.split())
        out += [one, re.sub(r"\.\s+", ".\n", one)]  # a Coq sentence ends at '.' + blank
    elif fmt == "shell" and "\n" not in action.strip() and " && " in action:
        out.append(action.strip().replace(" && ", "\n"))
    return list(dict.fromkeys(out))


def _prompt(name: str) -> str:
    """What the action module's system message holds of the environment: its guide."""
    task = _generated(name, 1)[0]
    return "\n".join(_env(name)().guide(task).values()) if name != "atp" else _atp_prompt()


def _atp_prompt() -> str:
    from environments.atp.guide import atp_guide

    return "\n".join(atp_guide().values())


@pytest.mark.parametrize("name", ENVS)
def test_expert_solutions_parse_unchanged_in_every_shape(name: str) -> None:
    fmt = _env(name).action_format
    prompt = _prompt(name)
    seen = 0
    for action in solutions(name):
        for form in forms(action, fmt):
            answers = [
                f"{FENCE}action\n{form}\n{FENCE}",
                f"I take the next step now.\n{FENCE}action\n{form}\n{FENCE}",
                f"{FENCE}\n{form}\n{FENCE}",
            ]
            if "\n" not in form:
                answers += [form, f"Action: {form}", f"`{form}`"]
            for answer in answers:
                parsed = parse_action(answer, prompt=prompt, fmt=fmt)
                assert parsed.text == form, (name, answer, parsed)
                seen += 1
    assert seen >= 30, (name, seen)


def test_capabench_one_line_proofs_were_refused_as_prose_without_the_format() -> None:
    """The old reading (every action a command) refuses most reference proofs."""
    from environments.atp.loader import load_problems

    coq = SHARED / "capabench" / "atp" / "coq.json"
    if not coq.is_file():
        pytest.skip(f"no shared data at {coq}")
    references = [p.reference for p in load_problems(coq)]
    refused = [r for r in references if not parse_action(r, fmt="command").ok]
    assert len(refused) == 87
    assert all(parse_action(r, fmt="proof").text == r for r in references)


@pytest.mark.parametrize("fmt", ["command", "shell", "git", "tool_call"])
def test_sentences_are_still_no_action_where_actions_are_commands(fmt: ActionFormat) -> None:
    sentence = "I would go to the places in the order above and then return."
    assert not parse_action(sentence, fmt=fmt).ok
    fenced = parse_action(f"{FENCE}action\n{sentence}\n{FENCE}", fmt=fmt)
    assert fenced.error == "the answer is prose, not an action", (fmt, fenced)
    # where an action may read like a sentence, the prover or grader judges it
    assert parse_action(f"{FENCE}action\n{sentence}\n{FENCE}", fmt="answer").text == sentence


def test_templates_and_history_copies_are_refused_in_every_format() -> None:
    for fmt in ("command", "shell", "git", "tool_call", "proof", "answer"):
        assert not parse_action(f"{FENCE}action\n<the action>\n{FENCE}", fmt=fmt).ok
        assert not parse_action("Round 1\nThought: go\nAction: (none)", fmt=fmt).ok


def test_every_environment_declares_its_format() -> None:
    declared = {name: _env(name).action_format for name in ENVS}
    assert declared == {
        "atp": "proof",
        "git": "git",
        "math": "command",
        "navigation": "command",
        "os": "shell",
        "robot": "command",
        "shopping": "command",
        "ticket": "command",
        "tools": "tool_call",
    }
    assert Environment.action_format == "command"  # a plugin's default: today's reading

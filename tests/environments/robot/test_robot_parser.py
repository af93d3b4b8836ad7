"""EXECUTE parsing: several rounds per answer, malformed lines, stop at the first invalid."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agentbus.core.messages import ActionProposed
from environments.robot.env import RobotEnvironment
from environments.robot.parser import extract_round, parse_execute
from environments.robot.prompt import sections
from environments.robot.runner import World
from environments.robot.scene import Act
from environments.robot.tasks import generated_tasks, scene_of, task_for
from tests.environments.robot.test_robot_rules import sweep_world


def test_several_execute_blocks_are_several_rounds() -> None:
    text = """```action
EXECUTE
NAME: Alice ACTION: MOVE red_cube
NAME: Bob ACTION: MOVE red_cube

EXECUTE
NAME: Alice ACTION: WAIT
- NAME: Bob, ACTION: SWEEP Red_Cube.
```"""
    rounds = parse_execute(text)
    assert [r.errors for r in rounds] == [[], []]
    assert rounds[0].acts == [
        Act("Alice", "MOVE", ("red_cube",)),
        Act("Bob", "MOVE", ("red_cube",)),
    ]
    assert rounds[1].acts[1] == Act("Bob", "SWEEP", ("red_cube",))


def test_malformed_lines_are_errors_of_their_round() -> None:
    rounds = parse_execute("EXECUTE\nNAME: Alice ACTION: WAIT\nBob -> SWEEP red_cube\n")
    assert len(rounds) == 1
    assert rounds[0].acts == [Act("Alice", "WAIT")]
    assert "'Bob -> SWEEP red_cube' is not of the form" in rounds[0].errors[0]
    assert parse_execute("NAME: Alice ACTION:\n")[0].errors
    assert parse_execute("nothing to see here") == []


def test_action_lines_without_execute_form_one_round() -> None:
    rounds = parse_execute("NAME: Alice ACTION: WAIT\nNAME: Bob ACTION: MOVE blue_cube")
    assert len(rounds) == 1 and len(rounds[0].acts) == 2


def test_sort_keyword_round_trips() -> None:
    act = parse_execute("EXECUTE\nNAME: Bob ACTION: pick blue_square place panel3")[0].acts[0]
    assert act.args == ("blue_square", "place", "panel3")
    assert act.line == "NAME: Bob ACTION: PICK blue_square PLACE panel3"


def test_prose_round_extraction_uses_the_last_next_round_marker() -> None:
    vocab = {"red_cube", "blue_cube"}
    text = (
        "Earlier Alice MOVE blue_cube was done.\n"
        "Next round: Alice WAIT; Bob SWEEP red_cube while holding"
    )
    rnd = extract_round(text, ["Alice", "Bob"], ["MOVE", "SWEEP", "WAIT", "DUMP"], vocab)
    assert rnd == {"Alice": Act("Alice", "WAIT"), "Bob": Act("Bob", "SWEEP", ("red_cube",))}


async def test_env_runs_rounds_in_order_and_stops_at_the_first_invalid() -> None:
    scene = sweep_world().scene
    env = RobotEnvironment()
    await env.reset(task_for("t-parse", scene))
    text = """EXECUTE
NAME: Alice ACTION: MOVE red_cube
NAME: Bob ACTION: MOVE red_cube
EXECUTE
NAME: Alice ACTION: DUMP
NAME: Bob ACTION: SWEEP red_cube
EXECUTE
NAME: Alice ACTION: WAIT
NAME: Bob ACTION: SWEEP red_cube"""
    fb = await env.step(ActionProposed(text=text))
    assert not fb.valid and fb.needs_reflection and not fb.done
    assert fb.data["executed"] == 1 and fb.data["proposed"] == 3
    assert "Executed round 1: Alice MOVE red_cube; Bob MOVE red_cube." in fb.text
    assert "proposed round 2: Alice: DUMP is invalid: the dustpan is empty" in fb.text
    assert "Alice must WAIT" in fb.text
    assert "Rounds proposed after it were not executed either." in fb.text
    # the third round never ran: the cube is still on the table
    assert env.world is not None and env.world.state.location["red_cube"] == "table"


async def test_env_reports_malformed_lines_and_missing_blocks() -> None:
    env = RobotEnvironment()
    await env.reset(task_for("t-parse2", sweep_world().scene))
    fb = await env.step(ActionProposed(text="EXECUTE\nNAME: Alice ACTION: WAIT\nBob sweeps\n"))
    assert not fb.valid and "'Bob sweeps' is not of the form" in fb.text
    fb = await env.step(ActionProposed(text="Alice waits and Bob moves"))
    assert not fb.valid and "no robot actions found" in fb.text
    assert env.world is not None and env.world.state.rounds == 0


_WORDS = st.sampled_from(
    [
        *("MOVE", "SWEEP", "DUMP", "WAIT", "PICK", "PUT", "PLACE", "OPEN", "red_cube", "cup"),
        *("mug", "left_door", "panel3", "cutting_board", "ham", "bread_slice1", "x", ""),
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(["sweep", "cabinet", "sandwich", "sort"]),
    lines=st.lists(st.tuples(st.integers(0, 3), st.lists(_WORDS, max_size=4)), max_size=6),
    blocks=st.integers(min_value=1, max_value=3),
)
def test_any_action_text_gives_feedback_never_an_exception(
    kind: str, lines: list[tuple[int, list[str]]], blocks: int
) -> None:
    tasks = [t for t in generated_tasks(8, 1) if t.data["kind"] == kind]
    world = World(scene_of(tasks[0]))
    names = [*world.scene.robot_names, "Zed"]
    body = "\n".join(f"NAME: {names[i % len(names)]} ACTION: {' '.join(ws)}" for i, ws in lines)
    result = world.execute(("EXECUTE\n" + body + "\n") * blocks)
    text = world.report(result)
    assert text and (result.invalid or result.executed or not lines)


_HEADER = re.compile(r"^## (.+?)\s*$", re.MULTILINE)
_PIECES = ["## ", "#", "\n", "\n## ", " ", "\t", "\r", "\x0b", "\u2028", "a", "Plan", "x y"]


def _sections_by_regex(user: str) -> dict[str, str]:
    out: dict[str, str] = {}
    heads = list(_HEADER.finditer(user))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(user)
        out.setdefault(m.group(1).strip(), user[m.end() : end].strip())
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16))
def test_sections_scan_equals_the_header_regex(pieces: list[str]) -> None:
    """The expert's plain scan of ``## `` sections reads every text as the regex does."""
    user = "".join(pieces)
    assert sections(user) == _sections_by_regex(user)
    assert list(sections(user)) == list(_sections_by_regex(user))

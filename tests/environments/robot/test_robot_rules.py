"""The robot simulator's rules, on hand-built scenes with known answers."""

from __future__ import annotations

from environments.robot.parser import parse_action
from environments.robot.rules import rules_for
from environments.robot.runner import World
from environments.robot.scene import Act, RobotSpec, Scene, State, Thing


def acts(**lines: str) -> list[Act]:
    out = []
    for robot, action in lines.items():
        act = parse_action(robot, action)
        assert act is not None
        out.append(act)
    return out


def run(world: World, **lines: str) -> list[str]:
    """Check and (if valid) apply one round; returns the problems."""
    rnd = acts(**lines)
    problems = world.rules.check(world.state, rnd)
    if not problems:
        world.rules.apply(world.state, {a.robot: a for a in rnd})
        world.state.rounds += 1
    return problems


def sweep_world(ordered: bool = False) -> World:
    cubes = ["red_cube", "blue_cube"]
    reach = [*cubes, "trash_bin"]
    scene = Scene(
        kind="sweep",
        robots=[
            RobotSpec(name="Alice", position=(-0.5, 0.0), reach=reach, tool="dustpan"),
            RobotSpec(name="Bob", position=(0.5, 0.0), reach=reach, tool="broom"),
        ],
        things=[
            Thing(name="red_cube", position=(0.1, 0.5)),
            Thing(name="blue_cube", position=(-0.2, 0.4)),
            Thing(name="trash_bin", position=(0.0, -0.2), place="floor"),
        ],
        goal={"cubes": cubes, "ordered": ordered},
        round_limit=12,
    )
    return World(scene)


def test_sweep_needs_both_robots_at_the_cube_first() -> None:
    w = sweep_world()
    problems = run(w, Alice="WAIT", Bob="SWEEP red_cube")
    assert problems and "Bob has not moved to red_cube" in problems[0]
    assert run(w, Alice="WAIT", Bob="MOVE red_cube") == []
    problems = run(w, Alice="WAIT", Bob="SWEEP red_cube")
    assert "dustpan (Alice) is not at red_cube" in problems[0]
    assert run(w, Alice="MOVE red_cube", Bob="WAIT") == []
    # the dustpan robot must hold still in the sweeping round
    problems = run(w, Alice="MOVE red_cube", Bob="SWEEP red_cube")
    assert "Alice must WAIT" in " ".join(problems)
    assert run(w, Alice="WAIT", Bob="SWEEP red_cube") == []
    assert w.state.location["red_cube"] == "dustpan"
    assert w.rules.completed(w.state) == ["sweep red_cube"]


def test_sweep_dump_needs_a_full_dustpan_and_the_dustpan_robot() -> None:
    w = sweep_world()
    problems = run(w, Alice="DUMP", Bob="WAIT")
    assert problems == ["Alice: DUMP is invalid: the dustpan is empty, there is nothing to dump"]
    problems = run(w, Alice="WAIT", Bob="DUMP")
    assert "only Alice can DUMP" in " ".join(problems)
    problems = run(w, Alice="SWEEP red_cube", Bob="WAIT")
    assert "only Bob can SWEEP" in " ".join(problems)


def test_sweep_colour_order_and_full_dustpan() -> None:
    w = sweep_world(ordered=True)
    assert run(w, Alice="MOVE blue_cube", Bob="MOVE blue_cube") == []
    problems = run(w, Alice="WAIT", Bob="SWEEP blue_cube")
    assert "red_cube must be swept before blue_cube" in problems[0]
    for rnd in (
        {"Alice": "MOVE red_cube", "Bob": "MOVE red_cube"},
        {"Alice": "WAIT", "Bob": "SWEEP red_cube"},
    ):
        assert run(w, **rnd) == []
    assert run(w, Alice="MOVE blue_cube", Bob="MOVE blue_cube") == []
    problems = run(w, Alice="WAIT", Bob="SWEEP blue_cube")
    assert "already holds red_cube" in problems[0]
    assert run(w, Alice="DUMP", Bob="WAIT") == []
    assert w.rules.reward(w.state) == 0.5  # 2 of 4 sub-tasks


def test_a_round_needs_every_robot_once_with_a_known_action() -> None:
    w = sweep_world()
    assert "missing: Bob" in " ".join(w.rules.check(w.state, acts(Alice="WAIT")))
    twice = [Act("Alice", "WAIT"), Act("Alice", "WAIT"), Act("Bob", "WAIT")]
    assert "more than one action" in " ".join(w.rules.check(w.state, twice))
    stranger = [Act("Alice", "WAIT"), Act("Bob", "WAIT"), Act("Zed", "WAIT")]
    assert "no robot named 'Zed'" in " ".join(w.rules.check(w.state, stranger))
    assert "unknown action 'JUMP'" in " ".join(
        w.rules.check(w.state, acts(Alice="JUMP", Bob="WAIT"))
    )
    assert "there is no cube 'gold_cube'" in " ".join(run(w, Alice="MOVE gold_cube", Bob="WAIT"))


def cabinet_world() -> World:
    scene = Scene(
        kind="cabinet",
        robots=[
            RobotSpec(name="Alice", position=(-0.6, 0.7), reach=["left_door_handle"]),
            RobotSpec(name="Bob", position=(0.6, 0.7), reach=["right_door_handle"]),
            RobotSpec(
                name="Chad",
                position=(0.0, 0.0),
                reach=["cup", "mug", "wood_coaster", "cork_coaster"],
            ),
        ],
        things=[
            Thing(name="left_door_handle", position=(-0.2, 0.8), place="cabinet"),
            Thing(name="right_door_handle", position=(0.2, 0.8), place="cabinet"),
            Thing(name="cup", position=(0.0, 0.9), place="cabinet"),
            Thing(name="mug", position=(0.1, 0.9), place="cabinet"),
            Thing(name="wood_coaster", position=(-0.3, 0.3)),
            Thing(name="cork_coaster", position=(0.3, 0.3)),
        ],
        goal={"order": ["mug", "cup"], "coaster": {"cup": "wood_coaster", "mug": "cork_coaster"}},
        round_limit=10,
    )
    return World(scene)


def test_cabinet_doors_then_objects_in_order() -> None:
    w = cabinet_world()
    assert "cabinet is closed" in " ".join(run(w, Alice="WAIT", Bob="WAIT", Chad="PICK mug"))
    assert "out of Alice's reach" in " ".join(
        run(w, Alice="PICK right_door_handle", Bob="WAIT", Chad="WAIT")
    )
    assert "not holding left_door_handle" in " ".join(
        run(w, Alice="OPEN left_door", Bob="WAIT", Chad="WAIT")
    )
    rounds = [
        {"Alice": "PICK left_door_handle", "Bob": "PICK right_door_handle", "Chad": "WAIT"},
        {"Alice": "OPEN left_door", "Bob": "OPEN right_door", "Chad": "WAIT"},
    ]
    for rnd in rounds:
        assert run(w, **rnd) == []
    # a robot holding a door open may only wait
    assert "can only WAIT" in " ".join(run(w, Alice="PICK cup", Bob="WAIT", Chad="WAIT"))
    assert "mug comes first" in " ".join(run(w, Alice="WAIT", Bob="WAIT", Chad="PICK cup"))
    assert run(w, Alice="WAIT", Bob="WAIT", Chad="PICK mug") == []
    assert "belongs on the cork_coaster" in " ".join(
        run(w, Alice="WAIT", Bob="WAIT", Chad="PLACE mug wood_coaster")
    )
    assert run(w, Alice="WAIT", Bob="WAIT", Chad="PLACE mug cork_coaster") == []
    assert w.rules.reward(w.state) == 4 / 6


def sandwich_world() -> World:
    scene = Scene(
        kind="sandwich",
        robots=[
            RobotSpec(name="Chad", position=(-0.6, 0.0), reach=["cutting_board", "bread_slice1"]),
            RobotSpec(
                name="Dave",
                position=(0.6, 0.0),
                reach=["cutting_board", "ham", "cheese", "bread_slice2"],
            ),
        ],
        things=[
            Thing(name="cutting_board", position=(0.0, 0.5)),
            Thing(name="bread_slice1", position=(-0.5, 0.5)),
            Thing(name="ham", position=(0.4, 0.5)),
            Thing(name="cheese", position=(0.5, 0.3)),
            Thing(name="bread_slice2", position=(0.6, 0.6)),
        ],
        goal={"recipe": ["bread_slice1", "ham", "bread_slice2"]},
        round_limit=10,
    )
    return World(scene)


def test_sandwich_reach_targets_and_one_put_per_round() -> None:
    w = sandwich_world()
    assert "out of Chad's reach" in " ".join(run(w, Chad="PICK ham", Dave="WAIT"))
    assert run(w, Chad="PICK bread_slice1", Dave="PICK ham") == []
    assert "top of the stack is cutting_board" in " ".join(
        run(w, Chad="PUT bread_slice1 ham", Dave="WAIT")
    )
    problems = run(w, Chad="PUT bread_slice1 cutting_board", Dave="PUT ham cutting_board")
    assert "only one item can be stacked per round" in " ".join(problems)
    assert run(w, Chad="PUT bread_slice1 cutting_board", Dave="WAIT") == []
    assert w.rules.completed(w.state) == ["stack bread_slice1"]


def test_sandwich_wrong_item_on_the_board_fails_the_task() -> None:
    w = sandwich_world()
    assert run(w, Chad="PICK bread_slice1", Dave="PICK cheese") == []
    assert run(w, Chad="PUT bread_slice1 cutting_board", Dave="WAIT") == []
    assert run(w, Chad="WAIT", Dave="PUT cheese bread_slice1") == []
    assert w.state.failure is not None and "ruined" in w.state.failure
    assert w.done and not w.complete
    assert w.reward == 1 / 3


def sort_world() -> World:
    panels = [f"panel{i}" for i in range(1, 6)]
    scene = Scene(
        kind="sort",
        robots=[
            RobotSpec(name="Alice", position=(-0.3, 0.0), reach=panels[0:3]),
            RobotSpec(name="Bob", position=(0.3, 0.0), reach=panels[2:5]),
        ],
        things=[Thing(name=p, position=(0.3 * i - 0.6, 0.5)) for i, p in enumerate(panels)]
        + [Thing(name="blue_square", position=(-0.6, 0.5), place="panel1")],
        goal={"targets": {"blue_square": "panel5"}},
        round_limit=6,
    )
    return World(scene)


def test_sort_reach_limits_and_hand_over() -> None:
    w = sort_world()
    assert "panel1, out of Bob's reach" in " ".join(
        run(w, Alice="WAIT", Bob="PICK blue_square PLACE panel4")
    )
    assert "panel5 is out of Alice's reach" in " ".join(
        run(w, Alice="PICK blue_square PLACE panel5", Bob="WAIT")
    )
    assert "expected 'PICK <object> PLACE <panel>'" in " ".join(
        run(w, Alice="PICK blue_square panel3", Bob="WAIT")
    )
    assert run(w, Alice="PICK blue_square PLACE panel3", Bob="WAIT") == []
    assert w.reward == 0.0
    assert run(w, Alice="WAIT", Bob="PICK blue_square PLACE panel5") == []
    assert w.complete and w.reward == 1.0


def test_policy_rounds_are_valid_and_finish_each_hand_built_scene() -> None:
    for w in (sweep_world(True), cabinet_world(), sandwich_world(), sort_world()):
        plan = w.rules.rollout(w.rules.initial())
        assert plan is not None and len(plan) <= w.scene.round_limit
        state: State = w.rules.initial()
        for rnd in plan:
            assert w.rules.check(state, list(rnd.values())) == []
            w.rules.apply(state, rnd)
        assert w.rules.is_complete(state)


def test_rules_for_every_kind() -> None:
    assert rules_for(sort_world().scene).kind == "sort"

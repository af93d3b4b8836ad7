"""Seeded random scenes for the four task kinds.

Every scene is drawn from its own ``random.Random`` (seeded by the run seed
and the instance number), so a task set is reproducible and any instance can
be rebuilt alone. The round limit is the policy's optimal length plus slack,
so every generated instance is solvable within its limit by construction
(the tests check it again by driving the environment with the expert).
The kinds come in 30-task blocks in a seeded order (:func:`kind_of`), so
every prefix of a run samples the truth table's mix of kinds.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from environments.robot.rules import rules_for
from environments.robot.scene import KINDS, Kind, RobotSpec, Scene, Thing
from environments.task_order import kind_at

NAMES = ("Alice", "Bob", "Chad", "Dave", "Erin", "Finn", "Gina", "Hugo")
COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "white")
FILLINGS = ("ham", "bacon", "cheese", "tomato", "lettuce", "cucumber", "egg", "avocado")
SHAPES = (
    "blue_square",
    "pink_polygon",
    "yellow_trapezoid",
    "green_star",
    "red_hexagon",
    "white_circle",
)
COASTERS = ("wood_coaster", "cork_coaster", "slate_coaster", "felt_coaster")


def _xy(rng: random.Random, x0: float, x1: float, y0: float, y1: float) -> tuple[float, float]:
    return (round(rng.uniform(x0, x1), 2), round(rng.uniform(y0, y1), 2))


def gen_sweep(rng: random.Random) -> Scene:
    pan, broom = rng.sample(NAMES, 2)
    n = rng.randint(2, 4)
    cubes = [f"{c}_cube" for c in rng.sample(COLOURS, n)]
    things = [Thing(name=c, position=_xy(rng, -0.5, 0.5, 0.2, 0.8)) for c in cubes]
    things.append(Thing(name="trash_bin", position=_xy(rng, -0.7, 0.7, -0.3, -0.1), place="floor"))
    reach = [*cubes, "trash_bin"]
    robots = [
        RobotSpec(name=pan, position=_xy(rng, -0.8, -0.4, 0.0, 0.1), reach=reach, tool="dustpan"),
        RobotSpec(name=broom, position=_xy(rng, 0.4, 0.8, 0.0, 0.1), reach=reach, tool="broom"),
    ]
    rng.shuffle(robots)
    goal = {"cubes": cubes, "ordered": rng.random() < 0.5}
    return Scene(kind="sweep", robots=robots, things=things, goal=goal)


def gen_cabinet(rng: random.Random) -> Scene:
    left, right, inside = rng.sample(NAMES, 3)
    cup_c, mug_c = rng.sample(COASTERS, 2)
    order = rng.sample(["cup", "mug"], 2)
    things = [
        Thing(name="left_door_handle", position=(-0.2, 0.8), place="cabinet"),
        Thing(name="right_door_handle", position=(0.2, 0.8), place="cabinet"),
        Thing(name="cup", position=_xy(rng, -0.15, 0.15, 0.85, 0.95), place="cabinet"),
        Thing(name="mug", position=_xy(rng, -0.15, 0.15, 0.85, 0.95), place="cabinet"),
        Thing(name=cup_c, position=_xy(rng, -0.4, 0.4, 0.2, 0.5)),
        Thing(name=mug_c, position=_xy(rng, -0.4, 0.4, 0.2, 0.5)),
    ]
    robots = [
        RobotSpec(name=left, position=_xy(rng, -0.7, -0.5, 0.6, 0.8), reach=["left_door_handle"]),
        RobotSpec(name=right, position=_xy(rng, 0.5, 0.7, 0.6, 0.8), reach=["right_door_handle"]),
        RobotSpec(
            name=inside, position=_xy(rng, -0.1, 0.1, 0.0, 0.1), reach=["cup", "mug", cup_c, mug_c]
        ),
    ]
    rng.shuffle(robots)
    goal = {"order": order, "coaster": {"cup": cup_c, "mug": mug_c}}
    return Scene(kind="cabinet", robots=robots, things=things, goal=goal)


def gen_sandwich(rng: random.Random) -> Scene:
    left, right = rng.sample(NAMES, 2)
    fillings = rng.sample(FILLINGS, rng.randint(2, 5))
    n_recipe = rng.randint(1, min(4, len(fillings)))
    recipe = ["bread_slice1", *fillings[:n_recipe], "bread_slice2"]
    foods = ["bread_slice1", "bread_slice2", *fillings]
    rng.shuffle(foods)
    things = [Thing(name="cutting_board", position=(0.0, 0.5))]
    left_reach, right_reach = ["cutting_board"], ["cutting_board"]
    for food in foods:
        side = rng.choice(("left", "right", "left", "right", "middle"))
        if side == "left":
            pos = _xy(rng, -0.7, -0.25, 0.2, 0.8)
            left_reach.append(food)
        elif side == "right":
            pos = _xy(rng, 0.25, 0.7, 0.2, 0.8)
            right_reach.append(food)
        else:
            pos = _xy(rng, -0.15, 0.15, 0.1, 0.3)
            left_reach.append(food)
            right_reach.append(food)
        things.append(Thing(name=food, position=pos))
    robots = [
        RobotSpec(name=left, position=(-0.6, 0.0), reach=left_reach),
        RobotSpec(name=right, position=(0.6, 0.0), reach=right_reach),
    ]
    return Scene(kind="sandwich", robots=robots, things=things, goal={"recipe": recipe})


def gen_sort(rng: random.Random) -> Scene:
    n_robots = rng.choice((2, 3, 3))
    names = rng.sample(NAMES, n_robots)
    n_panels = 2 * n_robots + 1
    panels = [f"panel{i}" for i in range(1, n_panels + 1)]
    things = [
        Thing(name=p, position=(round(-0.6 + 1.2 * i / (n_panels - 1), 2), 0.5))
        for i, p in enumerate(panels)
    ]
    robots = []
    for i, name in enumerate(names):
        window = panels[2 * i : 2 * i + 3]
        x = things[2 * i + 1].position[0]
        robots.append(RobotSpec(name=name, position=(x, 0.0), reach=window))
    objects = rng.sample(SHAPES, rng.randint(2, 3))
    targets: dict[str, str] = {}
    for obj in objects:
        start, target = rng.sample(panels, 2)
        things.append(Thing(name=obj, position=(0.0, 0.5), place=start))
        targets[obj] = target
    # an object sits where its panel is
    things = [
        t.model_copy(update={"position": _panel_pos(things, t.place)}) if t.name in targets else t
        for t in things
    ]
    return Scene(kind="sort", robots=robots, things=things, goal={"targets": targets})


def _panel_pos(things: list[Thing], panel: str) -> tuple[float, float]:
    for t in things:
        if t.name == panel:
            return t.position
    return (0.0, 0.5)


GENERATORS: dict[str, Callable[[random.Random], Scene]] = {
    "sweep": gen_sweep,
    "cabinet": gen_cabinet,
    "sandwich": gen_sandwich,
    "sort": gen_sort,
}


def with_round_limit(scene: Scene) -> Scene:
    """Set the round limit to the policy's length plus slack (at least 3 rounds)."""
    plan = rules_for(scene).rollout(rules_for(scene).initial())
    if plan is None:
        raise ValueError(f"generated {scene.kind} scene is not solvable by the policy")
    slack = max(3, len(plan) // 2)
    return scene.model_copy(update={"round_limit": len(plan) + slack})


def kind_of(seed: int, index: int, kinds: tuple[Kind, ...] = KINDS) -> Kind:
    """Scene ``index``'s kind: the 30-task block's mix of ``kinds`` in a seeded order.

    For the four kinds the first block holds 8 sweep, 8 cabinet, 7 sandwich and 7 sort
    scenes (the old ``kinds[i mod 4]`` block, the truth table's population);
    any first T scenes are a random sample of it (:mod:`environments.task_order`).
    """
    return kind_at(kinds, "robot", seed, index)


def generate(count: int, seed: int = 0, kinds: tuple[Kind, ...] = KINDS) -> list[Scene]:
    """``count`` scenes in :func:`kind_of`'s order, reproducible from ``seed``."""
    scenes: list[Scene] = []
    for i in range(count):
        kind = kind_of(seed, i, kinds)
        rng = random.Random(f"robot:{seed}:{i}")
        scenes.append(with_round_limit(GENERATORS[kind](rng)))
    return scenes

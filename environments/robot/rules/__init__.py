"""The rules of each task kind, by name."""

from __future__ import annotations

from environments.robot.rules.base import Rules
from environments.robot.rules.cabinet import CabinetRules
from environments.robot.rules.sandwich import SandwichRules
from environments.robot.rules.sort import SortRules
from environments.robot.rules.sweep import SweepRules
from environments.robot.scene import Scene

RULES: dict[str, type[Rules]] = {
    "sweep": SweepRules,
    "cabinet": CabinetRules,
    "sandwich": SandwichRules,
    "sort": SortRules,
}


def rules_for(scene: Scene) -> Rules:
    return RULES[scene.kind](scene)


__all__ = ["RULES", "Rules", "rules_for"]

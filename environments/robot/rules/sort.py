"""Sort: move each object onto its target panel; robots only reach nearby panels.

A row of panels lies along the table; each robot reaches a window of
neighbouring panels, and neighbouring windows share one panel. An object
whose target is outside the reach of the robot next to it must be handed
over: placed on a shared panel, then moved on by the neighbour. Sub-tasks:
each object on its target panel (counted on the current state).
"""

from __future__ import annotations

from typing import ClassVar

from environments.robot.rules.base import Rules
from environments.robot.scene import Act, Round, State, fmt_pos


def panel_index(name: str) -> int:
    return int(name.removeprefix("panel"))


class SortRules(Rules):
    kind = "sort"
    verbs: ClassVar[dict[str, str]] = {
        "PICK <object> PLACE <panel>": "pick an object from a panel in your reach and place it "
        "on another panel in your reach, in one round",
        "WAIT": "do nothing this round",
    }

    @property
    def targets(self) -> dict[str, str]:
        return dict(self.scene.goal["targets"])

    @property
    def panels(self) -> list[str]:
        return [t.name for t in self.scene.things if t.name.startswith("panel")]

    def initial(self) -> State:
        return State(location={o: self.scene.thing(o).place for o in self.targets})  # type: ignore[union-attr]

    def subtasks(self) -> list[str]:
        return [f"{o} on {p}" for o, p in self.targets.items()]

    def completed(self, state: State) -> list[str]:
        return [f"{o} on {p}" for o, p in self.targets.items() if state.location[o] == p]

    def check_act(self, state: State, act: Act, rnd: Round) -> str | None:
        if act.verb == "WAIT":
            return None if not act.args else "expected 'WAIT'"
        if len(act.args) != 3 or act.args[1] != "place":
            return "expected 'PICK <object> PLACE <panel>'"
        obj, _, panel = act.args
        if obj not in self.targets:
            return f"there is no object {obj!r} (objects: {', '.join(self.targets)})"
        if panel not in self.panels:
            return f"there is no panel {panel!r} (panels: {self.panels[0]}..{self.panels[-1]})"
        here = state.location[obj]
        if not self.scene.reaches(act.robot, here):
            return f"{obj} is on {here}, out of {act.robot}'s reach"
        if not self.scene.reaches(act.robot, panel):
            return f"{panel} is out of {act.robot}'s reach"
        if panel == here:
            return f"{obj} is already on {panel}"
        if any(a.verb == "PICK" and a.args[:1] == (obj,) for a in rnd.values() if a is not act):
            return f"two robots cannot pick {obj} in the same round"
        return None

    def apply(self, state: State, rnd: Round) -> list[str]:
        events: list[str] = []
        for act in rnd.values():
            if act.verb == "PICK":
                obj, _, panel = act.args
                state.location[obj] = panel
                events.append(f"{obj} is now on {panel}")
        return events

    def _reach_panels(self, robot: str) -> list[str]:
        spec = self.scene.robot(robot)
        return [p for p in self.panels if spec is not None and p in spec.reach]

    def _hop(self, robot: str, here: str, target: str) -> str | None:
        """The panel in ``robot``'s reach closest to ``target``, if it gets closer."""
        window = self._reach_panels(robot)
        if here not in window:
            return None
        best = min(window, key=lambda p: abs(panel_index(p) - panel_index(target)))
        if abs(panel_index(best) - panel_index(target)) < abs(
            panel_index(here) - panel_index(target)
        ):
            return best
        return None

    def policy(self, state: State) -> Round:
        rnd = self.wait_all()
        busy: set[str] = set()
        todo = [(o, t) for o, t in self.targets.items() if state.location[o] != t]
        todo.sort(key=lambda ot: -abs(panel_index(state.location[ot[0]]) - panel_index(ot[1])))
        for obj, target in todo:
            here = state.location[obj]
            options = [(r, self._hop(r, here, target)) for r in self.robots if r not in busy]
            options = [(r, p) for r, p in options if p is not None]
            if not options:
                continue
            robot, panel = min(
                options, key=lambda rp: abs(panel_index(rp[1] or "panel0") - panel_index(target))
            )
            assert panel is not None
            rnd[robot] = Act(robot, "PICK", (obj, "place", panel))
            busy.add(robot)
        return rnd

    def explain(self, state: State, rnd: Round) -> str:
        return (
            "Each robot can only touch panels in its own window, so an object whose target is "
            "out of the nearest robot's reach is first put on a shared panel and then moved on "
            "by the neighbour; robots work on different objects in parallel."
        )

    def feasible(self, act: Act) -> bool:
        if act.verb == "PICK" and len(act.args) == 3:
            return self.scene.reaches(act.robot, act.args[2])
        return True

    def mistakes(self, state: State) -> list[Round]:
        out: list[Round] = []
        for obj, target in self.targets.items():
            if state.location[obj] == target:
                continue
            for r in self.robots:
                if not self.scene.reaches(r, target) or not self.scene.reaches(
                    r, state.location[obj]
                ):
                    rnd = self.wait_all()
                    rnd[r] = Act(r, "PICK", (obj, "place", target))
                    out.append(rnd)
        return out

    def describe(self, state: State) -> str:
        lines = ["Robots:"]
        for r in self.scene.robots:
            window = self._reach_panels(r.name)
            lines.append(f"- {r.name} at {fmt_pos(r.position)}; reaches: {', '.join(window)}.")
        lines.append("Panels:")
        for t in self.scene.things:
            if t.name.startswith("panel"):
                on = [o for o in self.targets if state.location[o] == t.name]
                lines.append(f"- {t.name} at {fmt_pos(t.position)}: {', '.join(on) or 'empty'}")
        return "\n".join(lines)

    def goal_text(self) -> str:
        parts = ", ".join(f"{o} onto {p}" for o, p in self.targets.items())
        return f"Sort the objects onto their target panels: {parts}."

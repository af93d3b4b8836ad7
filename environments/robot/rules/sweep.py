"""Sweep: a dustpan robot and a broom robot clear cubes off the table.

Both robots must first MOVE to a cube; then the broom robot SWEEPs it while
the dustpan robot WAITs (holding the dustpan still); the dustpan holds one
cube at a time, and the dustpan robot DUMPs it into the trash bin. With a
colour order, cubes must be swept in that order. Sub-tasks: sweep and dump
each cube, in order.
"""

from __future__ import annotations

from typing import ClassVar

from environments.robot.rules.base import Rules, need_args
from environments.robot.scene import Act, Round, State, fmt_pos


class SweepRules(Rules):
    kind = "sweep"
    verbs: ClassVar[dict[str, str]] = {
        "MOVE <cube>": "move your tool next to that cube (any robot)",
        "SWEEP <cube>": "broom robot only: sweep the cube into the dustpan; both robots "
        "must already be at the cube and the dustpan robot must WAIT in the same round",
        "DUMP": "dustpan robot only: empty the dustpan into the trash_bin",
        "WAIT": "do nothing this round (the dustpan robot holds the dustpan still)",
    }

    @property
    def cubes(self) -> list[str]:
        return list(self.scene.goal["cubes"])

    @property
    def ordered(self) -> bool:
        return bool(self.scene.goal.get("ordered", False))

    def _tool_robot(self, tool: str) -> str:
        for r in self.scene.robots:
            if r.tool == tool:
                return r.name
        raise ValueError(f"sweep scene has no {tool} robot")

    @property
    def pan(self) -> str:
        return self._tool_robot("dustpan")

    @property
    def broom(self) -> str:
        return self._tool_robot("broom")

    def initial(self) -> State:
        return State(
            at={r: "start" for r in self.robots}, location={c: "table" for c in self.cubes}
        )

    def subtasks(self) -> list[str]:
        return [s for c in self.cubes for s in (f"sweep {c}", f"dump {c}")]

    def _in_pan(self, state: State) -> str | None:
        for c, where in state.location.items():
            if where == "dustpan":
                return c
        return None

    def _on_table(self, state: State) -> list[str]:
        return [c for c in self.cubes if state.location.get(c) == "table"]

    def check_act(self, state: State, act: Act, rnd: Round) -> str | None:
        if act.verb == "WAIT":
            return need_args(act, 0, "WAIT")
        if act.verb == "DUMP":
            if act.robot != self.pan:
                return f"{act.robot} holds the {self._tool(act.robot)}; only {self.pan} can DUMP"
            if self._in_pan(state) is None:
                return "the dustpan is empty, there is nothing to dump"
            return need_args(act, 0, "DUMP")
        bad = need_args(act, 1, f"{act.verb} <cube>")
        if bad:
            return bad
        cube = act.args[0]
        if cube not in self.cubes:
            return f"there is no cube {cube!r} (cubes: {', '.join(self.cubes)})"
        if state.location[cube] != "table":
            return f"{cube} is no longer on the table"
        if act.verb == "MOVE":
            return None
        # SWEEP
        if act.robot != self.broom:
            return f"{act.robot} holds the {self._tool(act.robot)}; only {self.broom} can SWEEP"
        if state.at[self.broom] != cube:
            return f"{self.broom} has not moved to {cube} yet (MOVE first)"
        if state.at[self.pan] != cube:
            return f"the dustpan ({self.pan}) is not at {cube} yet"
        pan_act = rnd.get(self.pan)
        if pan_act is None or pan_act.verb != "WAIT":
            return f"{self.pan} must WAIT to hold the dustpan still while {self.broom} sweeps"
        held = self._in_pan(state)
        if held is not None:
            return f"the dustpan already holds {held}; {self.pan} must DUMP it first"
        if self.ordered:
            nxt = self._on_table(state)[0]
            if cube != nxt:
                return f"the order is {', '.join(self.cubes)}: {nxt} must be swept before {cube}"
        return None

    def _tool(self, robot: str) -> str:
        spec = self.scene.robot(robot)
        return spec.tool if spec and spec.tool else "nothing"

    def apply(self, state: State, rnd: Round) -> list[str]:
        events: list[str] = []
        for act in rnd.values():
            if act.verb == "MOVE":
                state.at[act.robot] = act.args[0]
            elif act.verb == "SWEEP":
                cube = act.args[0]
                state.location[cube] = "dustpan"
                state.done.append(f"sweep {cube}")
                events.append(f"{cube} was swept into the dustpan")
            elif act.verb == "DUMP":
                dumped = self._in_pan(state)
                assert dumped is not None
                state.location[dumped] = "trash_bin"
                state.at[act.robot] = "trash_bin"
                state.done.append(f"dump {dumped}")
                events.append(f"{dumped} was dumped into the trash_bin")
        return events

    def policy(self, state: State) -> Round:
        rnd = self.wait_all()
        remaining = self._on_table(state)
        if self._in_pan(state) is not None:
            rnd[self.pan] = Act(self.pan, "DUMP")
            if remaining and state.at[self.broom] not in remaining:
                rnd[self.broom] = Act(self.broom, "MOVE", (remaining[0],))
            return rnd
        if not remaining:
            return rnd
        cube = self._target(state, remaining)
        if state.at[self.pan] == cube and state.at[self.broom] == cube:
            rnd[self.broom] = Act(self.broom, "SWEEP", (cube,))
            return rnd
        for r in (self.pan, self.broom):
            if state.at[r] != cube:
                rnd[r] = Act(r, "MOVE", (cube,))
        return rnd

    def _target(self, state: State, remaining: list[str]) -> str:
        """The next cube: the ordered one, else one a robot already stands at."""
        if self.ordered:
            return remaining[0]
        for robot in (self.broom, self.pan):
            if state.at[robot] in remaining:
                return state.at[robot]
        return remaining[0]

    def explain(self, state: State, rnd: Round) -> str:
        verbs = {a.verb for a in rnd.values()}
        if "DUMP" in verbs:
            return (
                f"The dustpan is full, so {self.pan} dumps it into the trash_bin; "
                f"{self.broom} can already head to the next cube."
            )
        if "SWEEP" in verbs:
            return (
                f"Both robots are at the cube, so {self.broom} sweeps it while {self.pan} "
                "WAITs and holds the dustpan still."
            )
        return (
            f"{self.broom} can only sweep a cube when both robots stand at it, "
            "so the robots that are not there yet move to it first."
        )

    def key_order(self) -> list[str] | None:
        return self.cubes if self.ordered else None

    def feasible(self, act: Act) -> bool:
        if act.verb == "SWEEP":
            return act.robot == self.broom
        if act.verb == "DUMP":
            return act.robot == self.pan
        return True

    def mistakes(self, state: State) -> list[Round]:
        out: list[Round] = []
        remaining = self._on_table(state)
        if remaining:
            cube = remaining[0]
            # sweep before both robots have moved there
            rnd = self.wait_all()
            rnd[self.broom] = Act(self.broom, "SWEEP", (cube,))
            if state.at[self.pan] != cube or state.at[self.broom] != cube:
                rnd[self.pan] = Act(self.pan, "MOVE", (cube,))
            out.append(rnd)
            # wrong tool
            rnd = self.wait_all()
            rnd[self.pan] = Act(self.pan, "SWEEP", (cube,))
            out.append(rnd)
            # out of order
            if len(remaining) > 1:
                other = remaining[1]
                out.append({r: Act(r, "MOVE", (other,)) for r in self.robots})
        if self._in_pan(state) is None:
            rnd = self.wait_all()
            rnd[self.pan] = Act(self.pan, "DUMP")
            out.append(rnd)
        return out

    def describe(self, state: State) -> str:
        lines = ["Robots:"]
        for r in self.scene.robots:
            where = state.at[r.name]
            spot = "its start position" if where == "start" else where
            lines.append(
                f"- {r.name} holds the {r.tool} and stands at {fmt_pos(r.position)}; "
                f"its {r.tool} is now at {spot}. Reach: the whole table and the trash_bin."
            )
        lines.append("Cubes on the table:")
        for c in self.cubes:
            thing = self.scene.thing(c)
            if state.location[c] == "table" and thing is not None:
                lines.append(f"- {c} at {fmt_pos(thing.position)}")
        if not self._on_table(state):
            lines.append("- none")
        held = self._in_pan(state)
        lines.append(f"Dustpan: {'holds ' + held if held else 'empty'}.")
        binned = [c for c in self.cubes if state.location[c] == "trash_bin"]
        bin_thing = self.scene.thing("trash_bin")
        bin_pos = fmt_pos(bin_thing.position) if bin_thing else "the floor"
        lines.append(f"Trash bin at {bin_pos}; inside: {', '.join(binned) or 'nothing'}.")
        return "\n".join(lines)

    def goal_text(self) -> str:
        cubes = ", ".join(self.cubes)
        if self.ordered:
            return (
                f"Sweep the cubes into the dustpan and dump them into the trash_bin, "
                f"strictly in this order: {cubes}."
            )
        return f"Sweep every cube ({cubes}) into the dustpan and dump it into the trash_bin."

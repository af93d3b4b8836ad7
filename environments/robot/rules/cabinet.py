"""Cabinet: hold both doors open, then move the cup and the mug to their coasters.

A robot PICKs a door handle it can reach and then OPENs that door; the door
stays open only while that robot keeps holding the handle, so from then on it
may only WAIT. The cabinet's inside is reachable once both doors are open.
The cup and the mug go onto their own coasters in the order the goal gives.
"""

from __future__ import annotations

from typing import ClassVar

from environments.robot.rules.base import Rules, need_args
from environments.robot.scene import Act, Round, State, fmt_pos

DOORS = {"left_door": "left_door_handle", "right_door": "right_door_handle"}
HANDLES = {h: d for d, h in DOORS.items()}


class CabinetRules(Rules):
    kind = "cabinet"
    verbs: ClassVar[dict[str, str]] = {
        "PICK <object>": "grasp a door handle, the cup or the mug (it must be in your reach "
        "and your gripper empty; the cup and mug only once both doors are open)",
        "OPEN <door>": "open left_door or right_door; you must be holding its handle, and you "
        "must keep holding it (WAIT) for the door to stay open",
        "PLACE <object> <coaster>": "put the held cup or mug onto a coaster in your reach",
        "WAIT": "do nothing (a robot holding an open door keeps holding it)",
    }

    @property
    def order(self) -> list[str]:
        return list(self.scene.goal["order"])

    @property
    def coaster(self) -> dict[str, str]:
        return dict(self.scene.goal["coaster"])

    def initial(self) -> State:
        loc = {t.name: t.place for t in self.scene.things}
        return State(holding={r: None for r in self.robots}, location=loc)

    def subtasks(self) -> list[str]:
        out = [f"open {d}" for d in DOORS]
        for obj in self.order:
            out += [f"pick {obj}", f"place {obj} on {self.coaster[obj]}"]
        return out

    def _next_object(self, state: State) -> str | None:
        for obj in self.order:
            if state.location[obj] != self.coaster[obj]:
                return obj
        return None

    def check_act(self, state: State, act: Act, rnd: Round) -> str | None:
        held = state.holding[act.robot]
        if held in HANDLES and HANDLES[held] in state.opened and act.verb != "WAIT":
            return (
                f"{act.robot} is holding {HANDLES[held]} open; letting go would close it "
                "(it can only WAIT)"
            )
        if act.verb == "WAIT":
            return need_args(act, 0, "WAIT")
        if act.verb == "PICK":
            bad = need_args(act, 1, "PICK <object>")
            if bad:
                return bad
            obj = act.args[0]
            if obj not in HANDLES and obj not in self.order:
                return f"{obj!r} cannot be picked (objects: {', '.join([*HANDLES, *self.order])})"
            if not self.scene.reaches(act.robot, obj):
                return f"{obj} is out of {act.robot}'s reach"
            if held is not None:
                return f"{act.robot} is already holding {held}"
            others = [r for r, h in state.holding.items() if h == obj and r != act.robot]
            if others:
                return f"{others[0]} is already holding {obj}"
            if any(a.verb == "PICK" and a.args[:1] == (obj,) for a in rnd.values() if a is not act):
                return f"two robots cannot pick {obj} in the same round"
            if obj in self.order:
                if not all(d in state.opened for d in DOORS):
                    return "the cabinet is closed: both doors must be held open first"
                if state.location[obj] == self.coaster[obj]:
                    return f"{obj} is already on its coaster"
                nxt = self._next_object(state)
                if obj != nxt:
                    return f"the order is {' then '.join(self.order)}: {nxt} comes first"
            return None
        if act.verb == "OPEN":
            bad = need_args(act, 1, "OPEN <door>")
            if bad:
                return bad
            door = act.args[0]
            if door not in DOORS:
                return f"there is no door {door!r} (doors: {', '.join(DOORS)})"
            if held != DOORS[door]:
                return f"{act.robot} is not holding {DOORS[door]} (PICK it first)"
            if door in state.opened:
                return f"{door} is already open"
            return None
        # PLACE
        bad = need_args(act, 2, "PLACE <object> <coaster>")
        if bad:
            return bad
        obj, target = act.args
        if held != obj:
            return f"{act.robot} is not holding {obj}"
        if target not in self.coaster.values():
            return f"there is no coaster {target!r} (coasters: {', '.join(self.coaster.values())})"
        if not self.scene.reaches(act.robot, target):
            return f"{target} is out of {act.robot}'s reach"
        if self.coaster[obj] != target:
            return f"the {obj} belongs on the {self.coaster[obj]}, not the {target}"
        return None

    def apply(self, state: State, rnd: Round) -> list[str]:
        events: list[str] = []
        for act in rnd.values():
            if act.verb == "PICK":
                obj = act.args[0]
                state.holding[act.robot] = obj
                if obj in self.order:
                    state.location[obj] = act.robot
                    state.done.append(f"pick {obj}")
                    events.append(f"{act.robot} took the {obj} out of the cabinet")
            elif act.verb == "OPEN":
                door = act.args[0]
                state.opened.add(door)
                state.done.append(f"open {door}")
                events.append(f"{door} is open (held by {act.robot})")
            elif act.verb == "PLACE":
                obj, target = act.args
                state.holding[act.robot] = None
                state.location[obj] = target
                state.done.append(f"place {obj} on {target}")
                events.append(f"the {obj} is on the {target}")
        return events

    def _handle_robot(self, handle: str) -> str:
        for r in self.scene.robots:
            if handle in r.reach:
                return r.name
        raise ValueError(f"no robot reaches {handle}")

    def _inside_robot(self) -> str:
        for r in self.scene.robots:
            if self.order[0] in r.reach:
                return r.name
        raise ValueError("no robot reaches the cabinet's inside")

    def policy(self, state: State) -> Round:
        rnd = self.wait_all()
        for door, handle in DOORS.items():
            r = self._handle_robot(handle)
            if state.holding[r] != handle:
                rnd[r] = Act(r, "PICK", (handle,))
            elif door not in state.opened:
                rnd[r] = Act(r, "OPEN", (door,))
        if all(d in state.opened for d in DOORS):
            inside = self._inside_robot()
            held = state.holding[inside]
            nxt = self._next_object(state)
            if held in self.order:
                rnd[inside] = Act(inside, "PLACE", (held, self.coaster[held]))
            elif nxt is not None:
                rnd[inside] = Act(inside, "PICK", (nxt,))
        return rnd

    def explain(self, state: State, rnd: Round) -> str:
        if not all(d in state.opened for d in DOORS):
            return (
                "Nothing inside the cabinet can be reached until both doors are open, and a "
                "door only opens for the robot holding its handle."
            )
        return (
            f"Both doors are held open, so {self._inside_robot()} can work inside, "
            f"following the order {' then '.join(self.order)} and each object's own coaster."
        )

    def key_order(self) -> list[str] | None:
        return self.order

    def vocabulary(self) -> set[str]:
        return super().vocabulary() | set(DOORS)

    def feasible(self, act: Act) -> bool:
        if act.verb == "PICK" and act.args:
            return self.scene.reaches(act.robot, act.args[0])
        if act.verb == "OPEN" and act.args and act.args[0] in DOORS:
            return self.scene.reaches(act.robot, DOORS[act.args[0]])
        if act.verb == "PLACE" and len(act.args) == 2:
            obj, target = act.args
            return self.scene.reaches(act.robot, target) and self.coaster.get(obj) == target
        return True

    def mistakes(self, state: State) -> list[Round]:
        out: list[Round] = []
        inside = self._inside_robot()
        first, second = self.order[0], self.order[-1]
        nxt = self._next_object(state) or first
        other = second if nxt == first else first
        pol = self.policy(state)
        # the inside robot grabs too early, or the wrong object
        rnd = dict(pol)
        rnd[inside] = Act(inside, "PICK", (nxt if state.opened != set(DOORS) else other,))
        out.append(rnd)
        # a handle robot lets go / swaps handles
        handles = list(DOORS.values())
        r0, r1 = self._handle_robot(handles[0]), self._handle_robot(handles[1])
        rnd = dict(pol)
        rnd[r0] = Act(r0, "PICK", (handles[1],))
        rnd[r1] = Act(r1, "PICK", (handles[0],))
        out.append(rnd)
        held = state.holding[inside]
        if held in self.order:
            wrong = next(c for c in self.coaster.values() if c != self.coaster[held])
            rnd = dict(pol)
            rnd[inside] = Act(inside, "PLACE", (held, wrong))
            out.append(rnd)
        return out

    def describe(self, state: State) -> str:
        lines = ["Robots:"]
        for r in self.scene.robots:
            held = state.holding[r.name]
            lines.append(
                f"- {r.name} at {fmt_pos(r.position)}; reaches: {', '.join(r.reach)}; "
                f"holding: {held or 'nothing'}."
            )
        lines.append("Things:")
        for t in self.scene.things:
            where = state.location.get(t.name, t.place)
            if t.name in HANDLES:
                door = HANDLES[t.name]
                status = "open" if door in state.opened else "closed"
                lines.append(f"- {t.name} at {fmt_pos(t.position)} ({door}: {status})")
            elif t.name in self.order:
                lines.append(f"- {t.name}: {'inside the cabinet' if where == 'cabinet' else where}")
            else:
                lines.append(f"- {t.name} on the table at {fmt_pos(t.position)}")
        return "\n".join(lines)

    def goal_text(self) -> str:
        first, second = self.order
        return (
            "Open both cabinet doors (left_door, right_door) by their handles and keep them "
            f"open, then place the {first} on the {self.coaster[first]} and after it the "
            f"{second} on the {self.coaster[second]}."
        )

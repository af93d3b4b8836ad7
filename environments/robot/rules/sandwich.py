"""Sandwich: two robots stack a recipe on the cutting board, bottom first.

Each robot reaches the food on its side of the table (and what lies in the
middle); both reach the cutting_board. A robot PICKs an item, then PUTs it on
the top of the stack (or on the cutting_board when it is empty). Only one
item can be stacked per round. Stacking an item that is not the next one in
the recipe ruins the sandwich: the task ends as a failure. Sub-tasks: each
recipe item stacked, in order.
"""

from __future__ import annotations

from typing import ClassVar

from environments.robot.rules.base import Rules, need_args
from environments.robot.scene import Act, Round, State, fmt_pos

BOARD = "cutting_board"


class SandwichRules(Rules):
    kind = "sandwich"
    verbs: ClassVar[dict[str, str]] = {
        "PICK <food>": "grasp a food item in your reach (gripper must be empty)",
        "PUT <food> <target>": "put the held food on the top of the stack: the cutting_board "
        "when it is empty, else the item currently on top",
        "WAIT": "do nothing this round",
    }

    @property
    def recipe(self) -> list[str]:
        return list(self.scene.goal["recipe"])

    @property
    def foods(self) -> list[str]:
        return [t.name for t in self.scene.things if t.name != BOARD]

    def initial(self) -> State:
        return State(
            holding={r: None for r in self.robots}, location={f: "table" for f in self.foods}
        )

    def subtasks(self) -> list[str]:
        return [f"stack {item}" for item in self.recipe]

    def completed(self, state: State) -> list[str]:
        out: list[str] = []
        for have, want in zip(state.stack, self.recipe, strict=False):
            if have != want:
                break
            out.append(f"stack {want}")
        return out

    def _top(self, state: State) -> str:
        return state.stack[-1] if state.stack else BOARD

    def check_act(self, state: State, act: Act, rnd: Round) -> str | None:
        held = state.holding[act.robot]
        if act.verb == "WAIT":
            return need_args(act, 0, "WAIT")
        if act.verb == "PICK":
            bad = need_args(act, 1, "PICK <food>")
            if bad:
                return bad
            food = act.args[0]
            if food not in self.foods:
                return f"there is no food {food!r} on the table"
            if state.location[food] == "stack":
                return f"{food} is already on the sandwich"
            if held is not None:
                return f"{act.robot} is already holding {held}"
            if not self.scene.reaches(act.robot, food):
                return f"{food} is out of {act.robot}'s reach"
            holder = [r for r, h in state.holding.items() if h == food]
            if holder:
                return f"{holder[0]} is holding {food}"
            if any(a.verb == "PICK" and a.args == (food,) for a in rnd.values() if a is not act):
                return f"two robots cannot pick {food} in the same round"
            return None
        bad = need_args(act, 2, "PUT <food> <target>")
        if bad:
            return bad
        food, target = act.args
        if held != food:
            return f"{act.robot} is not holding {food}"
        top = self._top(state)
        if target != top:
            return f"the top of the stack is {top}, not {target}"
        if any(a.verb == "PUT" for a in rnd.values() if a is not act):
            return "only one item can be stacked per round"
        return None

    def apply(self, state: State, rnd: Round) -> list[str]:
        events: list[str] = []
        for act in rnd.values():
            if act.verb == "PICK":
                state.holding[act.robot] = act.args[0]
                state.location[act.args[0]] = act.robot
            elif act.verb == "PUT":
                food = act.args[0]
                state.holding[act.robot] = None
                state.location[food] = "stack"
                want = (
                    self.recipe[len(state.stack)] if len(state.stack) < len(self.recipe) else None
                )
                state.stack.append(food)
                if food != want:
                    state.failure = (
                        f"{food} was stacked but the recipe needs {want or 'nothing more'} "
                        "there: the sandwich is ruined"
                    )
                    events.append(state.failure)
                else:
                    state.done.append(f"stack {food}")
                    events.append(f"{food} is now on top of the sandwich")
        return events

    def owner(self, food: str) -> str:
        """The robot responsible for an item: the only one reaching it, else by recipe slot."""
        reach = [r for r in self.robots if self.scene.reaches(r, food)]
        if len(reach) == 1:
            return reach[0]
        idx = self.recipe.index(food) if food in self.recipe else 0
        return reach[idx % len(reach)] if reach else self.robots[0]

    def policy(self, state: State) -> Round:
        rnd = self.wait_all()
        k = len(state.stack)
        if k >= len(self.recipe) or state.failure is not None:
            return rnd
        need = self.recipe[k]
        for r in self.robots:
            held = state.holding[r]
            if held == need:
                rnd[r] = Act(r, "PUT", (need, self._top(state)))
            elif held is None:
                for food in self.recipe[k:]:
                    if self.owner(food) == r and state.location[food] == "table":
                        rnd[r] = Act(r, "PICK", (food,))
                        break
                    if self.owner(food) == r:
                        break
        return rnd

    def explain(self, state: State, rnd: Round) -> str:
        k = len(state.stack)
        need = self.recipe[k] if k < len(self.recipe) else "nothing"
        return (
            f"The recipe needs {need} next on top of {self._top(state)}; each robot handles "
            "the items on its own side, and the other robot picks its next item meanwhile."
        )

    def key_order(self) -> list[str] | None:
        return self.recipe

    def feasible(self, act: Act) -> bool:
        if act.verb == "PICK" and act.args:
            return self.scene.reaches(act.robot, act.args[0])
        return True

    def mistakes(self, state: State) -> list[Round]:
        out: list[Round] = []
        k = len(state.stack)
        later = self.recipe[k + 1 :]
        pol = self.policy(state)
        for r in self.robots:
            held = state.holding[r]
            if held is not None and held != (self.recipe[k] if k < len(self.recipe) else None):
                rnd = dict(pol)
                rnd[r] = Act(r, "PUT", (held, self._top(state)))
                out.append(rnd)
            if held is None:
                far = [f for f in self.foods if state.location[f] == "table"]
                far = [f for f in far if not self.scene.reaches(r, f)]
                if far:
                    rnd = dict(pol)
                    rnd[r] = Act(r, "PICK", (far[0],))
                    out.append(rnd)
                extra = [f for f in self.foods if f not in self.recipe]
                extra = [f for f in extra if self.scene.reaches(r, f)]
                if extra:
                    rnd = dict(pol)
                    rnd[r] = Act(r, "PICK", (extra[0],))
                    out.append(rnd)
        if later:
            rnd = dict(pol)
            for r, act in pol.items():
                if act.verb == "PICK" and state.holding[r] is None:
                    cand = [f for f in later if self.scene.reaches(r, f) and f != act.args[0]]
                    if cand:
                        rnd[r] = Act(r, "PICK", (cand[0],))
            out.append(rnd)
        return out

    def describe(self, state: State) -> str:
        lines = ["Robots:"]
        for r in self.scene.robots:
            lines.append(
                f"- {r.name} at {fmt_pos(r.position)}; reaches: {', '.join(r.reach)}; "
                f"holding: {state.holding[r.name] or 'nothing'}."
            )
        board = self.scene.thing(BOARD)
        pos = fmt_pos(board.position) if board else "the middle"
        stack = ", ".join(state.stack) if state.stack else "empty"
        lines.append(f"Cutting board at {pos}; stack (bottom first): {stack}.")
        lines.append("Food on the table:")
        for t in self.scene.things:
            if t.name != BOARD and state.location[t.name] == "table":
                lines.append(f"- {t.name} at {fmt_pos(t.position)}")
        return "\n".join(lines)

    def goal_text(self) -> str:
        return (
            "Make a sandwich on the cutting_board by stacking, bottom first: "
            f"{', '.join(self.recipe)}. Any other item on the board ruins it."
        )

"""What every task kind defines: preconditions, effects, sub-tasks, a policy.

A round is checked as a whole before anything moves (robots act at the same
time, so one robot's precondition may depend on what another does in the same
round: Bob can only SWEEP while Alice WAITs with the dustpan). A rejected
round changes nothing. The policy is the optimal next round from any
reachable state; the simulated expert uses it, and the tests drive every
generated instance with it to prove each one is solvable within its limit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from environments.robot.scene import Act, Round, Scene, State

#: cap on look-ahead roll-outs (far above any round limit)
HORIZON = 80
#: states whose distance one Rules instance remembers (the expert judges the
#: same states over and over: every coalition of a task replays the same rounds)
_DISTANCE_MEMO = 4096


def state_key(state: State) -> tuple[object, ...]:
    """Everything a state holds, in iteration order (equal keys: equal behaviour)."""
    return (
        tuple(state.at.items()),
        tuple(state.holding.items()),
        tuple(state.location.items()),
        tuple(state.stack),
        tuple(state.opened),
        tuple(state.done),
        state.failure,
        state.rounds,
    )


class Rules(ABC):
    """The rules of one task kind, bound to one scene."""

    kind: ClassVar[str]
    #: action syntax -> what it does, shown to the agent in the guide
    verbs: ClassVar[dict[str, str]]

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.robots = scene.robot_names
        # rules are a pure function of the (frozen) scene, so these are safe to keep
        self._verb_names = [v.split()[0] for v in self.verbs]
        self._subtask_count: int | None = None
        self._distance: dict[tuple[object, ...], int] = {}

    # --- the world -----------------------------------------------------------------
    @abstractmethod
    def initial(self) -> State:
        """The state before the first round."""

    @abstractmethod
    def subtasks(self) -> list[str]:
        """The sub-tasks, in the order they are meant to be completed."""

    def completed(self, state: State) -> list[str]:
        """Sub-tasks completed so far (the reward counts them)."""
        return list(state.done)

    @abstractmethod
    def check_act(self, state: State, act: Act, rnd: Round) -> str | None:
        """Why ``act`` cannot happen in this round (None when it can)."""

    @abstractmethod
    def apply(self, state: State, rnd: Round) -> list[str]:
        """Apply a checked round; returns one line per notable effect."""

    @abstractmethod
    def policy(self, state: State) -> Round:
        """The optimal next round (every robot exactly once)."""

    @abstractmethod
    def describe(self, state: State) -> str:
        """The scene as the agent sees it: positions, reach, holdings, progress."""

    @abstractmethod
    def goal_text(self) -> str:
        """The task's goal in one or two sentences."""

    # --- vocabulary, used by the guide and the expert ------------------------------
    def vocabulary(self) -> set[str]:
        """Every word an action argument may be."""
        words = {t.name for t in self.scene.things}
        for r in self.scene.robots:
            words.update(r.reach)
        return words

    def key_order(self) -> list[str] | None:
        """Objects whose order matters (a plan must mention them in this order)."""
        return None

    @abstractmethod
    def feasible(self, act: Act) -> bool:
        """Whether this robot could ever do this action (tool and reach): judges plans."""

    def mistakes(self, state: State) -> list[Round]:
        """Plausible wrong rounds for this state (task specific)."""
        return []

    def explain(self, state: State, rnd: Round) -> str:
        """Why the policy's round is right, in a sentence or two."""
        return ""

    # --- derived -------------------------------------------------------------------
    def check(self, state: State, acts: list[Act]) -> list[str]:
        """Every reason the round cannot be executed; empty when it can."""
        problems: list[str] = []
        rnd: Round = {}
        for act in acts:
            if act.robot not in self.robots:
                problems.append(
                    f"{act}: there is no robot named {act.robot!r} "
                    f"(robots: {', '.join(self.robots)})"
                )
            elif act.robot in rnd:
                problems.append(f"{act}: {act.robot} has more than one action in this round")
            else:
                rnd[act.robot] = act
        missing = [r for r in self.robots if r not in rnd]
        if missing:
            problems.append(
                f"every robot needs exactly one action per round; missing: {', '.join(missing)}"
            )
        verbs = self._verb_names
        for act in rnd.values():
            if act.verb not in verbs:
                problems.append(
                    f"{act}: unknown action {act.verb!r} for this task (use {', '.join(verbs)})"
                )
                continue
            why = self.check_act(state, act, rnd)
            if why:
                problems.append(f"{act} is invalid: {why}")
        return problems

    def verb_names(self) -> list[str]:
        return list(self._verb_names)

    def is_complete(self, state: State) -> bool:
        if self._subtask_count is None:
            self._subtask_count = len(self.subtasks())
        return len(self.completed(state)) == self._subtask_count

    def reward(self, state: State) -> float:
        total = len(self.subtasks())
        return len(self.completed(state)) / total if total else 0.0

    def rollout(self, state: State, limit: int = HORIZON) -> list[Round] | None:
        """The policy's rounds from ``state`` to completion; None if it gets stuck."""
        s = state.copy()
        rounds: list[Round] = []
        while not self.is_complete(s):
            if s.failure is not None or len(rounds) >= limit:
                return None
            rnd = self.policy(s)
            if self.check(s, list(rnd.values())):
                return None
            self.apply(s, rnd)
            s.rounds += 1
            rounds.append(rnd)
        return rounds

    def distance(self, state: State) -> int:
        """Rounds the policy needs from ``state`` (a large number if it cannot finish)."""
        key = state_key(state)
        known = self._distance.get(key)
        if known is None:
            plan = self.rollout(state)
            known = HORIZON * 2 if plan is None else len(plan)
            if len(self._distance) >= _DISTANCE_MEMO:
                self._distance.clear()
            self._distance[key] = known
        return known

    def is_good(self, state: State, rnd: Round, base: int | None = None) -> bool:
        """A round is good when it is valid, complete and brings the goal closer.

        ``base`` is ``distance(state)`` when the caller already knows it.
        """
        if set(rnd) != set(self.robots) or self.check(state, list(rnd.values())):
            return False
        after = state.copy()
        self.apply(after, rnd)
        if after.failure is not None:
            return False
        return self.distance(after) < (self.distance(state) if base is None else base)

    def wait_all(self) -> Round:
        return {r: Act(r, "WAIT") for r in self.robots}


def need_args(act: Act, n: int, syntax: str) -> str | None:
    if len(act.args) != n:
        return f"expected '{syntax}'"
    return None

"""What the expert knows about one prompt: the goal, the catalogue and the page.

The page is rebuilt by replaying the history's executed actions on a fresh
:class:`Session` over the same catalogue the environment uses, so expert and
environment always agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from agentbus import PastRound, Task, rounds_so_far
from agentbus import prompt_sections as sections
from environments.shopping.catalogue import Catalogue, normalise
from environments.shopping.goal import Goal
from environments.shopping.pages import State
from environments.shopping.policy import good_actions, is_good
from environments.shopping.session import ACTION_LIMIT, Session
from environments.shopping.tasks import catalogue_of, goal_of

_PLAN_OPTIONS = re.compile(r"options:\s*([^;\n]*)", re.IGNORECASE)


def plan_options(plan: str) -> list[str] | None:
    """The option values a plan's checklist names (None when it has no checklist)."""
    m = _PLAN_OPTIONS.search(plan)
    if m is None:
        return None
    values = []
    for pair in m.group(1).split(","):
        _, _, value = pair.partition("=")
        if value.strip():
            values.append(normalise(value))
    return values


@dataclass
class Situation:
    task: Task
    goal: Goal
    catalogue: Catalogue
    parts: dict[str, str]
    session: Session
    #: states before the first round and after each round
    states: list[State] = field(default_factory=list)
    last: PastRound | None = None
    #: the state right after the latest step that asked for a reflection
    after_flagged: State | None = None

    @property
    def state(self) -> State:
        return self.session.state

    @property
    def before_last(self) -> State:
        return self.states[-2] if len(self.states) >= 2 else self.states[-1]

    def good(self, state: State | None = None) -> list[str]:
        return good_actions(state or self.state, self.catalogue, self.goal)

    @property
    def plan_goal(self) -> Goal:
        """The goal as the plan's checklist states it: a reasoner trusts the plan's options.

        A plan that forgot an option makes even a correct reasoner buy without
        it; attributes, type and budget it still checks against the task.
        """
        listed = plan_options(self.parts.get("Plan", ""))
        if listed is None:
            return self.goal
        kept = tuple((g, v) for g, v in self.goal.options if normalise(v) in listed)
        return replace(self.goal, options=kept)

    def planned_good(self) -> list[str]:
        """The good actions as a reasoner that trusts the plan sees them."""
        return good_actions(self.state, self.catalogue, self.plan_goal)

    def judge(self, action: str | None, state: State | None = None) -> bool:
        return is_good(action, state or self.state, self.catalogue, self.goal)

    @property
    def actions_left(self) -> int:
        return self.session.limit - self.session.actions


def understand(task: Task, user: str) -> Situation:
    parts = sections(user)
    catalogue = catalogue_of(str(task.data["catalogue"]))
    goal = goal_of(task)
    session = Session(catalogue, goal, limit=int(task.data.get("action_limit", ACTION_LIMIT)))
    past = rounds_so_far(parts)
    states = [session.state.copy()]
    after_flagged: State | None = None
    for r in past:
        if r.executed and not session.done:
            result = session.act(r.action)
            if not result.valid or result.retreat:
                after_flagged = session.state.copy()
        elif not r.executed:
            session.actions += 1  # the episode counts an unparseable answer as a step
            after_flagged = session.state.copy()
        states.append(session.state.copy())
    return Situation(
        task=task,
        goal=goal,
        catalogue=catalogue,
        parts=parts,
        session=session,
        states=states,
        last=past[-1] if past else None,
        after_flagged=after_flagged,
    )

"""The shopping environment adapter: WebShop-style pages, search and click.

``setup`` builds the catalogue and its BM25 index once; every episode gets
its own :class:`Session` over that shared, read-only catalogue. A step is one
``search[...]`` or ``click[...]``; the feedback is what happened and the new
page. The episode ends on ``Buy Now`` (reward: WebShop's formula) or after 15
actions (reward 0). Invalid actions, empty result lists and walking back from
a page ask for a reflection.
"""

from __future__ import annotations

from typing import ClassVar

from agentbus import (
    ActionProposed,
    Environment,
    EnvSetup,
    Feedback,
    Observation,
    Score,
    Task,
    TaskSource,
)
from environments.shopping.catalogue import Catalogue
from environments.shopping.guide import shopping_guide
from environments.shopping.session import ACTION_LIMIT, Session
from environments.shopping.tasks import catalogue_of, goal_of, tasks_from


class ShoppingEnvironment(Environment):
    """Find and buy the product a customer describes, in at most 15 actions."""

    name: ClassVar[str] = "shopping"
    default_max_steps: ClassVar[int] = ACTION_LIMIT
    action_format = "command"

    def __init__(self, catalogue: Catalogue | None = None) -> None:
        self.catalogue = catalogue
        self.session: Session | None = None

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        catalogue, tasks = tasks_from(source)
        return EnvSetup(tasks=tasks, factory=lambda: cls(catalogue))

    def guide(self, task: Task) -> dict[str, str]:
        return shopping_guide()

    async def reset(self, task: Task) -> Observation:
        catalogue = self.catalogue or catalogue_of(str(task.data["catalogue"]))
        limit = int(task.data.get("action_limit", ACTION_LIMIT))
        self.session = Session(catalogue, goal_of(task), limit=limit)
        text = (
            f"{self.session.page()}\n\nThe shop has {len(catalogue)} products. "
            f"You have {limit} actions."
        )
        return Observation(text=text, data={"page": "search", "actions": 0, "limit": limit})

    def _session(self) -> Session:
        if self.session is None:
            raise RuntimeError("shopping environment: step() before reset()")
        return self.session

    async def step(self, action: ActionProposed) -> Feedback:
        s = self._session()
        result = s.act(action.text)
        success = s.done and s.reward >= 1.0 - 1e-9
        return Feedback(
            text=result.text,
            done=result.done,
            success=success if result.done else None,
            reward=s.reward,
            valid=result.valid,
            needs_reflection=not result.done and (not result.valid or result.retreat),
            data={"page": s.state.page, "actions": s.actions, "limit": s.limit},
        )

    async def score(self) -> Score:
        s = self._session()
        details: dict[str, object] = {
            "actions": s.actions,
            "bought": s.purchase[0] if s.purchase else None,
            "target": s.goal.asin,
        }
        if s.parts is not None:
            p = s.parts
            details.update(
                type_factor=p.type_factor,
                attributes=f"{p.attributes_matched}/{p.attributes}",
                options=f"{p.options_matched}/{p.options}",
                price_ok=p.price_ok,
            )
        return Score(reward=s.reward, success=s.reward >= 1.0 - 1e-9, details=details)

"""One shopping :class:`~agentbus.Task` from a goal and the shopper's sentence.

Both task sources build their tasks here: the seeded generator
(:mod:`environments.shopping.tasks`) and the WebShop loader
(:mod:`environments.shopping.webshop`). It lives apart from both so that the
loader and the generator's module do not import each other.
"""

from __future__ import annotations

from agentbus import Task
from environments.shopping.goal import Goal
from environments.shopping.session import ACTION_LIMIT

ENV = "shopping"


def instruction_for(task_id: str, sentence: str) -> str:
    return f"WebShop task {task_id}. Instruction: {sentence}"


def make_task(task_id: str, key: str, goal: Goal, sentence: str, phrasing: str) -> Task:
    return Task(
        id=task_id,
        env=ENV,
        instruction=instruction_for(task_id, sentence),
        data={"catalogue": key, "phrasing": phrasing, "action_limit": ACTION_LIMIT},
        hidden={"goal": goal.to_json()},
    )

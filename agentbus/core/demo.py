"""A tiny built-in environment and agent, used by the core's tests and benchmarks.

The countdown task: the environment holds a number; the agent must bring it
to zero by subtracting 1, 2 or 3 per step. It needs no LLM, so it exercises
the bus, the actors, the episode and the runtime on their own.

It is not an evaluation environment: it has no task loader, no prompts for
the LLM modules and no simulated expert, so there is nothing for a coalition
of models to be compared on. So it is not registered as a plugin (``--env
demo`` is an unknown environment, and ``agentbus list`` does not show it):
tests and benchmarks import it from here and build its tasks with
:func:`demo_tasks`.
"""

from __future__ import annotations

import random

from agentbus.core.actor import Actor, on
from agentbus.core.environment import Environment, Score, Task
from agentbus.core.messages import ActionProposed, Feedback, Observation, TaskStarted


class CountdownEnvironment(Environment):
    """Reach exactly zero by subtracting 1..3 per step."""

    name = "demo"
    default_max_steps = 20

    def __init__(self) -> None:
        self.value = 0
        self.reached = False

    async def reset(self, task: Task) -> Observation:
        self.value = int(task.data["start"])
        self.reached = False
        return Observation(text=f"value={self.value}", data={"value": self.value})

    async def step(self, action: ActionProposed) -> Feedback:
        try:
            amount = int(action.text)
        except ValueError:
            return Feedback(text=f"not a number: {action.text!r}", valid=False)
        if amount not in (1, 2, 3):
            return Feedback(text="subtract 1, 2 or 3", valid=False)
        self.value -= amount
        self.reached = self.value == 0
        done = self.value <= 0
        return Feedback(
            text=f"value={self.value}",
            done=done,
            success=self.reached if done else None,
            data={"value": self.value},
        )

    async def score(self) -> Score:
        return Score(reward=1.0 if self.reached else 0.0, success=self.reached)


class CounterActor(Actor):
    """Subtracts a random amount, preferring the exact remainder when it can."""

    publishes = (ActionProposed,)

    def __init__(self, greedy: float = 0.8, seed: int = 0) -> None:
        self.greedy = greedy
        self.rng = random.Random(seed)

    @on(TaskStarted)
    async def start(self, msg: TaskStarted) -> None:
        self.rng.seed(f"{self.rng.random()}:{msg.task_id}")

    @on(Observation, Feedback)
    async def act(self, msg: Observation | Feedback) -> ActionProposed | None:
        if isinstance(msg, Feedback) and msg.done:
            return None
        value = int(msg.data.get("value", 0))
        if value <= 3 and self.rng.random() < self.greedy:
            amount = value
        else:
            amount = self.rng.choice((1, 2, 3))
        return ActionProposed(text=str(amount))


def demo_tasks(n: int, seed: int = 0) -> list[Task]:
    rng = random.Random(seed)
    return [
        Task(
            id=f"demo-{i}",
            env="demo",
            instruction="Bring the value to 0.",
            data={"start": rng.randint(5, 15)},
        )
        for i in range(n)
    ]

"""The robot environment adapter: rounds of robot actions in, feedback out.

``reset`` shows the scene; each ``step`` takes the action module's text (one
or more ``EXECUTE`` blocks), runs the rounds through :class:`World` and
describes what happened, the sub-task progress and the new scene. The task
ends when every sub-task is done, on a fatal mistake, or at the round limit.
A step with a rejected round asks for reflection.
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
from environments.robot.guide import build_guide
from environments.robot.rules import rules_for
from environments.robot.runner import World
from environments.robot.tasks import scene_of, tasks_from


class RobotEnvironment(Environment):
    """RoCo-style multi-robot collaboration (sweep, cabinet, sandwich, sort)."""

    name: ClassVar[str] = "robot"
    #: agent steps; every generated round limit is below this, leaving room for retries
    default_max_steps: ClassVar[int] = 24
    action_format = "command"

    def __init__(self) -> None:
        self.world: World | None = None

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        return EnvSetup(tasks=tasks_from(source), factory=cls)

    def guide(self, task: Task) -> dict[str, str]:
        return build_guide(rules_for(scene_of(task)))

    async def reset(self, task: Task) -> Observation:
        self.world = World(scene_of(task))
        w = self.world
        text = "\n".join(
            [
                f"Goal: {w.rules.goal_text()}",
                w.rules.describe(w.state),
                w.progress_line(),
                f"Rounds used: 0 of at most {w.scene.round_limit}.",
            ]
        )
        return Observation(text=text, data=self._data())

    def _world(self) -> World:
        if self.world is None:
            raise RuntimeError("robot environment: step() before reset()")
        return self.world

    def _data(self) -> dict[str, object]:
        w = self._world()
        return {
            "rounds": w.state.rounds,
            "round_limit": w.scene.round_limit,
            "subtasks_done": w.rules.completed(w.state),
            "subtasks": w.rules.subtasks(),
            "reward": w.reward,
        }

    async def step(self, action: ActionProposed) -> Feedback:
        w = self._world()
        if w.done:
            return Feedback(text="The task has already ended.", done=True, success=w.complete)
        result = w.execute(action.text)
        done = w.done
        return Feedback(
            text=w.report(result),
            done=done,
            success=w.complete if done else None,
            reward=w.reward,
            valid=not result.invalid,
            needs_reflection=result.invalid,
            data={
                **self._data(),
                "executed": len(result.executed),
                "proposed": result.proposed,
                "rejected": result.rejected,
            },
        )

    async def score(self) -> Score:
        w = self._world()
        return Score(
            reward=w.reward,
            success=w.complete,
            details={
                "kind": w.scene.kind,
                "rounds": w.state.rounds,
                "round_limit": w.scene.round_limit,
                "subtasks_done": len(w.rules.completed(w.state)),
                "subtasks": len(w.rules.subtasks()),
                "failure": w.state.failure,
            },
        )

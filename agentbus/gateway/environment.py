"""The environment of an external agent's episode: one task, one result, one verdict.

The agent's whole run is the episode's single action: the driver proposes
``{"result": ...}`` (or ``{"error": ...}`` when the agent failed), and this
environment scores it against the task's hidden ``answer`` with the run's
scorer (:mod:`agentbus.gateway.scorers`), so the verdict comes from
agentbus, not from anything the agent prints, unless its result carries its
own ``reward`` (the user's choice of where the verdict comes from).
"""

from __future__ import annotations

from typing import Any, ClassVar

import orjson

from agentbus.core.environment import Environment, EnvSetup, Score, Task, TaskSource
from agentbus.core.errors import UserError
from agentbus.core.messages import ActionProposed, Feedback, Observation
from agentbus.core.outcome import is_agent_failure
from agentbus.gateway.scorers import Scorer, load_scorer, verdict
from agentbus.gateway.tasks import ENV, expected, load_jsonl, payload


class ExternalEnvironment(Environment):
    """``--env external``: tasks from a JSONL file, scored by the run's scorer."""

    name: ClassVar[str] = ENV
    default_max_steps: ClassVar[int] = 1

    def __init__(self, scorer: Scorer | str | None = None) -> None:
        self.scorer = load_scorer(scorer) if isinstance(scorer, str) else scorer
        self.task: Task | None = None
        self._score = Score()

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        if source.dataset is None:
            raise UserError(
                "an external agent needs tasks: --dataset FILE.jsonl (one JSON object a line, "
                'each with an "id"), or --env with a built-in environment'
            )
        return EnvSetup(load_jsonl(source.dataset, source.limit), cls)

    async def reset(self, task: Task) -> Observation:
        self.task = task
        return Observation(text=task.instruction, data={"task": payload(task)})

    async def step(self, action: ActionProposed) -> Feedback:
        assert self.task is not None
        try:
            outcome = orjson.loads(action.text)
        except orjson.JSONDecodeError:
            outcome = {"error": "unreadable result"}
        details: dict[str, Any] = {"gateway": outcome.get("gateway", {})}
        if "answer" in self.task.hidden:
            details["expected"] = self.task.hidden["answer"]
        result = outcome.get("result")
        if not isinstance(result, dict):
            error = str(outcome.get("error", "no result"))
            kind = outcome.get("kind")
            ending: Any = kind if is_agent_failure(kind) else "agent_no_result"
            details["agent_error"] = error
            if outcome.get("saturated"):
                details["saturated"] = outcome["saturated"]
            details["verdict"] = ending
            self._score = Score(
                reward=0.0, success=False, details=details, ending=ending, reason=error
            )
        else:
            reward, success, how = verdict(result, expected(self.task), self.scorer)
            details["scored_by"] = how
            details["result"] = result
            details["verdict"] = "right" if success else ("partly right" if reward else "wrong")
            self._score = Score(reward=reward, success=success, details=details)
        return Feedback(
            text="scored", done=True, success=self._score.success, reward=self._score.reward
        )

    async def score(self) -> Score:
        return self._score


__all__ = ["ExternalEnvironment"]

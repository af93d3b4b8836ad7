"""The simulated expert for the robot environment (``agentbus.sim.expert.Expert``).

It finds the task from the prompt's ``## Task`` section, rebuilds the true
state by replaying the history's actions on the initial scene, and knows the
correct next round from the optimal policy. It judges the upstream plan,
thought and reflection against that state and writes answers per role. The
action module, when correct, writes the right round even under a wrong
thought; when wrong it follows a wrong thought, or makes a mistake of its own.
"""

from __future__ import annotations

import random
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from agentbus import (
    ChatMessage,
    ExpertQuery,
    Moment,
    RoleAnswer,
    RoundsExpert,
    Task,
    Verdict,
    task_spread,
)
from environments.robot.prompt import sections
from environments.robot.rules import Rules, rules_for
from environments.robot.situation import Replays, Situation, understand
from environments.robot.tasks import ENV, scene_of
from environments.robot.writer import (
    fence,
    malformed_action,
    plan_good,
    plan_text,
    reflection_text,
    thought_text,
    wrong_plan,
    wrong_reflection,
    wrong_round,
    wrong_thought,
)
from environments.skill import felt

_TASK_ID = re.compile(r"Robot collaboration task (\S+) \(kind:")
#: how many tasks' rules and replays to keep
_CACHE = 256


#: logit penalty of a scene by its kind, for every model alike
KIND_DIFFICULTY: dict[str, float] = {"sweep": 1.0, "cabinet": 1.5, "sandwich": 1.5, "sort": 2.0}
#: standard deviation of a scene's own part of the penalty (fixed per task id)
TASK_SPREAD = 1.5


def difficulty(task: Task) -> float:
    """How hard a robot scene is for any model, in logits.

    Scenes of one kind differ too (more objects, an awkward layout), so a
    fixed per-scene draw is added: the weak model still solves the easy ones
    and the strong model fails some hard ones.
    """
    base = KIND_DIFFICULTY.get(str(task.data.get("kind")), 1.5)
    return base + task_spread(task.id, TASK_SPREAD, "robot")


class RobotExpert(RoundsExpert[Situation]):
    """Optimal-policy expert for sweep, cabinet, sandwich and sort tasks."""

    env = ENV
    #: whether a correct actor also overrides a rule-abiding but misguided thought
    #: (False: only reasoning can catch those, which makes reasoning the MVP here,
    #: as in CapaBench's robot results; True: a correct actor always writes the best round)
    repair_strategy: bool = False

    answers = {
        "planning": RoleAnswer(
            "Plan: get the robots to finish the task together.",
            lambda sit: plan_text(sit.rules),
            lambda sit, rng: wrong_plan(sit.rules, rng),
        ),
        "reasoning": RoleAnswer(
            "Let me look at the robots again. The scene has several objects on it.",
            lambda sit: thought_text(sit.rules, sit.state),
            lambda sit, rng: wrong_thought(sit.rules, sit.state, rng),
        ),
        "reflection": RoleAnswer(
            "Something went wrong in the last step.", reflection_text, wrong_reflection
        ),
    }
    idle = "I will coordinate the robots one round at a time."

    def __init__(self, repair_strategy: bool | None = None) -> None:
        super().__init__()
        if repair_strategy is not None:
            self.repair_strategy = repair_strategy
        self._by_id: dict[str, Task] = {}
        #: task id -> its scene's rules (they remember the distances they computed)
        #: and the states its prompts' histories lead to
        self._rules: OrderedDict[str, tuple[Rules, Replays]] = OrderedDict()

    @staticmethod
    def read_sections(text: str) -> dict[str, str]:
        return sections(text)

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        tasks = list(tasks)
        super().add_tasks(tasks)
        self._by_id.update((t.id, t) for t in tasks if t.env == ENV)

    def find_task(self, messages: Sequence[ChatMessage]) -> Task | None:
        """The task by its instruction, else by the id its ``## Task`` section names."""
        task = super().find_task(messages)
        if task is None:
            user = "\n".join(m["content"] for m in messages if m["role"] != "system")
            m = _TASK_ID.search(sections(user).get("Task", ""))
            task = self._by_id.get(m.group(1)) if m else None
        return task

    def rules(self, task: Task) -> tuple[Rules, Replays]:
        """The task's rules and replay memo, made once per task (scene validation,
        roll-outs and history replays are the expert's costly parts)."""
        known = self._rules.get(task.id)
        if known is None:
            known = (rules_for(scene_of(task)), {})
            self._rules[task.id] = known
            if len(self._rules) > _CACHE:
                self._rules.popitem(last=False)
        else:
            self._rules.move_to_end(task.id)
        return known

    def understand(self, task: Task, user: str) -> Situation:
        rules, replays = self.rules(task)
        return understand(task, rules.scene, user, rules, replays)

    # --- judging -----------------------------------------------------------------
    def difficulty(self, query: ExpertQuery) -> float:
        return felt(difficulty(query.task), query.role)

    def plan_good(self, sit: Situation, plan: str) -> bool:
        return plan_good(sit, plan)

    def proposal_good(self, sit: Situation, text: str, moment: Moment) -> bool:
        """Is the round ``text`` proposes good in the state it was written for?

        A reflection stays in the prompt for later rounds: it is judged against
        the state right after the latest rejected step.
        """
        if moment == "last":
            return sit.good_round(text, sit.before_last)
        if moment == "advice":
            return sit.good_round(text, sit.after_rejected or sit.state)
        return sit.good_round(text)

    # --- writing -----------------------------------------------------------------
    def act(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
        """Carry out the thought; a correct actor repairs rule breaks, not strategy.

        A correct actor writes the thought's round when it obeys every rule
        (so a rule-abiding but misguided thought goes through: only reasoning
        can catch that), and the right round when the thought breaks a rule or
        proposes nothing. A wrong actor follows a wrong thought, or makes its
        own mistake (wrong robot, object or order) under a good one.
        """
        rules, state = sit.rules, sit.state
        thought = sit.proposal(sit.parts.get("Current thought", ""))
        thought_valid = bool(thought) and not rules.check(state, list(thought.values()))
        thought_ok = thought_valid and rules.is_good(state, thought)
        if verdict.correct:
            keep = thought_ok if self.repair_strategy else thought_valid
            rnd = thought if keep else rules.policy(state)
        elif thought and not thought_ok:
            rnd = thought  # misled by a wrong thought
        else:
            rnd = wrong_round(rules, state, rng, strategic=0.0)
        if verdict.malformed:
            return malformed_action(rules, rnd, rng)
        return fence(rules, rnd)

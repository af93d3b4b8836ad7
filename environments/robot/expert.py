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

from agentbus import ChatMessage, ExpertQuery, Task, Upstream, Verdict, task_spread
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
#: how many understood prompts to keep (assess and respond see the same prompt)
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


class RobotExpert:
    """Optimal-policy expert for sweep, cabinet, sandwich and sort tasks."""

    env = ENV
    #: whether a correct actor also overrides a rule-abiding but misguided thought
    #: (False: only reasoning can catch those, which makes reasoning the MVP here,
    #: as in CapaBench's robot results; True: a correct actor always writes the best round)
    repair_strategy: bool = False

    def __init__(self, repair_strategy: bool | None = None) -> None:
        if repair_strategy is not None:
            self.repair_strategy = repair_strategy
        self._by_text: dict[str, Task] = {}
        self._by_id: dict[str, Task] = {}
        self._seen: OrderedDict[tuple[str, str, str], Situation] = OrderedDict()
        #: task id -> its scene's rules (they remember the distances they computed)
        #: and the states its prompts' histories lead to
        self._rules: OrderedDict[str, tuple[Rules, Replays]] = OrderedDict()

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        for task in tasks:
            if task.env == ENV:
                self._by_text[task.instruction.strip()] = task
                self._by_id[task.id] = task

    def find_task(self, messages: Sequence[ChatMessage]) -> Task | None:
        user = "\n".join(m["content"] for m in messages if m["role"] != "system")
        body = sections(user).get("Task")
        if body is None:
            return None
        task = self._by_text.get(body.strip())
        if task is None:
            m = _TASK_ID.search(body)
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

    def situation(self, query: ExpertQuery) -> Situation:
        key = (query.task.id, query.role, query.user)
        sit = self._seen.get(key)
        if sit is None:
            rules, replays = self.rules(query.task)
            sit = understand(query.task, rules.scene, query.user, rules, replays)
            self._seen[key] = sit
            if len(self._seen) > _CACHE:
                self._seen.popitem(last=False)
        return sit

    # --- judging -----------------------------------------------------------------
    def assess(self, query: ExpertQuery) -> Upstream:
        hard = felt(difficulty(query.task), query.role)
        if query.role not in ("reasoning", "action", "reflection"):
            return Upstream(difficulty=hard)
        sit = self.situation(query)
        plan_txt = sit.parts.get("Plan")
        plan = plan_good(sit, plan_txt) if plan_txt else None
        thought: bool | None = None
        reflection: bool | None = None
        if query.role == "action" and sit.parts.get("Current thought"):
            thought = sit.good_round(sit.parts["Current thought"])
        if query.role == "reflection" and sit.last is not None and sit.last.thought:
            thought = sit.good_round(sit.last.thought, sit.before_last)
        if query.role == "reasoning" and sit.parts.get("Latest reflection"):
            text = sit.parts["Latest reflection"]
            # a reflection stays in the prompt for later rounds: judge it against the
            # state it was written for (right after the latest rejected step)
            reflection = sit.good_round(text, sit.after_rejected or sit.state)
        return Upstream(plan=plan, thought=thought, reflection=reflection, difficulty=hard)

    # --- writing -----------------------------------------------------------------
    def respond(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        if query.role == "planning":
            return self._planning(query, verdict, rng)
        if query.role not in ("reasoning", "action", "reflection"):
            return "I will coordinate the robots one round at a time."
        sit = self.situation(query)
        rules, state = sit.rules, sit.state
        if query.role == "reasoning":
            if verdict.malformed:
                return "Let me look at the robots again. The scene has several objects on it."
            if verdict.correct:
                return thought_text(rules, state)
            return wrong_thought(rules, state, rng)
        if query.role == "action":
            return self._action(sit, verdict, rng)
        if verdict.malformed:
            return "Something went wrong in the last step."
        return reflection_text(sit) if verdict.correct else wrong_reflection(sit, rng)

    def _planning(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        rules, _ = self.rules(query.task)
        if verdict.malformed:
            return "Plan: get the robots to finish the task together."
        return plan_text(rules) if verdict.correct else wrong_plan(rules, rng)

    def _action(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
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

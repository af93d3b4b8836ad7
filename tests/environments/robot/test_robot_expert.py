"""RobotExpert: its policy solves every generated instance; it judges and writes per role."""

from __future__ import annotations

import random

from agentbus.core import registry
from agentbus.core.environment import Task
from agentbus.core.messages import ActionProposed
from agentbus.sim.expert import Expert, ExpertQuery, Verdict
from environments.robot.env import RobotEnvironment
from environments.robot.expert import RobotExpert
from environments.robot.rules.base import state_key
from environments.robot.situation import understand
from environments.robot.tasks import generated_tasks, scene_of
from tests.helpers.robot_support import fenced, prompt

History = list[tuple[str, str, str]]


def expert_on(count: int, seed: int) -> tuple[RobotExpert, list[Task]]:
    """``count`` generated tasks (from ``seed``) and an expert that knows them."""
    tasks = generated_tasks(count, seed)
    ex = RobotExpert()
    ex.add_tasks(tasks)
    return ex, tasks


async def started(task: Task) -> tuple[RobotEnvironment, str]:
    """A fresh environment reset on ``task``, and its first observation."""
    env = RobotEnvironment()
    return env, (await env.reset(task)).text


def ask(
    ex: RobotExpert, task: Task, role: str, obs: str, hist: History, verdict: Verdict, **kw: str
) -> tuple[str, ExpertQuery]:
    msgs = prompt(task, role, obs, hist, **kw)
    found = ex.find_task(msgs)
    assert found is not None and found.id == task.id
    q = ExpertQuery(role=role, task=found, messages=msgs)
    return ex.respond(q, verdict, random.Random(len(hist))), q


async def test_expert_policy_solves_every_generated_instance_within_its_limit() -> None:
    ex, tasks = expert_on(120, 3)
    for task in tasks:
        env, obs = await started(task)
        hist: History = []
        plan, _ = ask(ex, task, "planning", obs, hist, Verdict(True))
        done = False
        while not done:
            thought, _ = ask(ex, task, "reasoning", obs, hist, Verdict(True), plan=plan)
            answer, q = ask(
                ex, task, "action", obs, hist, Verdict(True), plan=plan, current_thought=thought
            )
            upstream = ex.assess(q)
            assert upstream.plan is True and upstream.thought is True, (task.id, plan, thought)
            action = fenced(answer)
            fb = await env.step(ActionProposed(text=action))
            assert fb.valid, (task.id, action, fb.text)
            hist.append((thought, action, fb.text))
            done = fb.done
        score = await env.score()
        assert score.success and score.reward == 1.0, task.id
        assert len(hist) == task.hidden["optimal_rounds"] <= env.world.scene.round_limit  # type: ignore[union-attr]


async def test_wrong_answers_are_judged_wrong_and_fail_realistically() -> None:
    ex, tasks = expert_on(24, 11)
    rejected = 0
    for task in tasks:
        env, obs = await started(task)
        good_plan, _ = ask(ex, task, "planning", obs, [], Verdict(True))
        bad_plan, _ = ask(ex, task, "planning", obs, [], Verdict(False))
        _, q = ask(ex, task, "reasoning", obs, [], Verdict(True), plan=bad_plan)
        assert ex.assess(q).plan is False, (task.id, bad_plan)
        bad_thought, _ = ask(ex, task, "reasoning", obs, [], Verdict(False), plan=good_plan)
        assert "Next round:" in bad_thought
        misled, q = ask(
            ex, task, "action", obs, [], Verdict(False), plan=good_plan, current_thought=bad_thought
        )
        assert ex.assess(q).thought is False
        # a correct actor fixes the wrong thought
        fixed, _ = ask(
            ex, task, "action", obs, [], Verdict(True), plan=good_plan, current_thought=bad_thought
        )
        probe = RobotEnvironment()
        await probe.reset(task)
        assert (await probe.step(ActionProposed(text=fenced(fixed)))).valid
        fb = await env.step(ActionProposed(text=fenced(misled)))
        if fb.valid:
            continue  # a valid but useless round (e.g. a detour): wasted, not rejected
        rejected += 1
        hist: History = [(bad_thought, fenced(misled), fb.text)]
        assert fb.needs_reflection
        good_refl, q = ask(ex, task, "reflection", obs, hist, Verdict(True), plan=good_plan)
        assert ex.assess(q).thought is False
        assert "The last step went wrong:" in good_refl and "Next round:" in good_refl
        bad_refl, _ = ask(ex, task, "reflection", obs, hist, Verdict(False), plan=good_plan)
        for text, verdict in ((good_refl, True), (bad_refl, False)):
            _, q = ask(
                ex, task, "reasoning", obs, hist, Verdict(True), plan=good_plan, reflection=text
            )
            assert ex.assess(q).reflection is verdict
    assert rejected >= len(tasks) // 2


async def test_malformed_actions_never_pass_the_parser() -> None:
    ex, tasks = expert_on(16, 5)
    for task in tasks:
        env, obs = await started(task)
        thought, _ = ask(ex, task, "reasoning", obs, [], Verdict(True))
        for seed in range(4):
            msgs = prompt(task, "action", obs, [], current_thought=thought)
            q = ExpertQuery(role="action", task=task, messages=msgs)
            text = ex.respond(q, Verdict(True, malformed=True), random.Random(seed))
            fb = await env.step(ActionProposed(text=fenced(text)))
            assert not fb.valid, text


def test_expert_protocol_registration_and_unknown_prompts() -> None:
    ex = RobotExpert()
    assert isinstance(ex, Expert) and ex.env == "robot"
    assert registry.get("experts", "robot") is RobotExpert
    tasks = generated_tasks(4, 0)
    ex.add_tasks(tasks)
    other = tasks[0].model_copy(update={"instruction": "Solve x + 1 = 2.", "id": "m1"})
    assert ex.find_task(prompt(other, "reasoning", "", [])) is None
    assert ex.find_task([{"role": "user", "content": "hello"}]) is None


async def test_remembered_replays_and_distances_match_a_fresh_reading() -> None:
    """The expert's per-task memos (rules, roll-out distances, history replays) change
    nothing: along episodes with wrong and rejected rounds, every situation equals
    one understood from scratch."""
    ex, tasks = expert_on(8, 21)
    for k, task in enumerate(tasks):
        env, obs = await started(task)
        hist: History = []
        for step in range(6):
            verdict = Verdict(correct=(step + k) % 3 != 1)
            thought, q1 = ask(ex, task, "reasoning", obs, hist, verdict)
            answer, q2 = ask(ex, task, "action", obs, hist, verdict, current_thought=thought)
            queries = [q1, q2]
            if hist:
                queries.append(ask(ex, task, "reflection", obs, hist, verdict)[1])
            for q in queries:
                ex.assess(q)
                mine = ex.situation(q)
                fresh = understand(task, scene_of(task), q.user)
                assert [state_key(s) for s in mine.states] == [state_key(s) for s in fresh.states]
                for a, b in (
                    (mine.before_last, fresh.before_last),
                    (mine.after_rejected, fresh.after_rejected),
                ):
                    assert (a is None) == (b is None)
                    assert a is None or b is None or state_key(a) == state_key(b)
                assert mine.last == fresh.last and mine.parts == fresh.parts
                assert mine.rules.distance(mine.state) == fresh.rules.distance(fresh.state)
            fb = await env.step(ActionProposed(text=fenced(answer)))
            hist.append((thought, fenced(answer), fb.text))
            if fb.done:
                break

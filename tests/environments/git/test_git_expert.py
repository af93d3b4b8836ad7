"""GitExpert: reads real PRAF prompts, solves puzzles when always right, errs realistically."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentbus.core import registry
from agentbus.core.environment import Task, TaskSource
from agentbus.core.messages import ActionProposed, Feedback, Plan, TaskStarted, Thought
from agentbus.llm.types import ChatMessage
from agentbus.sim.expert import Expert, ExpertQuery, Verdict
from environments.git.env import GitEnvironment
from environments.git.expert import GitExpert, commands_in
from modules.praf.action import INSTRUCTIONS as ACTION
from modules.praf.parsing import parse_action
from modules.praf.planning import INSTRUCTIONS as PLANNING
from modules.praf.prompt import build
from modules.praf.reasoning import INSTRUCTIONS as REASONING
from modules.praf.view import EpisodeView

LEVELS = Path(__file__).resolve().parents[4] / "shared" / "learngitbranching" / "levels.json"
RIGHT = Verdict(correct=True)
WRONG = Verdict(correct=False)


class Driver:
    """Plays one task with the expert's answers through real PRAF prompts."""

    def __init__(self, expert: GitExpert, task: Task) -> None:
        self.expert, self.task = expert, task
        self.env = GitEnvironment()
        self.view = EpisodeView()
        self.rng = random.Random(task.id)
        self.round = 0

    async def start(self) -> None:
        self.view.start(
            TaskStarted(
                task_id=self.task.id,
                instruction=self.task.instruction,
                env="git",
                guide=self.env.guide(self.task),
            )
        )
        self.view.observe(await self.env.reset(self.task))

    def prompt(self, role: str, items: list[tuple[str, str]]) -> list[ChatMessage]:
        instructions = {"planning": PLANNING, "reasoning": REASONING, "action": ACTION}[role]
        return build(role, instructions, self.view, items, "Answer.")

    def ask(self, role: str, items: list[tuple[str, str]], verdict: Verdict) -> str:
        messages = self.prompt(role, items)
        task = self.expert.find_task(messages)
        assert task is not None and task.id == self.task.id
        return self.expert.respond(ExpertQuery(role, task, messages), verdict, self.rng)

    def plan(self, verdict: Verdict = RIGHT) -> str:
        text = self.ask("planning", [], verdict)
        self.view.set_plan(Plan(text=text))
        return text

    def think(self, verdict: Verdict = RIGHT) -> str:
        self.round += 1
        items = [("Plan", self.view.plan), ("History", self.view.history())]
        text = self.ask("reasoning", items, verdict)
        self.view.think(Thought(text=text, round=self.round))
        return text

    def action_items(self, thought: str) -> list[tuple[str, str]]:
        return [
            ("Plan", self.view.plan),
            ("History", self.view.history()),
            ("Current thought", thought),
        ]

    async def act(self, thought: str, verdict: Verdict = RIGHT) -> Feedback:
        answer = self.ask("action", self.action_items(thought), verdict)
        parsed = parse_action(answer)
        if parsed.text is None:
            action = ActionProposed(
                text=answer, round=self.round, valid=False, parse_error=parsed.error
            )
            feedback = Feedback(text="Invalid action", round=self.round, valid=False)
        else:
            action = ActionProposed(text=parsed.text, round=self.round)
            feedback = (await self.env.step(action)).model_copy(update={"round": self.round})
        self.view.act(action)
        self.view.feedback(feedback)
        return feedback


def expert_for(tasks: list[Task]) -> GitExpert:
    expert = GitExpert()
    expert.add_tasks(tasks)
    return expert


def test_registered_and_satisfies_the_protocol() -> None:
    cls = registry.get("experts", "git")
    assert cls is GitExpert and isinstance(GitExpert(), Expert)


async def solve(expert: GitExpert, task: Task, wrong_first: bool = False) -> tuple[bool, int]:
    driver = Driver(expert, task)
    await driver.start()
    driver.plan()
    budget = int(task.data["budget"])
    for step in range(budget):
        thought = driver.think(WRONG if wrong_first and step == 0 else RIGHT)
        feedback = await driver.act(thought, WRONG if wrong_first and step == 0 else RIGHT)
        if feedback.done:
            return bool(feedback.success), step + 1
    return False, budget


async def test_always_right_expert_solves_every_generated_puzzle_on_the_recorded_path() -> None:
    tasks = GitEnvironment.setup(TaskSource(count=40, seed=11)).tasks
    expert = expert_for(tasks)
    for task in tasks:
        solved, steps = await solve(expert, task)
        assert solved, task.id
        assert steps == len(task.hidden["solution"]), task.id


async def test_expert_recovers_after_a_wrong_first_step() -> None:
    tasks = GitEnvironment.setup(TaskSource(count=30, seed=12)).tasks
    expert = expert_for(tasks)
    recovered = 0
    for task in tasks:
        solved, _ = await solve(expert, task, wrong_first=True)
        recovered += solved
    assert recovered >= 27


@pytest.mark.skipif(not LEVELS.exists(), reason="shared level file not available")
async def test_always_right_expert_solves_the_official_levels() -> None:
    tasks = GitEnvironment.setup(TaskSource(dataset=LEVELS)).tasks
    expert = expert_for(tasks)
    for task in tasks:
        solved, _ = await solve(expert, task)
        assert solved, task.id


async def test_assess_judges_plan_thought_and_wrong_actions_follow_wrong_thoughts() -> None:
    tasks = GitEnvironment.setup(TaskSource(count=10, seed=5)).tasks
    expert = expert_for(tasks)
    for task in tasks:
        good, bad = Driver(expert, task), Driver(expert, task)
        for d in (good, bad):
            await d.start()
        good.plan(RIGHT)
        bad.plan(WRONG)
        assert commands_in(good.view.plan) == task.hidden["solution"]
        right_thought = good.think(RIGHT)
        wrong_thought = bad.think(WRONG)
        for d, thought, ok in ((good, right_thought, True), (bad, wrong_thought, False)):
            messages = d.prompt("action", d.action_items(thought))
            up = expert.assess(ExpertQuery("action", task, messages))
            assert up.plan is ok and up.thought is ok, task.id
        # a wrong action after a wrong thought carries the thought's command out
        answer = bad.ask("action", bad.action_items(wrong_thought), WRONG)
        assert parse_action(answer).text == commands_in(wrong_thought)[0]
        # a right action fixes a wrong thought
        answer = bad.ask("action", bad.action_items(wrong_thought), RIGHT)
        assert parse_action(answer).text == task.hidden["solution"][0]
        # a malformed action does not come through as the right command
        broken = bad.ask("action", bad.action_items(right_thought), Verdict(True, malformed=True))
        assert parse_action(broken).text != task.hidden["solution"][0]


async def test_reasoning_sees_the_previous_thought_and_reflection_quality() -> None:
    tasks = [
        t
        for t in GitEnvironment.setup(TaskSource(count=10, seed=6)).tasks
        if len(t.hidden["solution"]) > 1
    ]
    expert = expert_for(tasks)
    task = tasks[0]
    d = Driver(expert, task)
    await d.start()
    d.plan()
    thought = d.think(RIGHT)
    await d.act(thought, RIGHT)
    items = [("Plan", d.view.plan), ("History", d.view.history())]
    good_reflection = f"Next run `{task.hidden['solution'][1]}`."
    messages = d.prompt("reasoning", [*items, ("Latest reflection", good_reflection)])
    up = expert.assess(ExpertQuery("reasoning", task, messages))
    assert up.plan is True and up.thought is True and up.reflection is True
    messages = d.prompt("reasoning", [*items, ("Latest reflection", "Run `git commit --amend`.")])
    assert expert.assess(ExpertQuery("reasoning", task, messages)).reflection is False


def test_unknown_prompts_are_not_claimed() -> None:
    expert = GitExpert()
    messages: list[ChatMessage] = [
        {"role": "system", "content": "You are the planning module of an LLM agent."},
        {"role": "user", "content": "## Task\nSomething else entirely."},
    ]
    assert expert.find_task(messages) is None


async def test_a_reused_task_id_with_another_puzzle_gets_a_fresh_solver() -> None:
    first = GitEnvironment.setup(TaskSource(count=3, seed=30)).tasks[2]
    second = GitEnvironment.setup(TaskSource(count=3, seed=31)).tasks[2]
    imposter = second.model_copy(update={"id": first.id})
    expert = expert_for([first])
    assert expert.next_command(first, []) == first.hidden["solution"][0]
    expert.add_tasks([imposter])
    assert expert.next_command(imposter, []) == second.hidden["solution"][0]

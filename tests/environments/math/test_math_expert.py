"""The simulated math expert: finds tasks, judges upstream work, writes realistic answers."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

import anyio

from agentbus import ActionProposed, Feedback, Thought, registry
from agentbus.core.environment import Task, TaskSource
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.outcome import Outcome
from agentbus.llm.types import ChatMessage, Completion, SamplingParams
from agentbus.sim.expert import Expert, ExpertQuery, Verdict
from environments.math.env import MathEnvironment
from environments.math.expert import MathExpert
from modules.praf import AGENT, SLOTS
from modules.praf.parsing import parse_action
from modules.praf.view import EpisodeView

ROLE = re.compile(r"You are the (\w+) module")


class ExpertModel:
    """A model that always plays the expert's verdict ``verdict`` (a perfect agent by default)."""

    def __init__(self, expert: MathExpert, verdict: Verdict = Verdict(correct=True)) -> None:
        self.expert, self.verdict = expert, verdict
        self.rng = random.Random(0)

    async def complete(
        self, messages: Sequence[ChatMessage], params: SamplingParams | None = None
    ) -> Completion:
        m = ROLE.search(messages[0]["content"])
        role = m.group(1) if m else "other"
        task = self.expert.find_task(messages)
        assert task is not None
        query = ExpertQuery(role, task, messages)
        self.expert.assess(query)
        return Completion(text=self.expert.respond(query, self.verdict, self.rng), model="expert")


async def play(tasks: list[Task], model: ExpertModel, factory: object) -> list[Outcome]:
    outcomes: list[Outcome] = []

    async def one(i: int) -> None:
        actors = [
            ActorSpec(slot=s, factory=registry.get("modules", AGENT[s]), llm=model) for s in SLOTS
        ]
        spec = EpisodeSpec(f"x-{i}", tasks[i], factory, actors, trace=True)  # type: ignore[arg-type]
        outcomes.append(await Episode(spec).run())

    async with anyio.create_task_group() as tg:
        for i in range(len(tasks)):
            tg.start_soon(one, i)
    return outcomes


def test_the_expert_satisfies_the_protocol() -> None:
    assert isinstance(MathExpert(), Expert)
    assert registry.get("experts", "math") is MathExpert


async def test_a_perfect_agent_solves_every_generated_task_quickly() -> None:
    setup = MathEnvironment.setup(TaskSource(count=50, seed=11))
    expert = MathExpert()
    expert.add_tasks(setup.tasks)
    outcomes = await play(setup.tasks, ExpertModel(expert), setup.factory)
    assert all(o.success for o in outcomes), [o.reason for o in outcomes if not o.success]
    assert max(o.steps for o in outcomes) <= 4  # well inside the 10 rounds


async def test_an_always_wrong_agent_never_solves_and_reflects() -> None:
    setup = MathEnvironment.setup(TaskSource(count=10, seed=12))
    expert = MathExpert()
    expert.add_tasks(setup.tasks)
    outcomes = await play(setup.tasks, ExpertModel(expert, Verdict(correct=False)), setup.factory)
    assert not any(o.success for o in outcomes)
    assert all(o.error_kind == "step_limit" for o in outcomes)
    assert any(m["type"] == "Reflection" for o in outcomes for m in o.trace or [])


def _query(expert: MathExpert, task: Task, role: str, **parts: str) -> ExpertQuery:
    user = "\n\n".join(
        f"## {title}\n{body}" for title, body in [("Task", task.instruction), *parts.items()]
    )
    messages: list[ChatMessage] = [
        {"role": "system", "content": f"You are the {role} module of an LLM agent."},
        {"role": "user", "content": user},
    ]
    found = expert.find_task(messages)
    assert found is not None and found.id == task.id
    return ExpertQuery(role, found, messages)


def test_assessment_follows_the_solution_state() -> None:
    tasks = MathEnvironment.setup(TaskSource(count=50, seed=1)).tasks
    task = next(t for t in tasks if len(t.hidden["steps"]) == 2)
    expert = MathExpert()
    expert.add_tasks([task])
    steps = task.hidden["steps"]
    assert len(steps) == 2
    rng = random.Random(1)

    good_plan = expert.respond(_query(expert, task, "planning"), Verdict(True), rng)
    bad_plan = expert.respond(_query(expert, task, "planning"), Verdict(False), rng)
    q = _query(
        expert, task, "action", Plan=good_plan, **{"Current thought": f"compute `{steps[0]}`"}
    )
    assert expert.assess(q).plan is True and expert.assess(q).thought is True
    q = _query(expert, task, "action", Plan=bad_plan, **{"Current thought": "answer is 0"})
    assert expert.assess(q).plan is False and expert.assess(q).thought is False

    # after the first step ran, the right thought is the second step
    history = f"Round 1\nThought: go\nAction: calculator: {steps[0]}\nFeedback: Calculator: ok"
    thought = expert.respond(_query(expert, task, "reasoning", History=history), Verdict(True), rng)
    assert steps[1] in thought
    action = expert.respond(
        _query(expert, task, "action", History=history, **{"Current thought": "?"}),
        Verdict(True),
        rng,
    )
    assert parse_action(action).text == f"calculator: {steps[1]}"
    broken = expert.respond(
        _query(expert, task, "action", History=history), Verdict(True, malformed=True), rng
    )
    parsed = parse_action(broken)
    assert not parsed.ok or not parsed.text or not parsed.text.startswith("calculator: ")

    # a reflection that points at the right method is good for the next reasoning
    good = expert.respond(_query(expert, task, "reflection"), Verdict(True), rng)
    bad = expert.respond(_query(expert, task, "reflection"), Verdict(False), rng)
    assert expert.assess(
        _query(expert, task, "reasoning", **{"Latest reflection": good})
    ).reflection
    assert (
        expert.assess(_query(expert, task, "reasoning", **{"Latest reflection": bad})).reflection
        is False
    )


def test_foreign_prompts_are_not_ours() -> None:
    expert = MathExpert()
    expert.add_tasks(MathEnvironment.setup(TaskSource(count=3)).tasks)
    other: list[ChatMessage] = [
        {"role": "system", "content": "You are the planning module of an LLM agent."},
        {"role": "user", "content": "## Task\nSort the blocks by colour.\n\n## Observation\nx"},
    ]
    assert expert.find_task(other) is None
    assert expert.find_task([{"role": "user", "content": "What is 2+2?"}]) is None


def test_a_refused_prose_action_counts_as_its_step_as_before() -> None:
    """The history shows a refused action as ``(none)``; the expert still reads
    its own prose answer there (the step it named counts as done, a wrong
    reflection quotes it), as when the history carried the refused text: the
    stored truth tables were made so."""
    tasks = MathEnvironment.setup(TaskSource(count=50, seed=1)).tasks
    task = next(t for t in tasks if len(t.hidden["steps"]) == 2)
    expert = MathExpert()
    expert.add_tasks([task])
    steps = task.hidden["steps"]
    broken = Verdict(True, malformed=True)
    prose = next(
        text
        for seed in range(50)
        if not parse_action(
            text := expert.respond(_query(expert, task, "action"), broken, random.Random(seed))
        ).ok
    )
    assert steps[0] in prose
    view = EpisodeView()
    view.think(Thought(text=f"compute `{steps[0]}`", round=1))
    view.act(ActionProposed(text=prose, round=1, valid=False, parse_error="no action found"))
    view.feedback(Feedback(text="That is not a valid action.", round=1, valid=False))
    history = view.history()
    assert "Action: (none)" in history and steps[0] not in history.split("Action:")[1]
    thought = expert.respond(
        _query(expert, task, "reasoning", History=history), Verdict(True), random.Random(0)
    )
    assert steps[1] in thought and steps[0] not in thought
    last = history.split("\n\n")[-1]
    query = _query(expert, task, "reflection", History=history, **{"Last step": last})
    wrong = next(
        text
        for seed in range(50)
        if "format" in (text := expert.respond(query, Verdict(False), random.Random(seed)))
    )
    assert "(none)" not in wrong and steps[0] in wrong

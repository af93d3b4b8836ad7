"""The simulator's generative model: roles, determinism, skills and upstream effects.

A tiny expert for a toy task family ("add two numbers") is defined here, so
these tests exercise the real model end to end without any environment.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence

import pytest

from agentbus.core import registry
from agentbus.core.environment import Task
from agentbus.core.errors import UserError
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.expert import Expert, ExpertQuery, Upstream, Verdict
from agentbus.sim.model import (
    SimModel,
    count_tokens,
    detect_role,
    load_experts,
    probability_correct,
)
from agentbus.sim.profiles import BUILTIN

T0 = SamplingParams(temperature=0.0)


def section(text: str, name: str) -> str | None:
    found = re.search(rf"^## {name}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return found.group(1).strip() if found else None


class AddExpert:
    """Knows the answer of every "add A and B" task it was given."""

    env = "toy"

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}

    def add_tasks(self, tasks: Iterable[Task]) -> None:
        for t in tasks:
            self.tasks[t.instruction] = t

    def find_task(self, messages: Sequence[ChatMessage]) -> Task | None:
        user = "\n".join(m["content"] for m in messages if m["role"] == "user")
        instruction = section(user, "Task")
        return self.tasks.get(instruction or "")

    def _judge(self, text: str | None, answer: int) -> bool | None:
        if text is None:
            return None
        return f"sum is {answer}" in text

    def assess(self, query: ExpertQuery) -> Upstream:
        answer = query.task.hidden["sum"]
        plan = section(query.user, "Plan")
        return Upstream(
            plan=None if plan is None else "PLAN-OK" in plan,
            thought=self._judge(section(query.user, "Current thought"), answer),
            reflection=self._judge(section(query.user, "Latest reflection"), answer),
        )

    def respond(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        answer = query.task.hidden["sum"]
        value = answer if verdict.correct else answer + rng.choice([-2, -1, 1, 2])
        if query.role == "action":
            if verdict.malformed:
                return f"I would answer {value}"
            return f"```action\nanswer {value}\n```"
        return f"The sum is {value}."


def make_tasks(n: int, seed: int = 0) -> list[Task]:
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        a, b = rng.randrange(100), rng.randrange(100)
        tasks.append(
            Task(
                id=f"toy-{i}",
                env="toy",
                instruction=f"Add {a} and {b}. (toy-{i})",
                hidden={"sum": a + b},
            )
        )
    return tasks


def prompt(role: str, task: Task, **sections: str) -> list[ChatMessage]:
    body = f"## Task\n{task.instruction}\n"
    for name, text in sections.items():
        body += f"## {name.replace('_', ' ').capitalize()}\n{text}\n"
    return [
        {"role": "system", "content": f"You are the {role} module of an LLM agent."},
        {"role": "user", "content": body},
    ]


def toy_model(n: int = 400) -> tuple[SimModel, list[Task]]:
    model = SimModel(experts=[AddExpert()])
    tasks = make_tasks(n)
    model.add_tasks("toy", tasks)
    return model, tasks


def accuracy(model: SimModel, name: str, prompts: list[list[ChatMessage]]) -> float:
    hits = 0
    for messages in prompts:
        ans = model.generate(name, messages, T0)
        assert ans.verdict is not None
        hits += ans.verdict.correct
    return hits / len(prompts)


def test_the_toy_expert_satisfies_the_protocol() -> None:
    assert isinstance(AddExpert(), Expert)


def test_role_is_detected_from_the_system_prompt() -> None:
    for role in ("planning", "reasoning", "action", "reflection"):
        msgs: list[ChatMessage] = [
            {"role": "system", "content": f"You are the {role} module of an LLM agent.\nBe brief."},
            {"role": "user", "content": "## Task\nsomething"},
        ]
        assert detect_role(msgs) == role
    assert detect_role([{"role": "user", "content": "You are the action module"}]) == "other"
    assert detect_role([{"role": "system", "content": "You are a helpful assistant."}]) == "other"


def test_temperature_zero_is_deterministic_per_model_and_prompt() -> None:
    model, tasks = toy_model(50)
    for task in tasks[:10]:
        msgs = prompt("reasoning", task, plan="PLAN-OK step by step")
        first = model.generate("weak", msgs, T0)
        again = SimModel(experts=[AddExpert()])
        again.add_tasks("toy", tasks)
        assert model.generate("weak", msgs, T0) == first
        assert again.generate("weak", msgs, T0) == first  # no hidden state between instances
    texts = {model.generate("weak", prompt("reasoning", t), T0).text for t in tasks}
    assert len(texts) > 10  # different prompts get different answers


def test_seeded_sampling_repeats_and_unseeded_sampling_varies() -> None:
    model, tasks = toy_model(5)
    msgs = prompt("reasoning", tasks[0])
    seeded = SamplingParams(temperature=0.8, seed=7)
    assert len({model.generate("weak", msgs, seeded).text for _ in range(5)}) == 1
    by_seed = {
        model.generate("weak", msgs, SamplingParams(temperature=0.8, seed=s)).text
        for s in range(30)
    }
    assert len(by_seed) > 3
    fresh = {model.generate("weak", msgs, SamplingParams(temperature=0.8)).text for _ in range(30)}
    assert len(fresh) > 3


def test_strong_answers_correctly_more_often_than_weak() -> None:
    model, tasks = toy_model(400)
    prompts = [prompt("reasoning", t) for t in tasks]
    weak, strong = accuracy(model, "weak", prompts), accuracy(model, "strong", prompts)
    assert weak == pytest.approx(BUILTIN.get("weak").reasoning.base, abs=0.08)
    assert strong == pytest.approx(BUILTIN.get("strong").reasoning.base, abs=0.06)
    assert strong > weak + 0.3
    # strong in one role only: strong there, weak elsewhere
    assert accuracy(model, "strong-reasoning", prompts) > weak + 0.3
    assert accuracy(model, "strong-action", prompts) == pytest.approx(weak, abs=0.08)


def test_upstream_quality_moves_the_probability_in_the_documented_direction() -> None:
    model, tasks = toy_model(400)
    good = [prompt("reasoning", t, plan="PLAN-OK") for t in tasks]
    none = [prompt("reasoning", t) for t in tasks]
    bad = [prompt("reasoning", t, plan="PLAN-BAD") for t in tasks]
    acc = [accuracy(model, "weak", p) for p in (bad, none, good)]
    assert acc[0] + 0.1 < acc[1] < acc[2] - 0.1

    # a wrong thought misleads a weak actor much more than a strong one
    def drop(name: str) -> float:
        right = [
            prompt("action", t, current_thought=f"The sum is {t.hidden['sum']}.") for t in tasks
        ]
        wrong = [
            prompt("action", t, current_thought=f"The sum is {t.hidden['sum'] + 1}.") for t in tasks
        ]
        return accuracy(model, name, right) - accuracy(model, name, wrong)

    assert drop("weak") > 0.4
    assert drop("strong") < drop("weak") - 0.1


def test_probability_is_logistic_in_the_upstream_shifts() -> None:
    skill = BUILTIN.get("weak").action
    base = probability_correct(skill, Upstream())
    assert base == pytest.approx(skill.base)
    assert probability_correct(skill, Upstream(thought=True)) > base
    assert probability_correct(skill, Upstream(thought=False)) < base
    both = probability_correct(skill, Upstream(plan=True, thought=True))
    assert both > probability_correct(skill, Upstream(thought=True))


def test_unknown_prompts_get_a_generic_answer_and_usage_is_counted() -> None:
    model = SimModel()
    msgs: list[ChatMessage] = [
        {"role": "system", "content": "You are the planning module of an LLM agent."},
        {"role": "user", "content": "## Task\nsomething nobody knows"},
    ]
    ans = model.generate("strong", msgs, T0)
    assert ans.task_id is None and ans.verdict is None
    assert ans.text.startswith("1.")
    assert ans.completion_tokens == count_tokens(ans.text)
    assert ans.completion_tokens > 50  # padded to the profile's verbosity
    assert ans.prompt_tokens == sum(count_tokens(m["content"]) + 4 for m in msgs)


def test_stop_and_max_tokens_cut_the_answer() -> None:
    model = SimModel()
    msgs: list[ChatMessage] = [{"role": "user", "content": "hello"}]
    full = model.generate("weak", msgs, T0).text
    short = model.generate("weak", msgs, SamplingParams(max_tokens=3))
    assert short.finish_reason == "length" and len(short.text) <= 12
    word = full.split()[3]
    cut = model.generate("weak", msgs, SamplingParams(stop=(word,)))
    assert word not in cut.text and cut.stop_sequence == word and cut.finish_reason == "stop"


def test_malformed_answers_follow_the_profile_rate() -> None:
    model = SimModel(
        {"sloppy": {"action": {"malformed": 0.5}}},
        experts=[AddExpert()],
    )
    tasks = make_tasks(300)
    model.add_tasks("toy", tasks)
    texts = [model.generate("sloppy", prompt("action", t), T0).text for t in tasks]
    rate = sum("```action" not in t for t in texts) / len(texts)
    assert rate == pytest.approx(0.5, abs=0.1)


def test_unknown_model_lists_the_profiles() -> None:
    with pytest.raises(UserError, match=r"unknown sim profile 'gpt-9'.*strong-action.*weak"):
        SimModel().generate("gpt-9", [{"role": "user", "content": "x"}], T0)
    # the backend prefix is accepted
    assert SimModel().generate("sim:weak", [{"role": "user", "content": "x"}], T0).text


def test_load_experts_instantiates_registered_experts() -> None:
    registry.register("experts", "toy-test", AddExpert)
    try:
        experts = load_experts(["toy-test"])
        assert len(experts) == 1 and isinstance(experts[0], AddExpert)
        with pytest.raises(UserError, match="unknown expert 'missing'"):
            load_experts(["missing"])
    finally:
        registry.unregister("experts", "toy-test")


def verdict(model: SimModel, name: str, messages: list[ChatMessage]) -> Verdict:
    found = model.generate(name, messages, T0).verdict
    assert found is not None
    return found


def test_coupled_verdicts_share_draws_across_models() -> None:
    tasks = make_tasks(1000)
    prompts = [prompt("reasoning", t) for t in tasks]
    # (strong is right 95% of the time alone, weak 35%: about 17 inversions in
    # 1000 independent pairs)
    for coupled in (False, True):
        model = SimModel(experts=[AddExpert()], coupled=coupled)
        model.add_tasks("toy", tasks)
        weak = [verdict(model, "weak", m) for m in prompts]
        strong = [verdict(model, "strong", m) for m in prompts]
        # strong is never wrong where weak is right, only when coupled
        inversions = sum(w.correct and not s.correct for w, s in zip(weak, strong, strict=True))
        assert (inversions == 0) if coupled else (inversions > 10)
        # marginal accuracy is unchanged by coupling
        expected = BUILTIN.get("strong").reasoning.base
        assert sum(s.correct for s in strong) / len(tasks) == pytest.approx(expected, abs=0.04)

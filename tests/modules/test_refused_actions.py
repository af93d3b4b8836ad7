"""One definition of a refused action, counted per slot (issue 39 item 3, issue 38 item 5).

Three answers real small models gave (tests/data/real_answers/refusals.json,
quoted in issue 39) go through a whole episode of the real environment: the
answer is read by the PRAF parser, then the episode decides. Each kind of
refusal is its own count in the slot's usage:

* Qwen's ``<answer: 12.0</answer>`` parses, and math rejects it as no action
  it knows: ``rejected`` (before: no count at all, "0 unparsable");
* SmolLM2 handing git's feedback (``git: 'rebrand' is not a git command ...``)
  back as its next command: ``copied`` (before: run as a command);
* SmolLM2's one-line copies of the math guide's examples (``answer:
  \\frac{7}{2}``, ``calculator: 2^10 - 24``) on a task without those numbers:
  ``copied`` (before: accepted as the model's own actions).

The end-of-run line names a module that had most of its answers refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest

from agentbus.app.answers import answer_line, answer_markdown, answer_summary
from agentbus.core import registry
from agentbus.core.actor import Actor, on
from agentbus.core.environment import TaskSource
from agentbus.core.episode import ActorSpec, Episode, EpisodeSpec
from agentbus.core.messages import ActionProposed, Feedback, Observation, TaskStarted
from agentbus.core.outcome import Outcome, SlotUsage
from agentbus.core.record import EpisodeRecord
from agentbus.core.refusals import PromptCopies
from modules.praf.parsing import parse_action

DATA = Path(__file__).resolve().parents[1] / "data" / "real_answers" / "refusals.json"
CASES: list[dict[str, Any]] = orjson.loads(DATA.read_bytes())["cases"]


class Recorded(Actor):
    """Answers each round with the next recorded answer, read as the PRAF module reads it."""

    answers: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.fmt: Any = "command"
        self.guide = ""
        self.said = 0

    @on(TaskStarted)
    async def started(self, msg: TaskStarted) -> None:
        self.fmt, self.guide = msg.action_format, "\n".join(msg.guide.values())

    @on(Observation)
    async def first(self, msg: Observation) -> ActionProposed | None:
        return self._next("")

    @on(Feedback)
    async def again(self, msg: Feedback) -> ActionProposed | None:
        return self._next(msg.text)

    def _next(self, feedback: str) -> ActionProposed | None:
        if self.said >= len(self.answers):
            return None
        answer = self.answers[self.said].replace("{feedback}", feedback)
        self.said += 1
        parsed = parse_action(answer, prompt=self.guide, fmt=self.fmt)
        if parsed.ok:
            return ActionProposed(text=parsed.text, round=self.said)
        return ActionProposed(text=answer, round=self.said, valid=False, parse_error=parsed.error)


async def run_case(case: dict[str, Any]) -> SlotUsage:
    env_cls = registry.get("environments", case["env"])
    setup = env_cls.setup(TaskSource(count=1, seed=0))
    Recorded.answers = list(case["answers"])
    spec = EpisodeSpec(
        f"refusals-{case['id']}",
        setup.tasks[0],
        setup.factory,
        [ActorSpec("action", Recorded)],
        max_steps=len(case["answers"]),
        metadata={"assignment": {"action": "real:small"}},
    )
    outcome = await Episode(spec).run()
    return outcome.usage["action"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
async def test_each_recorded_refusal_is_counted_as_its_kind(case: dict[str, Any]) -> None:
    usage = await run_case(case)
    for kind, n in case["expect"].items():
        assert getattr(usage, kind) == n, (kind, usage)
    assert usage.refusal is not None


def test_guide_examples_with_the_tasks_numbers_and_plain_commands_are_moves() -> None:
    copies = PromptCopies()
    copies.learn({"action": "  answer: \\frac{7}{2}\n  git rebase main\n  ls"}, ["Halve 7."])
    assert copies.copied("answer: \\frac{7}{2}") is not None  # the task never says 2
    copies = PromptCopies()
    copies.learn({"action": "  answer: \\frac{7}{2}\n  git rebase main"}, ["7 over 2 is?"])
    assert copies.copied("answer: \\frac{7}{2}") is None  # the task's own numbers
    assert copies.copied("git rebase main") is None  # no numbers: a fair move
    copies.saw("grep x f", "Hello World from the agent test file\nanother line")
    assert copies.copied('grep "Hello World from the agent test file" notes.txt') is None


def _record(usage: SlotUsage) -> EpisodeRecord:
    return EpisodeRecord(
        counts=True,
        episode_id="e",
        task_id="t",
        test_model="real:small",
        default_model="real:small",
        coalition=(),
        slots=("action",),
        outcome=Outcome(usage={"action": usage}),
    )


def test_a_module_with_most_answers_refused_is_named_in_one_line_at_the_end() -> None:
    usage = SlotUsage(model="real:small", calls=10, unparsable=5, copied=1, rejected=1)
    usage.refusal = "unparsable: the answer is prose, not an action"
    summary = answer_summary([_record(usage)], ["action"])
    line = answer_line(summary) or ""
    assert (
        "action on real:small: 7 of 10 answers refused (5 unparsable, 1 copied, 1 rejected); "
        "first: unparsable: the answer is prose, not an action"
    ) in line
    table = answer_markdown({"answers": summary})
    assert "copy of the prompt" in table and "rejected by the environment" in table
    fine = answer_summary([_record(SlotUsage(model="m", calls=10, unparsable=2))], ["action"])
    assert "answers refused" not in (answer_line(fine) or "")

"""The simulated expert for the tools environment (``agentbus.Expert``).

It reads a prompt the way the agent's modules write it (docs/prompt-contract.md
for the PRAF agent; ``modules/mirror`` for MIRROR's, whose system prompt names
the MIRROR agent): the history's rounds say which ground-truth calls have
already returned, so the next needed call is known. It judges the upstream
content (is the plan's list of functions right? does the current subtask or
thought name the next needed call?) and writes answers: a right call, plan,
answer or critique, or a realistic mistake (a broken argument, a neighbouring
function, a copied earlier error, a dropped step, a misread value).

Help that the built-in skill profiles cannot express (a planning skill has
no upstream shifts) comes as lower difficulty: a planner that sees its failed
attempts (long-term memory), a tool agent that sees its failures on the
subtask (short-term memory), and any agent revising after an accurate
critique find the step easier; an inaccurate critique makes it harder.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cached_property

import orjson

from agentbus import ExpertKit, ExpertQuery, Task, Upstream, Verdict, task_spread
from agentbus import prompt_sections as sections
from agentbus import read_rounds as rounds
from environments.tools.apis import CATALOGUE
from environments.tools.calls import Call, key, parse_call
from environments.tools.generator import wrong_version
from environments.tools.scoring import missing
from environments.tools.tasks import ENV

#: difficulty in logits per role and task kind, the same for every model
DIFFICULTY: dict[str, dict[str, float]] = {
    "planning": {"single": 0.2, "multi_tool": 1.0, "multi_step": 1.4},
    "action": {"single": 0.8, "multi_tool": 1.0, "multi_step": 1.3},
    "reasoning": {"single": 0.8, "multi_tool": 1.5, "multi_step": 1.7},
    "reflection": {"single": 0.2, "multi_tool": 0.4, "multi_step": 0.5},
}
#: a wrong earlier call in view tempts the first call to copy it
CORRECTION = 0.6
MEMORY_HELP = 1.2
REVISION_HELP = 1.6
BAD_CRITIQUE = 0.5
SPREAD = 0.4
_NEXT = re.compile(r"next action\s*:\s*(\{.*\})", re.IGNORECASE)
_SCORE = re.compile(r"score\s*[:=]?\s*(\d+(?:\.\d+)?)", re.IGNORECASE)


def _calls(task: Task) -> list[Call]:
    return [Call(c["name"], c["arguments"]) for c in task.hidden["calls"]]


def _named(text: str) -> list[str]:
    """Function names in ``text``, in order of appearance."""
    found = [(m.start(), m.group(0)) for m in re.finditer(r"\b[a-z_]+\b", text)]
    return [w for _, w in found if w in CATALOGUE]


def _steps(plan: str) -> list[str]:
    steps = [m.group(1) for m in re.finditer(r"^\s*\d+[.)]\s*(.+)$", plan, re.MULTILINE)]
    return steps or [line for line in plan.splitlines() if line.strip()]


def plan_names(plan: str) -> list[str]:
    """The first function each plan step names (steps naming none are skipped)."""
    out = []
    for step in _steps(plan):
        names = _named(step)
        if names:
            out.append(names[0])
    return out


@dataclass
class Situation:
    """What one prompt shows about its task."""

    task: Task
    system: str
    parts: dict[str, str]

    @cached_property
    def gt(self) -> list[Call]:
        return _calls(self.task)

    @cached_property
    def kind(self) -> str:
        return str(self.task.data.get("kind", "single"))

    @property
    def mirror(self) -> bool:
        return "MIRROR" in self.system

    def history_text(self) -> str:
        return self.parts.get("History") or self.parts.get("Context", "")

    @cached_property
    def obtained(self) -> set[str]:
        got = set()
        for r in rounds(self.history_text()):
            call = parse_call(r.action)
            if isinstance(call, Call) and r.feedback.startswith("OK"):
                k = key(call)
                if k is not None:
                    got.add(k)
        return got

    @cached_property
    def next_needed(self) -> Call | None:
        for call in self.gt:
            if key(call) not in self.obtained:
                return call
        return None

    def all_obtained(self) -> bool:
        return self.next_needed is None

    def facts(self) -> list[str]:
        return list(self.task.hidden["facts"])

    def plan_good(self, plan: str) -> bool:
        return plan_names(plan) == [c.name for c in self.gt]

    def call_good(self, text: str | None) -> bool | None:
        if not text:
            return None
        call = parse_call(text)
        want = self.next_needed
        if not isinstance(call, Call):
            return False
        if call.name == "finish":
            return want is None and not missing(str(call.arguments.get("answer", "")), self.facts())
        return want is not None and key(call) == key(want)

    def prior(self) -> Call | None:
        p = self.task.data.get("prior")
        return Call(p["call"]["name"], p["call"]["arguments"]) if p else None


def _critique_accurate(sit: Situation, draft_title: str, judge: str) -> bool | None:
    """Whether a critique shown for revision got the draft right (None: no critique)."""
    critique, draft = sit.parts.get("Critique"), sit.parts.get(draft_title)
    if critique is None or draft is None:
        return None
    found = _SCORE.search(critique)
    if found is None:
        return None
    says_good = float(found.group(1)) >= 8
    if judge == "plan":
        truth = sit.plan_good(draft)
    elif judge == "call":
        truth = bool(sit.call_good(draft))
    else:
        truth = sit.all_obtained() and not missing(draft, sit.facts())
    return says_good == truth


class ToolsExpert(ExpertKit[Situation]):
    """Knows each tools task's ground-truth calls and facts."""

    env = ENV

    def situation(self, query: ExpertQuery) -> Situation:
        # cheap to build and it reads the system prompt too: not remembered
        return Situation(query.task, query.system, sections(query.user))

    # -- judging ---------------------------------------------------------------
    def assess(self, query: ExpertQuery) -> Upstream:
        sit = self.situation(query)
        role = query.role if query.role in DIFFICULTY else "reasoning"
        d = DIFFICULTY[role].get(sit.kind, 0.0) + task_spread(query.task.id, SPREAD, role)
        plan = thought = reflection = None
        judge = {"planning": "plan", "action": "call", "reasoning": "answer"}.get(role)
        draft = {"plan": "Draft plan", "call": "Draft call", "answer": "Draft answer"}.get(
            judge or "", ""
        )
        accurate = _critique_accurate(sit, draft, judge) if judge else None
        if accurate is not None:
            d += -REVISION_HELP if accurate else BAD_CRITIQUE
        if role == "planning" and sit.parts.get("Long-term memory"):
            d -= MEMORY_HELP
        if role == "action":
            if sit.parts.get("Short-term memory"):
                d -= MEMORY_HELP
            if sit.prior() is not None and not sit.obtained:
                d += CORRECTION
            if sit.parts.get("Plan"):
                plan = sit.plan_good(sit.parts["Plan"])
            subtask = sit.parts.get("Current subtask") or sit.parts.get("Current thought")
            if subtask:
                want = sit.next_needed
                named = _named(subtask)
                proposed = _NEXT.search(subtask)
                if proposed:
                    thought = bool(sit.call_good(proposed.group(1)))
                elif named:
                    thought = want is not None and named[0] == want.name
        if role == "reasoning" and not sit.mirror:
            if sit.parts.get("Plan"):
                plan = sit.plan_good(sit.parts["Plan"])
            latest = sit.parts.get("Latest reflection")
            if latest and _NEXT.search(latest):
                reflection = bool(sit.call_good(_NEXT.search(latest).group(1)))  # type: ignore[union-attr]
        return Upstream(plan=plan, thought=thought, reflection=reflection, difficulty=d)

    # -- answering -------------------------------------------------------------
    def respond(self, query: ExpertQuery, verdict: Verdict, rng: random.Random) -> str:
        sit = self.situation(query)
        role = query.role
        if role == "planning":
            if verdict.malformed:
                return "Plan: call the functions that look useful, then answer."
            return self._plan(sit, verdict.correct, rng)
        if role == "action":
            return self._action(sit, verdict, rng)
        if role == "reflection":
            return self._reflection(sit, verdict, rng)
        return self._reasoning(sit, verdict, rng)

    def _plan(self, sit: Situation, correct: bool, rng: random.Random) -> str:
        calls = list(sit.gt)
        if not correct:
            offered = [t["function"]["name"] for t in sit.task.data["tools"]]
            if len(calls) > 1 and rng.random() < 0.5:
                calls.pop(rng.randrange(len(calls)))
            else:
                i = rng.randrange(len(calls))
                others = [n for n in offered if n != calls[i].name] or [calls[i].name]
                calls[i] = Call(rng.choice(others), calls[i].arguments)
        return "\n".join(
            f"{i}. Call {c.name} with {orjson.dumps(c.arguments).decode()}."
            for i, c in enumerate(calls, 1)
        )

    def _mistake(self, sit: Situation, rng: random.Random) -> Call:
        want = sit.next_needed or sit.gt[-1]
        prior = sit.prior()
        roll = rng.random()
        if prior is not None and not sit.obtained and roll < 0.5:
            return prior  # copies the earlier wrong call
        if roll < 0.55:
            return wrong_version(want)
        category = CATALOGUE[want.name].category
        others = [
            a.name for a in CATALOGUE.values() if a.category == category and a.name != want.name
        ]
        if others:
            return Call(rng.choice(others), dict(want.arguments))
        return wrong_version(want)

    def _right_call(self, sit: Situation) -> Call:
        want = sit.next_needed
        if want is not None:
            return want
        return Call("finish", {"answer": self._answer_text(sit.facts())})

    @staticmethod
    def _answer_text(facts: list[str]) -> str:
        return "Here is what the functions returned: " + "; ".join(facts) + "."

    def _action(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
        if sit.mirror:
            if verdict.malformed:
                return "I will call the function for this subtask now."
            if sit.next_needed is None:  # a superfluous subtask: repeat the last call
                call = sit.gt[-1]
            else:
                call = sit.next_needed if verdict.correct else self._mistake(sit, rng)
            body = orjson.dumps({"name": call.name, "arguments": call.arguments}).decode()
            return f"<tool_call>{body}</tool_call>"
        proposed = _NEXT.search(sit.parts.get("Current thought", ""))
        if verdict.malformed:
            return "I will make the call the thought suggests."
        if verdict.correct:
            text = proposed.group(1) if proposed else self._right_call(sit).text()
        elif proposed and not sit.call_good(proposed.group(1)):
            text = proposed.group(1)  # misled by a wrong thought
        else:
            text = self._mistake(sit, rng).text()
        return f"```action\n{text}\n```"

    def _reasoning(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
        facts = sit.facts()
        if sit.mirror:  # the answer agent
            if verdict.malformed:
                return "The functions were called as planned."
            if not sit.all_obtained():
                return self._answer_text(facts[:-1]) + " The rest could not be found."
            if verdict.correct:
                return self._answer_text(facts)
            return self._answer_text(_garble(facts, rng))
        if verdict.malformed:
            return "Let me think about which function fits."
        if verdict.correct:
            call = self._right_call(sit)
        elif sit.all_obtained() or rng.random() < 0.3:
            call = Call("finish", {"answer": self._answer_text(_garble(facts, rng))})
        else:
            call = self._mistake(sit, rng)
        return f"Based on the results so far.\nNext action: {call.text()}"

    def _reflection(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
        system = sit.system
        if "MIRROR" not in system:  # the PRAF reflection module
            call = self._right_call(sit) if verdict.correct else self._mistake(sit, rng)
            return f"The last call did not give what was needed.\nNext action: {call.text()}"
        judge = (
            "plan" if "planner agent" in system else "call" if "tool agent" in system else "answer"
        )
        draft = sit.parts.get(
            {"plan": "Draft plan", "call": "Draft call"}.get(judge, "Draft answer"), ""
        )
        if judge == "plan":
            good = sit.plan_good(draft)
            fix = "The steps should be:\n" + self._plan(sit, True, rng)
        elif judge == "call":
            good = bool(sit.call_good(draft))
            fix = f"Call {self._right_call(sit).text()} instead."
        else:
            good = sit.all_obtained() and not missing(draft, sit.facts())
            fix = "State exactly: " + "; ".join(sit.facts()) + "."
        if verdict.malformed:
            return "This looks mostly fine, with room for improvement."
        says_good = good if verdict.correct else not good
        if says_good:
            return f"Score: {rng.choice((8, 9, 9, 10))}/10\nIt meets the criteria."
        reason = fix if verdict.correct else "I am not convinced this is right; reconsider it."
        return f"Score: {rng.choice((3, 4, 5, 6))}/10\n{reason}"


def _garble(facts: list[str], rng: random.Random) -> list[str]:
    """The facts with one misread (a number off by a little) or left out."""
    if not facts:
        return facts
    out = list(facts)
    i = rng.randrange(len(out))
    try:
        out[i] = f"{float(out[i]) + rng.choice((1, 2, 10)):g}"
    except ValueError:
        out.pop(i)
    return out

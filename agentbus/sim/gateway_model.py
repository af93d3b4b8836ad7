"""The simulator's generic model for gateway agents: known skill per module, any prompt.

A gateway agent's prompts are its own, so the simulator cannot read the task
or the role from them as it does for agentbus's modules. The gateway tells it
instead: when the upstream is ``sim:``, each request carries
``agentbus_gateway = {"task": TASK_ID, "module": MODULE}``. The generic model
then answers:

* **Skill.** The module name picks the profile skill it is drawn with
  (:data:`MODULE_SKILLS`: ``planner`` -> planning, ``solver`` -> reasoning,
  ``critic`` -> reflection, ``executor`` -> action, ...; any other name ->
  ``other``). ``p = skill.base``: no upstream signal and no difficulty, so a
  module's answers are independent Bernoulli(p) draws and the truth of an
  agent follows from its own logic alone.
* **Verdict.** ``correct ~ Bernoulli(p)``, drawn from the request's random
  stream (fixed by model and prompt at temperature 0, as for every sim
  answer, so identical calls in different coalitions share their answer).
* **Text.** A few neutral sentences (about ``skill.tokens`` tokens, so
  verbosity and serving time still differ between profiles), then one last
  line ``ANSWER: <value>``: the task's ``answer`` when correct; when wrong, a
  different value (a number off by a random amount up to a million for a
  numeric answer, else ``guess-<random>``), so two wrong answers agree with
  probability about 1e-6, which the truth computations treat as 0.

A request whose task the simulator does not hold gets a generic text without
an answer line.

**Tools.** When the request offers functions, the answer also calls the
first offered function the conversation has not called yet (a structured
call after the text, with an id unique to the request, as a provider's is;
arguments: a placeholder per required property, by its schema type, and the
task text in a delegation tool's ``task``). A final-answer tool
(``final_answer``, ``submit``, ...) comes last, after every other offered
function, and carries the module's answer in its arguments. Once every
offered function has been called, it answers in text only. Calling is
routing, not skill: it never depends on the verdict. So an OpenAI Agents SDK
handoff (a function ``transfer_to_<agent>``) is always taken, a manager
calls its workers before it answers, a tool loop always ends, and an agent's
truth still follows from which answers its own logic reads. Earlier calls are
read from the conversation in every form frameworks write them back
(:func:`agentbus.sim.gateway_formats.called_tools`).

**Workers.** A module offered a worker tool (a delegation that returns a
result: smolagents' managed agents, a coworker tool; not a handoff) that is
wrong on its own repeats the value its worker reported in the latest tool
result, when there is one; right, it answers right (it checks the worker).
So a manager over a worker with P(right) ``w`` is right with
``1 - (1 - p)(1 - w)``.

**Format.** The text follows the output format the request asks for
(DSPy's field markers, JSON for structured outputs, ReAct's ``Final
Answer:``), every other field in its own type (float, bool, list, enum,
nested object): :func:`agentbus.sim.gateway_formats.render`. The hint's
``format`` field carries the request's ``response_format``. A prompt that
asks for code (smolagents' ``CodeAgent``) gets a code block per step that
calls its listed functions, then ``final_answer``:
:mod:`agentbus.sim.gateway_code`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agentbus.core.environment import Task
from agentbus.llm.types import ChatMessage, SamplingParams, ToolCall
from agentbus.sim import gateway_code as code
from agentbus.sim import gateway_formats as formats
from agentbus.sim.answer import SimAnswer, count_tokens, make_rng, prompt_tokens
from agentbus.sim.expert import Verdict
from agentbus.sim.filler import GATEWAY_PADDING as _SENTENCES
from agentbus.sim.profiles import Profile

#: the request field the gateway fills in
HINT = "agentbus_gateway"

#: module name (lower case) -> the profile skill its answers are drawn with
MODULE_SKILLS: dict[str, str] = {
    "planner": "planning",
    "planning": "planning",
    "plan": "planning",
    "manager": "planning",
    "orchestrator": "planning",
    "coordinator": "planning",
    "supervisor": "planning",
    "solver": "reasoning",
    "reasoner": "reasoning",
    "reasoning": "reasoning",
    "thinker": "reasoning",
    "critic": "reflection",
    "reflection": "reflection",
    "reviewer": "reflection",
    "verifier": "reflection",
    "checker": "reflection",
    "action": "action",
    "actor": "action",
    "executor": "action",
    "tool": "action",
}


def module_skill(module: str) -> str:
    """The profile skill a module's answers are drawn with (``other`` when unknown)."""
    return MODULE_SKILLS.get(module.strip().lower(), "other")


def probability(profile: Profile, module: str) -> float:
    """P(correct) of ``profile`` for ``module``: the base of the skill the name maps to."""
    return profile.skill(module_skill(module)).base


def wrong_answer(answer: Any, rng: random.Random) -> str:
    """A value different from ``answer`` (see the module docstring)."""
    text = str(answer).strip()
    try:
        number = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            return f"guess-{rng.randrange(1, 10**9)}"
        return repr(value + rng.randrange(1, 10**6) * rng.choice((-1, 1)))
    return str(number + rng.randrange(1, 10**6) * rng.choice((-1, 1)))


def _name(tool: Mapping[str, Any]) -> tuple[str, Any]:
    fn = tool.get("function", tool)
    if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
        return "", None
    return str(fn["name"]), fn.get("parameters")


def tool_call(
    tools: Sequence[Mapping[str, Any]],
    messages: Sequence[ChatMessage],
    rng: random.Random,
    value: str | None = None,
) -> ToolCall | None:
    """The function call this model adds, or None (see **Tools** above).

    ``value`` is the module's answer, which a final-answer tool carries.
    """
    if not tools:
        return None
    offered = [_name(t) for t in tools]
    called = formats.called_tools(messages, {n for n, _ in offered if n})
    pending = [(n, p) for n, p in offered if n and n not in called]
    if not pending:
        return None
    others = [(n, p) for n, p in pending if not formats.is_final_tool(n)]
    name, parameters = (others or pending)[0]
    if formats.is_final_tool(name):
        args = formats.final_arguments(parameters, "" if value is None else value)
    elif formats.is_delegation_tool(name, parameters):
        args = formats.delegation_arguments(parameters, formats.first_user_text(messages))
    else:
        args = formats.drawn_arguments(parameters, value or "", formats.first_user_text(messages))
    # an id of this request's own: agents (the Agents SDK) refuse a reused call id
    arguments = orjson.dumps(args).decode()
    return ToolCall(id=f"call_{rng.getrandbits(64):016x}", name=name, arguments=arguments)


def has_worker(tools: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a worker tool is offered: a delegation that returns a result, not a handoff."""
    for tool in tools:
        name, parameters = _name(tool)
        handoff = name.lower().startswith(("transfer_to_", "handoff"))
        if name and not handoff and formats.is_delegation_tool(name, parameters):
            return True
    return False


def hint_of(params: SamplingParams) -> Mapping[str, Any] | None:
    hint = params.extra.get(HINT)
    return hint if isinstance(hint, Mapping) else None


def answer_parts(
    profile: Profile,
    hint: Mapping[str, Any],
    task: Task | None,
    rng: random.Random,
    draws: random.Random,
    reported: str | None = None,
) -> tuple[str, str | None, Verdict | None, float | None]:
    """Body, answer value, verdict and P(correct) of one gateway request.

    ``reported`` is a worker's reported value, which a wrong module repeats
    (see **Workers** above).
    """
    module = str(hint.get("module", ""))
    skill = profile.skill(module_skill(module))
    words: list[str] = []
    length = 0
    target = int(skill.tokens * rng.uniform(0.7, 1.3)) * 4
    while length < target:
        sentence = rng.choice(_SENTENCES)
        words.append(sentence)
        length += len(sentence) + 1
    body = " ".join(words)
    if task is None or "answer" not in task.hidden:
        return body, None, None, None
    p = skill.base
    correct = draws.random() < p
    truth = task.hidden["answer"]
    value = str(truth) if correct else wrong_answer(truth, rng)
    if not correct and reported is not None:
        value = reported
        correct = reported.strip() == str(truth).strip()
    return body, value, Verdict(correct=correct, malformed=False), p


def answer_text(
    profile: Profile,
    hint: Mapping[str, Any],
    task: Task | None,
    rng: random.Random,
    draws: random.Random,
) -> tuple[str, Verdict | None, float | None]:
    """The answer's plain text (``ANSWER:`` line), verdict and P(correct)."""
    body, value, verdict, p = answer_parts(profile, hint, task, rng, draws)
    return (body if value is None else f"{body}\nANSWER: {value}"), verdict, p


def gateway_answer(
    tasks: Mapping[str, Task],
    coupled: bool,
    profile: Profile,
    hint: Mapping[str, Any],
    messages: Sequence[ChatMessage],
    params: SamplingParams,
) -> SimAnswer:
    """The whole answer to one gateway request (the simulator's ``generate`` for it)."""
    rng = make_rng(profile.name, messages, params)
    draws = make_rng(None, messages, params) if coupled else rng
    task = tasks.get(str(hint.get("task", "")))
    tags = code.code_tags(messages)
    worker = has_worker(params.tools) or (tags is not None and code.workers(messages))
    reported = formats.reported_value(messages) if worker else None
    body, value, verdict, p = answer_parts(profile, hint, task, rng, draws, reported)
    if tags is not None:  # a code agent: one block per step (agentbus.sim.gateway_code)
        text = code.code_answer(body, value, messages, tags)
    else:
        text = formats.render(body, value, messages, hint.get("format"))
    finish = "stop"
    if count_tokens(text) > params.max_tokens:
        text, finish = text[: params.max_tokens * 4], "length"
    call = tool_call(params.tools, messages, rng, value)
    calls = () if call is None else (call,)
    return SimAnswer(
        text=text,
        prompt_tokens=prompt_tokens(messages),
        completion_tokens=max(1, count_tokens(text)),
        finish_reason="tool_calls" if calls else finish,
        role=str(hint.get("module", "")),
        profile=profile.name,
        task_id=None if task is None else task.id,
        verdict=verdict,
        p_correct=p,
        tool_calls=calls,
    )


__all__ = [
    "HINT",
    "MODULE_SKILLS",
    "answer_parts",
    "answer_text",
    "gateway_answer",
    "has_worker",
    "hint_of",
    "module_skill",
    "probability",
    "tool_call",
    "wrong_answer",
]

"""The generative model of the simulated LLM: a noisy oracle with known skills.

For one chat request (``model`` = a profile name, ``messages``, sampling):

1. **Role.** The system prompt names it: the first ``"<role> module"`` phrase
   with role one of planning, reasoning, action, reflection, or another
   agent's role listed in ``ROLE_SKILLS`` (MMAU's planner and solver), which
   answers with the skill named there; else ``other``.
2. **Task.** Every expert is asked ``find_task(messages)``; the first hit
   wins. No hit: the answer is a plausible generic text for the role (never
   an error), drawn from the same random stream.
3. **Upstream.** The expert's ``assess`` says whether the plan, the latest
   thought and the latest reflection shown in the prompt are good (True),
   bad (False) or absent (None), and how hard the task is (``difficulty``,
   in logits, the same for every model: a hard task lowers the weak and the
   strong model's chances alike, so a strong model does not solve
   everything and a weak one still solves the easy tasks).
4. **Verdict.** With the profile's :class:`~agentbus.sim.profiles.RoleSkill`
   ``s`` for the role::

       z = logit(s.base) - difficulty + sum over signals k present:
               +s.k.good  if good,   -s.k.bad  if bad
       P(correct) = 1 / (1 + exp(-z))

   ``correct ~ Bernoulli(P(correct))`` and, independently,
   ``malformed ~ Bernoulli(s.malformed)``.
5. **Text.** ``expert.respond(query, verdict, rng)`` writes the answer.
   Free-text roles (everything but ``action``) are padded with neutral
   elaboration sentences up to about ``s.tokens`` tokens, so that verbosity
   and therefore serving time differ between profiles as they would for real
   models; padding never contains digits or fenced blocks.
6. **Sampling.** ``stop`` strings cut the text; ``max_tokens`` truncates it
   (``finish_reason="length"``).

Randomness: at temperature 0 the RNG is seeded from a hash of the model name
and the full prompt, so the same request always gets the same answer (this is
what makes shared calls exact). At temperature > 0 with a seed, the hash also
covers the seed; without a seed the RNG is fresh.

Coupled verdicts (``SimModel(coupled=True)``, ``SimConfig.coupled``): the two
uniforms behind ``correct`` and ``malformed`` come from a hash of the prompt
alone, shared by every model, so on the same prompt a model with a higher
P(correct) is right whenever a lower one is. These are common random numbers
across coalitions: the Shapley differences get less noisy while each model's
marginal accuracy is unchanged. Answer texts still use the per-model stream.

Tokens are approximated as ``ceil(chars / 4)`` per text, plus 4 per chat
message for the role framing: close enough to BPE counts on English and code
to make serving times and usage realistic, and free to compute.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentbus.core import registry
from agentbus.core.environment import Task
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.answer import (
    CHARS_PER_TOKEN,
    SimAnswer,
    count_tokens,
    make_rng,
    prompt_tokens,
)
from agentbus.sim.expert import (
    ROLE_SKILLS,
    ROLES,
    Expert,
    ExpertQuery,
    Upstream,
    Verdict,
    skill_role,
)
from agentbus.sim.filler import PADDING as _PADDING
from agentbus.sim.gateway_model import gateway_answer, hint_of
from agentbus.sim.mistakes import injected
from agentbus.sim.profiles import Profile, ProfileSet, RoleSkill

_ROLE_RE = re.compile(r"\b(" + "|".join((*ROLES, *ROLE_SKILLS)) + r") module\b", re.IGNORECASE)


_GENERIC: dict[str, tuple[str, ...]] = {
    "planning": (
        "1. Read the task carefully and identify what is asked.\n"
        "2. Gather the facts the observation provides.\n"
        "3. Work towards the goal one step at a time.\n"
        "4. Check the result before finishing.",
        "1. Understand the goal.\n2. Break it into small steps.\n3. Execute and verify each.",
    ),
    "reasoning": (
        "The task asks for a specific result; the next step is to use the information "
        "given and make progress on the first open part.",
        "Looking at what we know so far, the most promising move is to continue with the "
        "plan's next step.",
    ),
    "action": ("```action\nlook\n```", "```action\nsubmit\n```"),
    "reflection": (
        "The last step did not achieve what was intended; next time I should check the "
        "preconditions before acting.",
        "The previous attempt went in the wrong direction; I should revisit the plan.",
    ),
    "other": (
        "Here is my answer based on the information provided.",
        "I have considered the request and this is my response.",
    ),
}


def detect_role(messages: Sequence[ChatMessage]) -> str:
    """The module role named in the system prompt (``"<role> module"``), else ``other``."""
    for m in messages:
        if m["role"] == "system":
            found = _ROLE_RE.search(m["content"])
            if found:
                return found.group(1).lower()
    return "other"


def probability_correct(skill: RoleSkill, upstream: Upstream) -> float:
    """The logistic combination of base skill and upstream signals (module docstring)."""
    z = math.log(skill.base / (1.0 - skill.base)) - upstream.difficulty
    for name in ("plan", "thought", "reflection"):
        signal: bool | None = getattr(upstream, name)
        shift = getattr(skill, name)
        if signal is True:
            z += shift.good
        elif signal is False:
            z -= shift.bad
    return 1.0 / (1.0 + math.exp(-z))


def strip_backend(model: str) -> str:
    """Accept ``sim:NAME`` as well as ``NAME`` for a profile."""
    return model.split(":", 1)[1] if model.startswith("sim:") else model


class SimModel:
    """Profiles + experts -> answers. Pure and synchronous; serving time lives elsewhere.

    Experts are called on the event loop, so their ``find_task``, ``assess``
    and ``respond`` must be cheap (dictionary lookups and string work).
    """

    def __init__(
        self,
        profiles: ProfileSet | Mapping[str, Mapping[str, Any]] | None = None,
        experts: Iterable[Expert] | None = None,
        *,
        coupled: bool = False,
    ) -> None:
        self.profiles = profiles if isinstance(profiles, ProfileSet) else ProfileSet(profiles)
        self.coupled = coupled
        self.experts: list[Expert] = list(experts or [])
        #: every task handed over, by id: the generic gateway model looks them up
        self.tasks: dict[str, Task] = {}

    def profile(self, model: str) -> Profile:
        """The profile a request's model name selects (UserError lists the known ones)."""
        return self.profiles.get(strip_backend(model))

    def add_expert(self, expert: Expert) -> None:
        self.experts.append(expert)

    def add_tasks(self, env_name: str, tasks: Iterable[Task]) -> None:
        """Hand a run's tasks to the expert of ``env_name`` (no expert: nothing to do)."""
        tasks = list(tasks)
        self.tasks.update((t.id, t) for t in tasks)
        for expert in self.experts:
            if expert.env == env_name:
                expert.add_tasks(tasks)

    def find(self, messages: Sequence[ChatMessage]) -> tuple[Expert, Task] | None:
        for expert in self.experts:
            task = expert.find_task(messages)
            if task is not None:
                return expert, task
        return None

    def generate(
        self, model: str, messages: Sequence[ChatMessage], params: SamplingParams
    ) -> SimAnswer:
        """Answer one chat request (see the module docstring for the steps)."""
        profile = injected(self.profile(model), messages)
        hint = hint_of(params)
        if hint is not None:  # a gateway agent's call (agentbus.sim.gateway_model)
            return gateway_answer(self.tasks, self.coupled, profile, hint, messages, params)
        role = detect_role(messages)
        skill = profile.skill(skill_role(role))
        rng = make_rng(profile.name, messages, params)
        found = self.find(messages)
        task_id: str | None = None
        verdict: Verdict | None = None
        p: float | None = None
        if found is None:
            text = rng.choice(_GENERIC.get(skill_role(role), _GENERIC["other"]))
        else:
            expert, task = found
            task_id = task.id
            query = ExpertQuery(role=role, task=task, messages=messages)
            p = probability_correct(skill, expert.assess(query))
            draws = make_rng(None, messages, params) if self.coupled else rng
            verdict = Verdict(
                correct=draws.random() < p, malformed=draws.random() < skill.malformed
            )
            text = expert.respond(query, verdict, rng)
        if role != "action":
            text = _pad(text, skill.tokens, rng)
        text, finish, stop = _apply_limits(text, params)
        return SimAnswer(
            text=text,
            prompt_tokens=prompt_tokens(messages),
            completion_tokens=max(1, count_tokens(text)),
            finish_reason=finish,
            stop_sequence=stop,
            role=role,
            profile=profile.name,
            task_id=task_id,
            verdict=verdict,
            p_correct=p,
        )


def _pad(text: str, target_tokens: int, rng: random.Random) -> str:
    """Add neutral sentences until about ``target_tokens`` (varies +-30% per answer)."""
    target = int(target_tokens * rng.uniform(0.7, 1.3))
    if count_tokens(text) >= target:
        return text
    extra: list[str] = []
    length = len(text)
    while length < target * CHARS_PER_TOKEN:
        sentence = rng.choice(_PADDING)
        extra.append(sentence)
        length += len(sentence) + 1
    return text.rstrip() + "\n\n" + " ".join(extra)


def _apply_limits(text: str, params: SamplingParams) -> tuple[str, str, str | None]:
    """Cut at the earliest stop string, then at ``max_tokens``: (text, finish, stop)."""
    hits = [(text.index(s), s) for s in params.stop if s and s in text]
    stop: str | None = None
    if hits:
        at, stop = min(hits)
        text = text[:at]
    if count_tokens(text) > params.max_tokens:
        return text[: params.max_tokens * CHARS_PER_TOKEN], "length", None
    return text, "stop", stop


def load_experts(names: Iterable[str] | None = None) -> list[Expert]:
    """Instantiate the experts registered under ``agentbus.experts`` (all of them by default).

    None is skipped: an expert that fails to load is a :class:`UserError`,
    because a silently missing expert would turn a whole environment's
    answers into generic text and the attribution into noise.
    """
    chosen = registry.names("experts") if names is None else list(names)
    experts: list[Expert] = []
    for name in chosen:
        cls = registry.get("experts", name)
        expert = cls() if isinstance(cls, type) else cls
        experts.append(expert)
    return experts

"""An Inspect AI task as an agentbus workload: its samples are the tasks, its solver the agent.

``--inspect path/task.py@name`` loads the task with Inspect's own loader
(task arguments, the task file's directory while it loads). Each sample
becomes a :class:`~agentbus.core.environment.Task` whose hidden ``answer`` is
the sample's target, so the simulator knows it as it knows a ``--dataset``'s.
:class:`InspectAgent` runs one sample per episode, in this process, with
every model of the task pointed at the episode's module gateway: a role
``R`` (``get_model(role="R")``, bound or not) is the module ``R``, the main
model (``generate()``, ``get_model()``) the module :data:`MAIN_MODULE`. So every
call goes through the router like any gateway agent's, and a role the run has
no slot for is refused (or sent to ``--unmapped``), never to a provider.
Inspect's own scorer then scores the final state; its value becomes the
episode's reward (:func:`reward_of`).

What agentbus does not take from Inspect is refused in one line at load
time (:func:`refusals`): sandboxes (an Inspect sandbox is a container
agentbus does not run), epochs beyond ``--repeats`` and tasks without a scorer.
inspect-ai is an optional extra: :func:`require_inspect` says how to install it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import math
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentbus.core.environment import Task as BusTask
from agentbus.core.errors import UserError
from agentbus.gateway.context import AgentContext, close_each
from agentbus.gateway.runners import AgentFailed, CallableAgent
from agentbus.gateway.tasks import ENV

#: the module the task's main model (``generate()``, ``get_model()``) calls
MAIN_MODULE = "model"
INSTALL = "pip install 'agentbus[inspect]'"


def require_inspect() -> None:
    """One line, not a traceback, when inspect-ai is not installed."""
    if importlib.util.find_spec("inspect_ai") is None:
        raise UserError(f"--inspect runs an Inspect AI task and needs inspect-ai: {INSTALL}")


@dataclass
class LoadedTask:
    """An Inspect task and its samples by agentbus task id."""

    task: Any
    spec: str
    samples: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.task.name)

    @property
    def version(self) -> str:
        return str(self.task.version)

    def roles(self) -> list[str]:
        """The roles the task binds itself (``Task(model_roles=...)``)."""
        return sorted(self.task.model_roles or {})


def split_spec(spec: str) -> tuple[Path, str | None]:
    """``path/task.py@name`` -> (path, name); the name may be left out."""
    path, sep, name = spec.partition("@")
    return Path(path), (name or None) if sep else None


def load(spec: str, task_args: dict[str, Any] | None = None) -> LoadedTask:
    """Load ``spec`` with Inspect's loader: exactly one task, else one line saying why."""
    require_inspect()
    from inspect_ai._eval.loader import load_tasks

    path, _ = split_spec(spec)
    if not path.is_file():
        raise UserError(f"--inspect {spec!r}: no such file {path}")
    try:
        tasks = load_tasks([spec], dict(task_args or {}))
    except Exception as exc:
        raise UserError(f"--inspect {spec!r}: {type(exc).__name__}: {exc}") from None
    if len(tasks) != 1:
        names = ", ".join(t.name for t in tasks) or "none"
        raise UserError(
            f"--inspect {spec!r}: name one task as {path}@NAME (the file holds {names})"
        )
    loaded = LoadedTask(tasks[0], spec)
    for index, sample in enumerate(loaded.task.dataset, 1):
        if sample.id is None:
            sample.id = index  # as Inspect numbers samples without ids
        ident = str(sample.id)
        if ident in loaded.samples:
            raise UserError(f"--inspect {spec!r}: sample id {ident!r} appears twice")
        loaded.samples[ident] = sample
    if not loaded.samples:
        raise UserError(f"--inspect {spec!r}: the task's dataset holds no samples")
    return loaded


def refusals(loaded: LoadedTask, repeats: int) -> list[str]:
    """The task's features agentbus does not run, one line each (empty: it runs)."""
    task = loaded.task
    out = []
    if task.sandbox is not None or any(s.sandbox is not None for s in loaded.samples.values()):
        out.append(
            f"task {loaded.name!r} uses an Inspect sandbox, which agentbus does not run "
            "(run the agent as --agent-cmd, in agentbus's own sandbox, instead)"
        )
    if task.epochs is not None and task.epochs > 1 and task.epochs != repeats:
        out.append(
            f"task {loaded.name!r} asks for {task.epochs} epochs: give --repeats "
            f"{task.epochs} (each epoch is an episode of its own, not reduced)"
        )
    if not task.scorer:
        out.append(
            f"task {loaded.name!r} has no scorer: agentbus needs Inspect's scorer to decide "
            "each sample"
        )
    return out


def target_text(target: Any) -> str:
    """The one right answer the simulator gives (a list target: its first entry)."""
    if isinstance(target, list):
        return str(target[0]) if target else ""
    return str(target)


def tasks_of(loaded: LoadedTask) -> list[BusTask]:
    """The samples as agentbus tasks: the input shown, the target hidden."""
    out = []
    for ident, sample in loaded.samples.items():
        text = sample.input if isinstance(sample.input, str) else _last_text(sample.input)
        hidden = {"answer": target_text(sample.target), "target": sample.target}
        data = {"id": ident, "input": text, "metadata": dict(sample.metadata or {})}
        out.append(BusTask(id=ident, env=ENV, instruction=text, data=data, hidden=hidden))
    return out


def _last_text(messages: Any) -> str:
    return str(messages[-1].text) if messages else ""


def reward_of(value: Any) -> float:
    """An Inspect score value as a reward in [0, 1]: Inspect's own ``value_to_float``.

    ``C``/``I``/``P``/``N`` are 1, 0, 0.5, 0; ``yes``/``true`` 1; numbers as
    they are (clipped to [0, 1]); a dict or list value is the mean of its entries;
    an unscored sample (value None or NaN) gets 0.
    """
    from inspect_ai.scorer import value_to_float

    if value is None:  # unscored (a grader that gave no grade): no credit
        return 0.0
    to_float = value_to_float()
    if isinstance(value, dict):
        values = [to_float(v) for v in value.values()]
    elif isinstance(value, list):
        values = [to_float(v) for v in value]
    else:
        values = [to_float(value)]
    mean = sum(values) / len(values) if values else 0.0
    return 0.0 if math.isnan(mean) else min(1.0, max(0.0, mean))


class InspectAgent(CallableAgent):
    """Runs one sample of the task per episode: its plan, then its scorers.

    The episode's models, contexts (active model, roles, store, transcript)
    live in a task of their own, so concurrent episodes never see each
    other's. The result carries the completion as ``answer`` and the scores
    under ``inspect``; agentbus's scorer for the run reads the first scorer's
    reward from it (the scorer ran here, in agentbus, not in the agent's code).
    """

    def __init__(
        self,
        loaded: LoadedTask,
        slots: tuple[str, ...] = (),
        time_limit_s: float | None = None,
        keep_sample: bool = False,
    ) -> None:
        self.loaded = loaded
        #: every role bound to its module: the run's slots and the task's own roles
        self.roles = tuple(sorted((set(slots) | set(loaded.roles())) - {MAIN_MODULE}))
        self.fn = self.episode
        self.label = f"inspect:{loaded.spec}"
        self.time_limit_s = time_limit_s
        self.keep_sample = keep_sample
        self._tls: ssl.SSLContext | None = None
        # CallableAgent's log capture, unused here: Inspect keeps its own transcript
        self.log = None
        self._capture = contextlib.ExitStack()
        self._taken = None

    async def episode(self, task: dict[str, Any], ctx: AgentContext) -> dict[str, Any]:
        sample = self.loaded.samples.get(str(task.get("id")))
        if sample is None:
            raise AgentFailed(f"no sample {task.get('id')!r} in {self.loaded.name}")
        clients: list[Any] = []
        try:  # a task of its own: fresh context variables (Inspect's per-sample state)
            return await asyncio.create_task(self._run(sample, ctx, clients))
        finally:
            await close_each(http.aclose for http in clients)
            _forget_connections(ctx.api_key)

    def _model(self, name: str, ctx: AgentContext, role: str | None, clients: list[Any]) -> Any:
        """``openai/NAME`` at the episode's gateway, on an HTTP client of its own.

        Inspect's provider hooks its request tracking into the client it is
        given, so models cannot share one; they share the TLS context instead
        (loading the CA bundle is ~20 ms of CPU per client, the client alone 0.1 ms).
        """
        import openai
        from inspect_ai.model import get_model

        if self._tls is None:
            self._tls = ssl.create_default_context()
        http = openai.DefaultAsyncHttpxClient(timeout=600.0, verify=self._tls)
        clients.append(http)
        model = get_model(
            f"openai/{name}",
            base_url=ctx.base_url,
            api_key=ctx.api_key,
            memoize=False,
            responses_api=False,  # the gateway's chat completions serve every model
            http_client=http,
        )
        if role is not None:  # not get_model(role=...): that would look the role up in us
            model._set_role(role)
        return model

    async def _run(self, sample: Any, ctx: AgentContext, clients: list[Any]) -> dict[str, Any]:
        from inspect_ai._eval.context import init_task_context
        from inspect_ai._eval.task.generate import task_generate
        from inspect_ai._eval.task.run import resolve_plan
        from inspect_ai._eval.task.util import sample_messages
        from inspect_ai.log._transcript import Transcript, init_transcript
        from inspect_ai.model import ModelName
        from inspect_ai.scorer import Target
        from inspect_ai.scorer._score import init_scoring_context
        from inspect_ai.solver import TaskState
        from inspect_ai.solver._fork import set_task_generate
        from inspect_ai.solver._task_state import set_sample_state
        from inspect_ai.util import LimitExceededError
        from inspect_ai.util._store import init_subtask_store

        task = self.loaded.task
        main = self._model(MAIN_MODULE, ctx, None, clients)
        roles = RoleModels(lambda r: self._model(r, ctx, r, clients))
        for role in self.roles:
            roles.get(role)
        config = task.config
        init_task_context(main, roles, config, approval=task.approval)
        target = Target(sample.target)
        state = TaskState(
            model=ModelName(str(main)),
            sample_id=sample.id,
            epoch=1,
            input=sample.input,
            target=target,
            choices=sample.choices,
            messages=sample_messages(sample),
            message_limit=task.message_limit,
            token_limit=task.token_limit,
            completed=False,
            metadata=dict(sample.metadata or {}),
        )
        transcript = Transcript()
        init_transcript(transcript)
        set_sample_state(state)
        init_subtask_store(state.store)
        scorers = list(task.scorer or [])
        init_scoring_context(scorers, target)

        async def generate(state: Any, tool_calls: Any = "loop", **kwargs: Any) -> Any:
            return await task_generate(
                model=main,
                state=state,
                tool_calls=tool_calls,
                cache=kwargs.pop("cache", False),
                config=config.merge(kwargs),
            )

        set_task_generate(generate)
        limit_note = None
        try:
            with _limits(task):
                state = await resolve_plan(task, None)(state, generate)
        except LimitExceededError as exc:  # as in Inspect: the sample ends, then is scored
            limit_note = str(exc)
        scores: dict[str, Any] = {}
        for scorer in scorers:
            score = await scorer(state, target)
            if score is not None:
                scores[_scorer_name(scorer, scores)] = score
        if not scores:
            raise AgentFailed(f"the scorers of {self.loaded.name} returned no score")
        first = next(iter(scores.values()))
        reward = reward_of(first.value)
        result: dict[str, Any] = {
            "answer": state.output.completion,
            "inspect": {
                "scores": {k: s.model_dump(mode="json") for k, s in scores.items()},
                "reward": reward,
                "success": reward >= 1.0,
            },
        }
        if limit_note is not None:
            result["inspect"]["limit"] = limit_note
        if self.keep_sample:
            result["inspect"]["sample"] = _sample_record(sample, state, scores, transcript)
        return result

    async def aclose(self) -> None:
        return None


class RoleModels(dict[str, Any]):
    """Every role name is bound: a role the run declared, or any other the solver asks for.

    Inspect falls back to the main model for a role nobody bound; here the role
    gets its own module instead, so a role the run has no slot for (a typo in
    ``--slots``, a grader) is refused by the gateway under its own name (or
    sent to ``--unmapped``), and the run's first-block check names it.
    """

    def __init__(self, make: Callable[[str], Any]) -> None:
        super().__init__()
        self.make = make

    def __bool__(self) -> bool:  # Inspect replaces a falsy roles mapping with {}
        return True

    def get(self, role: str, default: Any = None) -> Any:
        if role not in self:
            self[role] = self.make(role)
        return self[role]


def _forget_connections(token: str) -> None:
    """Drop Inspect's concurrency limiters keyed by this episode's token (one per model).

    Inspect keeps a limiter per connection key (API key and model name) for
    the life of the process; every episode has a token of its own, so without
    this a long run would hold one per model per episode it ever ran.
    """
    from inspect_ai.util import _concurrency

    limiters = getattr(getattr(_concurrency, "_concurrency_registry", None), "_semaphores", None)
    if isinstance(limiters, dict):
        for key in [k for k in limiters if token in str(k)]:
            del limiters[key]


@contextlib.contextmanager
def _limits(task: Any) -> Iterator[None]:
    """The task's message and token limits around its plan (Inspect's own limit scopes)."""
    from inspect_ai.util import message_limit, token_limit

    with message_limit(task.message_limit), token_limit(task.token_limit):
        yield


def _scorer_name(scorer: Any, taken: dict[str, Any]) -> str:
    from inspect_ai.scorer._scorer import unique_scorer_name

    return unique_scorer_name(scorer, list(taken))


def _sample_record(sample: Any, state: Any, scores: dict[str, Any], transcript: Any) -> Any:
    """The episode as Inspect's ``EvalSample`` (JSON), for an Inspect log of the run."""
    from inspect_ai.log import EvalSample

    events = list(getattr(transcript, "events", []) or [])
    return EvalSample(
        id=sample.id,
        epoch=1,
        input=sample.input,
        choices=sample.choices,
        target=sample.target,
        metadata=dict(sample.metadata or {}),
        messages=state.messages,
        output=state.output,
        scores=scores,
        events=events,
    ).model_dump(mode="json", exclude_none=True)


__all__ = [
    "INSTALL",
    "MAIN_MODULE",
    "InspectAgent",
    "LoadedTask",
    "load",
    "refusals",
    "require_inspect",
    "reward_of",
    "tasks_of",
]

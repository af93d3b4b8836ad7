"""The coalition evaluation plan: which episodes to run and how to build them.

For every test model, every coalition of the varied slots, every task and
every repeat there is one episode. Its id is a stable key
``MODEL|COALITION|TASK|rREPEAT`` so that a resumed run recognises what it has
already done. Slots that are not varied (``--slots`` names a subset) always use
the default implementation, which turns the 4-slot CapaBench game into, for
example, MMAU's planner-shift/solver-shift 2-slot game.

A varied slot's two sides are the agent's module on the default model and on
the test model, unless ``vary`` gives the slot its own pair of
:class:`~agentbus.core.variants.Variant` (any module, any model, or ``off``: no
actor for the slot). Episode ids do not change with ``vary``: they still name
the test column (the test model), the coalition, the task and the repeat, so
a CapaBench run (no ``vary``) keeps the ids and metadata it always had.

This module builds specs only from names (the registry finds modules and
environments), so the core stays free of concrete plugins.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentbus.core import registry
from agentbus.core.actor import Actor
from agentbus.core.coalitions import EMPTY_IN_EPISODE_ID, all_coalitions, coalition_key
from agentbus.core.environment import Environment, Task
from agentbus.core.episode import ActorSpec, EpisodeSpec
from agentbus.core.errors import UserError
from agentbus.core.variants import OFF, Variant, label
from agentbus.llm.types import LLM


def episode_id(model: str, key: str, task_id: str, repeat: int) -> str:
    # interned: the run's per-cell tables (blocks, books, the log index) share one copy
    return sys.intern(f"{model}|{key or EMPTY_IN_EPISODE_ID}|{task_id}|r{repeat}")


def cell_id(plan: EvaluationPlan, cell: tuple[str, tuple[str, ...], Task, int]) -> str:
    """The episode id of one plan cell (model, coalition, task, repeat)."""
    model, coalition, task, repeat = cell
    return episode_id(model, coalition_key(plan.varied, coalition), task.id, repeat)


@dataclass(frozen=True)
class Agent:
    """An agent: its slots in order and the module (registry name) filling each."""

    slots: tuple[str, ...]
    modules: Mapping[str, str]

    @classmethod
    def resolve(cls, name: str, overrides: Mapping[str, str]) -> Agent:
        """Look the agent up by name and apply ``slot=module`` overrides."""
        base = registry.get("agents", name)
        if not isinstance(base, Mapping):
            raise UserError(f"agent {name!r} is not a mapping of slot -> module name")
        modules = dict(base)
        for slot, module in overrides.items():
            if slot not in modules:
                raise UserError(
                    f"agent {name!r} has no slot {slot!r}; its slots: {', '.join(modules)}"
                )
            modules[slot] = module
        for module in modules.values():
            actor_cls = registry.get("modules", module)
            if not (isinstance(actor_cls, type) and issubclass(actor_cls, Actor)):
                raise UserError(f"module {module!r} is not an Actor subclass")
        return cls(tuple(modules), modules)

    def actor_class(self, slot: str) -> type[Actor]:
        return module_class(self.modules[slot])


def module_class(name: str) -> type[Actor]:
    """The Actor subclass registered as ``name`` (a one-line UserError otherwise)."""
    cls = registry.get("modules", name)
    if not (isinstance(cls, type) and issubclass(cls, Actor)):
        raise UserError(f"module {name!r} is not an Actor subclass")
    return cls


#: slot -> (module, model) of the actor filling it, or None when the slot is off
Resolved = dict[str, tuple[str, str] | None]


@dataclass
class EvaluationPlan:
    """The full grid of episodes of one evaluation."""

    agent: Agent
    varied: tuple[str, ...]
    default_model: str
    test_models: tuple[str, ...]
    tasks: Sequence[Task]
    repeats: int = 1
    metadata: dict[str, Any] = field(default_factory=dict)
    #: slot -> (default variant, test variant) for slots varied over implementations
    vary: Mapping[str, tuple[Variant, Variant]] = field(default_factory=dict)
    #: the coalitions one task runs, when a sampled estimator draws them per task
    #: (agentbus/app/estimation.py); None: every coalition on every task
    design: Callable[[Task], Sequence[tuple[str, ...]]] | None = None
    #: episodes per task and test model under ``design``
    design_size: int = 0

    def __post_init__(self) -> None:
        for slot in self.vary:
            if slot not in self.agent.slots:
                raise UserError(
                    f"--vary names unknown slot {slot!r}; this agent has "
                    f"{', '.join(self.agent.slots)}"
                )
        unknown = set(self.varied) - set(self.agent.slots)
        if unknown:
            raise UserError(
                f"--slots names unknown slots {', '.join(sorted(unknown))}; "
                f"this agent has {', '.join(self.agent.slots)}"
            )
        if not self.varied:
            raise UserError("--slots must name at least one slot")
        self._check_vary()

    def _check_vary(self) -> None:
        """Refuse --vary combinations that contradict the agent, --slots or --test."""
        for slot, pair in self.vary.items():
            if slot not in self.varied:
                raise UserError(
                    f"--vary {slot}=... but --slots does not vary {slot!r}; "
                    "add it to --slots or drop the --vary"
                )
            for variant in pair:
                if variant.module is not None:
                    module_class(variant.module)
        fixed = all(
            slot in self.vary and not self.vary[slot][1].follows_side for slot in self.varied
        )
        if fixed and len(self.test_models) > 1:
            raise UserError(
                "--vary fixes the test variant of every varied slot, so the "
                f"{len(self.test_models)} --test columns would run the same game; "
                "give one --test, or use 'on' or MODULE (which take the column's model)"
            )

    def resolve(self, model: str, coalition: Sequence[str]) -> Resolved:
        """slot -> (module, model) or None (off) for this coalition of test column ``model``."""
        members = set(coalition)
        out: Resolved = {}
        for slot in self.agent.slots:
            on_test = slot in members
            side_model = model if on_test else self.default_model
            pair = self.vary.get(slot)
            if pair is None:
                out[slot] = (self.agent.modules[slot], side_model)
            else:
                out[slot] = pair[on_test].resolve(self.agent.modules[slot], side_model)
        return out

    def variant_labels(self, model: str) -> dict[str, dict[str, str]]:
        """slot -> {"default": label, "test": label} of every varied slot, for column ``model``."""
        default = self.resolve(model, ())
        test = self.resolve(model, self.varied)
        return {
            slot: {"default": label(default[slot]), "test": label(test[slot])}
            for slot in self.varied
        }

    @property
    def coalitions(self) -> list[tuple[str, ...]]:
        return all_coalitions(self.varied)

    def size(self) -> int:
        per_task = self.design_size if self.design is not None else len(self.coalitions)
        return len(self.test_models) * per_task * len(self.tasks) * self.repeats

    def task_coalitions(self, task: Task) -> Sequence[tuple[str, ...]]:
        """The coalitions ``task`` runs: all of them, or the estimator's draw for it."""
        return self.coalitions if self.design is None else self.design(task)

    def cells(self) -> Iterator[tuple[str, tuple[str, ...], Task, int]]:
        """Every (test model, coalition, task, repeat), task-major.

        Task-major order (all repeats of a task before the next task) keeps the
        coalitions of one task in flight together, so their shared LLM calls
        coalesce instead of waiting in the cache, and each task block
        completes early for the live estimate.
        """
        for task in self.tasks:
            yield from self.task_cells(task)

    def task_cells(self, task: Task) -> Iterator[tuple[str, tuple[str, ...], Task, int]]:
        """The cells of one task block: every repeat, test model and coalition."""
        for repeat in range(self.repeats):
            for model in self.test_models:
                for coalition in self.task_coalitions(task):
                    yield model, coalition, task, repeat


@dataclass
class SpecFactory:
    """Turns plan cells into episode specs with the right model per slot."""

    plan: EvaluationPlan
    env_factory: Callable[[], Environment]
    client: Callable[[str], LLM]
    max_steps: int | None = None
    timeout_s: float | None = 600.0
    trace: bool = True
    #: builds an episode's actors instead of one module actor per slot (your own
    #: agent through the gateway: agentbus/app/external.py)
    actors_for: Callable[[Resolved], list[ActorSpec]] | None = None

    def assignment(self, model: str, coalition: Sequence[str]) -> dict[str, str]:
        """slot -> model spec (or ``off``) for this coalition of ``model``."""
        return assignment_of(self.plan.resolve(model, coalition))

    def build(
        self, model: str, coalition: Sequence[str], task: Task, repeat: int, *, label: str = ""
    ) -> EpisodeSpec:
        key = coalition_key(self.plan.varied, coalition)
        metadata: dict[str, Any] = {
            "test_model": label or model,
            "default_model": self.plan.default_model,
            "coalition": list(coalition),
            "slots": list(self.plan.varied),
            "repeat": repeat,
        }
        if self.plan.vary:  # only then: a CapaBench run's records stay as they were
            metadata["variants"] = self.plan.variant_labels(model)
        return self.build_resolved(
            self.plan.resolve(model, coalition),
            task,
            repeat,
            episode=episode_id(label or model, key, task.id, repeat),
            metadata=metadata,
        )

    def build_assignment(
        self,
        assignment: Mapping[str, str],
        task: Task,
        repeat: int,
        *,
        episode: str,
        metadata: dict[str, Any],
    ) -> EpisodeSpec:
        """An episode with the agent's own modules on the given models (slot -> model)."""
        agent = self.plan.agent
        resolved: Resolved = {slot: (agent.modules[slot], assignment[slot]) for slot in agent.slots}
        return self.build_resolved(resolved, task, repeat, episode=episode, metadata=metadata)

    def build_resolved(
        self,
        resolved: Resolved,
        task: Task,
        repeat: int,
        *,
        episode: str,
        metadata: dict[str, Any],
    ) -> EpisodeSpec:
        """An episode with one actor per slot that is not off (an off slot gets none)."""
        if self.actors_for is not None:
            actors = self.actors_for(resolved)
        else:
            actors = [
                ActorSpec(slot, module_class(impl[0]), self.client(impl[1]))
                for slot, impl in resolved.items()
                if impl is not None
            ]
        return EpisodeSpec(
            episode_id=episode,
            task=task,
            env_factory=self.env_factory,
            actors=actors,
            max_steps=self.max_steps,
            timeout_s=self.timeout_s,
            metadata={
                **self.plan.metadata,
                **metadata,
                "assignment": assignment_of(resolved),
            },
            trace=self.trace,
        )


def assignment_of(resolved: Resolved) -> dict[str, str]:
    """slot -> model spec, or ``off``: the ``assignment`` metadata actors can read."""
    return {slot: OFF if impl is None else impl[1] for slot, impl in resolved.items()}

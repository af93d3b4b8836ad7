"""Skill profiles: what a simulated model is good at, as plain data.

A profile gives, for each role (``planning``, ``reasoning``, ``action``,
``reflection`` and ``other`` for prompts with no recognised role), the chance
of a correct answer on its own and how much upstream content moves it. The
numbers are logit shifts so that they compose: :mod:`agentbus.sim.model`
adds them to ``logit(base)`` and maps back with the logistic function. A good
plan in the prompt adds ``plan.good``; a bad one subtracts ``plan.bad``; the
same for the latest thought and reflection. A strong model has a high base,
so a wrong thought misleads it less than a weak one; a weak one leans on what
it is shown. The strong actor still follows its reasoning (a sizeable thought
shift), so a strong action module alone does not solve everything: reasoning
and action complement each other, as in CapaBench's results.

Each environment's expert also says how hard a task is (``difficulty``, a
logit penalty every model pays alike, see :mod:`agentbus.sim.model`): tasks
range from easy for everyone to hard for everyone, which keeps the weak
model from failing everything and the strong one from solving everything.

The built-in profiles make the true attribution known by construction:
``strong-<role>`` equals ``weak`` everywhere except in ``<role>``, where it
equals ``strong``. Calibrated against CapaBench (algebra: Llama3-8B 21.6%,
best model 86.8%): on a default run's 30 generated math tasks, ``weak``
alone solves about 0.25 and ``strong`` alone about 0.84,
with every coalition in between and every slot worth something (action and
reasoning most); see ``python -m agentbus.truth show`` for each environment's
exact table.

Profiles are overridable from config: a mapping of name -> fields, merged
over the built-in of that name, or over ``extends`` (default ``weak``) for a
new name (built-in names are overridden first, so a new profile extends
the overridden parent). Nested role fields merge too, so ``{"action": {"base": 0.9}}``
changes only that number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentbus.core.errors import UserError
from agentbus.core.inputs import deep_merge

SKILL_ROLES: tuple[str, ...] = ("planning", "reasoning", "action", "reflection", "other")


class Shift(BaseModel):
    """Logit shifts for one upstream signal: ``+good`` when good, ``-bad`` when bad."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    good: float = Field(0.0, ge=0.0)
    bad: float = Field(0.0, ge=0.0)


class RoleSkill(BaseModel):
    """One role's skill: base accuracy, susceptibility, format errors, verbosity."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: probability of a correct answer when the prompt carries no upstream signal
    base: float = Field(0.5, gt=0.0, lt=1.0)
    plan: Shift = Shift()
    thought: Shift = Shift()
    reflection: Shift = Shift()
    #: probability that the answer breaks the expected format
    malformed: float = Field(0.0, ge=0.0, le=1.0)
    #: typical completion length in tokens (free-text answers are padded to about this)
    tokens: int = Field(60, ge=1)


class Profile(BaseModel):
    """A named model's skills, one :class:`RoleSkill` per role."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    planning: RoleSkill = RoleSkill()
    reasoning: RoleSkill = RoleSkill()
    action: RoleSkill = RoleSkill()
    reflection: RoleSkill = RoleSkill()
    other: RoleSkill = RoleSkill()
    #: prompts this model answers wrong (agentbus.sim.mistakes): faults with a known place
    mistakes: tuple[str, ...] = ()

    def skill(self, role: str) -> RoleSkill:
        """The skill for ``role``; anything unknown falls back to ``other``."""
        return getattr(self, role) if role in SKILL_ROLES else self.other


# Weak: leans heavily on upstream help and is easily misled.
_WEAK: dict[str, dict[str, Any]] = {
    "planning": {"base": 0.35, "malformed": 0.03, "tokens": 110},
    "reasoning": {
        "base": 0.35,
        "plan": {"good": 0.9, "bad": 0.9},
        "reflection": {"good": 1.5, "bad": 1.0},
        "thought": {"good": 0.3, "bad": 0.5},
        "malformed": 0.03,
        "tokens": 90,
    },
    "action": {
        "base": 0.25,
        "plan": {"good": 0.4, "bad": 0.4},
        "thought": {"good": 1.6, "bad": 1.6},
        "malformed": 0.08,
        "tokens": 30,
    },
    "reflection": {
        "base": 0.30,
        "plan": {"good": 0.3, "bad": 0.3},
        "thought": {"good": 0.2, "bad": 0.4},
        "malformed": 0.03,
        "tokens": 80,
    },
    "other": {"base": 0.35, "malformed": 0.05, "tokens": 60},
}

# Strong: right most of the time by itself; helped a little, misled little.
_STRONG: dict[str, dict[str, Any]] = {
    "planning": {"base": 0.92, "malformed": 0.005, "tokens": 140},
    "reasoning": {
        "base": 0.95,
        "plan": {"good": 0.5, "bad": 0.3},
        "reflection": {"good": 0.4, "bad": 0.1},
        "thought": {"good": 0.2, "bad": 0.1},
        "malformed": 0.005,
        "tokens": 110,
    },
    "action": {
        "base": 0.90,
        "plan": {"good": 0.2, "bad": 0.1},
        "thought": {"good": 0.9, "bad": 2.0},
        "malformed": 0.01,
        "tokens": 30,
    },
    "reflection": {
        "base": 0.90,
        "plan": {"good": 0.2, "bad": 0.1},
        "thought": {"good": 0.1, "bad": 0.1},
        "malformed": 0.005,
        "tokens": 100,
    },
    "other": {"base": 0.85, "malformed": 0.005, "tokens": 80},
}


def _builtin_fields() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {"weak": dict(_WEAK), "strong": dict(_STRONG)}
    for role in ("planning", "reasoning", "action", "reflection"):
        out[f"strong-{role}"] = {**_WEAK, role: _STRONG[role]}
    return out


class ProfileSet:
    """The profiles a simulator knows: the built-ins plus config overrides."""

    def __init__(self, overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        fields = _builtin_fields()
        # built-in names first, so a new profile extends the overridden parent
        # whatever the order of the mapping
        ordered = sorted((overrides or {}).items(), key=lambda item: item[0] not in fields)
        for name, over in ordered:
            if not isinstance(over, Mapping):
                raise UserError(f"profile {name!r}: expected a table of fields, got {over!r}")
            over = dict(over)
            parent = over.pop("extends", None)
            if parent is not None and parent not in fields:
                raise UserError(
                    f"profile {name!r} extends unknown profile {parent!r}; "
                    f"known: {', '.join(sorted(fields))}"
                )
            start = fields[parent] if parent is not None else fields.get(name, fields["weak"])
            fields[name] = deep_merge(start, over)
        self._profiles: dict[str, Profile] = {}
        for name, data in fields.items():
            try:
                self._profiles[name] = Profile.model_validate({**data, "name": name})
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise UserError(f"profile {name!r}: {where}: {first['msg']}") from None

    def names(self) -> list[str]:
        return sorted(self._profiles)

    def get(self, name: str) -> Profile:
        """The profile called ``name``; an unknown name lists the known ones."""
        try:
            return self._profiles[name]
        except KeyError:
            raise UserError(
                f"unknown sim profile {name!r}; known: {', '.join(self.names())}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._profiles


BUILTIN = ProfileSet()

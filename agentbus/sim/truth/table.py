"""Stored truth tables: the simulator's reference v(S) per environment and model pair.

One JSON file per (environment, default model, test model) in this package's
``data/`` folder, named ``<env>__<default>__<test>.json`` with ``:`` spelled
``-`` (``math__sim-weak__sim-strong.json``). Each holds the 16 coalition
values of the PRAF agent with their standard errors and everything needed to
make it again (see :class:`TruthTable`). The Shapley and Banzhaf values are
not stored: they follow exactly from v(S), and computing them is the
application layer's job (``python -m agentbus.truth``).

A sub-game over fewer slots (``--slots planning,action``) runs the other
slots on the default model, so its v is the restriction of the full table to
coalitions inside those slots (:meth:`TruthTable.restrict`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from agentbus.core.coalitions import all_coalitions, coalition_key
from agentbus.core.errors import UserError
from agentbus.sim.truth import derived

DATA_DIR = Path(__file__).resolve().parent / "data"
#: what "se" means in every stored table (also written into each file)
SE_MEANING = (
    "standard error of the Monte Carlo mean: the sample standard deviation of the "
    "per-seed block means (each block = the tasks of one generator seed, i.e. one "
    "run's task set) divided by the square root of the number of blocks"
)


class CoalitionValue(BaseModel):
    """One coalition's true value estimate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float
    se: float
    #: episodes (tasks) behind the mean
    tasks: int


class Extension(BaseModel):
    """A later computation that continued a table over the seeds after it (``make --extend``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str
    code_version: str
    created: str
    #: generator seeds of this part, half-open [first, last)
    seeds: tuple[int, int]
    tasks: int
    episodes: int
    seconds: float = 0.0
    workers: int = 1


class Provenance(BaseModel):
    """How a table was made, enough to make it again.

    ``command``, ``code_version``, ``created`` and ``workers`` describe the
    first computation; ``extensions`` the ones that continued it over the
    following seeds. ``seeds``, ``tasks``, ``episodes`` and ``seconds`` cover
    the whole table.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str
    code_version: str
    created: str
    #: generator seeds, half-open [first, last)
    seeds: tuple[int, int]
    tasks_per_seed: int
    tasks: int
    episodes: int
    temperature: float = 0.0
    sampling: dict[str, Any] = Field(default_factory=dict)
    max_steps: int | None = None
    max_steps_effective: int | None = None
    agent: str = "praf"
    seconds: float = 0.0
    workers: int = 1
    se_meaning: str = SE_MEANING
    extensions: tuple[Extension, ...] = ()
    #: how a table that was not computed follows from one that was (see ``derived.py``)
    derived: str | None = None
    #: why the table was (re)computed: ``truth make`` will not replace a stored table
    #: without one, so a table cannot be moved to fit the code without a trace
    reason: str | None = None


class GameOf(BaseModel):
    """Which game a stored table is about: environment, default and test model, slots.

    Shared by the reward tables and the cost tables (:mod:`agentbus.sim.truth.cost`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    env: str
    default: str
    test: str
    slots: tuple[str, ...]


class TruthTable(GameOf):
    """The true coalition values of one (environment, default, test) game."""

    #: coalition key (members in slot order joined by '+'; '' = all default) -> value
    values: dict[str, CoalitionValue]
    #: covariance of the coalition means, rows and columns in the order of ``values``
    covariance: list[list[float]]
    provenance: Provenance

    @property
    def max_se(self) -> float:
        return max(v.se for v in self.values.values())

    def vector(self, slots: Sequence[str] | None = None) -> list[float]:
        """v over the 2^k masks of ``slots`` (bit i = slot i), the estimators' order."""
        order = tuple(slots) if slots is not None else self.slots
        game = self.restrict(order)
        canon = tuple(s for s in self.slots if s in set(order))
        out = [0.0] * (1 << len(order))
        for mask in range(1 << len(order)):
            members = [s for i, s in enumerate(order) if mask >> i & 1]
            out[mask] = game[coalition_key(canon, members)].mean
        return out

    def covariance_matrix(self, slots: Sequence[str] | None = None) -> list[list[float]]:
        """Covariance of :meth:`vector`'s entries (same mask order)."""
        order = tuple(slots) if slots is not None else self.slots
        index = {key: i for i, key in enumerate(self.values)}
        rows: list[int] = []
        for mask in range(1 << len(order)):
            members = [s for i, s in enumerate(order) if mask >> i & 1]
            rows.append(index[coalition_key(self.slots, members)])
        return [[self.covariance[a][b] for b in rows] for a in rows]

    def restrict(self, slots: Sequence[str]) -> dict[str, CoalitionValue]:
        """The sub-game over ``slots``: coalitions inside them, other slots on the default."""
        unknown = set(slots) - set(self.slots)
        if unknown:
            raise UserError(
                f"unknown slots {', '.join(sorted(unknown))}; the table has {', '.join(self.slots)}"
            )
        order = tuple(s for s in self.slots if s in set(slots))
        return {
            coalition_key(order, c): self.values[coalition_key(self.slots, c)]
            for c in all_coalitions(order)
        }

    def check(self) -> list[str]:
        """What is wrong with this table (empty when it is complete and finite)."""
        problems: list[str] = []
        expected = {coalition_key(self.slots, c) for c in all_coalitions(self.slots)}
        if set(self.values) != expected:
            problems.append("coalitions do not match the slots")
        if len(self.covariance) != len(self.values) or any(
            len(row) != len(self.values) for row in self.covariance
        ):
            problems.append("covariance is not square over the coalitions")
        for key, v in self.values.items():
            if not (0.0 <= v.mean <= 1.0) or not math.isfinite(v.se) or v.se < 0:
                problems.append(f"coalition {key or '(none)'}: mean {v.mean}, se {v.se}")
        return problems


def file_name(env: str, default: str, test: str) -> str:
    """``math__sim-weak__sim-strong.json`` for (math, sim:weak, sim:strong)."""
    return "__".join(part.replace(":", "-").replace("/", "_") for part in (env, default, test))


def table_path(env: str, default: str, test: str, directory: Path | None = None) -> Path:
    return (directory or DATA_DIR) / f"{file_name(env, default, test)}.json"


def available(directory: Path | None = None) -> list[TruthTable]:
    """Every stored table, sorted by file name."""
    folder = directory or DATA_DIR
    return [read(p) for p in sorted(folder.glob("*.json"))]


def read(path: Path) -> TruthTable:
    try:
        return TruthTable.model_validate(orjson.loads(path.read_bytes()))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read truth table {path}: {exc}") from None


def load(
    env: str, default: str, test: str, directory: Path | None = None, *, derive: bool = True
) -> TruthTable:
    """The stored table for this game; a UserError naming what exists if there is none.

    With ``derive``, a single-role profile (``sim:strong-action``) without a
    table of its own gets the one that follows exactly from the
    ``sim:weak`` vs ``sim:strong`` table (:mod:`agentbus.sim.truth.derived`).
    """
    path = table_path(env, default, test, directory)
    if not path.exists() and derive:
        base_path = table_path(env, derived.WEAK, derived.STRONG, directory)
        if default == derived.WEAK and base_path.exists():
            table = derived_table(read(base_path), test)
            if table is not None:
                return table
    if not path.exists():
        have = [f"{t.env} {t.default} vs {t.test}" for t in available(directory)]
        known = "; ".join(have) if have else "none"
        raise UserError(
            f"no truth table for env {env!r} with default {default} and test {test} "
            f"(stored: {known}); make one with: python -m agentbus.truth make --env {env} "
            f"--default {default} --test {test}"
        )
    return read(path)


def derived_table(base: TruthTable, test: str) -> TruthTable | None:
    """The (``sim:weak``, ``test``) table from the (``sim:weak``, ``sim:strong``) one, or None.

    Only for a single-role profile ``test`` (:mod:`agentbus.sim.truth.derived`):
    each value, and each covariance entry, is the base table's for the
    coalition ``S ∩ {role}``.
    """
    if base.default != derived.WEAK or base.test != derived.STRONG:
        return None
    role = derived.single_role(test, base.slots)
    if role is None:
        return None
    keys = list(base.values)
    index = {k: i for i, k in enumerate(keys)}
    source = derived.sources(base.slots, role)
    values = {k: base.values[source[k]] for k in keys}
    covariance = [[base.covariance[index[source[a]]][index[source[b]]] for b in keys] for a in keys]
    provenance = base.provenance.model_copy(update={"derived": derived.note(test, role)})
    return base.model_copy(
        update={"test": test, "values": values, "covariance": covariance, "provenance": provenance}
    )


def write(table: TruthTable, directory: Path | None = None) -> Path:
    path = table_path(table.env, table.default, table.test, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps(table.model_dump(mode="json"), option=orjson.OPT_INDENT_2)
    path.write_bytes(data + b"\n")
    return path


__all__ = [
    "DATA_DIR",
    "SE_MEANING",
    "CoalitionValue",
    "Extension",
    "GameOf",
    "Provenance",
    "TruthTable",
    "available",
    "derived_table",
    "file_name",
    "load",
    "read",
    "table_path",
    "write",
]

"""The simulator's cost truth: expected tokens and list-price cost per episode, per coalition.

The reward tables (:mod:`agentbus.sim.truth.table`) are Monte Carlo over the
built-in generator's task blocks, every coalition on the same tasks; the
cost truth is the same computation (:func:`agentbus.sim.truth.reference.compute`
with ``per_task``) read for what each episode used instead of what it scored.
Per coalition it records, as mean per episode with the same block standard
error and block covariance as the reward tables:

* ``prompt_tokens`` and ``completion_tokens``: every call each module made
  (the agent's own use, also the calls the run's cache shared between
  coalitions). At temperature 0 these are a function of (coalition, task), so
  a run's figures are a draw from this table;
* ``usd``: those tokens at the models' list prices with **no prompt-cache
  discount** (every input token at the input rate). The billed and the
  reported agent cost price cached input at the cached rate, and how much
  input was cached depends on which episodes ran first (docs/cost.md), so no
  table can hold them; this figure is what a run's cost would be without a
  prompt cache, and a run's tokens give it exactly.

Files live in ``data/cost/`` beside the reward tables (same names), so the
reward tables' readers never see them. Turning v(S) into Shapley values is the
application layer's job (``python -m agentbus.truth_cost``).
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict

from agentbus.core.errors import UserError
from agentbus.llm.prices import PriceTable
from agentbus.sim.truth.reference import Setting, Sums, coalition_keys
from agentbus.sim.truth.table import DATA_DIR, SE_MEANING, Extension, GameOf, file_name

COST_DIR = DATA_DIR / "cost"
#: the quantities a cost table holds, per episode
QUANTITIES = ("prompt_tokens", "completion_tokens", "usd")
USD_MEANING = "USD at the models' list prices with no prompt-cache discount"


class Estimate(BaseModel):
    """One coalition's mean per episode and its standard error."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float
    se: float


class CostProvenance(Extension):
    """How a cost table was made: one computation's record (as a reward table keeps
    for each extension), plus what its numbers mean and the prices they used."""

    tasks_per_seed: int
    #: USD per million tokens (input, output) of each model, as priced
    prices: dict[str, tuple[float, float]]
    usd_meaning: str = USD_MEANING
    se_meaning: str = SE_MEANING


class CostTable(GameOf):
    """Expected use per episode of every coalition of one (environment, default, test) game."""

    #: quantity -> coalition key -> estimate
    values: dict[str, dict[str, Estimate]]
    #: quantity -> covariance of the coalition means (rows in the order of ``values``)
    covariance: dict[str, list[list[float]]]
    provenance: CostProvenance

    def vector(self, quantity: str, slots: tuple[str, ...]) -> list[float]:
        """The quantity over the 2^k masks of ``slots`` (bit i = slot i), others on default."""
        return [
            self.values[quantity][self._key(mask, slots)].mean for mask in range(1 << len(slots))
        ]

    def covariance_matrix(self, quantity: str, slots: tuple[str, ...]) -> list[list[float]]:
        """Covariance of :meth:`vector`'s entries (same mask order)."""
        index = {key: i for i, key in enumerate(self.values[quantity])}
        rows = [index[self._key(mask, slots)] for mask in range(1 << len(slots))]
        cov = self.covariance[quantity]
        return [[cov[a][b] for b in rows] for a in rows]

    def _key(self, mask: int, slots: tuple[str, ...]) -> str:
        members = {s for i, s in enumerate(slots) if mask >> i & 1}
        return "+".join(s for s in self.slots if s in members)


def episode_use(
    usage: dict[str, tuple[int, int]], members: set[str], setting: Setting, prices: PriceTable
) -> tuple[float, float, float]:
    """(prompt tokens, completion tokens, list USD) of one episode from its per-slot use."""
    prompt = completion = usd = 0.0
    for slot, (inp, out) in usage.items():
        model = setting.test if slot in members else setting.default
        price = prices.price(model)
        if price is None:
            raise UserError(f"model {model} has no price; the cost truth needs one")
        prompt, completion = prompt + inp, completion + out
        usd += price.cost(inp, 0, out)
    return prompt, completion, usd


def block_means(setting: Setting, sums: Sums, prices: PriceTable) -> dict[int, list[list[float]]]:
    """seed -> [per coalition key (``sums.coalitions`` order): mean of each quantity]."""
    acc: dict[int, dict[str, list[list[float]]]] = {}
    for (seed, _task), per_key in (sums.usage or {}).items():
        rows = acc.setdefault(seed, {})
        for key, usage in per_key.items():
            members = set(key.split("+")) if key else set()
            rows.setdefault(key, []).append(list(episode_use(usage, members, setting, prices)))
    out: dict[int, list[list[float]]] = {}
    for seed, rows in acc.items():
        out[seed] = [
            [sum(col) / len(rows[k]) for col in zip(*rows[k], strict=True)] for k in sums.coalitions
        ]
    return out


def build(
    setting: Setting, sums: Sums, prices: PriceTable, *, command: str, code_version: str
) -> CostTable:
    """The cost table of a finished ``per_task`` computation (block means, their se and cov)."""
    slots, _ = coalition_keys(setting.agent)
    means = block_means(setting, sums, prices)
    seeds = sorted(means)
    m = len(seeds)
    if m < 2:
        raise UserError("a cost table needs at least 2 blocks (seeds) for its standard errors")
    values: dict[str, dict[str, Estimate]] = {}
    covariance: dict[str, list[list[float]]] = {}
    for q, quantity in enumerate(QUANTITIES):
        rows = [[means[s][k][q] for k in range(len(sums.coalitions))] for s in seeds]
        centre = [sum(r[j] for r in rows) / m for j in range(len(sums.coalitions))]
        cov = [
            [
                sum((r[i] - centre[i]) * (r[j] - centre[j]) for r in rows) / (m - 1) / m
                for j in range(len(centre))
            ]
            for i in range(len(centre))
        ]
        covariance[quantity] = cov
        values[quantity] = {
            key: Estimate(mean=centre[j], se=math.sqrt(cov[j][j]))
            for j, key in enumerate(sums.coalitions)
        }
    used = {setting.default, setting.test}
    priced = {name: prices.price(name) for name in sorted(used)}
    game = {name: getattr(setting, name) for name in ("env", "default", "test")}
    return CostTable(
        **game,
        slots=slots,
        values=values,
        covariance=covariance,
        provenance=CostProvenance(
            command=command,
            code_version=code_version,
            created=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            seeds=(seeds[0], seeds[-1] + 1),
            tasks_per_seed=setting.per_seed,
            tasks=len(sums.usage or {}),
            episodes=sums.episodes,
            prices={n: (p.input, p.output) for n, p in priced.items() if p is not None},
            seconds=round(sums.seconds, 1),
        ),
    )


def cost_path(env: str, default: str, test: str, directory: Path | None = None) -> Path:
    return (directory or COST_DIR) / f"{file_name(env, default, test)}.json"


def write(table: CostTable, directory: Path | None = None) -> Path:
    path = cost_path(table.env, table.default, table.test, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        orjson.dumps(table.model_dump(mode="json"), option=orjson.OPT_INDENT_2) + b"\n"
    )
    return path


def load(env: str, default: str, test: str, directory: Path | None = None) -> CostTable:
    """The stored cost table; a UserError naming the command that makes one if there is none."""
    path = cost_path(env, default, test, directory)
    if not path.exists():
        raise UserError(
            f"no cost truth for env {env!r} with default {default} and test {test}; make one "
            f"with: python -m agentbus.truth_cost make --env {env} --default {default} "
            f"--test {test}"
        )
    try:
        return CostTable.model_validate(orjson.loads(path.read_bytes()))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read cost table {path}: {exc}") from None


__all__ = [
    "COST_DIR",
    "QUANTITIES",
    "CostTable",
    "block_means",
    "build",
    "cost_path",
    "episode_use",
    "load",
    "write",
]

"""What tokens cost: the price table and the arithmetic, per model spec.

Prices are list prices in USD per million tokens (input, cached input,
output), taken from the providers' pricing pages on the date the built-in
table states (``prices.toml`` next to this file, ``[source]``); providers
change them, so every entry can be overridden or added in the run config's
``[prices]`` table. A ``vllm:`` endpoint has no list price: it costs GPU
time, so its entry gives ``gpu_hour_usd`` (per replica) and optionally
``tokens_per_s``; without the latter, the run's measured throughput turns the
hourly price into a per-token one (:meth:`PriceTable.set_throughput`).

Token counts follow OpenAI's convention: ``input_tokens`` includes the
``cached_input_tokens`` (prompt-cache reads), which are billed at the cached
rate instead of the input rate.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentbus.core.errors import UserError
from agentbus.llm.spec import parse_spec

PER = 1_000_000.0


class Price(BaseModel):
    """USD per million tokens; ``cached_input`` defaults to the input price."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    def cost(self, input_tokens: int, cached_input_tokens: int, output_tokens: int) -> float:
        """USD for one call's (or a sum of calls') tokens."""
        cached = min(max(cached_input_tokens, 0), max(input_tokens, 0))
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return (
            (input_tokens - cached) * self.input
            + cached * cached_rate
            + output_tokens * self.output
        ) / PER


class GpuPrice(BaseModel):
    """A self-served endpoint: what an hour of one replica costs, and how fast it is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpu_hour_usd: float = Field(ge=0)
    #: tokens (input + output) one replica serves per second; None: measured in the run
    tokens_per_s: float | None = Field(default=None, gt=0)

    def per_token(self, tokens_per_s: float) -> Price:
        """The GPU hour spread evenly over the tokens it serves (input = output)."""
        rate = self.gpu_hour_usd / 3600.0 / tokens_per_s * PER
        return Price(input=rate, output=rate, cached_input=rate)


Entry = Price | GpuPrice


@cache
def _builtin() -> dict[str, Any]:
    text = resources.files("agentbus.llm").joinpath("prices.toml").read_text("utf-8")
    return tomllib.loads(text)


def builtin_source() -> dict[str, str]:
    """Where and when the built-in figures were taken."""
    return {str(k): str(v) for k, v in _builtin().get("source", {}).items()}


def _entry(name: str, data: Any) -> Entry:
    if not isinstance(data, Mapping):
        raise UserError(f"invalid price for {name!r}: expected a table of numbers, got {data!r}")
    kind: type[Price] | type[GpuPrice] = GpuPrice if "gpu_hour_usd" in data else Price
    try:
        return kind.model_validate(dict(data))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "price"
        msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        hint = " (USD per million tokens)" if err["type"].startswith("greater_than") else ""
        raise UserError(f"invalid price for {name!r}: {where}: {msg}{hint}") from None


def _canonical(model: str) -> str:
    try:
        return parse_spec(model).key
    except UserError:
        return model


class PriceTable:
    """The built-in prices with the run's ``[prices]`` overrides on top."""

    def __init__(self, overrides: Mapping[str, Any] | None = None) -> None:
        self._entries: dict[str, Entry] = {}
        for name, data in _builtin().get("models", {}).items():
            self._entries[_canonical(name)] = _entry(name, data)
        for name, data in (overrides or {}).items():
            self._entries[_canonical(str(name))] = _entry(str(name), data)
        self._measured: dict[str, float] = {}
        #: the run's live measurement of a GPU-priced model's tokens per second
        self.rate_source: Callable[[str], float | None] | None = None
        self.overridden = sorted(_canonical(str(n)) for n in overrides or {})

    def entry(self, model: str) -> Entry | None:
        """The table's entry for a model spec (by its canonical spec string), if any."""
        key = _canonical(model)
        found = self._entries.get(key)
        if found is None:
            # a provider model reached through a gateway URL keeps its list price
            try:
                spec = parse_spec(model)
            except UserError:
                return None
            found = self._entries.get(f"{spec.backend}:{spec.model}")
        return found

    def set_throughput(self, model: str, tokens_per_s: float) -> None:
        """The measured serving rate of a GPU-priced model (tokens per second per replica)."""
        if tokens_per_s > 0:
            self._measured[_canonical(model)] = tokens_per_s

    def price(self, model: str) -> Price | None:
        """Per-token prices of ``model``; None when unknown (or GPU-priced and not measured)."""
        entry = self.entry(model)
        if isinstance(entry, GpuPrice):
            rate = entry.tokens_per_s or self._measured.get(_canonical(model))
            if not rate and self.rate_source is not None:
                rate = self.rate_source(model)
            return entry.per_token(rate) if rate else None
        return entry

    def unknown(self, models: Iterable[str]) -> list[str]:
        """The models that have no entry at all."""
        return [m for m in models if self.entry(m) is None]

    def require(self, models: Iterable[str], why: str) -> None:
        """Refuse models without a price, in one line that says how to add one."""
        missing = self.unknown(models)
        if missing:
            names = ", ".join(missing)
            raise UserError(
                f"no price for {names} ({why} needs one); add it to the config, e.g. "
                f'[prices."{missing[0]}"] input = 0.5  cached_input = 0.25  output = 1.5 '
                "(USD per million tokens), or gpu_hour_usd = 2.0 for a vllm: endpoint"
            )

    def describe(self, models: Iterable[str]) -> dict[str, Any]:
        """The prices a run used, for its results file."""
        out: dict[str, Any] = {}
        for model in models:
            entry = self.entry(model)
            price = self.price(model)
            row: dict[str, Any] = {"priced": price is not None}
            if price is not None:
                row.update(price.model_dump())
            if isinstance(entry, GpuPrice):
                row["gpu_hour_usd"] = entry.gpu_hour_usd
                row["tokens_per_s"] = entry.tokens_per_s or self._measured.get(_canonical(model))
            row["overridden"] = _canonical(model) in self.overridden
            out[model] = row
        return {"per_million_tokens_usd": out, "source": builtin_source()}


__all__ = ["GpuPrice", "Price", "PriceTable", "builtin_source"]

"""Configuration of the LLM layer: per-endpoint limits, caching, default sampling.

One :class:`LLMConfig` per run. Limits apply per endpoint (one base URL of one
model), because that is what a server or a provider throttles; a model with
several replicas gets the limits once per replica.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentbus.llm.types import SamplingParams

CachePolicy = Literal["auto", "on", "off"]
HTTPClient = Literal["aiohttp", "httpx"]


class AdaptiveConcurrency(BaseModel):
    """Adaptive concurrency in the spirit of Inspect AI's.

    Start at ``start`` in flight, grow by ``increase`` after each success while
    the limit is actually used, until ``max_concurrency`` of the endpoint; on a
    rate limit (429) multiply by ``decrease`` (never below ``min``) and pause new
    requests for ``cooldown_s`` or the server's Retry-After, whichever is longer.
    A provider that throttles is then asked less often instead of being hammered
    with retries. ``enabled`` left unset takes the backend's default: on for
    hosted APIs (``openai:``, ``anthropic:``), whose limit is a rate limit,
    off for ``vllm:`` and ``sim:``, where the server's own batching is the
    limit and a queue in front of it is what it wants.
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool | None = None
    start: int = Field(default=8, ge=1)
    min: int = Field(default=1, ge=1)
    increase: float = Field(default=1.0, gt=0)
    decrease: float = Field(default=0.5, gt=0, lt=1)
    cooldown_s: float = Field(default=1.0, ge=0)


class EndpointLimits(BaseModel):
    """What one endpoint may be asked, and how hard to try when it fails."""

    model_config = ConfigDict(extra="forbid")

    max_concurrency: int = Field(default=64, ge=1)
    rpm: float | None = Field(default=None, gt=0, description="requests per minute")
    tpm: float | None = Field(default=None, gt=0, description="tokens per minute")
    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=300.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    backoff_base: float = Field(default=0.5, ge=0)
    backoff_max: float = Field(default=30.0, ge=0)
    #: consecutive failures after which a replica sits out ``replica_cooldown_s``
    replica_failures: int = Field(default=3, ge=1)
    replica_cooldown_s: float = Field(default=10.0, ge=0)
    #: seconds between reads of a vllm: replica's /health and /metrics (0: never)
    health_interval_s: float = Field(default=2.0, ge=0)
    #: prefix affinity yields to the least-loaded replica when the affine one has
    #: more than ``affinity_abs`` requests more AND ``affinity_rel`` times as many
    affinity_abs: float = Field(default=16.0, ge=0)
    affinity_rel: float = Field(default=1.5, ge=1)
    adaptive: AdaptiveConcurrency = Field(default_factory=AdaptiveConcurrency)
    #: pace requests from the provider's rate-limit headers (x-ratelimit-*, anthropic-ratelimit-*)
    pace_from_headers: bool = True
    #: fraction of the rate the headers announce that pacing aims for
    pace_safety: float = Field(default=0.99, gt=0, le=1)
    #: this model's output cap in tokens (its default, and a bound on what a
    #: module asks); None: the run's ``llm.sampling.max_tokens`` (``--max-tokens``)
    max_tokens: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _check(self) -> EndpointLimits:
        if self.backoff_max < self.backoff_base:
            raise ValueError("backoff_max must be >= backoff_base")
        if self.adaptive.enabled and self.adaptive.min > self.max_concurrency:
            raise ValueError("adaptive.min must be <= max_concurrency")
        return self


class SamplingDefaults(BaseModel):
    """Sampling used when a caller passes no :class:`SamplingParams`."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(default=0.0, ge=0)
    max_tokens: int = Field(default=512, ge=1)
    seed: int | None = None

    def params(self) -> SamplingParams:
        return SamplingParams(
            temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed
        )


class LLMConfig(BaseModel):
    """The LLM layer of a run.

    ``models`` overrides the default limits per model, keyed by spec string
    (``"vllm:http://h:8000/v1#llama"``, ``"openai:gpt-4o-mini"``). ``cache``:
    ``auto`` caches and coalesces only calls whose answer is fixed by their
    input (temperature 0 or a seed), ``on`` every call, ``off`` none.
    ``cache_dir`` adds an on-disk copy (append-only, survives a restart).
    ``sim_transport`` picks how ``sim:`` models are reached, in the words of
    ``sim.transport``: ``http`` through the official SDK (the production path),
    ``inprocess`` (fast tests), or ``auto`` (HTTP when the simulator serves it).
    The old spelling (``sim_path``, ``inproc``) is still read, so manifests of
    earlier runs resume.

    ``http_client`` picks the transport under the official SDKs. Both SDKs
    ship an aiohttp transport (``DefaultAioHttpClient``) next to their httpx
    default; we use it by default because httpx's connection pool scans
    every queued request against every connection, which is quadratic: with
    1,000 requests in flight on one endpoint it spent most of the CPU there
    and ran 4-6 times slower than aiohttp in our measurements.
    """

    model_config = ConfigDict(extra="forbid")

    limits: EndpointLimits = Field(default_factory=EndpointLimits)
    models: dict[str, EndpointLimits] = Field(default_factory=dict)
    cache: CachePolicy = "auto"
    cache_dir: Path | None = None
    sampling: SamplingDefaults = Field(default_factory=SamplingDefaults)
    sim_transport: Literal["auto", "http", "inprocess"] = "auto"
    http_client: HTTPClient = "aiohttp"

    @model_validator(mode="before")
    @classmethod
    def _old_spelling(cls, data: Any) -> Any:
        """Read ``sim_path``/``inproc`` (before the one vocabulary) as ``sim_transport``."""
        if isinstance(data, dict) and "sim_path" in data and "sim_transport" not in data:
            data = dict(data)
            old = data.pop("sim_path")
            data["sim_transport"] = "inprocess" if old == "inproc" else old
        return data

    @model_validator(mode="after")
    def _canonical_model_keys(self) -> LLMConfig:
        """Spell every override key canonically, so lookups do not depend on spacing."""
        from agentbus.core.errors import UserError
        from agentbus.llm.spec import parse_spec

        canonical: dict[str, EndpointLimits] = {}
        for key, limits in self.models.items():
            try:
                canonical[parse_spec(key).key] = limits
            except UserError as exc:
                raise ValueError(str(exc)) from None
        self.models = canonical
        return self

    def limits_for(self, spec_key: str) -> EndpointLimits:
        """Limits of the model with canonical spec ``spec_key`` (override, else default)."""
        return self.models.get(spec_key, self.limits)

"""The simulator's configuration: one pydantic model, unknown keys are errors.

``SimConfig`` extends :class:`~agentbus.sim.serving.ServingConfig` (speed,
``max_num_seqs`` and the capacity parameters sit at the top level, as they
would in a ``[sim]`` table of a run's TOML) and adds the profile overrides,
faults and how clients reach the simulator.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from agentbus.sim.faults import FaultConfig
from agentbus.sim.ratelimit import ProviderLimitsConfig
from agentbus.sim.serving import ServingConfig


class SimConfig(ServingConfig):
    """Everything about one simulated model server."""

    model_config = ConfigDict(extra="forbid")

    #: profile name -> fields merged over the built-in (or over ``extends``)
    profiles: dict[str, dict[str, Any]] = Field(default_factory=dict)
    faults: FaultConfig = FaultConfig()
    #: provider-style rate limits (429/529, headers) and latency; off unless set
    limits: ProviderLimitsConfig = ProviderLimitsConfig()
    #: ``http``: a real aiohttp server on loopback; ``inprocess``: direct calls only
    transport: Literal["http", "inprocess"] = "http"
    #: run the engine (and the server) on an event loop of its own in a thread, so
    #: its work never holds the run's loop (agentbus/sim/worker.py); off: one loop
    thread: bool = False
    host: str = "127.0.0.1"
    #: 0 picks a free port
    port: int = Field(0, ge=0, le=65535)
    #: experts to load by registered name; None = every registered expert
    experts: list[str] | None = None
    #: share the verdict draws across models for the same prompt (common random numbers)
    coupled: bool = False

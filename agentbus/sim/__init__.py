"""The simulated LLM: a noisy oracle with known skills behind a real OpenAI-compatible server.

Public API::

    from agentbus.sim import SimConfig, SimModel, sim_service

    async with sim_service(SimConfig(speed=0)) as sim:
        sim.base_url                      # "http://127.0.0.1:PORT/v1" (OpenAI SDK)
        sim.root_url                      # "http://127.0.0.1:PORT" (Anthropic SDK)
        await sim.transport.complete("weak", messages, params)   # in process
        sim.metrics()

Modules: ``profiles`` (skills as data), ``model`` (the generative model),
``serving`` (batching and timing), ``faults``, ``engine`` (the request core),
``server`` (HTTP routes), ``transport`` (in process), ``service``, ``serve`` (CLI).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> the module that defines it; imported on first use, so that
#: ``import agentbus.sim.expert`` (what every environment does) stays light
_EXPORTS: dict[str, str] = {
    "FaultConfig": "faults",
    "SimConnectionDropped": "faults",
    "SimFault": "faults",
    "SimRateLimited": "faults",
    "SimServerError": "faults",
    "Profile": "profiles",
    "ProfileSet": "profiles",
    "RoleSkill": "profiles",
    "ServingConfig": "serving",
    "ServingModel": "serving",
    "SimAnswer": "model",
    "SimModel": "model",
    "load_experts": "model",
    "SimConfig": "config",
    "SimEngine": "engine",
    "SimRequest": "engine",
    "SimHandle": "service",
    "sim_service": "service",
    "SimTransport": "transport",
}

__all__ = [
    "FaultConfig",
    "Profile",
    "ProfileSet",
    "RoleSkill",
    "ServingConfig",
    "ServingModel",
    "SimAnswer",
    "SimConfig",
    "SimConnectionDropped",
    "SimEngine",
    "SimFault",
    "SimHandle",
    "SimModel",
    "SimRateLimited",
    "SimRequest",
    "SimServerError",
    "SimTransport",
    "load_experts",
    "sim_service",
]

if TYPE_CHECKING:
    from agentbus.sim.config import SimConfig
    from agentbus.sim.engine import SimEngine, SimRequest
    from agentbus.sim.faults import (
        FaultConfig,
        SimConnectionDropped,
        SimFault,
        SimRateLimited,
        SimServerError,
    )
    from agentbus.sim.model import SimAnswer, SimModel, load_experts
    from agentbus.sim.profiles import Profile, ProfileSet, RoleSkill
    from agentbus.sim.service import SimHandle, sim_service
    from agentbus.sim.serving import ServingConfig, ServingModel
    from agentbus.sim.transport import SimTransport


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'agentbus.sim' has no attribute {name!r}")
    return getattr(importlib.import_module(f"agentbus.sim.{_EXPORTS[name]}"), name)

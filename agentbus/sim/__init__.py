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

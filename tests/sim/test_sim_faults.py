"""Fault injection at the configured rates, through the in-process transport too."""

from __future__ import annotations

import time

import pytest
from pydantic import ValidationError

from agentbus.core.errors import InfraError, UserError
from agentbus.llm.types import ChatMessage, SamplingParams
from agentbus.sim.config import SimConfig
from agentbus.sim.faults import (
    Fault,
    FaultConfig,
    FaultInjector,
    SimConnectionDropped,
    SimRateLimited,
    SimServerError,
)
from agentbus.sim.service import sim_service

HELLO: list[ChatMessage] = [{"role": "user", "content": "hello"}]


def test_draws_follow_the_configured_rates() -> None:
    config = FaultConfig(rate_429=0.1, rate_500=0.05, rate_drop=0.02, rate_stall=0.03, seed=1)
    injector = FaultInjector(config)
    n = 20_000
    drawn = [injector.draw() for _ in range(n)]
    for kind, rate in (
        (Fault.RATE_LIMIT, 0.1),
        (Fault.SERVER_ERROR, 0.05),
        (Fault.DROP, 0.02),
        (Fault.STALL, 0.03),
    ):
        assert drawn.count(kind) / n == pytest.approx(rate, abs=0.01)
    # seeded: the same stream again
    again = FaultInjector(config)
    assert [again.draw() for _ in range(n)] == drawn


def test_rates_that_do_not_fit_are_rejected() -> None:
    with pytest.raises(ValidationError, match="must be <= 1"):
        FaultConfig(rate_429=0.6, rate_500=0.6)
    with pytest.raises(ValidationError):
        SimConfig.model_validate({"faults": {"rate_418": 0.1}})


def test_malformed_content_at_its_rate() -> None:
    injector = FaultInjector(FaultConfig(rate_malformed=0.25, seed=3))
    text = "Some thought.\n```action\nanswer 42\n```"
    out = [injector.malform(text) for _ in range(4000)]
    mangled = [o for o in out if o is not None]
    assert len(mangled) / len(out) == pytest.approx(0.25, abs=0.03)
    assert all(m != text for m in mangled)


async def test_transport_raises_the_http_equivalent_errors() -> None:
    faults = FaultConfig(rate_429=0.3, retry_after_s=0.25, rate_500=0.2, rate_drop=0.1, seed=5)
    config = SimConfig(speed=0, transport="inprocess", experts=[], faults=faults)
    counts = {"ok": 0, "429": 0, "500": 0, "drop": 0}
    async with sim_service(config) as sim:
        assert sim.base_url is None
        for _ in range(1000):
            try:
                await sim.transport.complete("weak", HELLO, SamplingParams())
                counts["ok"] += 1
            except SimRateLimited as exc:
                assert exc.status == 429 and exc.retry_after == 0.25
                counts["429"] += 1
            except SimServerError as exc:
                assert exc.status == 500 and isinstance(exc, InfraError)
                counts["500"] += 1
            except SimConnectionDropped:
                counts["drop"] += 1
        metrics = sim.metrics()
    assert counts["429"] / 1000 == pytest.approx(0.3, abs=0.05)
    assert counts["500"] / 1000 == pytest.approx(0.2, abs=0.05)
    assert counts["drop"] / 1000 == pytest.approx(0.1, abs=0.04)
    assert metrics["requests_received"] == 1000
    assert metrics["requests_by_status"] == {
        "200": counts["ok"],
        "429": counts["429"],
        "500": counts["500"],
        "dropped": counts["drop"],
    }


async def test_stalls_delay_and_unknown_models_fail_clearly() -> None:
    faults = FaultConfig(rate_stall=1.0, stall_s=0.2)
    config = SimConfig(speed=0, transport="inprocess", experts=[], faults=faults)
    async with sim_service(config) as sim:
        started = time.perf_counter()
        done = await sim.transport.complete("strong", HELLO)
        assert time.perf_counter() - started >= 0.19
        assert done.text and done.completion_tokens > 0 and done.latency_s >= 0.19
        with pytest.raises(UserError, match="unknown sim profile"):
            await sim.transport.complete("nope", HELLO)
        assert sim.metrics()["requests_by_status"] == {"200": 1, "404": 1}

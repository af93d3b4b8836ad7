"""Pre-flight compares the model name with what the server serves (agentbus.app.model_ids).

Against the simulator's real HTTP server: once as vLLM behaves (unknown names
refused with 404), once as llama-cpp-python behaves (any name answered with
its one model; the simulator's ``faults.any_model``).
"""

from __future__ import annotations

import io

import anyio
import pytest

from agentbus.app.config import RunConfig
from agentbus.app.preflight import check
from agentbus.core.errors import UserError
from agentbus.sim.config import SimConfig
from agentbus.sim.faults import FaultConfig
from agentbus.sim.service import sim_service


def config(model: str) -> RunConfig:
    return RunConfig(default=model, test=["sim:strong"])


async def test_a_misspelt_model_is_an_error_where_the_server_refuses_unknown_names() -> None:
    async with sim_service(SimConfig(speed=0, experts=[])) as sim:
        url = sim.base_url
        out = io.StringIO()
        await anyio.to_thread.run_sync(lambda: check(config(f"vllm:{url}#weak"), out=out))
        assert out.getvalue() == ""  # listed and strict: nothing to say
        with pytest.raises(UserError, match=r"model 'waek' is not among the models .* serves"):
            await anyio.to_thread.run_sync(lambda: check(config(f"vllm:{url}#waek")))


async def test_a_server_that_answers_any_name_gets_a_warning() -> None:
    faults = FaultConfig(any_model="weak")
    async with sim_service(SimConfig(speed=0, experts=[], faults=faults)) as sim:
        url = sim.base_url
        out = io.StringIO()
        await anyio.to_thread.run_sync(lambda: check(config(f"vllm:{url}#waek"), out=out))
        said = out.getvalue()
        assert "answers any model name" in said and "(not 'waek')" in said, said
        assert said.count("\n") == 1  # one line
        # the right name still warns: a typo elsewhere would go unnoticed the same way
        out = io.StringIO()
        await anyio.to_thread.run_sync(lambda: check(config(f"vllm:{url}#weak"), out=out))
        assert "answers any model name" in out.getvalue()
        assert "(not " not in out.getvalue()

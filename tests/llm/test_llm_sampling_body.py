"""SamplingParams.from_body: how the simulator's server and the gateway read a request's sampling.

Both servers answer a bad option with their own 400; these tests pin the
defaults they share and that each gets its own error naming the option.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentbus.gateway.wire import parse_openai
from agentbus.gateway.wire_anthropic import parse_anthropic
from agentbus.gateway.wire_common import BadRequest as GatewayBadRequest
from agentbus.llm.types import SamplingParams
from agentbus.sim.protocols import AnthropicProtocol, Protocol
from agentbus.sim.protocols import BadRequest as SimBadRequest

CHAT = [{"role": "user", "content": "hi"}]


def _raise(message: str, param: str) -> Exception:
    return LookupError(message, param)


def test_missing_options_take_the_given_defaults() -> None:
    params = SamplingParams.from_body(
        {}, max_tokens=None, stop="END", temperature=0.7, default_max_tokens=9, error=_raise
    )
    assert (params.temperature, params.max_tokens, params.top_p) == (0.7, 9, 1.0)
    assert params.seed is None and params.stop == ("END",)


def test_the_body_overrides_the_defaults() -> None:
    body = {"temperature": 0, "top_p": 0.5, "seed": 3}
    params = SamplingParams.from_body(
        body,
        max_tokens=20,
        stop=["a", "b"],
        temperature=1.0,
        default_max_tokens=9,
        error=_raise,
        tools=({"type": "function"},),
    )
    assert (params.temperature, params.top_p, params.seed, params.max_tokens) == (0, 0.5, 3, 20)
    assert params.stop == ("a", "b") and params.tools == ({"type": "function"},)


def test_a_bad_option_is_named_in_the_callers_error() -> None:
    with pytest.raises(LookupError) as caught:
        SamplingParams.from_body(
            {"top_p": "wide"},
            max_tokens=None,
            stop=None,
            temperature=1.0,
            default_max_tokens=9,
            error=_raise,
        )
    message, param = caught.value.args
    assert param == "top_p" and message.startswith("invalid top_p: ")


@pytest.mark.parametrize(
    ("parse", "body"),
    [
        (Protocol().parse, {"model": "weak", "messages": CHAT, "temperature": "hot"}),
        (
            AnthropicProtocol().parse,
            {"model": "weak", "max_tokens": 5, "messages": CHAT, "temperature": "hot"},
        ),
    ],
)
def test_the_simulator_answers_400_naming_the_option(parse: Any, body: dict[str, Any]) -> None:
    with pytest.raises(SimBadRequest, match=r"^invalid temperature: ") as caught:
        parse(body)
    assert caught.value.param == "temperature"
    default = parse({k: v for k, v in body.items() if k != "temperature"})
    assert default.request.params.temperature == 1.0


@pytest.mark.parametrize("parse", [parse_openai, parse_anthropic])
def test_the_gateway_answers_400_naming_the_option(parse: Any) -> None:
    body = {"model": "m", "max_tokens": 5, "messages": CHAT, "temperature": "hot"}
    body["stop"] = body["stop_sequences"] = "STOP"  # OpenAI's and Anthropic's names
    with pytest.raises(GatewayBadRequest, match=r"^invalid temperature: "):
        parse(body, 0.0)
    del body["temperature"]
    call = parse(body, 0.25)
    assert call.params.temperature == 0.25 and call.params.max_tokens == 5
    assert call.params.stop == ("STOP",)

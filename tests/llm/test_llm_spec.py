"""Model spec strings and the LLM configuration: parsing, validation, clear errors."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentbus.core.errors import UserError
from agentbus.llm.config import EndpointLimits, LLMConfig
from agentbus.llm.retry import redact_url
from agentbus.llm.spec import VALID_FORMS, ModelSpec, default_base_url, parse_spec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sim:weak", ModelSpec(backend="sim", model="weak")),
        (" sim:strong-planning ", ModelSpec(backend="sim", model="strong-planning")),
        ("openai:gpt-4o-mini", ModelSpec(backend="openai", model="gpt-4o-mini")),
        (
            "anthropic:claude-3-5-sonnet-latest",
            ModelSpec(backend="anthropic", model="claude-3-5-sonnet-latest"),
        ),
        (
            "vllm:http://host:8000/v1#meta-llama/Llama-3.1-8B-Instruct",
            ModelSpec(
                backend="vllm",
                model="meta-llama/Llama-3.1-8B-Instruct",
                base_urls=("http://host:8000/v1",),
            ),
        ),
        (
            "vllm:http://a:8000/v1/, http://b:8000/v1#m",
            ModelSpec(
                backend="vllm", model="m", base_urls=("http://a:8000/v1", "http://b:8000/v1")
            ),
        ),
        (
            "openai:https://gateway.example/v1#gpt-4o",
            ModelSpec(backend="openai", model="gpt-4o", base_urls=("https://gateway.example/v1",)),
        ),
        ("OpenAI:gpt-4o", ModelSpec(backend="openai", model="gpt-4o")),
    ],
)
def test_valid_specs(text: str, expected: ModelSpec) -> None:
    assert parse_spec(text) == expected


def test_canonical_key_round_trips() -> None:
    spec = parse_spec("vllm:http://a:1/v1/,http://b:2/v1#m")
    assert spec.key == "vllm:http://a:1/v1,http://b:2/v1#m"
    assert parse_spec(spec.key) == spec
    assert str(parse_spec("sim:weak")) == "sim:weak"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("weak", "missing 'BACKEND:'"),
        (":weak", "missing 'BACKEND:'"),
        ("sim:", "no model"),
        ("gemini:pro", "unknown backend 'gemini'"),
        ("vllm:meta-llama/Llama", "vllm needs URL"),
        ("vllm:http://h:8000/v1", "vllm needs URL"),
        ("vllm:http://h:8000/v1#", "no model after '#'"),
        ("vllm:#m", "no URL before '#'"),
        ("vllm:ftp://h/v1#m", "not an http(s) URL"),
        ("vllm:http://h/v1,http://h/v1#m", "listed twice"),
        ("sim:http://h/v1#weak", "sim takes a profile name"),
        ("sim:we ak", "not a simulated model name"),
        ("openai:http://h:8000/v1", "needs '#MODEL'"),
    ],
)
def test_bad_specs_give_one_clear_line(text: str, why: str) -> None:
    with pytest.raises(UserError) as info:
        parse_spec(text)
    message = str(info.value)
    assert why in message
    assert VALID_FORMS in message
    assert "\n" not in message


def test_non_string_spec() -> None:
    with pytest.raises(UserError, match="must be a string"):
        parse_spec(42)  # type: ignore[arg-type]


def test_default_base_url_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gw:9/v1/")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert default_base_url("openai") == "http://gw:9/v1"
    assert default_base_url("anthropic") is None
    assert default_base_url("vllm") is None


def test_redact_url_drops_credentials() -> None:
    assert redact_url("http://user:sk-123@host:8000/v1?key=sk-456") == "http://host:8000/v1"


def test_limits_defaults_and_validation() -> None:
    limits = EndpointLimits()
    assert limits.max_concurrency == 64
    assert limits.rpm is None and limits.tpm is None
    with pytest.raises(ValidationError):
        EndpointLimits(max_concurrency=0)
    with pytest.raises(ValidationError):
        EndpointLimits(backoff_base=5, backoff_max=1)
    with pytest.raises(ValidationError):
        EndpointLimits(bogus=1)  # type: ignore[call-arg]


def test_config_overrides_are_canonical_and_unknown_keys_fail() -> None:
    cfg = LLMConfig.model_validate(
        {
            "limits": {"max_concurrency": 8},
            "models": {"vllm: http://a:1/v1/ #m": {"max_concurrency": 2, "rpm": 60}},
            "cache": "on",
            "sampling": {"temperature": 0.5, "seed": 3},
        }
    )
    assert cfg.limits_for("vllm:http://a:1/v1#m").max_concurrency == 2
    assert cfg.limits_for("sim:weak").max_concurrency == 8
    params = cfg.sampling.params()
    assert params.temperature == 0.5 and params.seed == 3 and params.deterministic
    with pytest.raises(ValidationError):
        LLMConfig.model_validate({"cache": "sometimes"})
    with pytest.raises(ValidationError):
        LLMConfig.model_validate({"limit": {}})
    with pytest.raises(ValidationError, match="unknown backend"):
        LLMConfig.model_validate({"models": {"nope:x": {}}})

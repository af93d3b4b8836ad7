"""Pre-flight, second part: does the server know the model the run names?

A reachable URL is not enough: llama-cpp-python's server answers any model
name with the one model it loaded, so a typo in ``openai:URL#Qwen2.5-coder``
ran silently against whatever was there; vLLM answers an unknown name with
404 on every call, each an infrastructure failure. So for every endpoint
whose ``GET /models`` answered, the model's name is compared with the ids it
lists, and an OpenAI-compatible server named by URL is asked once for a
one-token completion under a random model name:

* the server refuses the random name and does not list the model: an error
  (exit 2) naming the model and what the server offers;
* the server accepts the random name: one warning line (a typo would not be
  noticed; the ids it lists are named), plus the mismatch when there is one;
* hosted providers (no URL in the spec) are not probed with a completion.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import aiohttp
import anyio

from agentbus.llm.retry import redact_url

#: backends whose URLs speak the OpenAI chat-completions protocol
OPENAI_STYLE = frozenset({"openai", "vllm"})


@dataclass(frozen=True)
class ModelCheck:
    """What one endpoint said about model names."""

    model: str
    url: str
    #: the ids ``GET /models`` listed (None: no readable list)
    listed: tuple[str, ...] | None
    #: whether a completion under a random model name was served (None: not asked)
    any_name: bool | None


async def listed_ids(session: aiohttp.ClientSession, url: str) -> tuple[str, ...] | None:
    """The model ids of an OpenAI-style ``GET /models`` answer (None when unreadable)."""
    try:
        async with session.get(f"{url}/models", allow_redirects=False) as resp:
            if resp.status != 200:
                return None
            data = await resp.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError):
        return None
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    return tuple(str(m["id"]) for m in items if isinstance(m, dict) and "id" in m)


async def accepts_any_name(session: aiohttp.ClientSession, url: str) -> bool | None:
    """Whether the server serves a completion for a model name nobody has (None: unclear)."""
    body = {
        "model": f"agentbus-no-such-model-{secrets.token_hex(4)}",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 1,
    }
    try:
        async with session.post(f"{url}/chat/completions", json=body) as resp:
            await resp.read()
            if 200 <= resp.status < 300:
                return True
            if resp.status in (400, 404, 422):
                return False
            return None
    except (aiohttp.ClientError, TimeoutError, OSError):
        return None


async def check_models(
    items: list[tuple[str, str, str, bool]], timeout_s: float
) -> list[ModelCheck]:
    """``items``: (spec key, model name, URL, probe with a random name?) per endpoint."""
    out: list[ModelCheck] = []
    timeout = aiohttp.ClientTimeout(total=timeout_s, connect=timeout_s)

    async def one(
        session: aiohttp.ClientSession, key: str, model: str, url: str, ask: bool
    ) -> None:
        with anyio.move_on_after(timeout_s * 2):
            listed = await listed_ids(session, url)
            any_name = await accepts_any_name(session, url) if ask else None
            out.append(ModelCheck(model=model, url=url, listed=listed, any_name=any_name))

    async with aiohttp.ClientSession(timeout=timeout, trust_env=True) as session:
        async with anyio.create_task_group() as tg:
            for key, model, url, ask in dict.fromkeys(items):
                tg.start_soon(one, session, key, model, url, ask)
    return out


def model_verdict(checks: list[ModelCheck]) -> tuple[list[str], list[str]]:
    """(errors, warnings) about model names; see the module docstring."""
    errors: list[str] = []
    warnings: list[str] = []
    for c in checks:
        where = redact_url(c.url)
        missing = c.listed is not None and c.listed and c.model not in c.listed
        offered = ", ".join(c.listed[:8]) if c.listed else ""
        if c.any_name:
            line = (
                f"the server at {where} answers any model name, so a misspelt model "
                f"would not be noticed; it lists: {offered or 'nothing'}"
            )
            if missing:
                line += f" (not {c.model!r})"
            warnings.append(line)
        elif missing:
            text = f"model {c.model!r} is not among the models {where} serves ({offered})"
            if c.any_name is False:
                errors.append(text)
            else:
                warnings.append(text)
    return errors, warnings


__all__ = ["ModelCheck", "accepts_any_name", "check_models", "listed_ids", "model_verdict"]

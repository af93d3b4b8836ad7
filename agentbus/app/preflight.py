"""Pre-flight check: are the run's models usable before anything is started?

Without it a missing API key surfaced only when the first episode built its
client (after the progress display had started), and an unreachable server
cost dozens of failed episodes, each retried several times, before the
infrastructure breaker stopped the run. Here, before a run directory exists
or anything is printed, every model spec of the run is checked:

* its backend's API key, if the backend needs one (the variable a backend
  reads is its ``api_key_env`` class attribute): a missing key is a
  :class:`UserError` (exit 2) naming the variable and the model;
* every endpoint it will call, probed concurrently with a short timeout by a
  ``GET .../models``, which OpenAI, vLLM, Anthropic and the simulator answer
  without cost (any HTTP answer, even 401 or 404, proves the server is
  there). A model none of whose endpoints answers is an :class:`InfraError`
  (exit 1) naming the URL and the error; a model with some replicas down
  gets one warning line, since the router routes around dead replicas.

Then the model names themselves (:mod:`agentbus.app.model_ids`): a model the
server does not list is an error when the server refuses unknown names, and
a server that answers any name (llama-cpp-python) gets a warning, since a
typo would run silently against whatever model it loaded.

``sim:`` models are served by the run itself and need no check.
``--no-preflight`` skips all of this (an air-gapped gateway that refuses
``/models``, say).
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from dataclasses import dataclass
from typing import Any

import aiohttp
import anyio

from agentbus.app.config import RunConfig
from agentbus.app.model_ids import OPENAI_STYLE, check_models, model_verdict
from agentbus.core import registry
from agentbus.core.errors import InfraError, UserError
from agentbus.llm.backends.base import Backend, BackendContext
from agentbus.llm.retry import redact_url
from agentbus.llm.spec import ModelSpec, parse_spec

#: seconds one probe may take, connection included
PROBE_TIMEOUT_S = 3.0

#: where a provider backend goes when neither the spec nor the environment names a URL
PROVIDER_DEFAULT_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com/v1",
}


@dataclass(frozen=True)
class Endpoint:
    """One URL one model will call."""

    model: str
    url: str


def backend_class(spec: ModelSpec) -> type[Backend] | None:
    """The backend class of ``spec`` (None for one that is not a :class:`Backend`)."""
    cls = registry.get("backends", spec.backend)
    return cls if isinstance(cls, type) and issubclass(cls, Backend) else None


def missing_keys(specs: list[ModelSpec]) -> list[str]:
    """One message per model whose backend needs a key the environment lacks."""
    problems = []
    for spec in specs:
        cls = backend_class(spec)
        if cls is None or not cls.key_required or not cls.api_key_env:
            continue
        if not os.environ.get(cls.api_key_env, "").strip():
            problems.append(f"model {spec.key} needs the {cls.api_key_env} environment variable")
    return problems


def endpoints(specs: list[ModelSpec]) -> list[Endpoint]:
    """Every URL the run's non-simulated models will call, each listed once per model."""
    out: list[Endpoint] = []
    context = BackendContext()
    for spec in specs:
        cls = backend_class(spec)
        if cls is None or spec.backend == "sim":
            continue
        for url in cls.endpoints(spec, context):
            resolved = url or PROVIDER_DEFAULT_URLS.get(spec.backend)
            if resolved is not None:
                out.append(Endpoint(spec.key, resolved.rstrip("/")))
    return out


def describe(exc: BaseException, timeout_s: float) -> str:
    """A short, human reason for a failed probe."""
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, aiohttp.ClientConnectorError):
        inner = exc.os_error
        if isinstance(inner, socket.gaierror):
            return f"cannot resolve the host ({inner.strerror})"
        code = inner.errno
        if isinstance(code, int) and code in errno.errorcode:
            return os.strerror(code).lower()
        return inner.strerror or type(inner).__name__
    if isinstance(exc, aiohttp.ClientSSLError):
        return f"TLS failed ({type(exc).__name__})"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def probe(session: aiohttp.ClientSession, endpoint: Endpoint, timeout_s: float) -> str | None:
    """None when the endpoint answers HTTP at all, else why it did not."""
    try:
        with anyio.fail_after(timeout_s):
            async with session.get(f"{endpoint.url}/models", allow_redirects=False) as resp:
                await resp.read()
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        return describe(exc, timeout_s)
    return None


async def probe_all(items: list[Endpoint], timeout_s: float) -> dict[Endpoint, str | None]:
    """Probe every endpoint at once; the whole check takes about one timeout at most."""
    results: dict[Endpoint, str | None] = {}
    timeout = aiohttp.ClientTimeout(total=timeout_s, connect=timeout_s)

    async def one(session: aiohttp.ClientSession, endpoint: Endpoint) -> None:
        results[endpoint] = await probe(session, endpoint, timeout_s)

    # trust_env: honour HTTP(S)_PROXY / NO_PROXY as the SDKs making the real calls do
    async with aiohttp.ClientSession(timeout=timeout, trust_env=True) as session:
        async with anyio.create_task_group() as tg:
            for endpoint in dict.fromkeys(items):
                tg.start_soon(one, session, endpoint)
    return results


def verdict(results: dict[Endpoint, str | None]) -> tuple[list[str], list[str]]:
    """(errors, warnings): a model is down when none of its endpoints answered."""
    by_model: dict[str, list[tuple[str, str | None]]] = {}
    for endpoint, error in results.items():
        by_model.setdefault(endpoint.model, []).append((endpoint.url, error))
    errors: list[str] = []
    warnings: list[str] = []
    for model, probes in by_model.items():
        failed = [(url, err) for url, err in probes if err is not None]
        if not failed:
            continue
        text = "; ".join(f"cannot reach {redact_url(url)} ({model}): {err}" for url, err in failed)
        if len(failed) == len(probes):
            errors.append(text)
        else:
            warnings.append(f"{text}; continuing with the other replicas")
    return errors, warnings


def check(config: RunConfig, *, timeout_s: float = PROBE_TIMEOUT_S, out: Any = None) -> None:
    """Raise UserError for a missing key, InfraError for an unreachable model; else return.

    Runs its own short event loop, so call it before the run's loop starts.
    """
    specs = list({spec.key: spec for spec in map(parse_spec, config.models())}.values())
    keys = missing_keys(specs)
    if keys:
        raise UserError("; ".join(keys))
    items = endpoints(specs)
    if not items:
        return
    results = anyio.run(probe_all, items, timeout_s)
    errors, warnings = verdict(results)
    if errors:
        raise InfraError("; ".join(errors))
    by_key = {spec.key: spec for spec in specs}
    defaults = set(PROVIDER_DEFAULT_URLS.values())
    named = [
        (e.model, by_key[e.model].model, e.url,
         by_key[e.model].backend in OPENAI_STYLE and e.url not in defaults)
        for e, error in results.items()
        if error is None and e.model in by_key
    ]  # fmt: skip
    name_errors, name_warnings = model_verdict(anyio.run(check_models, named, timeout_s))
    if name_errors:
        raise UserError("; ".join(name_errors))
    for line in warnings + name_warnings:
        print(f"agentbus: warning: {line}", file=out or sys.stderr, flush=True)

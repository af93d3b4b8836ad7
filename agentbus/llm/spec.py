"""Model spec strings: the one way a user names a model.

A spec is ``BACKEND:REST``. The built-in forms are::

    sim:NAME                              the simulated model NAME (weak, strong, ...)
    openai:MODEL                          OpenAI (OPENAI_API_KEY, optional OPENAI_BASE_URL)
    anthropic:MODEL                       Anthropic (ANTHROPIC_API_KEY, optional ANTHROPIC_BASE_URL)
    vllm:URL[,URL...]#MODEL               vLLM's OpenAI-compatible server; several URLs = replicas

``openai`` and ``anthropic`` also take the ``URL[,URL...]#MODEL`` form, which
points the official SDK at another compatible server (a gateway, or the
simulator in tests). A third-party backend registered under ``agentbus.backends``
takes either ``NAME:MODEL`` or ``NAME:URL[,URL...]#MODEL``.

API keys are never part of a spec: backends read them from the environment
when they build their client, so they cannot leak through a repr, a log line
or an error message.
"""

from __future__ import annotations

import os
import re

from pydantic import BaseModel, ConfigDict

from agentbus.core.errors import UserError

BUILTIN_BACKENDS = ("sim", "openai", "anthropic", "vllm")

VALID_FORMS = (
    "sim:NAME, openai:MODEL, anthropic:MODEL, vllm:URL[,URL...]#MODEL "
    "(openai/anthropic also accept URL[,URL...]#MODEL)"
)

#: where a backend's default endpoint comes from when the spec names none
_BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_URL_RE = re.compile(r"^https?://[^\s,#]+$")


class ModelSpec(BaseModel):
    """A parsed model spec: which backend, which model, which endpoints.

    ``base_urls`` is empty when the backend decides its endpoint itself (the
    provider's default URL, or the simulator the run started).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: str
    model: str
    base_urls: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """Canonical spec string, used to cache one client per model for the run."""
        if self.base_urls:
            return f"{self.backend}:{','.join(self.base_urls)}#{self.model}"
        return f"{self.backend}:{self.model}"

    def __str__(self) -> str:
        return self.key


def _bad(spec: str, why: str) -> UserError:
    return UserError(f"bad model spec {spec!r}: {why}; valid forms: {VALID_FORMS}")


def _parse_urls(spec: str, part: str) -> tuple[str, ...]:
    urls = tuple(u.strip().rstrip("/") for u in part.split(","))
    for url in urls:
        if not _URL_RE.match(url):
            raise _bad(spec, f"{url!r} is not an http(s) URL")
        if "@" in url.split("://", 1)[1].split("/", 1)[0]:
            # never echo the URL: its user info may be a secret
            raise UserError(
                f"bad model spec for backend {spec.partition(':')[0]!r}: a URL carries "
                "credentials; put API keys in the backend's environment variable instead"
            )
    if len(set(urls)) != len(urls):
        raise _bad(spec, "a replica URL is listed twice")
    return urls


def _known_backend(name: str) -> bool:
    if name in BUILTIN_BACKENDS:
        return True
    # imported here: the registry loads entry points, which is only needed for
    # a name that is not built in
    from agentbus.core import registry

    try:
        return name in registry.names("backends")
    except UserError:
        return False


def parse_spec(spec: str) -> ModelSpec:
    """Parse ``spec`` or raise :class:`UserError` with one line naming the valid forms."""
    if not isinstance(spec, str):
        raise UserError(f"a model spec must be a string, got {type(spec).__name__}")
    text = spec.strip()
    backend, sep, rest = text.partition(":")
    backend = backend.strip().lower()
    rest = rest.strip()
    if not sep or not backend:
        raise _bad(spec, "missing 'BACKEND:'")
    if not _known_backend(backend):
        raise _bad(spec, f"unknown backend {backend!r}")
    if not rest:
        raise _bad(spec, "no model named after the colon")

    urls: tuple[str, ...] = ()
    model = rest
    if "#" in rest:
        url_part, _, model = rest.partition("#")
        model = model.strip()
        if backend == "sim":
            raise _bad(spec, "sim takes a profile name, not URLs")
        if not url_part.strip():
            raise _bad(spec, "no URL before '#'")
        urls = _parse_urls(spec, url_part)
        if not model:
            raise _bad(spec, "no model after '#'")
    elif backend == "vllm":
        raise _bad(spec, "vllm needs URL[,URL...]#MODEL")
    elif "://" in rest:
        raise _bad(spec, "a URL needs '#MODEL' after it")

    if backend == "sim" and not _NAME_RE.match(model):
        raise _bad(spec, f"{model!r} is not a simulated model name")
    if any(c.isspace() for c in model):
        raise _bad(spec, "the model name contains whitespace")
    return ModelSpec(backend=backend, model=model, base_urls=urls)


def default_base_url(backend: str) -> str | None:
    """The endpoint a provider backend uses when the spec names none (env, else SDK default)."""
    var = _BASE_URL_ENV.get(backend)
    if var is None:
        return None
    value = os.environ.get(var, "").strip()
    return value.rstrip("/") or None

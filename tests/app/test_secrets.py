"""API keys never reach logs, events, the manifest, results or error messages.

A canary key per backend (OpenAI, Anthropic, vLLM with a key) is put in the
environment of a real ``python -m agentbus.run`` (debug logging on), whose
models all point at a fake provider on loopback. The provider answers in
each mode a user can meet: normal answers, 401 and 500 (whose error bodies
quote the key back in full, as a careless gateway would), and an address
where nothing listens (the pre-flight check's error, then the run's own with
``--no-preflight``). The provider records the keys it received, so the test
knows each canary really travelled; then every byte the run printed or wrote
is searched for it. The dashboard token given with ``--token`` must stay out
of the manifest too (it is stored with the command line).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import orjson
import pytest
from aiohttp import web

from agentbus.core.logs import scrub, scrubber
from tests.helpers.stub_http import serving

ROOT = Path(__file__).resolve().parents[2]
CANARY = {
    "OPENAI_API_KEY": "sk-canaryOPENAI0123456789abcdef",
    "ANTHROPIC_API_KEY": "canary-anthropic-QWERTY-0123456789",  # not sk- shaped on purpose
    "VLLM_API_KEY": "vllm-canary-zxcvbnm-987654321",
}
TOKEN = "dashboard-canary-token-555444333"
DROP = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", *CANARY)


class FakeProvider:
    """OpenAI- and Anthropic-shaped answers, or errors quoting the caller's key."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.keys: set[str] = set()

    def _key(self, request: web.Request) -> str:
        auth = request.headers.get("Authorization", "")
        key = auth.removeprefix("Bearer ").strip() or request.headers.get("x-api-key", "")
        if key:
            self.keys.add(key)
        return key

    def _fail(self, key: str) -> web.Response | None:
        if self.mode == "401":
            body = {"error": {"message": f"Incorrect API key provided: {key}", "type": "auth"}}
            return web.json_response(body, status=401)
        if self.mode == "500":
            body = {"error": {"message": f"upstream crashed handling key={key}", "type": "server"}}
            return web.json_response(body, status=500)
        return None

    def _answer(self, request: web.Request) -> str:
        """The model's text; in ``echo`` mode it quotes the caller's key (a leaky gateway)."""
        if self.mode != "echo":
            return "Let me think. ANSWER: 7"
        key = self._key(request)
        return f"Your key is {key}. See https://x.test/v1?api_key={key}&a=1 ANSWER: {key}"

    async def models(self, request: web.Request) -> web.Response:
        self._key(request)
        return web.json_response({"object": "list", "data": []})

    async def chat(self, request: web.Request) -> web.Response:
        failed = self._fail(self._key(request))
        if failed is not None:
            return failed
        body = await request.json()
        return web.json_response(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self._answer(request)},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    async def messages(self, request: web.Request) -> web.Response:
        failed = self._fail(self._key(request))
        if failed is not None:
            return failed
        body = await request.json()
        return web.json_response(
            {
                "id": "m1",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": [{"type": "text", "text": self._answer(request)}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        )


@asynccontextmanager
async def provider(mode: str) -> AsyncIterator[tuple[FakeProvider, str]]:
    fake = FakeProvider(mode)
    app = web.Application()
    app.router.add_get("/v1/models", fake.models)
    app.router.add_post("/v1/chat/completions", fake.chat)
    app.router.add_post("/v1/messages", fake.messages)
    async with serving(app, access_log=None) as url:
        yield fake, f"{url}/v1"


def closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


async def run(url: str, tmp: Path, *extra: str, keys: dict[str, str] = CANARY) -> tuple[int, bytes]:
    """The CLI against ``url`` for all three backends; everything it printed and wrote."""
    env = {k: v for k, v in os.environ.items() if k not in DROP}
    env |= keys | {"AGENTBUS_LOG_LEVEL": "debug", "PYTHONPATH": str(ROOT)}
    run_dir = tmp / "run"
    args = [
        sys.executable,
        "-m",
        "agentbus.run",
        "--default",
        f"openai:{url}#gpt-canary",
        "--test",
        f"anthropic:{url}#claude-canary,vllm:{url}#llama-canary",
        "--env",
        "math",
        "--limit",
        "1",
        "--slots",
        "planning",
        "--max-steps",
        "1",
        "--progress",
        "plain",
        "--run-dir",
        str(run_dir),
        "--serve",
        "127.0.0.1:0",
        "--token",
        TOKEN,
        "--config",
        str(tmp / "fast.toml"),
        *extra,
    ]
    (tmp / "fast.toml").write_text(
        "attempts = 1\n[llm.limits]\nmax_retries = 1\nbackoff_base = 0\nbackoff_max = 0\n"
        "connect_timeout = 2\n"
    )
    with anyio.fail_after(120):
        proc = await anyio.run_process(args, env=env, check=False, cwd=tmp)
    return proc.returncode, proc.stdout + proc.stderr + everything_written(tmp)


def everything_written(tmp: Path) -> bytes:
    return b"".join(p.read_bytes() for p in tmp.rglob("*") if p.is_file())


def assert_no_secret(blob: bytes) -> None:
    for name, value in CANARY.items():
        assert value.encode() not in blob, f"the {name} canary leaked"
        assert value[4:-4].encode() not in blob, f"part of the {name} canary leaked"


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["ok", "401", "500"])
async def test_canary_keys_stay_out_of_every_output(mode: str, tmp_path: Path) -> None:
    async with provider(mode) as (fake, url):
        code, blob = await run(url, tmp_path)
    assert set(CANARY.values()) <= fake.keys, "every backend must have sent its key"
    assert_no_secret(blob)
    assert TOKEN.encode() not in (tmp_path / "run" / "manifest.json").read_bytes()
    if mode == "ok":
        assert code == 0, blob[-2000:]
        assert b'"episode.ended"' in blob
    else:  # a handful of failed episodes: reported as infrastructure failures, not a crash
        assert b"Traceback" not in blob
        assert b"***" in blob, "the quoted key should show as redacted"


#: keys of every length the scrubbing rule covers: 5 characters (scrubbed as a
#: word), 9 (anywhere), and a long one
SHORT_CANARY = {
    "OPENAI_API_KEY": "k7Qz9",
    "ANTHROPIC_API_KEY": "q1w2e3r4t",
    "VLLM_API_KEY": "vllm-canary-zxcvbnm-987654321",
}


@pytest.mark.slow
async def test_keys_echoed_in_model_answers_stay_out_of_every_file(tmp_path: Path) -> None:
    """A provider that quotes the key in a 200 answer: not in the log, the cache, anywhere."""
    async with provider("echo") as (fake, url):
        code, blob = await run(url, tmp_path, keys=SHORT_CANARY)
    assert set(SHORT_CANARY.values()) <= fake.keys, "every backend must have sent its key"
    assert code == 0, blob[-2000:]
    log = (tmp_path / "run" / "events.jsonl").read_bytes()
    assert b"Your key is ***." in log, "the echoed answers must be in the log, scrubbed"
    assert b"api_key=***&a=1" in log
    for value in SHORT_CANARY.values():
        assert value.encode() not in blob, f"canary {value!r} leaked"


async def test_unreachable_endpoint_errors_name_no_key(tmp_path: Path) -> None:
    url = closed_url()
    code, blob = await run(url, tmp_path)
    assert code == 1 and url.removesuffix("/v1").encode() in blob
    assert_no_secret(blob)
    (tmp_path / "run").mkdir(exist_ok=True)
    code, blob = await run(url, tmp_path, "--no-preflight")
    assert b"Traceback" not in blob  # 4 failed episodes: reported, not a crash
    assert_no_secret(blob)


def test_scrub_removes_environment_secrets_and_key_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "opaque-value-42-abcdef")
    monkeypatch.setenv("MAX_TOKENS_HINT", "short")  # not a credential's name
    monkeypatch.setenv("USE_AUTH_TOKEN", "true")  # a credential's name, never a secret's value
    monkeypatch.setenv("TINY_API_KEY", "ab1")  # too short to scrub without ruining text
    monkeypatch.setenv("SHORT_API_KEY", "z9y8x")  # short: scrubbed as a word of its own
    text = "key opaque-value-42-abcdef and sk-abcdefghijklmnop; short words stay true ab1"
    assert scrub(text) == "key *** and ***; short words stay true ab1"
    assert scrub("z9y8x, z9y8xq") == "***, z9y8xq"
    url = "https://user:pw@h.test/v1?model=m&token=T0K&key=K&api_key=A#f"
    assert scrub(url) == "https://***@h.test/v1?model=m&token=***&key=***&api_key=***#f"
    assert scrub("Authorization: Bearer abcdefghijklmnop") == "Authorization: Bearer ***"


def test_scrubbing_json_keeps_it_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret that also occurs as a number: the line is scrubbed string by string."""
    monkeypatch.setenv("PIN_SECRET", "12345678")
    line = orjson.dumps({"n": 12345678, "t": "pin 12345678", "ok": True}) + b"\n"
    clean = scrubber().json(line)
    assert orjson.loads(clean) == {"n": 12345678, "t": "pin ***", "ok": True}


async def test_dashboard_files_are_served_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache file written before scrubbing existed still reaches no browser with the key."""
    import aiohttp

    from agentbus.core.events import EventHub
    from agentbus.runs.server import LiveServer
    from agentbus.runs.store import RunStore

    key = "old-run-key-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    store = RunStore.open(tmp_path / "run", {"env": "demo"}, result_keys=["env"])
    (tmp_path / "run" / "llm-cache.jsonl").write_text(f'{{"k": "a", "c": "{key}"}}\n')
    store.write_text("results.md", f"quoted {key} and https://h.test/?token=abc")
    assert key not in (tmp_path / "run" / "results.md").read_text()
    server = LiveServer(EventHub(), store, host="127.0.0.1", port=0)
    await server.start()
    try:
        async with aiohttp.ClientSession() as http:
            for name in ("llm-cache.jsonl", "results.md"):
                async with http.get(f"http://127.0.0.1:{server.port}/files/{name}") as answer:
                    assert answer.status == 200
                    body = await answer.read()
                assert key.encode() not in body and b"***" in body
    finally:
        await server.stop()
        store.close()

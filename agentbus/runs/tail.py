"""``python -m agentbus.tail URL``: follow a live run in a terminal.

Reads the server's Server-Sent Events stream and prints one line per event,
filtered on the server (by type, episode or coalition), so following one
episode of a run of ten thousand costs nothing. ``--from N`` replays the
stored events after offset N first (``--from 0``: everything). ``--json``
prints the events as stored, one JSON object a line, for piping into ``jq``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

import aiohttp
import anyio
import orjson
from yarl import URL

from agentbus.core.coalitions import coalition_label
from agentbus.core.events import ATTRIBUTION_SNAPSHOT, EPISODE_ENDED, EPISODE_STARTED
from agentbus.runs.pipes import pipe_safe
from agentbus.runs.snapshots import normalize_snapshot, payload_key


def format_event(event: Mapping[str, Any]) -> str:
    """One human line for an event."""
    seq = event.get("seq", "?")
    ts = event.get("ts")
    clock = time.strftime("%H:%M:%S", time.localtime(ts)) if isinstance(ts, int | float) else "--"
    kind = str(event.get("type", "?"))
    head = f"{seq:>6} {clock} {kind:<20}"
    where = f"{event.get('episode_id')} [{coalition_label(payload_key(event.get('coalition')))}]"
    if kind == EPISODE_ENDED:
        o = event.get("outcome") or {}
        status = o.get("error_kind") or ("ok" if o.get("success") else "fail")
        tokens = int(o.get("prompt_tokens", 0) or 0) + int(o.get("completion_tokens", 0) or 0)
        text = (
            f"{where} reward={float(o.get('reward', 0) or 0):.2f} {status} "
            f"steps={o.get('steps', 0)} tokens={tokens}"
        )
        if o.get("error"):
            text += f" error={str(o['error'])[:80]!r}"
        return f"{head} {text}"
    if kind == EPISODE_STARTED:
        return f"{head} {where} task={event.get('task_id')}"
    if kind == ATTRIBUTION_SNAPSHOT:
        rows = normalize_snapshot(event)
        parts = []
        for r in rows:
            part = f"{r['slot']}={r['phi']:+.3f}"
            if r["lo"] is not None and r["hi"] is not None:
                part += f"[{r['lo']:+.3f},{r['hi']:+.3f}]"
            parts.append(part)
        return f"{head} {' '.join(parts) or '(no estimates)'}"
    rest = {k: v for k, v in event.items() if k not in ("v", "seq", "ts", "type")}
    text = orjson.dumps(rest).decode()
    return f"{head} {text[:200]}"


def events_url(base: str, args: argparse.Namespace) -> tuple[URL, str | None]:
    """The ``/events`` URL for a server or dashboard URL, and the token to send."""
    url = URL(base if "://" in base else f"http://{base}")
    if not url.host:
        raise ValueError(f"not a URL: {base!r}")
    token = args.token or url.query.get("token")
    query: dict[str, str] = {}
    if args.type:
        query["type"] = ",".join(args.type)
    if args.episode:
        query["episode"] = args.episode
    if args.coalition is not None:
        query["coalition"] = args.coalition
    if args.start is not None:
        query["from"] = str(args.start)
    return url.with_path("/events").with_query(query), token


async def follow(url: URL, token: str | None, *, raw: bool, out: IO[str]) -> int:
    """Print the stream until the server ends it; returns the exit status."""
    headers = {"Accept": "text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    timeout = aiohttp.ClientTimeout(total=None, connect=10, sock_read=None)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.get(url, headers=headers) as resp,
    ):
        if resp.status == 401:
            print(f"agentbus.tail: {url.origin()} needs a token: pass --token", file=sys.stderr)
            return 2
        if resp.status != 200:
            text = (await resp.text())[:200]
            print(f"agentbus.tail: {url} answered {resp.status}: {text}", file=sys.stderr)
            return 2
        data: list[bytes] = []
        async for line in resp.content:
            line = line.rstrip(b"\r\n")
            if line.startswith(b"data:"):
                data.append(line[5:].lstrip())
            elif not line and data:
                payload = b"\n".join(data)
                data.clear()
                if raw:
                    print(payload.decode(), file=out, flush=True)
                    continue
                try:
                    event = orjson.loads(payload)
                except orjson.JSONDecodeError:
                    continue
                print(format_event(event), file=out, flush=True)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m agentbus.tail",
        allow_abbrev=False,  # --tok would set --token under another name
        description="Print the live event stream of an agentbus run, one line per event.",
    )
    p.add_argument("url", help="the live server, e.g. http://127.0.0.1:8080/ (as printed)")
    p.add_argument("--type", action="append", help="only this event type (repeatable)")
    p.add_argument("--episode", help="only this episode id")
    p.add_argument("--coalition", help="only this coalition, e.g. planning+action ('' = none)")
    p.add_argument("--from", dest="start", type=int, help="replay the events after offset N")
    p.add_argument("--token", help="bearer token (needed when the server is not on 127.0.0.1)")
    p.add_argument("--json", action="store_true", help="print the raw JSON events")
    return p


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.start is not None and args.start < 0:
        print("agentbus.tail: --from must be 0 or more", file=sys.stderr)
        return 2
    try:
        url, token = events_url(args.url, args)
    except ValueError as exc:
        print(f"agentbus.tail: {exc}", file=sys.stderr)
        return 2

    async def go() -> int:
        return await follow(url, token, raw=args.json, out=sys.stdout)

    try:
        return anyio.run(go)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:
        return 0
    except aiohttp.ClientPayloadError:
        print("agentbus.tail: the server closed the stream", file=sys.stderr)
        return 0
    except (aiohttp.ClientConnectionError, OSError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"agentbus.tail: cannot reach {url.origin()}: {reason}", file=sys.stderr)
        return 2
    except aiohttp.ClientError as exc:
        print(f"agentbus.tail: {url.origin()}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

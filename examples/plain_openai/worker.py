"""The plain agent as a long-lived worker: ``--agent-cmd "python worker.py"``.

One process serves episode after episode, so Python and the ``openai`` SDK
are imported once, not per episode. It first prints the worker handshake
(``{"agentbus_worker": 1}``), which tells agentbus to keep it; then each
line on descriptor ``AGENTBUS_WORKER_FD`` (stdin under ``--agent-workers``)
is one episode: ``{"task", "base_url", "api_key", "off_slots", ...}``; the
worker answers with one JSON line on stdout. The token and base URL are new
for every episode (and stop working when it ends), so the client is made per
line; the HTTP connection pool under it is shared.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TextIO

from agent import solve
from openai import AsyncOpenAI, DefaultAsyncHttpxClient


async def main(lines: TextIO) -> None:
    pool = DefaultAsyncHttpxClient()
    print(json.dumps({"agentbus_worker": 1}), flush=True)
    while line := await asyncio.to_thread(lines.readline):
        msg = json.loads(line)
        client = AsyncOpenAI(
            base_url=msg["base_url"], api_key=msg["api_key"], max_retries=0, http_client=pool
        )
        result = await solve(client, msg["task"], set(msg["off_slots"]))
        print(json.dumps(result), flush=True)
    await pool.aclose()


if __name__ == "__main__":
    with open(int(os.environ.get("AGENTBUS_WORKER_FD", "0")), encoding="utf-8") as episodes:
        asyncio.run(main(episodes))

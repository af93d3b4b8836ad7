"""The dashboard in a real headless Chromium, driven over the DevTools protocol.

No selenium or playwright: Chromium is started with ``--remote-debugging-port``
and the test speaks the DevTools protocol over a WebSocket (aiohttp, already a
dependency), evaluating JavaScript in the page to read what it shows. Events
are published into a real EventHub behind a real LiveServer; the test checks
that the episode counter and the phi bars follow them live, and that clicking
an episode shows its message trace. Skipped when Chromium is not installed
(Debian: ``apt-get install -y chromium``).
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import orjson
import pytest

from agentbus.core.events import EventHub
from agentbus.runs.server import LiveServer
from agentbus.runs.store import RunStore


def chromium_binary() -> str | None:
    for candidate in ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "chrome"):
        found = shutil.which(candidate)
        if found:
            return found
    return None


CHROMIUM = chromium_binary()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

SLOTS = ["planning", "reasoning", "action", "reflection"]


def ended(i: int) -> dict[str, Any]:
    return {
        "episode_id": f"ep{i}",
        "task_id": f"t{i}",
        "coalition": [s for k, s in enumerate(SLOTS) if i >> k & 1],
        "slots": SLOTS,
        "repeat": 0,
        "outcome": {
            "reward": float(i % 2),
            "success": bool(i % 2),
            "steps": 2,
            "prompt_tokens": 50,
            "completion_tokens": 5,
            # what went upstream and what it cost: the cost panel's "spent"
            "usage": {
                "planning": {
                    "sent_calls": 1,
                    "sent_input_tokens": 40,
                    "sent_output_tokens": 5,
                    "sent_usd": 0.001,
                }
            },
            "trace": [
                {"type": "Plan", "sender": "planning", "seq": 1, "text": f"plan for task t{i}"},
                {"type": "Thought", "sender": "reasoning", "seq": 2, "text": "subtract three"},
            ],
        },
    }


def snapshot(scale: float) -> dict[str, Any]:
    """An attribution snapshot in one of the shapes the dashboard reads."""
    phi = {"planning": 0.1 * scale, "reasoning": 0.2 * scale, "action": -0.05, "reflection": 0.0}
    return {"n": 10, "phi": phi, "ci": {s: [v - 0.05, v + 0.05] for s, v in phi.items()}}


class Page:
    """One page target of a headless Chromium, over the DevTools protocol."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = itertools.count(1)

    async def eval(self, expression: str) -> Any:
        ident = next(self.ids)
        await self.ws.send_json(
            {
                "id": ident,
                "method": "Runtime.evaluate",
                "params": {"expression": expression, "returnByValue": True},
            }
        )
        while True:
            msg = await self.ws.receive_json()
            if msg.get("id") == ident:
                result = msg.get("result", {})
                if "exceptionDetails" in result:
                    raise AssertionError(f"page error: {result['exceptionDetails']}")
                return result.get("result", {}).get("value")

    async def wait_for(self, expression: str, check: Callable[[Any], bool], timeout: float) -> Any:
        """Poll ``expression`` until ``check`` holds; fail with the last value seen."""
        value: Any = None
        with anyio.move_on_after(timeout):
            while True:
                # the page may still be loading: an error counts as "not yet"
                value = await self.eval(
                    f"(() => {{ try {{ return {expression}; }} catch (e) {{ return null; }} }})()"
                )
                if value is not None and check(value):
                    return value
                await anyio.sleep(0.2)
        raise AssertionError(f"{expression} never passed the check; last value {value!r}")


@asynccontextmanager
async def browser(url: str, profile: Path) -> AsyncIterator[Page]:
    assert CHROMIUM is not None
    args = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        url,
    ]
    proc = await anyio.open_process(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        port_file = profile / "DevToolsActivePort"
        with anyio.fail_after(60):
            while not port_file.exists() or not port_file.read_text().strip():
                assert proc.returncode is None, "chromium exited early"
                await anyio.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        async with aiohttp.ClientSession() as session:
            target = None
            with anyio.fail_after(60):
                while target is None:
                    async with session.get(f"http://127.0.0.1:{port}/json/list") as resp:
                        targets = await resp.json(content_type=None)
                    target = next((t for t in targets if t.get("type") == "page"), None)
                    if target is None:
                        await anyio.sleep(0.1)
            async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                yield Page(ws)
    finally:
        with anyio.CancelScope(shield=True):
            if proc.returncode is None:
                os.killpg(proc.pid, signal.SIGTERM)
                with anyio.move_on_after(10):
                    await proc.wait()
            if proc.returncode is None:
                os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
            await proc.aclose()


PROJECTION = {"usd": 0.5, "usd_low": 0.4, "usd_high": 0.6, "tokens": 1e5, "confidence": 0.95,
              "blocks": 1, "of": 10}  # fmt: skip
COST = "document.getElementById('cost-estimate').textContent"
BARS = (
    "Array.from(document.querySelectorAll('#phi-chart rect.bar'))"
    ".map(b => [b.dataset.slot, Number(b.dataset.phi), Number(b.getAttribute('width'))])"
)
DONE = (
    "document.getElementById('done').textContent + '/' + "
    "document.getElementById('total').textContent"
)


async def test_dashboard_follows_a_streaming_run(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "run", {"env": "demo"}, result_keys=["env"])
    hub = EventHub()
    # 127.0.0.2: not 127.0.0.1, so this also exercises the token the page passes on
    server = LiveServer(hub, store, host="127.0.0.2", port=0)
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(store.consume, hub)
            url = await server.start()
            assert "token=" in url
            await hub.publish("run.started", {"total": 40})
            for i in range(3):
                await hub.publish("episode.ended", ended(i))
            await hub.publish("attribution.snapshot", snapshot(1.0))
            await hub.publish("cost.estimate", PROJECTION)
            try:
                async with browser(url, tmp_path / "profile") as page:
                    await page.wait_for(DONE, lambda v: v == "3/40", 60)
                    # a live run: what its episodes spent so far, and the projection, each
                    # labelled (before: the projection alone, also once the run had ended)
                    cost = await page.wait_for(COST, lambda v: v and len(v.split("\n")) == 2, 20)
                    spent, projected = cost.split("\n")
                    assert spent == "spent so far: $0.00300 billed; 3 calls sent, 135 tokens"
                    assert projected.startswith("whole run, projected: $0.500 [$0.400, $0.600]")
                    bars = await page.wait_for(BARS, lambda v: v and len(v) == 4, 20)
                    first = {slot: (phi, width) for slot, phi, width in bars}
                    assert first["planning"][0] == pytest.approx(0.1)
                    assert first["reasoning"][0] == pytest.approx(0.2)
                    # the run goes on: the counter and the bars follow live
                    for i in range(3, 15):
                        await hub.publish("episode.ended", ended(i))
                        await anyio.sleep(0.02)
                    await page.wait_for(DONE, lambda v: v == "15/40", 20)
                    await hub.publish("attribution.snapshot", snapshot(3.0))
                    bars = await page.wait_for(
                        BARS,
                        lambda v: any(s == "planning" and abs(p - 0.3) < 1e-9 for s, p, _ in v),
                        20,
                    )
                    second = {slot: (phi, width) for slot, phi, width in bars}
                    assert second["reasoning"][0] == pytest.approx(0.6)
                    assert second["planning"][1] > first["planning"][1]
                    whiskers = await page.eval(
                        "document.querySelectorAll('#phi-chart line.ci').length"
                    )
                    assert whiskers == 4 * 3
                    rows = await page.eval(
                        "document.querySelectorAll('#coalitions tbody tr').length"
                    )
                    assert rows == 15
                    assert await page.eval("document.getElementById('conn').textContent") == "live"
                    # the old snapshot shape has no per-model table: one chart, a line per slot
                    course = await page.wait_for(SERIES, lambda v: len(v) == 1, 20)
                    assert [s for s, _, _ in course[0][1]] == SLOTS
                    # click-through: one episode's message trace (the list is fetched
                    # from the server's index, at most once a second while live)
                    row = "document.querySelector('#recent tbody tr[data-episode=\"ep7\"]')"
                    await page.wait_for(row + " !== null", bool, 20)
                    await page.eval(row + ".click()")
                    trace = await page.wait_for(
                        "document.getElementById('trace').innerText",
                        lambda v: bool(v) and "subtract three" in v,
                        20,
                    )
                    assert "plan for task t7" in trace
            finally:
                await server.stop()
                hub.close()
    finally:
        store.close()


REASON = "waiting for the first complete task block: 7 of 16 episodes of task t0003 have ended"
MODELS = ("sim:strong", "sim:strong-action")
SERIES = (
    "Array.from(document.querySelectorAll('#phi-history svg.phi-history-chart')).map(c => "
    "[c.dataset.model, Array.from(c.querySelectorAll('g.phi-series')).map(g => "
    "[g.dataset.slot, Number(g.dataset.points), g.querySelectorAll('polygon.band').length])])"
)


def honest_snapshot(blocks: int) -> dict[str, Any]:
    """The service's snapshot: not estimable before the first block, then per-model phi."""
    if blocks == 0:
        return {
            "estimable": False,
            "reason": REASON,
            "admitted_tasks": 0,
            "episodes": 0,
            "episodes_ended": 7,
            "slots": SLOTS,
            "models": {m: {"coalitions": {}, "shapley": None} for m in MODELS},
        }
    half = 0.3 / blocks**0.5
    models = {
        model: {
            "shapley": {
                slot: {"value": v, "ci_low": v - half, "ci_high": v + half, "se": half / 1.96}
                for slot, v in zip(SLOTS, (0.05 * k, 0.12, 0.2 - 0.01 * blocks, -0.02), strict=True)
            }
        }
        for k, model in enumerate(MODELS, start=1)
    }
    return {
        "estimable": True,
        "reason": None,
        "admitted_tasks": blocks,
        "episodes": 32 * blocks,
        "episodes_ended": 32 * blocks + 5,
        "slots": SLOTS,
        "models": models,
    }


async def test_phi_course_plot_and_not_estimable_message(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "run", {"env": "math"}, result_keys=["env"])
    hub = EventHub()
    server = LiveServer(hub, store, host="127.0.0.1", port=0)
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(store.consume, hub)
            url = await server.start()
            await hub.publish("run.started", {"total": 256})
            await hub.publish("attribution.snapshot", honest_snapshot(0))
            try:
                async with browser(url, tmp_path / "profile") as page:
                    note = await page.wait_for(
                        "document.getElementById('phi-empty').textContent",
                        lambda v: bool(v) and "not estimable yet" in v,
                        60,
                    )
                    assert REASON in note
                    assert await page.eval("document.getElementById('phi-empty').hidden") is False
                    assert await page.eval(BARS) == []  # never a number
                    empty = await page.wait_for(
                        "document.getElementById('history-empty').textContent",
                        lambda v: bool(v) and "not estimable yet" in v,
                        20,
                    )
                    assert REASON in empty
                    assert await page.eval(SERIES) == []
                    # blocks are admitted: one line and one band per slot, per test model
                    for blocks in range(1, 5):
                        await hub.publish("attribution.snapshot", honest_snapshot(blocks))
                        await anyio.sleep(0.05)
                    await hub.publish("run.finished", {"episodes": 128})
                    want = [[m, [[s, 4, 1] for s in SLOTS]] for m in MODELS]
                    await page.wait_for(SERIES, lambda v: v == want, 20)
                    bars = await page.wait_for(BARS, lambda v: v and len(v) == 8, 20)
                    assert {round(phi, 6) for slot, phi, _ in bars if slot == "reasoning"} == {0.12}
                    assert await page.eval("document.getElementById('phi-empty').hidden") is True
                    # a page opened after the run draws the same course from the log
                    await page.eval("location.reload()")
                    await anyio.sleep(0.5)
                    await page.wait_for(SERIES, lambda v: v == want, 30)
            finally:
                await server.stop()
                hub.close()
    finally:
        store.close()


# ------------------------------------------------------------ finished runs


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from tests.helpers.view_runs import shared_runs

    return shared_runs(tmp_path_factory)


@asynccontextmanager
async def viewing(runs: list[Path]) -> AsyncIterator[str]:
    from agentbus.runs.viewer import Viewer

    viewer = Viewer(runs, port=0)
    url = await viewer.start()
    try:
        yield url
    finally:
        await viewer.stop()


def _events(run: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in (run / "events.jsonl").read_bytes().splitlines()]


def _ended(run: Path) -> list[dict[str, Any]]:
    return [e for e in _events(run) if e["type"] == "episode.ended"]


ROW_COALITIONS = (
    "Array.from(document.querySelectorAll('#recent tbody tr')).map(r => r.children[1].textContent)"
)
FILTERS = "['f-coalition', 'f-outcome'].map(id => document.getElementById(id).value)"
#: the address's query, the two menus and the list's page line
LISTED = f"[location.search, ...{FILTERS}, document.getElementById('page-info').textContent]"


BAR_FILLS = (
    "Array.from(document.querySelectorAll('#phi-chart rect.bar'))"
    ".map(b => [b.dataset.slot, b.getAttribute('fill'), getComputedStyle(b).fill])"
)
LINE_COLOURS = (
    "Array.from(document.querySelectorAll('#phi-history g.phi-series'))"
    ".map(g => [g.dataset.slot, g.querySelector('polyline.line').getAttribute('stroke')])"
)


async def test_finished_run_dashboard_lists_episodes_a_page_at_a_time(
    finished: tuple[Path, Path], tmp_path: Path
) -> None:
    async with viewing([finished[0]]) as url, browser(url, tmp_path / "profile") as page:
        # a finished run: the final state, the pill says so, and no error
        await page.wait_for(DONE, lambda v: v == "64/64", 60)
        pill = await page.wait_for(
            "document.getElementById('conn').textContent", lambda v: v == "finished", 20
        )
        assert pill == "finished"
        # its rates are over its own duration, however long the page stays open (before:
        # a half-minute window ending at the wall clock, falling while the page was open)
        events = _events(finished[0])
        span = next(e["ts"] for e in events if e["type"] == "run.finished") - next(
            e["ts"] for e in events if e["type"] == "run.started"
        )
        assert await page.eval("document.getElementById('eps').textContent") == f"{64 / span:.2f}"
        assert await page.eval("document.getElementById('rate-span').textContent") == (
            f"over the run's {span:.1f} s"
        )
        # the cost panel shows the bill, the console's cost line (before: the projection
        # the run announced after its first task blocks)
        billed = orjson.loads((finished[0] / "results.json").read_bytes())["cost"]["run"]
        cost = await page.wait_for(
            "document.getElementById('cost-estimate').textContent",
            lambda v: bool(v) and v.startswith("bill: "),
            20,
        )
        assert f"{billed['sent_calls']:,} calls sent, {billed['sent_tokens']:,} tokens" in cost
        assert "at simulated list prices (nothing billed)" in cost and "projected" not in cost
        assert float(cost.split("$")[1].split()[0]) == pytest.approx(billed["billed_usd"], rel=5e-3)
        # bars coloured per slot, as the lines of the course plot, with an axis
        fills = await page.wait_for(BAR_FILLS, lambda v: v and len(v) == 4, 20)
        lines = dict(await page.wait_for(LINE_COLOURS, lambda v: v and len(v) == 4, 20))
        assert len({f for _, f, _ in fills}) == 4
        assert all(fill == lines[slot] for slot, fill, _ in fills)
        assert len({css for *_, css in fills}) == 4  # the stylesheet no longer paints them green
        ticks = await page.eval("document.querySelectorAll('#phi-chart text.tick').length")
        assert ticks >= 4
        # one page of 25 of 64 episodes; the filters go to the server
        info = await page.wait_for(
            "document.getElementById('page-info').textContent", lambda v: "of 64" in v, 20
        )
        assert info.startswith("1\u201325 of 64")
        assert await page.eval("document.querySelectorAll('#recent tbody tr').length") == 25
        await page.eval(
            "(() => { const s = document.getElementById('f-outcome'); s.value = 'failure';"
            " s.dispatchEvent(new Event('change')); })()"
        )
        statuses = await page.wait_for(
            "Array.from(document.querySelectorAll('#recent tbody tr')).map(r => r.className)",
            lambda v: bool(v) and set(v) == {"fail"},
            20,
        )
        failed = sum(1 for e in _ended(finished[0]) if not e["outcome"]["success"])
        assert len(statuses) == min(25, failed)
        # the filters live in the address: a reload or a shared link keeps them, back and
        # forward step through them (before: the address never changed)
        assert await page.eval("location.search") == "?outcome=failure"
        await page.eval(
            "(() => { const s = document.getElementById('f-coalition'); s.value = '';"
            " s.dispatchEvent(new Event('change')); })()"
        )
        only = await page.wait_for(ROW_COALITIONS, lambda v: bool(v) and set(v) == {"(none)"}, 20)
        assert await page.eval("location.search") == "?coalition=%28none%29&outcome=failure"
        await page.eval("location.reload()")
        kept = await page.wait_for(FILTERS, lambda v: v == ["", "failure"], 30)
        assert kept == ["", "failure"]
        await page.wait_for(ROW_COALITIONS, lambda v: v == only, 20)
        await page.eval("window.history.back()")
        await page.wait_for(
            LISTED,
            lambda v: v[:3] == ["?outcome=failure", "*", "failure"] and f"of {failed} " in v[3],
            20,
        )
        await page.eval("window.history.back()")
        await page.wait_for(LISTED, lambda v: v[:3] == ["", "*", ""] and "of 64 " in v[3], 20)
        await page.eval("window.history.forward()")
        await page.wait_for(LISTED, lambda v: v[0] == "?outcome=failure" and v[2] == "failure", 20)
        # the cost panel sits above the episode list, not under it
        above = await page.eval(
            "document.getElementById('cost-panel').compareDocumentPosition("
            "document.getElementById('recent')) & Node.DOCUMENT_POSITION_FOLLOWING"
        )
        assert above
        links = await page.wait_for(
            "Array.from(document.querySelectorAll('#flip-links a.flip-link'))"
            ".map(a => a.dataset.slot)",
            lambda v: bool(v) and len(v) == 4,
            20,
        )
        assert links == ["planning", "reasoning", "action", "reflection"]


async def test_transcript_shows_each_modules_prompt_and_answer(
    finished: tuple[Path, Path], tmp_path: Path
) -> None:
    event = next(e for e in _ended(finished[0]) if e["coalition"] == ["action"])
    trace = event["outcome"]["trace"]
    call = next(m for m in trace if m["type"] == "LLMCall" and m["sender"] == "action")
    action = next(m for m in trace if m["type"] == "ActionProposed")
    from urllib.parse import quote

    async with viewing([finished[0]]) as url:
        target = url.replace("/?", "/runs/0/?") if "?" in url else url + "runs/0/"
        async with browser(
            target + "#episode=" + quote(event["episode_id"], safe=""), tmp_path / "profile"
        ) as page:
            text = await page.wait_for(
                "document.getElementById('trace').innerText",
                lambda v: bool(v) and action["text"] in v,
                60,
            )
            assert trace[0]["instruction"].splitlines()[0] in text
            head = await page.eval("document.getElementById('trace-outcome').innerText")
            assert "action: sim:strong" in head and "planning: sim:weak" in head
            # the prompt is one click away; the raw answer is the model's own text
            answers = await page.eval(
                "Array.from(document.querySelectorAll("
                "'#trace li[data-sender=\"action\"] details.call pre.answer-text'))"
                ".map(p => p.textContent)"
            )
            assert call["answer"] in answers
            await page.eval("document.querySelector('#trace details.call').open = true")
            shown = await page.eval("document.querySelector('#trace details.call').innerText")
            assert "system" in shown and trace[0]["instruction"].splitlines()[0] in shown
            # the diff partner menu lists the task's other coalitions
            partners = await page.wait_for(
                "document.getElementById('diff-with').options.length", lambda v: v == 15, 20
            )
            assert partners == 15


async def test_coalition_diff_marks_the_first_divergent_step(
    finished: tuple[Path, Path], tmp_path: Path
) -> None:
    from urllib.parse import quote

    from agentbus.runs.runlog import episode_event, scan
    from agentbus.runs.transcript import coalition_diff

    flip = scan(finished[0]).flips("action")[0]
    a, b = flip["without"]["episode_id"], flip["with"]["episode_id"]
    want = coalition_diff(episode_event(finished[0], a) or {}, episode_event(finished[0], b) or {})
    first = want["first_divergent_step"]
    assert first is not None
    async with viewing([finished[0]]) as url:
        target = url + "runs/0/#diff=" + quote(a, safe="") + "&b=" + quote(b, safe="")
        async with browser(target, tmp_path / "profile") as page:
            marked = await page.wait_for(
                "Array.from(document.querySelectorAll('#diff-table tr.diverge'))"
                ".map(r => [r.dataset.step, r.dataset.first, r.innerText])",
                lambda v: bool(v),
                60,
            )
            assert len(marked) == 1 and marked[0][0] == str(first) and marked[0][1] == "true"
            assert "diverges" in marked[0][2]
            classes = await page.eval(
                "Array.from(document.querySelectorAll('#diff-table tbody tr'))"
                ".map(r => [Number(r.dataset.step), r.classList.contains('same')])"
            )
            assert all(same for step, same in classes if step < first)
            summary = await page.eval("document.getElementById('diff-summary').textContent")
            assert f"first divergent step: {first}" in summary
            assert "slots on different models: action" in summary


async def test_run_comparison_shows_both_runs_values(
    finished: tuple[Path, Path], tmp_path: Path
) -> None:
    from agentbus.runs.comparison import compare_runs
    from agentbus.runs.runlog import scan

    want = compare_runs(scan(finished[0]), scan(finished[1]))["models"][0]["slots"]
    async with viewing(list(finished)) as url, browser(url, tmp_path / "profile") as page:
        rows = await page.wait_for(
            "Array.from(document.querySelectorAll('table.cmp[data-kind=\"slot\"] tbody tr'))"
            ".map(r => [r.dataset.key, r.querySelector('td.a').textContent,"
            " r.querySelector('td.b').textContent, r.querySelector('td.ci').textContent])",
            lambda v: bool(v) and len(v) == 4,
            60,
        )
        for (slot, a, b, ci), w in zip(rows, want, strict=True):
            assert slot == w["slot"]
            assert float(a) == pytest.approx(w["a"], abs=6e-4)
            assert float(b) == pytest.approx(w["b"], abs=6e-4)
            assert ci.endswith("over 4 tasks")
        assert any(float(a) != float(b) for _, a, b, _ in rows)
        body = await page.eval("document.body.innerText")
        assert "nan" not in body.lower() and "run-a" in body and "run-b" in body


PILL = "document.getElementById('conn').textContent"


async def test_live_dashboard_keeps_the_final_state_after_the_run(tmp_path: Path) -> None:
    """The run ends (log closed): the page says finished, episodes still open; the server
    then stops (no terminal to linger in): the page keeps its state and says how to reopen."""
    store = RunStore.open(tmp_path / "run", {"env": "demo"}, result_keys=["env"])
    hub = EventHub()
    server = LiveServer(hub, store, host="127.0.0.1", port=0)
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(store.consume, hub)
            url = await server.start()
            await hub.publish("run.started", {"total": 6})
            for i in range(6):
                await hub.publish("episode.ended", ended(i))
            await hub.publish("attribution.snapshot", snapshot(1.0))
            await hub.publish("run.finished", {"episodes": 6})
            async with browser(url, tmp_path / "profile") as page:
                await page.wait_for(DONE, lambda v: v == "6/6", 60)
                hub.close()  # the run is over: the log closes, the server stays
                await page.wait_for(PILL, lambda v: v == "finished", 30)
                row = "document.querySelector('#recent tbody tr[data-episode=\"ep3\"]')"
                await page.wait_for(row + " !== null", bool, 20)
                await page.eval(row + ".click()")
                await page.wait_for(
                    "document.getElementById('trace').innerText",
                    lambda v: bool(v) and "plan for task t3" in v,
                    20,
                )
                await server.stop()
                pill = await page.wait_for(PILL, lambda v: v.startswith("finished ("), 30)
                assert "python -m agentbus.view" in pill
                assert await page.eval("document.getElementById('conn').className") == "pill"
                assert await page.eval(DONE) == "6/6"
    finally:
        await server.stop()
        store.close()

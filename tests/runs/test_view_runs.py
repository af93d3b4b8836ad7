"""The viewer's data side on two real finished runs: transcripts, diffs, comparison, export.

One module fixture makes two small runs (tests/helpers/view_runs.py); every test reads
them through the commands a user types (subprocesses) or the viewer's HTTP API
on loopback.
"""

from __future__ import annotations

import csv
import math
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson
import pytest

import agentbus
from agentbus.core.errors import UserError
from agentbus.export import main as export_main
from agentbus.runs.comparison import compare_runs, task_shapley
from agentbus.runs.runlog import scan
from agentbus.runs.viewer import Viewer
from tests.helpers.cli_run import python_m
from tests.helpers.view_runs import ROOT, shared_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return shared_runs(tmp_path_factory)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return python_m(*args, cwd=ROOT)


def ended(run: Path) -> list[dict[str, Any]]:
    lines = (run / "events.jsonl").read_bytes().splitlines()
    return [e for e in map(orjson.loads, lines) if e["type"] == "episode.ended"]


def results(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((run / "results.json").read_bytes())
    return data


def test_terminal_transcript_shows_each_module_turn_and_its_prompt(runs: tuple[Path, Path]) -> None:
    event = next(e for e in ended(runs[0]) if e["coalition"] == ["action"])
    trace = event["outcome"]["trace"]
    action = next(m for m in trace if m["type"] == "ActionProposed")
    call = next(m for m in trace if m["type"] == "LLMCall" and m["sender"] == "action")
    done = cli("agentbus.report", str(runs[0]), "--episode", event["episode_id"], "--prompts")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"coalition action on test model {event['test_model']}" in out
    assert "[ActionProposed] action (sim:strong)" in out  # the slot and its model
    assert action["text"] in out
    assert call["answer"].splitlines()[0] in out  # the raw answer, not only the parsed action
    assert trace[0]["instruction"].splitlines()[0] in out  # the task
    assert "> system:" in out and "verdict:" in out
    missing = cli("agentbus.report", str(runs[0]), "--episode", "no-such-episode")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_compare_prints_both_runs_and_paired_differences_even_when_quiet(
    runs: tuple[Path, Path],
) -> None:
    a, b = runs
    done = cli("agentbus.report", str(a), "--compare", str(b), "--quiet", "--no-plots")
    assert done.returncode == 0, done.stderr
    assert "nan" not in done.stdout.lower()
    phi_a = results(a)["models"]["sim:strong"]["shapley"]
    phi_b = results(b)["models"]["sim:strong"]["shapley"]
    assert phi_a != phi_b
    for slot in ("planning", "reasoning", "action", "reflection"):
        line = next(x for x in done.stdout.splitlines() if x.strip().startswith(slot + " "))
        cols = line.split()
        # per-task Shapley averaged over tasks = the run's own phi (every coalition ran)
        assert float(cols[1]) == pytest.approx(phi_a[slot]["value"], abs=6e-4)
        assert float(cols[2]) == pytest.approx(phi_b[slot]["value"], abs=6e-4)
        assert float(cols[3]) == pytest.approx(float(cols[1]) - float(cols[2]), abs=1.5e-3)
        assert "over 4 tasks" in line
    assert "consistency rate n/a (needs two or more test models" in done.stdout
    stored = orjson.loads((a / "comparison.json").read_bytes())
    assert stored["consistency_rate"] is None and stored["paired"]["models"][0]["shared_tasks"] == 4


def test_paired_interval_is_a_t_interval_over_shared_tasks(runs: tuple[Path, Path]) -> None:
    ia, ib = scan(runs[0]), scan(runs[1])
    cmp = compare_runs(ia, ib)
    row = next(r for r in cmp["models"][0]["slots"] if r["slot"] == "action")
    from agentbus.runs.comparison import task_values

    va, vb = task_values(ia, "sim:strong"), task_values(ib, "sim:strong")
    d = []
    for t in sorted(va):
        pa, pb = task_shapley(va[t], ia.slots), task_shapley(vb[t], ib.slots)
        assert pa is not None and pb is not None
        d.append(pa["action"] - pb["action"])
    mean = sum(d) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 3)
    half = 3.182446305284263 * sd / 2  # t(0.975, 3) * sd / sqrt(4)
    assert row["diff"] == pytest.approx(mean)
    assert row["low"] == pytest.approx(mean - half) and row["high"] == pytest.approx(mean + half)
    # a run compared with only one of its tasks: a difference, and why there is no interval
    one = scan(runs[1])
    one.rows = [r for r in one.rows if r["task_id"] == sorted(va)[0]]
    single = compare_runs(ia, one)["models"][0]["slots"][0]
    assert single["low"] is None and single["why"] == "one shared task: an interval needs two"


def test_export_round_trips_to_results_json(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run = runs[0]
    counted = {
        e["episode_id"]
        for e in ended(run)
        if e["outcome"].get("error_kind") in (None, "step_limit")
    }
    out = tmp_path / "episodes.csv"
    done = cli("agentbus.export", str(run), "--format", "csv", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {len(counted)} episodes to {out}"
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for fmt in ("jsonl", "parquet"):  # the same command, in process (saves a start-up each)
        assert export_main([str(run), "--format", fmt, "--out", str(tmp_path / f"e.{fmt}")]) == 0
    lines = (tmp_path / "e.jsonl").read_bytes().splitlines()
    assert [orjson.loads(x)["episode_id"] for x in lines] == [r["episode_id"] for r in rows]
    assert {r["episode_id"] for r in rows} == counted
    assert {"model.action", "tokens.action", "cost_usd.action", "failure_kind"} <= set(rows[0])
    frames = agentbus.load(run)  # type: ignore[attr-defined]
    import pandas as pd

    assert frames.episodes.equals(pd.read_parquet(tmp_path / "e.parquet"))
    coal = frames.episodes[frames.episodes["kind"] == "coalition"]
    means = coal.groupby(["test_model", "coalition"])["reward"].mean()
    want = frames.coalitions.set_index(["test_model", "coalition"])["mean"]
    assert len(want) == 16
    assert means.sort_index().to_numpy() == pytest.approx(want.sort_index().to_numpy())
    ours = frames.attribution.query("method == 'shapley'").set_index("slot")["value"]
    phi = results(run)["models"]["sim:strong"]["shapley"]
    assert ours.to_dict() == pytest.approx({s: v["value"] for s, v in phi.items()})
    bad = cli("agentbus.export", str(run), "--format", "xlsx")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --format must be one of")


def test_load_without_pandas_says_what_to_install(
    runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(UserError, match=r"pip install 'agentbus\[data\]'"):
        agentbus.load(runs[0])  # type: ignore[attr-defined]


def test_import_agentbus_does_not_import_pandas() -> None:
    code = "import sys, agentbus; print('pandas' in sys.modules, callable(agentbus.load))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["False", "True"], done.stderr


@pytest.fixture
async def viewer(runs: tuple[Path, Path]) -> AsyncIterator[str]:
    v = Viewer(list(runs), port=0)
    url = await v.start()
    try:
        yield url
    finally:
        await v.stop()


async def test_viewer_api_pages_filters_transcripts_diffs_flips(
    viewer: str, runs: tuple[Path, Path]
) -> None:
    url = viewer
    base = url + "runs/0/"
    async with aiohttp.ClientSession() as s:

        async def get(path: str, status: int = 200) -> Any:
            async with s.get(base + path) as r:
                assert r.status == status, await r.text()
                return await r.json()

        page = await get("api/episodes?limit=10&offset=60")
        assert page["total"] == 64 and len(page["rows"]) == 4
        fails = await get("api/episodes?outcome=failure&limit=500")
        assert fails["rows"] and all(not r["success"] and r["counts"] for r in fails["rows"])
        kind = fails["rows"][0]["failure"]
        assert all(
            r["failure"] == kind for r in (await get(f"api/episodes?failure={kind}"))["rows"]
        )
        # the all-default coalition as people write it (before: no episode matched)
        none = await get("api/episodes?coalition=(none)&limit=500")
        assert none["total"] == 4 and {r["coalition"] for r in none["rows"]} == {""}
        one = await get("api/episodes?coalition=planning+action&limit=500".replace("+", "%2B"))
        assert one["total"] == 4 and {r["coalition"] for r in one["rows"]} == {"planning+action"}
        await get("api/episodes?offset=x", 400)
        facets = await get("api/facets")
        assert facets["slots"] == ["planning", "reasoning", "action", "reflection"]
        assert len(facets["coalitions"]) == 16 and facets["coalitions"][0] == ""
        eid = one["rows"][0]["episode_id"]
        t = await get("api/transcript/" + quote(eid, safe=""))
        turns = [x for x in t["turns"] if x["sender"] == "action"]
        assert turns and all(x["model"] == "sim:strong" for x in turns)
        assert all(c["prompt"] and c["answer"] for x in turns for c in x["calls"])
        await get("api/transcript/nope", 404)
        flips = await get("api/flips?slot=action")
        assert flips["total"] > 0
        f = flips["flips"][0]
        assert set(f["with"]["coalition"].split("+")) - set(
            f["without"]["coalition"].split("+") if f["without"]["coalition"] else []
        ) == {"action"}
        assert f["with"]["reward"] != f["without"]["reward"]
        a_id, b_id = f["without"]["episode_id"], f["with"]["episode_id"]
        d = await get(f"api/diff?a={quote(a_id, safe='')}&b={quote(b_id, safe='')}")
        assert d["slots_differ"] == ["action"] and d["first_divergent_step"] is not None
        first = d["first_divergent_step"]
        assert all(r["same"] for r in d["steps"] if r["step"] < first)
        await get("api/flips?slot=nope", 400)
        async with s.get(url + "api/compare?a=0&b=1") as r:
            cmp = await r.json()
        assert cmp["run_a"] == "run-a" and cmp["models"][0]["shared_tasks"] == 4


def test_view_cli_refuses_a_missing_run_in_one_line(tmp_path: Path) -> None:
    done = cli("agentbus.view", str(tmp_path / "nope"))
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: run directory") and done.stderr.count("\n") == 1


def _synthetic_log(run: Path, big: Path, n: int) -> Path:
    """The run's records again and again under new task ids, untraced: a large log, cheaply."""
    big.mkdir()
    (big / "manifest.json").write_bytes((run / "manifest.json").read_bytes())
    records = ended(run)
    with open(big / "events.jsonl", "wb") as out:
        for i in range(n):
            e = dict(records[i % len(records)])
            e["outcome"] = {k: v for k, v in e["outcome"].items() if k != "trace"}
            task = f"{e['task_id']}-{i // len(records):04d}"
            e["episode_id"] = e["episode_id"].replace(e["task_id"], task)
            e["task_id"], e["seq"] = task, i + 1
            out.write(orjson.dumps(e) + b"\n")
    return big


async def test_ten_thousand_episodes_are_served_a_page_at_a_time(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    """A synthetic 10,000-episode log (the run's records under new task ids, untraced)."""
    big = _synthetic_log(runs[0], tmp_path / "big", 10_000)
    v = Viewer([big], port=0)
    began = time.perf_counter()
    url = await v.start()
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(url + "runs/0/api/episodes?limit=25&offset=9990") as r:
                page = await r.json()
        took = time.perf_counter() - began
        assert page["total"] == 10_000 and len(page["rows"]) == 10
        assert took < 30, took  # about 0.5 s here; generous for a loaded CI machine
    finally:
        await v.stop()


async def test_viewer_reads_a_log_being_written_without_touching_it(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    """A torn last line (a run still writing, or a crash) is skipped, never cut off."""
    live = tmp_path / "live"
    live.mkdir()
    data = (runs[0] / "events.jsonl").read_bytes()
    torn = data + b'{"v":1,"seq":99999,"type":"episode.ended","episode_id":"x'
    (live / "events.jsonl").write_bytes(torn)
    v = Viewer([live], port=0)
    url = await v.start()
    try:
        async with aiohttp.ClientSession() as s, s.get(url + "runs/0/api/status") as r:
            status = await r.json()
        assert status["done"] == 64 and status["read_only"] is True
    finally:
        await v.stop()
    assert (live / "events.jsonl").read_bytes() == torn
    assert not (live / "manifest.json").exists() and not (live / ".lock").exists()
    # a bad line in the middle is damage, not a torn write: one clear line
    lines = data.splitlines(keepends=True)
    (live / "events.jsonl").write_bytes(b"".join([*lines[:5], b"{not json\n", *lines[5:]]))
    done = cli("agentbus.view", str(live), "--port", "0")
    assert done.returncode == 2 and "line 6 is corrupt" in done.stderr
    assert done.stderr.count("\n") == 1


def _events_of(run: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in (run / "events.jsonl").read_bytes().splitlines()]


async def _status(run: Path) -> dict[str, Any]:
    v = Viewer([run], port=0)
    url = await v.start()
    try:
        async with aiohttp.ClientSession() as s, s.get(url + "runs/0/api/status") as r:
            body: dict[str, Any] = await r.json()
            return body
    finally:
        await v.stop()


async def test_a_finished_run_shows_its_bill_and_its_own_rates(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    """The bill is the console's (results.json's cost.run), not the early projection; the
    rates are over the run's own duration. A log cut short, or a results.json older than the
    log's end (a resumed run that has not written its own yet), shows what its episodes' records
    spent instead. Before, /api/status had no bill and a cut-off log's rates fell with the clock."""
    run = runs[0]
    events = _events_of(run)
    began = next(e["ts"] for e in events if e["type"] == "run.started")
    ended_at = next(e["ts"] for e in events if e["type"] == "run.finished")
    status = await _status(run)
    billed = results(run)["cost"]["run"]
    assert status["bill"]["usd"] == pytest.approx(billed["billed_usd"])
    assert (status["bill"]["sent_calls"], status["bill"]["sent_tokens"]) == (
        billed["sent_calls"],
        billed["sent_tokens"],
    )
    assert status["bill"]["simulated"] is True and status["bill"]["priced"] is True
    assert status["duration_s"] == pytest.approx(ended_at - began)
    assert status["episodes_per_s"] == pytest.approx(64 / (ended_at - began))
    spent = sum(
        u.get("sent_usd") or 0.0
        for e in events
        if e["type"] == "episode.ended"
        for u in e["outcome"]["usage"].values()
    )
    assert status["spent"]["usd"] == pytest.approx(spent)

    cut = tmp_path / "cut"
    cut.mkdir()
    for name in ("manifest.json", "results.json"):
        (cut / name).write_bytes((run / name).read_bytes())
    kept = [e for e in events if e["type"] != "run.finished"]
    (cut / "events.jsonl").write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in kept))
    status = await _status(cut)
    assert status["finished"] is False and status["bill"] is None
    last = max(e["ts"] for e in kept)
    assert status["duration_s"] == pytest.approx(last - began)
    assert status["spent"]["usd"] == pytest.approx(spent)

    stale = tmp_path / "stale"
    stale.mkdir()
    for name in ("manifest.json", "results.json", "events.jsonl"):
        (stale / name).write_bytes((run / name).read_bytes())
    os.utime(stale / "results.json", (began - 60, began - 60))  # written before the run's end
    assert (await _status(stale))["bill"] is None


async def test_viewer_off_loopback_needs_its_token(runs: tuple[Path, Path]) -> None:
    v = Viewer([runs[0]], host="127.0.0.2", port=0)
    url = await v.start()
    try:
        assert "?token=" in url
        base, token = url.split("?token=")
        async with aiohttp.ClientSession() as s:
            async with s.get(base + "runs/0/api/episodes") as r:
                assert r.status == 401
            async with s.get(base + "api/compare") as r:
                assert r.status == 401
            async with s.get(base + "runs/0/api/episodes?token=" + token) as r:
                assert r.status == 200
            async with s.get(url, allow_redirects=False) as r:  # the token goes on
                assert r.status == 302 and r.headers["Location"].endswith("?token=" + token)
    finally:
        await v.stop()

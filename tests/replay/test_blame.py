"""Blame by counterfactual replay, checked against the simulator's own mistakes.

One small math run (6 tasks, planning varied: 12 episodes) is blamed end to
end: every failure of the all-default agent must reproduce from the run's
cache, every decisive step found must be a call where the simulator rolled a
mistake, a second blame must resume from blame.jsonl without replaying, and
a record whose prefix does not match what the agent does again must be
reported as not replayable, not guessed on.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import orjson
import pytest

from agentbus.app.blame import LOG, BlameOptions, choose, load_config, load_records, open_blamer
from agentbus.app.blame_cmd import blame
from agentbus.app.run import main as run_main
from agentbus.core.calltrace import expand_prompts
from agentbus.replay.calls import Intervention, Recorded, recorded_calls
from agentbus.replay.search import replay


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("blame") / "run"
    argv = ["--run-dir", str(out), "--tasks", "6", "--slots", "planning"]
    argv += ["--sim-speed", "0", "--no-plots", "--progress", "off", "--no-preflight"]
    assert run_main(argv) == 0
    return out


def test_decisive_steps_are_the_simulators_mistakes(run_dir: Path) -> None:
    text = io.StringIO()
    summary = anyio.run(blame, BlameOptions(run_dir, details=True), text)
    entries = [orjson.loads(line) for line in (run_dir / LOG).read_bytes().splitlines()]
    assert summary["episodes"] == len(entries) >= 3
    assert summary["replayable"] == summary["episodes"], summary["not_replayable"]
    decisive = [e for e in entries if e["status"] == "decisive"]
    for e in decisive:
        assert e["truth"] is True, e  # the repaired call is one the simulator got wrong
        assert e["step"] in e["mistakes"]
        # the verdict carries its flip rates: 6 repaired vs 6 placebo continuations, Fisher
        last = e["tested"][-1]
        assert last["step"] == e["step"] and last["repairs"] == 6 and last["placebos"] == 6
        assert e["p"] <= 0.05 and e["repair_rate"] > e["placebo_rate"]
        assert e["said"] and e["repair_said"] and e["said"] != e["repair_said"]
    for e in entries:
        # the reproduction, one screen per repaired step, and each tested call's continuations
        tested = sum(t["repairs"] - 1 + t["placebos"] for t in e["tested"])
        assert e["replays"] == 1 + len(e["tried"]) + len(e["tested"]) + tested
        assert e["setting"] == summary["setting"] and e["outcome"] == "failure"
    assert summary["truth"]["accuracy"] == (1.0 if decisive else None)
    out = text.getvalue()
    assert "share" in out and (run_dir / "blame.md").exists()
    # --details: one line per episode, with its task and call number
    for e in entries:
        assert e["episode_id"] in out and e["task_id"] in out
    # resumed: nothing is replayed again, the summary is the same
    again = anyio.run(blame, BlameOptions(run_dir), io.StringIO())
    assert len((run_dir / LOG).read_bytes().splitlines()) == len(entries)
    assert again["modules"] == summary["modules"]
    # another setting (the first flip counts) is kept beside it, not over it
    text = io.StringIO()
    first_flip = anyio.run(blame, BlameOptions(run_dir, placebos=0, details=True), text)
    kept = orjson.loads((run_dir / "blame.json").read_bytes())["settings"]
    assert len(kept) == 2 and summary["setting"] in kept
    # without the test the first flip counts: the weak agent's failures do get a verdict
    flips = [v for v in first_flip["verdicts"] if v["status"] == "decisive"]
    assert flips and len(flips) >= len(decisive)
    first = flips[0]
    assert f"step {first['step']} of {first['calls']}" in text.getvalue()
    assert "said:" in text.getvalue()
    md = (run_dir / "blame.md").read_text()
    assert all(f"## {key}" in md for key in kept) and first["episode_id"] in md


def test_a_run_without_its_cache_is_named_as_such(run_dir: Path, tmp_path: Path) -> None:
    import shutil

    from agentbus.app.blame_cmd import main

    bare = tmp_path / "bare"
    shutil.copytree(run_dir, bare)
    (bare / "llm-cache.jsonl").unlink()
    off = tmp_path / "off"
    shutil.copytree(run_dir, off)
    manifest = orjson.loads((off / "manifest.json").read_bytes())
    manifest["config"]["llm"]["cache"] = "off"
    (off / "manifest.json").write_bytes(orjson.dumps(manifest))
    for where, words in ((bare, "has no llm-cache.jsonl"), (off, "made with --cache off")):
        err = io.StringIO()
        with redirect_stderr(err):
            assert main([str(where)]) == 2
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and words in lines[0], lines


async def _replays(run_dir: Path) -> tuple[Any, Any, Any]:
    config = load_config(run_dir)
    record = choose(load_records(run_dir), config, BlameOptions(run_dir))[0]
    recorded = recorded_calls(expand_prompts(record.outcome.trace or []))
    async with open_blamer(config, run_dir, "sim:strong") as blamer:
        spec = blamer._spec(record)
        honest = await replay(spec, recorded)
        # another answer on record than the one the agent gets again: the prefix
        # did not reproduce, and the replay must say so
        slot = next(iter(recorded))
        tampered = dict(recorded)
        first = tampered[slot][0]
        tampered[slot] = [Recorded(first.prompt, first.answer + " (edited)"), *tampered[slot][1:]]
        broken = await replay(blamer._spec(record), tampered)
        repaired = await replay(
            blamer._spec(record),
            recorded,
            Intervention(2, honest.calls[2].slot),
            blamer.router.client("sim:strong"),
        )
    return honest, broken, repaired


def test_the_prefix_is_the_record_or_not_replayable(run_dir: Path) -> None:
    honest, broken, repaired = anyio.run(_replays, run_dir)
    assert honest.replayable and all(c.cached for c in honest.calls if c.done)
    # at most the call the episode's end cut off in the original, never answered again
    assert sum(not c.done for c in honest.calls) <= 1
    assert not broken.replayable and "differs from the record" in (broken.diverged or "")
    assert repaired.replayable
    assert [c.text for c in repaired.calls[:2]] == [c.text for c in honest.calls[:2]]
    assert all(c.cached for c in repaired.calls[:2]) and repaired.calls[2].repaired
    assert repaired.calls[2].text != honest.calls[2].text


async def _viewer_sees(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    import aiohttp

    from agentbus.runs.viewer import Viewer

    await blame(BlameOptions(run_dir), io.StringIO())  # resumed: no replays
    # what broke the all-test agent's successes: checked against the simulator too
    won = await blame(BlameOptions(run_dir, outcome="success"), io.StringIO())
    assert won["episodes"] >= 1 and won["truth"] is not None, won
    for v in won["verdicts"]:
        assert v["status"] != "decisive" or v.get("truth") is not None, v
    v = Viewer([run_dir], port=0)
    base = (await v.start()) + "runs/0/"
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(base + "api/blame") as r:
                groups = await r.json()
            failures = groups["failures"]
            decisive = next(e for k, ids in failures.items() if k != "none" for e in ids)
            async with s.get(base + "api/transcript/" + quote(decisive, safe="")) as r:
                shown = await r.json()
    finally:
        await v.stop()
    return groups, shown


def test_the_viewer_lists_blamed_episodes_and_marks_the_call(run_dir: Path) -> None:
    groups, shown = anyio.run(_viewer_sees, run_dir)
    failures = groups["failures"]
    assert set(failures) <= {"planning", "reasoning", "action", "reflection", "none"}
    # blamed successes are listed apart: the same episode is never on both sides
    won = {e for ids in groups["successes"].values() for e in ids}
    lost = {e for ids in failures.values() for e in ids}
    assert won and not won & lost
    mark = shown["blame"]
    assert mark["status"] == "decisive" and mark["slot"] in failures
    assert mark["outcome"] == "failure" and mark["repair_rate"] > mark["placebo_rate"]
    calls = [c for t in shown["turns"] if t["sender"] == mark["slot"] for c in t["calls"]]
    assert len(calls) > mark["rank"]  # the call the page badges is in the transcript


def test_bad_input_is_one_line(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentbus.app.blame_cmd import main

    bad = (["--repair", "sim:nosuch"], ["--sample", "0"], ["--coalition", "nosuch"])
    # --agent-worker needs a command agent; this run has none
    for argv in (*bad, ["--agent-worker", "python worker.py"]):
        try:
            status = main([str(run_dir), *argv])
        except SystemExit as exc:  # argparse's errors exit from inside parse()
            status = exc.code  # type: ignore[assignment]
        assert status == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "error" in err[0], (argv, err)

"""docs/events.md against what a real run emits: every type, every field, both ways.

One small real evaluation (2 tasks, two test models, ``--best`` so the
best-combination episodes appear, ``--serve`` so the live server's endpoints
can be read while it runs) is shared by every check. The documented fields are
read from docs/events.md itself:

* each ``### `type``` section is an event type; the first column of its tables
  names fields (several per row allowed: `` `a`, `b` ``);
* a table right after a line `` `name`: `` lists the fields of that object,
  `` `name.*`: `` those of each value of that object (per test model);
* a row whose meaning says *optional* may be absent from this run; every other
  documented field must appear, and every emitted field must be documented.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVENTS_MD = ROOT / "docs" / "events.md"
ENVELOPE = {"v", "seq", "ts", "type"}


@pytest.fixture(scope="module")
def doc() -> dict[str, dict[str, tuple[set[str], set[str]]]]:
    """type -> path ('' = top level, 'outcome', 'models.*') -> (all fields, optional fields)."""
    out: dict[str, dict[str, tuple[set[str], set[str]]]] = {}
    section: str | None = None
    label = ""
    in_table = False
    for line in EVENTS_MD.read_text().splitlines():
        if line.startswith("#"):
            m = re.match(r"^### `([\w.]+)`\s*$", line)
            section = m.group(1) if m else None
            label, in_table = "", False
            continue
        if section is None:
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not in_table:  # header row
                in_table = True
                continue
            if set(cells[0]) <= set("-: "):
                continue
            names = re.findall(r"`([\w.]+)`", cells[0])
            assert names, f"events.md: a row of `{section}` names no field: {line}"
            fields, optional = out.setdefault(section, {}).setdefault(label, (set(), set()))
            fields.update(names)
            if "optional" in " ".join(cells[1:]).lower():
                optional.update(names)
            continue
        in_table = False
        m = re.match(r"^`([\w.*]+)`:\s*$", line.strip())
        if m:
            label = m.group(1)
        elif line.strip():
            label = ""
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
        return json.loads(resp.read())


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A small real run with --best and --serve; its events and what the server said."""
    run_dir = tmp_path_factory.mktemp("events") / "run"
    port = _free_port()
    argv = [
        sys.executable, "-m", "agentbus.run", "--tasks", "2", "--sim-speed", "3",
        "--progress", "off", "--run-dir", str(run_dir), "--test", "sim:strong,sim:strong-action",
        "--best", "--pareto", "1", "--serve", f"127.0.0.1:{port}",
    ]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip
    seen: dict[str, Any] = {}
    deadline = time.monotonic() + 600
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            for path in ("/api/status", "/api/attribution", "/api/attribution/history",
                         "/api/manifest"):  # fmt: skip
                try:
                    seen[path] = _get(port, path)
                except (OSError, ValueError):
                    pass
            time.sleep(0.3)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out[-4000:]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return {"events": events, "server": seen, "output": out}


def _emitted(events: list[dict[str, Any]]) -> dict[str, dict[str, set[str]]]:
    """type -> path -> fields seen (union over the run)."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for e in events:
        t = e["type"]
        found[t][""].update(set(e) - ENVELOPE)
        for key, value in e.items():
            if isinstance(value, dict) and key not in ("assignment", "metadata", "failure_kinds"):
                found[t][key].update(value)
                if all(isinstance(v, dict) for v in value.values()) and key == "models":
                    for v in value.values():
                        found[t][f"{key}.*"].update(v)
    return found


def test_envelope(run: dict[str, Any]) -> None:
    for i, e in enumerate(run["events"], 1):
        assert list(e)[:4] == ["v", "seq", "ts", "type"] and e["v"] == 1 and e["seq"] == i


def test_documented_types_are_the_emitted_types(run: dict[str, Any], doc: Any) -> None:
    emitted = {e["type"] for e in run["events"]}
    assert emitted == set(doc), (
        f"emitted but undocumented: {sorted(emitted - set(doc))}; "
        f"documented but not emitted: {sorted(set(doc) - emitted)}"
    )


def test_best_run_episodes_appear(run: dict[str, Any]) -> None:
    best = [e for e in run["events"] if e.get("kind") == "best"]
    assert {e["type"] for e in best} == {"episode.started", "episode.ended"}, run["output"][-3000:]


def test_fields_match_the_docs(run: dict[str, Any], doc: Any) -> None:
    emitted = _emitted(run["events"])
    problems = []
    for etype, tables in doc.items():
        for path, (fields, optional) in tables.items():
            seen = emitted.get(etype, {}).get(path, set())
            missing = fields - optional - seen
            extra = seen - fields
            if missing:
                problems.append(
                    f"{etype} {path or '(top)'}: documented, not emitted: {sorted(missing)}"
                )
            if extra:
                problems.append(
                    f"{etype} {path or '(top)'}: emitted, not documented: {sorted(extra)}"
                )
    for etype, tables in emitted.items():
        for path, seen in tables.items():
            if path not in doc.get(etype, {}) and path in ("", "outcome", "failures", "models.*"):
                problems.append(
                    f"{etype} {path or '(top)'}: no table in events.md for {sorted(seen)}"
                )
    assert not problems, "\n".join(problems)


def test_episode_started_per_kind(run: dict[str, Any]) -> None:
    """Coalition episodes carry their coalition; best-combination ones say kind=best instead."""
    for e in run["events"]:
        if e["type"] != "episode.started":
            continue
        if e.get("kind") in ("best", "pareto"):
            assert "test_model" not in e and e["assignment"]
        else:
            assert "kind" not in e and {"test_model", "coalition", "slots", "repeat"} <= set(e)


def test_run_started_says_done_not_pending(run: dict[str, Any]) -> None:
    started = next(e for e in run["events"] if e["type"] == "run.started")
    assert started["done"] == 0 and "pending" not in started
    assert "`pending`" not in EVENTS_MD.read_text()


def test_server_endpoints_match_the_docs(run: dict[str, Any]) -> None:
    """The live server's fields that events.md names exist (status, history points)."""
    server = run["server"]
    assert {"/api/status", "/api/attribution", "/api/attribution/history", "/api/manifest"} <= set(
        server
    ), sorted(server)
    text = EVENTS_MD.read_text()
    status_doc = text.split("`GET /api/status`", 1)[1].split("`GET /api/attribution`", 1)[0]
    status_fields = set(re.findall(r"`(\w+)`", status_doc))
    assert status_fields <= set(server["/api/status"]), sorted(
        status_fields - set(server["/api/status"])
    )
    history_doc = text.split("`GET /api/attribution/history", 1)[1].split("`GET /api/episodes", 1)[
        0
    ]
    point_fields = set(re.findall(r"`(\w+)`", history_doc)) - {"SEQ"}
    points = server["/api/attribution/history"]["points"]
    assert points, server["/api/attribution/history"]
    keys = set().union(*(set(p) for p in points))
    assert keys == point_fields, f"emitted {sorted(keys)}, documented {sorted(point_fields)}"
    snapshot = server["/api/attribution"]
    assert {"estimable", "models", "slots"} <= set(snapshot)

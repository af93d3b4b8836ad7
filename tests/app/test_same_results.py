"""A default run's reward-based results must not move under refactoring.

Moving files, splitting modules or renaming imports should leave every
figure that comes from rewards as it was: the coalition values v(S), the
Shapley, Banzhaf and interaction values with their intervals, the episode
counts. This test runs the command users type (``python -m agentbus.run
--limit 3 --sim-speed 0 --no-plots``) in a subprocess and compares
results.json with a snapshot in tests/data/same_results.json.

Left out, because they move between two runs of the same code: the ``llm``
and ``cost`` sections (cache hits and coalesced calls depend on timing) and
``first_refusal`` (the text of whichever refusal finished first). Floats are
compared to 1e-12, since the summation order of a few intervals depends on
the order in which episodes finish (seen: differences of ~1e-15).

When a change is meant to move the results, regenerate the snapshot with
``.venv/bin/python tests/app/test_same_results.py --update``; it prints every
figure that changed, old and new, so the commit message can say why.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).parents[1] / "data" / "same_results.json"
COMMAND = ["-m", "agentbus.run", "--limit", "3", "--sim-speed", "0", "--no-plots"]
COMMAND += ["--progress", "off"]
LEFT_OUT_SECTIONS = ("llm", "cost")
LEFT_OUT_KEYS = ("first_refusal",)
TOLERANCE = 1e-12


def reward_figures(results: dict[str, Any]) -> dict[str, Any]:
    """results.json without the sections and keys that differ between two runs."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in LEFT_OUT_KEYS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return {k: strip(v) for k, v in results.items() if k not in LEFT_OUT_SECTIONS}


def run_default() -> dict[str, Any]:
    """Run the default evaluation into a fresh directory and read its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        done = subprocess.run(
            [sys.executable, *COMMAND, "--run-dir", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        results = json.loads((out / "results.json").read_text())
    return reward_figures(results)


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Every place where two figure trees differ, as 'path: old -> new'."""
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[str] = []
        for key in sorted(set(old) | set(new)):
            if key not in old or key not in new:
                found.append(f"{path}/{key}: {old.get(key)!r} -> {new.get(key)!r}")
            else:
                found += differences(old[key], new[key], f"{path}/{key}")
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        pairs = enumerate(zip(old, new, strict=True))
        return [d for i, (a, b) in pairs for d in differences(a, b, f"{path}[{i}]")]
    both_floats = isinstance(old, float) and isinstance(new, float)
    if both_floats and math.isclose(old, new, rel_tol=0.0, abs_tol=TOLERANCE):
        return []
    if type(old) is not type(new) or old != new:
        return [f"{path}: {old!r} -> {new!r}"]
    return []


def test_default_run_matches_snapshot() -> None:
    """The default run gives the stored figures; the message lists what moved."""
    stored = json.loads(SNAPSHOT.read_text())
    moved = differences(stored, run_default())
    assert not moved, (
        "the default run's results changed (if meant, run "
        "tests/app/test_same_results.py --update and say why in the commit):\n" + "\n".join(moved[:40])
    )


def test_comparison_notices_a_change() -> None:
    """The comparison itself catches a last-digit change and a missing key."""
    stored = json.loads(SNAPSHOT.read_text())
    changed = json.loads(json.dumps(stored))
    model = next(iter(changed["models"].values()))
    slot = next(iter(model["shapley"]))
    model["shapley"][slot]["value"] += 1e-9
    del model["episodes"]
    assert len(differences(stored, changed)) == 2
    assert differences(stored, stored) == []


def update() -> int:
    """Regenerate the snapshot and print what changed, so the reason can be given."""
    new = run_default()
    old = json.loads(SNAPSHOT.read_text()) if SNAPSHOT.exists() else {}
    moved = differences(old, new)
    SNAPSHOT.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n")
    print(f"{SNAPSHOT}: {len(moved)} figure(s) changed")
    for line in moved:
        print("  " + line[:300])
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        print("usage: python tests/app/test_same_results.py --update", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(update())

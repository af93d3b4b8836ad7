"""No source file over 450 lines in the four packages (issue 44 item 3).

A file that long has usually grown a second job, and the next reader has to
hold all of it in mind to change any of it. The check counts the lines of every
source file (Python, and the dashboard's JavaScript, CSS and HTML; data files
such as the truth tables are not code and are left out) under agentbus/,
attribution/, modules/ and environments/.

There is no list of exceptions any more: every file that was too long when
the check was written has been split, and a file that grows past the limit is
split, not listed. (The list that stood here was empty, so its own test could
never fail; the counter is now checked on a tree made for the purpose.)
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agentbus", "attribution", "modules", "environments")
SOURCE_SUFFIXES = frozenset({".py", ".js", ".css", ".html"})
LIMIT = 450


def line_counts(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, int]:
    """Lines per source file in ``packages`` under ``root``, keyed by relative path."""
    counts: dict[str, int] = {}
    for package in packages:
        for path in (root / package).rglob("*"):
            if path.suffix not in SOURCE_SUFFIXES or "__pycache__" in path.parts:
                continue
            if not path.is_file():
                continue
            with path.open("rb") as handle:
                counts[path.relative_to(root).as_posix()] = sum(1 for _ in handle)
    return counts


def too_long(counts: dict[str, int]) -> dict[str, int]:
    return {p: n for p, n in counts.items() if n > LIMIT}


def test_no_file_over_the_limit() -> None:
    over = too_long(line_counts())
    assert not over, f"over {LIMIT} lines (split by responsibility): {sorted(over.items())}"


def test_the_count_finds_exactly_the_long_source_files(tmp_path: Path) -> None:
    """The counter itself: 451 lines of code is too long, 450 is not, data files are not code."""
    files = {
        "pkg/long.py": LIMIT + 1,
        "pkg/fits.py": LIMIT,
        "pkg/static/app.js": LIMIT + 5,
        "pkg/table.json": 5 * LIMIT,
        "pkg/__pycache__/long.py": 2 * LIMIT,
        "other/long.py": 2 * LIMIT,
    }
    for name, lines in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" * lines)
    counts = line_counts(tmp_path, ("pkg",))
    assert counts["pkg/fits.py"] == LIMIT
    assert too_long(counts) == {"pkg/long.py": LIMIT + 1, "pkg/static/app.js": LIMIT + 5}

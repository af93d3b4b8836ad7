"""The repository's markdown points only inside the repository, at files that exist.

Every ``*.md`` file of the repository (outside virtualenvs, caches, build
output and run directories) is checked for:

* markdown links ``[text](target)``: a relative target must resolve inside the
  repository and exist (web links and ``#anchors`` are not checked);
* path references in code spans (`` `tests/core/test_x.py` ``): one with a ``/``
  and a file extension must exist, relative to the repository root or to the
  markdown file;
* any ``../`` path that climbs out of the repository, and absolute paths of
  one machine (``/work/...``, ``/home/...``), anywhere in the text;
* issue numbers (``issue 12``, ``#12``): readers outside cannot see them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".venv", "venv", ".git", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules",
             "build", "dist", "runs", "__pycache__"}  # fmt: skip


def markdown_files() -> list[Path]:
    found = []
    for path in sorted(ROOT.rglob("*.md")):
        parts = path.relative_to(ROOT).parts
        # .venv-<name>/ are the scratch virtualenvs (git-ignored), as .venv is
        skipped = (p in SKIP_DIRS or p.startswith((".venv-", "venv-")) for p in parts[:-1])
        if any(skipped) or any(p.endswith(".egg-info") for p in parts[:-1]):
            continue
        found.append(path)
    return found


FILES = markdown_files()


def _inside(path: Path) -> bool:
    try:
        path.resolve().relative_to(ROOT)
    except ValueError:
        return False
    return True


def test_markdown_files_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"README.md", "docs/events.md", "docs/architecture.md"} <= names, sorted(names)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_stay_inside_and_exist(path: Path) -> None:
    text = path.read_text()
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # http:, https:, mailto:, in-page anchors
        file = target.split("#", 1)[0]
        resolved = (path.parent / file).resolve()
        if not _inside(resolved):
            problems.append(f"link outside the repository: {target}")
        elif not resolved.exists():
            problems.append(f"link to a missing file: {target}")
    for ref in re.findall(r"`([^`\s]+)`", re.sub(r"```.*?```", "", text, flags=re.S)):
        if "/" not in ref or not re.search(
            r"\.(md|py|toml|json|jsonl|txt|sh|cfg|ini|yaml|yml)$", ref
        ):
            continue
        if re.search(r"[<>*{}$]|^[A-Z_]+/|://", ref) or ref.startswith(("../", "/")):
            continue  # placeholders (RUN_DIR/..., <name>), globs; ../ and / are checked below
        if not ((ROOT / ref).exists() or (path.parent / ref).exists()):
            problems.append(f"reference to a missing file: `{ref}`")
    for ref in re.findall(r"(?<![\w.])((?:\.\./)+[\w.-][\w./-]*)", text):
        if not _inside(path.parent / ref):
            problems.append(f"path outside the repository: {ref}")
    for ref in re.findall(r"(?<![\w.])(/(?:work|home|Users|root|tmp)/[\w./-]+)", text):
        problems.append(f"absolute path of one machine: {ref}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_issue_numbers(path: Path) -> None:
    text = path.read_text()
    found = re.findall(r"(?i)\b(?:issues?|pr|pull request)\s*#?\d+\b", text)
    found += re.findall(r"(?<![\w&/#])#\d+\b", text)
    assert not found, f"{path.relative_to(ROOT)} mentions issue numbers: {found}"

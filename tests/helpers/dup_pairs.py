"""Count the pairs of places that share six or more lines (issue 44, item 3).

Issue 44 caps how often the tree repeats itself: "at most 90 pairs of places
sharing six or more lines". The workspace tool that found those pairs
(``duplicates``) is not installed where CI runs, so this module is a small
counter of our own that ``tests/docs/test_duplicates.py`` runs on every suite.

What it counts, following the tool's rule as its help describes it:

- the Python files git knows under :data:`FOLDERS` (tracked, and untracked
  ones git does not ignore), as the working tree has them;
- each line's tokens, white space folded; blank lines, comments, lone
  punctuation, docstrings and the first line of an import statement are
  passed over;
- a line's *shape*: names (True, False, None too) become ``a``, strings
  ``"s"``, numbers ``0``; keywords and operators stay. A line of literals and
  punctuation only (a row of a table) keeps its text: data rows are alike only
  when they are equal;
- every run of :data:`MIN_LINES` consecutive lines is compared by its shapes
  when it holds at least :data:`MIN_TOKENS` tokens, and by its text when it is
  thinner (six lines of ``name,`` pair only when identical);
- a run standing in more than :data:`MOST_PLACES` places is too common to list;
- two places sharing a run make a pair of files (a file with itself when the
  two places do not overlap), counted once however many runs they share, as
  the tool's ``(+N more runs)`` rows are.

Calibration (2026-11-27 08:45 UTC, the working tree with the other engineers'
dedup work in progress): ``duplicates --seconds 120 --most 200`` counted 76
pairs; ``python tests/helpers/dup_pairs.py`` counted 85, 54 of them the same pairs of
files. The tool does not spell out its thresholds, so the two differ at the
margins:

- MIN_TOKENS stands in for the tool's unstated sense of a run too thin to
  matter: 25 tokens gave 104 pairs, 30 gave 85, 35 gave 67 on that tree. The
  rules for docstrings and data rows were chosen the same way (without them,
  114 pairs, 57 in common; at 07:55, with 171 pairs for the tool, an earlier
  variant without them had 191 and 141 in common).
- Pairs only this counter finds: twin functions for ``bytes`` and ``str``
  (the tool seems to tell the two kinds of literal apart), the environments'
  look-alike guide texts built from f-strings, and a few same-shape helper
  bodies the tool ranks as boilerplate.
- Pairs only the tool finds: short dict bodies and keyword-argument lists
  under 30 tokens, tables of string tuples (here compared by text), and runs
  this counter drops as too common where the tool counts places differently.
- The tool also reads JavaScript, CSS, HTML and shell files; this counter
  reads Python only.

So the ceiling in tests/docs/test_duplicates.py is in this counter's terms, not the
tool's.
"""

from __future__ import annotations

import hashlib
import io
import keyword
import re
import subprocess
import sys
import tokenize
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the folders whose Python files are read (issue 44: "the whole tree")
FOLDERS = ("agentbus", "attribution", "modules", "environments", "tests", "benchmarks", "examples")
#: how many shared lines make a pair (the tool's default)
MIN_LINES = 6
#: a run standing in more places than this is too common to list (the tool's limit)
MOST_PLACES = 8
#: tokens a run of MIN_LINES shapes must hold to pair by shape alone (thinner runs pair only
#: when identical); calibrated against the tool, see the module docstring
MIN_TOKENS = 30

_LONE_PUNCTUATION = re.compile(r"[()\[\]{},:;.]*")
_IMPORT = re.compile(r"(import|from)\s")
#: words that keep their spelling in a shape; every other name (True, False and None too) is ``a``
_KEYWORDS = (frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)) - {"True", "False", "None"}
_STRING_TYPES = frozenset(
    getattr(tokenize, name)
    for name in ("STRING", "FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, name)
)


@dataclass(frozen=True)
class Line:
    """One line that counts: its number, its text with white space folded, and its shape."""

    number: int
    text: str
    shape: tuple[str, ...]


def shape(tokens: Iterable[tokenize.TokenInfo]) -> tuple[str, ...]:
    """One line's shape: names ``a``, strings ``"s"``, numbers ``0``; keywords and operators kept.

    Adjacent string pieces (implicit concatenation, an f-string's parts) are one ``"s"``.
    """
    parts: list[str] = []
    for token in tokens:
        if token.type == tokenize.NAME:
            parts.append(token.string if token.string in _KEYWORDS else "a")
        elif token.type in _STRING_TYPES:
            if not parts or parts[-1] != '"s"':
                parts.append('"s"')
        elif token.type == tokenize.NUMBER:
            parts.append("0")
        elif token.type == tokenize.OP:
            parts.append(token.string)
    return tuple(parts)


def counted_lines(text: str) -> list[Line]:
    """Every line of a Python source that counts, in order.

    Tokens are grouped by the line they start on, so a string spanning lines
    (a docstring) is one line and its prose does not count. Blank lines,
    comments, lone punctuation and the line that starts an import statement
    are passed over (the names of a multi-line import are still lines, as the
    tool has them), and so are docstrings. A line of literals and punctuation
    only (a row of a table) keeps its text as its shape: data rows are alike
    only when they are equal. A file that does not tokenize has no lines.
    """
    by_line: dict[int, list[tokenize.TokenInfo]] = defaultdict(list)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type != tokenize.COMMENT:
                by_line[token.start[0]].append(token)
    except (tokenize.TokenError, SyntaxError):
        return []
    lines: list[Line] = []
    for number in sorted(by_line):
        tokens = by_line[number]
        folded = " ".join(t.string for t in tokens if t.string.strip())
        if not folded or _LONE_PUNCTUATION.fullmatch(folded.replace(" ", "")):
            continue
        if _IMPORT.match(folded):
            continue
        form = shape(tokens)
        if form == ('"s"',):
            continue  # a docstring, or a string standing alone: prose, not code
        if not any(part == "a" or part[0].isalpha() for part in form):
            form = (folded,)  # data (literals and punctuation only): alike only when equal
        lines.append(Line(number, folded, form))
    return lines


def source_files(root: Path = ROOT, folders: Iterable[str] = FOLDERS) -> dict[str, str]:
    """The text of every Python file git knows under ``folders`` (tracked or not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", *folders],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    texts: dict[str, str] = {}
    for name in sorted(set(listed)):
        path = root / name
        if name.endswith(".py") and path.is_file():
            texts[name] = path.read_text(encoding="utf-8", errors="replace")
    return texts


def run_key(run: list[Line]) -> bytes:
    """What a run of MIN_LINES lines is compared by: its shapes, or its text where it is thin."""
    if sum(len(line.shape) for line in run) >= MIN_TOKENS:
        parts = ["shape", *(" ".join(line.shape) for line in run)]
    else:
        parts = ["text", *(line.text for line in run)]
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=16).digest()


def pairs(texts: Mapping[str, str], min_lines: int = MIN_LINES) -> dict[tuple[str, str], int]:
    """The pairs of files sharing a run of ``min_lines`` lines -> how many such runs they share.

    A file paired with itself needs two places that do not overlap.
    """
    places: dict[bytes, list[tuple[str, int]]] = defaultdict(list)
    for name, text in texts.items():
        lines = counted_lines(text)
        for i in range(len(lines) - min_lines + 1):
            places[run_key(lines[i : i + min_lines])].append((name, i))
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for where in places.values():
        if len(where) > MOST_PLACES:
            continue
        for (a, i), (b, j) in combinations(sorted(where), 2):
            if a == b and abs(i - j) < min_lines:
                continue
            shared[(a, b)] += 1
    return dict(shared)


def count(root: Path = ROOT) -> int:
    """How many pairs of places the tree at ``root`` has."""
    return len(pairs(source_files(root)))


def main() -> int:
    """Print the pairs, most shared first, then their count (for calibrating by hand)."""
    found = pairs(source_files())
    for (a, b), windows in sorted(found.items(), key=lambda item: -item[1]):
        print(f"{a} ~ {b} ({windows} runs)")
    print(f"{len(found)} pairs of places sharing runs of {MIN_LINES}+ same-shape lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())

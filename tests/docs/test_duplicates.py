"""The tree repeats itself no more than issue 44 allows, counted by tests/helpers/dup_pairs.py.

Issue 44 asks for "at most 90 pairs of places sharing six or more lines in the
whole tree" and for the check that counts them to run in CI. The workspace's
``duplicates`` tool is not there, so :mod:`dup_pairs` counts the pairs with the
same rule; its module docstring says how its count compares to the tool's.
The synthetic trees below show that the counter sees what it must: a copied
block, a renamed copy, and not a block that only repeats within itself.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers import dup_pairs

#: the most pairs the tree may have, in this counter's terms: issue 44's target of 90. This
#: counter finds somewhat more pairs than the workspace's `duplicates` tool (the module
#: docstring compares them), so holding it to 90 holds the tool's count lower still. At the
#: end of the dedup work (2026-11-27, 09:05 UTC) it counted 84 and the tool 75, from 192.
CEILING = 90

#: a function of nine counted lines (the docstring is not one), thick enough to pair by shape
BLOCK = '''
def merge(left: dict[str, int], right: dict[str, int]) -> dict[str, int]:
    """Add two tallies."""
    merged = dict(left)
    for key, value in right.items():
        merged[key] = merged.get(key, 0) + value
    total = sum(merged.values())
    if total > 100:
        raise ValueError(f"too many: {total}")
    ordered = sorted(merged.items(), key=lambda item: item[1])
    return {key: value for key, value in ordered}
'''


def tree(root: Path, files: dict[str, str]) -> Path:
    """A git work tree at ``root`` holding ``files`` (untracked: the counter reads those too)."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_tree_has_no_more_pairs_than_the_ceiling() -> None:
    found = dup_pairs.pairs(dup_pairs.source_files())
    worst = sorted(found, key=lambda pair: -found[pair])[:10]
    assert len(found) <= CEILING, (
        f"{len(found)} pairs of places share {dup_pairs.MIN_LINES}+ lines (ceiling {CEILING}); "
        f"make one piece of code serve both places. Most shared: {worst}"
    )


def test_a_copied_block_makes_a_pair(tmp_path: Path) -> None:
    one = tree(tmp_path / "one", {"tests/a.py": BLOCK, "tests/b.py": "X = 1\n"})
    assert dup_pairs.count(one) == 0
    two = tree(tmp_path / "two", {"tests/a.py": BLOCK, "tests/b.py": "X = 1\n" + BLOCK})
    assert dup_pairs.pairs(dup_pairs.source_files(two)) == {("tests/a.py", "tests/b.py"): 4}
    # the same block twice in one file is a pair too, of the file with itself
    three = tree(tmp_path / "three", {"tests/a.py": BLOCK + "\n\nY = 2\n" + BLOCK})
    assert list(dup_pairs.pairs(dup_pairs.source_files(three))) == [("tests/a.py", "tests/a.py")]


def test_a_renamed_copy_pairs_by_shape_but_a_thin_list_only_when_identical() -> None:
    renamed = BLOCK.replace("merge", "join").replace("merged", "joined").replace("100", "7")
    assert dup_pairs.pairs({"a.py": BLOCK, "b.py": renamed})
    names = "NAMES = (\n" + "".join(f'    "{w}",\n' for w in "abcdefgh") + ")\n"
    others = names.replace('"', "'").replace("a", "z").replace("h", "y")
    assert not dup_pairs.pairs({"a.py": names, "b.py": others})
    assert dup_pairs.pairs({"a.py": names, "b.py": "X = 1\n" + names})

    # rows of data (literals only) are alike only when equal, however many tokens they hold
    def table(words: str) -> str:
        return "ROWS = [\n" + "".join(f'    ("{w}", "{w}{w}", 1),\n' for w in words) + "]\n"

    assert not dup_pairs.pairs({"a.py": table("abcdefgh"), "b.py": table("ijklmnop")})


def test_what_does_not_count(tmp_path: Path) -> None:
    # comments, blank lines and lone brackets are passed over: a block interleaved with them
    # still pairs with the plain one
    noisy = "\n".join(f"{line}\n# note\n" for line in BLOCK.splitlines())
    assert dup_pairs.pairs({"a.py": BLOCK, "b.py": noisy})
    # docstrings are passed over: prose, however much two files share
    prose = "".join(f'"""Note {i}: the same words in both files."""\n' for i in range(8))
    assert not dup_pairs.pairs({"a.py": prose, "b.py": "Y = 1\n" + prose})
    # import statements are passed over, however many the files share
    imports = "".join(f"import module{i}\nfrom package{i} import name{i}\n" for i in range(6))
    assert not dup_pairs.pairs({"a.py": imports, "b.py": "X = 1\n" + imports})
    # a run standing in more than MOST_PLACES places is too common to list
    many = {f"m{i}.py": BLOCK for i in range(dup_pairs.MOST_PLACES + 1)}
    assert dup_pairs.pairs(many) == {}
    # files outside the folders read, and files that are not Python, are not read
    root = tree(tmp_path, {"docs/a.py": BLOCK, "tests/b.py": BLOCK, "tests/c.txt": BLOCK})
    assert dup_pairs.count(root) == 0

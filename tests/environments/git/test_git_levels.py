"""Loading learnGitBranching level files, and the official solutions on the model."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentbus.core.errors import UserError
from environments.git.compare import matches
from environments.git.levels import load_levels, parse_levels
from environments.git.tree import dump_repo, load_repo

SHARED = Path(__file__).resolve().parents[4] / "shared"
LEVELS = SHARED / "learngitbranching" / "levels.json"

needs_shared = pytest.mark.skipif(not LEVELS.exists(), reason="shared level file not available")

#: levels whose solutions need what the model leaves out (interactive rebase, staging)
UNSUPPORTED = {
    "mixed/grabbingOneCommit",
    "mixed/jugglingCommits",
    "rampup/interactiveRebase",
    "workingDir/restore",
    "workingDir/staging",
}


@needs_shared
def test_every_supported_official_solution_reaches_its_goal() -> None:
    levels = load_levels(LEVELS)
    raw = orjson.loads(LEVELS.read_bytes())
    assert len(raw) == 36
    assert set(levels.skipped) == UNSUPPORTED
    assert len(levels.puzzles) == 36 - len(UNSUPPORTED)
    for puzzle in levels.puzzles:
        assert puzzle.solved_by(puzzle.solution), puzzle.id
        assert not matches(puzzle.start, puzzle.goal, puzzle.rule), puzzle.id
        assert not puzzle.solved_by(puzzle.solution[:-1]), puzzle.id


@needs_shared
def test_levels_keep_their_rule_disabled_commands_and_default_start() -> None:
    puzzles = {p.id: p for p in load_levels(LEVELS).puzzles}
    assert puzzles["rampup/cherryPick"].rule == "compareOnlyMainHashAgnostic"
    assert "git rebase" in puzzles["rampup/cherryPick"].disabled
    branching = puzzles["intro/branching"]  # start_tree null: the default C0 <- C1 repo
    assert sorted(branching.start.local.commits) == ["C0", "C1"]
    assert puzzles["remote/tracking"].goal.origin is not None


def test_malformed_level_files_are_user_errors(tmp_path: Path) -> None:
    cases = {
        "missing.json": None,
        "garbage.json": b"{not json",
        "scalar.json": b"42",
        "noid.json": b'[{"goal_tree": {}, "solution": ""}]',
        "nogoal.json": b'[{"id": "x", "solution": "git commit"}]',
        "badtree.json": b'[{"id": "x", "solution": "git commit", "goal_tree": {"commits": {}}}]',
        "badparent.json": (
            b'[{"id": "x", "solution": "", "goal_tree": {"commits": {"C1": {"parents": ["C9"]}},'
            b' "branches": {}, "HEAD": {"target": "C1"}}}]'
        ),
    }
    for name, content in cases.items():
        path = tmp_path / name
        if content is not None:
            path.write_bytes(content)
        with pytest.raises(UserError) as info:
            load_levels(path)
        assert "\n" not in str(info.value)


def test_a_single_level_object_is_accepted_and_bad_solutions_are_skipped() -> None:
    level = {
        "id": "mine/one",
        "name": "One commit",
        "start_tree": None,
        "goal_tree": {
            "commits": {
                "C0": {"parents": []},
                "C1": {"parents": ["C0"]},
                "C2": {"parents": ["C1"]},
            },
            "branches": {"main": {"target": "C2"}},
            "HEAD": {"target": "main"},
        },
        "solution": "git commit",
    }
    loaded = parse_levels(level)
    assert [p.id for p in loaded.puzzles] == ["mine/one"]
    wrong = parse_levels([{**level, "solution": "git commit; git commit"}])
    assert wrong.puzzles == [] and "does not reach" in wrong.skipped["mine/one"]


@needs_shared
def test_trees_round_trip_through_the_json_format() -> None:
    for raw in orjson.loads(LEVELS.read_bytes()):
        tree = raw["goal_tree"]
        if "workingChanges" in tree:
            continue
        repo = load_repo(tree)
        again = load_repo(orjson.loads(orjson.dumps(dump_repo(repo))))
        assert again.same_as(repo), raw["id"]
        assert matches(again, repo) and matches(repo, again)
        dumped = dump_repo(repo)
        assert set(dumped["commits"]) == set(tree["commits"])
        assert {n: b["target"] for n, b in dumped["branches"].items()} == {
            n: b["target"] for n, b in tree["branches"].items()
        }
        assert dumped["HEAD"]["target"] == tree["HEAD"]["target"]
        assert ("originTree" in dumped) == (tree.get("originTree") is not None)

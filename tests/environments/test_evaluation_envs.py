"""A full 16-coalition evaluation of the git and robot environments, on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.env_harness import full_coalition_sweep


@pytest.mark.parametrize("env", ["git", "robot"])
async def test_full_coalition_sweep(env: str, tmp_path: Path) -> None:
    # also: the strong agent beats the weak one in these multi-step worlds
    await full_coalition_sweep(env, tmp_path)

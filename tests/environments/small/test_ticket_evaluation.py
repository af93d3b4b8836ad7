"""A full 16-coalition evaluation of the ticket environment on its embedded defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.env_harness import full_coalition_sweep


@pytest.mark.slow
async def test_full_coalition_sweep(tmp_path: Path) -> None:
    await full_coalition_sweep("ticket", tmp_path)

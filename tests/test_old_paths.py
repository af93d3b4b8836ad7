"""Imports written against the kernel's old layout still work (issue 44: nothing changes)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from agentbus.core.old_paths import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_gives_the_module_at_its_new_home(old: str) -> None:
    assert importlib.import_module(old) is importlib.import_module(MOVED[old])


def test_old_and_new_names_share_their_classes_in_a_fresh_process() -> None:
    code = (
        "from agentbus.messages import Plan\n"
        "from agentbus.events import EventHub\n"
        "import agentbus.core.messages as m, agentbus.core.events as e\n"
        "assert Plan is m.Plan and EventHub is e.EventHub\n"
        "import agentbus.runtime, agentbus.executors.runtime as r\n"
        "assert agentbus.runtime is r\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_name_that_never_existed_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("agentbus.no_such_module")

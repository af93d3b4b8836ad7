"""Growing --tasks on resume is allowed because generators are prefix-stable."""

from __future__ import annotations

import pytest

from agentbus.core import registry
from agentbus.core.environment import TaskSource


@pytest.mark.parametrize("env", ["math", "git", "robot"])
def test_more_tasks_keep_the_first_ones(env: str) -> None:
    cls = registry.get("environments", env)
    small = cls.setup(TaskSource(count=4, seed=7)).tasks
    large = cls.setup(TaskSource(count=9, seed=7)).tasks
    assert [t.model_dump() for t in small] == [t.model_dump() for t in large[:4]]

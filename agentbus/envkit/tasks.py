"""Task loading and finding, the same for every environment.

A generated environment makes ``count`` tasks from a seed and shows the first
``limit``; one without a dataset format refuses ``--dataset`` with one line.
The simulated expert finds a prompt's task by the ``## Task`` section, which
carries the task's instruction (unique per task) word for word.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from agentbus.core.environment import Task, TaskSource, check_count
from agentbus.core.errors import UserError
from agentbus.llm.types import ChatMessage


def generated_count(source: TaskSource, env: str, dataset_hint: str | None = None) -> int:
    """How many tasks a seeded generator makes for ``source`` (``--tasks``, then ``--limit``).

    ``dataset_hint`` is the end of the one-line error for a ``--dataset`` the
    environment cannot read (None: there is no such error, the caller reads
    datasets itself).
    """
    if source.dataset is not None and dataset_hint is not None:
        raise UserError(f"{env} has no dataset format; {dataset_hint}")
    check_count(source.count)
    return source.count if source.limit is None else min(source.count, source.limit)


class TaskIndex:
    """The tasks of one environment, found by their instruction text."""

    def __init__(self, env: str, section: str = "Task") -> None:
        self.env = env
        self.section = section
        self._by_text: dict[str, Task] = {}

    def add(self, tasks: Iterable[Task]) -> None:
        """Make this environment's tasks among ``tasks`` findable (others are passed over)."""
        for task in tasks:
            if task.env == self.env:
                self._by_text[task.instruction.strip()] = task

    def find(
        self,
        messages: Sequence[ChatMessage],
        read: Callable[[str], dict[str, str]],
    ) -> Task | None:
        """The task whose instruction is the prompt's task section, read with ``read``."""
        user = "\n".join(m["content"] for m in messages if m["role"] != "system")
        body = read(user).get(self.section)
        return self._by_text.get(body.strip()) if body is not None else None

    def __len__(self) -> int:
        return len(self._by_text)

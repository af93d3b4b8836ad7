"""Refuse a task-source flag that would have no effect in the run's setting.

A flag the run silently ignores is worse than an error: it is recorded in
manifest.json as if it had shaped the run. An audit found ``--knowledge``
without ``--dataset`` accepted, written to the manifest and ignored (the
built-in math generator has its own knowledge points). Found the same way
(reading which environment's ``setup`` reads which field of
:class:`agentbus.TaskSource`):

* ``--knowledge`` is read by math (a knowledge-point file) and shopping
  (WebShop's instruction file), and by each only beside ``--dataset``;
* ``--tasks`` is the built-in generator's count: with ``--dataset`` the
  environments that read a task file (math, shopping, robot, git, os, atp,
  and your own agent's tasks) take every task of the file, so ``--limit``
  is the flag that runs fewer of them.

Only what the user wrote counts (flags and the TOML file, not defaults nor a
resumed manifest), as for :func:`agentbus.app.cli_args.check_adaptive_only`.
"""

from __future__ import annotations

from typing import Any

from agentbus.app.config import RunConfig
from agentbus.core.errors import UserError
from agentbus.core.inputs import check_file
from agentbus.gateway.tasks import ENV as EXTERNAL_ENV

#: environments whose tasks read ``--knowledge`` (with ``--dataset``)
KNOWLEDGE_ENVS = ("math", "shopping")
#: environments that take every task of a ``--dataset`` file, whatever ``--tasks`` says
FILE_ENVS = ("math", "shopping", "robot", "git", "os", "atp", EXTERNAL_ENV)


def check_task_flags(config: RunConfig, user_set: dict[str, Any]) -> None:
    """One-line UserError for ``--knowledge`` or ``--tasks`` where the run would ignore it."""
    if config.knowledge is not None:
        check_file(config.knowledge, "knowledge file")
        if "knowledge" in user_set:
            if config.env not in KNOWLEDGE_ENVS:
                raise UserError(
                    f"--knowledge has no effect on --env {config.env}: only math and shopping "
                    "read one (with --dataset); drop it"
                )
            if config.dataset is None:
                raise UserError(
                    f"--knowledge has no effect without --dataset: the built-in {config.env} "
                    "generator brings its own; add --dataset FILE or drop --knowledge"
                )
    if config.dataset is not None and "tasks" in user_set and config.env in FILE_ENVS:
        raise UserError(
            f"--tasks has no effect with --dataset: --env {config.env} runs every task of the "
            "file; to run fewer, use --limit N"
        )


__all__ = ["FILE_ENVS", "KNOWLEDGE_ENVS", "check_task_flags"]

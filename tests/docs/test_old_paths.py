"""One path for every import: the kernel's pre-``core/`` module names are gone.

The compatibility layers that answered ``agentbus.events`` or
``from agentbus import runtime`` with the moved module (a ``sys.meta_path``
finder and a table in ``agentbus/__init__.py``) protected only this
repository's own imports at version 0.1.0, and had already drifted apart.
They are retired: a module has the one path it lives at, and the top-level
``agentbus`` names are the public API (``agentbus.Episode``, ...), not modules.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import agentbus

OLD = ["actor", "bus", "environment", "episode", "events", "mailbox", "messages"]
OLD += ["outcome", "record", "ray_runtime", "remote", "runtime"]
#: helpers that sat at the package root beside the commands, now in their layer
#: (core/, llm/, gateway/, runs/, app/); ``export`` and ``serve_vllm`` stay as commands
OLD += ["answers", "calltrace", "coalitions", "demo", "errors", "inputs", "interrupt", "labels"]
OLD += ["listener", "logs", "machine", "pipes", "refusals", "runnable", "variants"]


@pytest.mark.parametrize("name", OLD)
def test_an_old_kernel_path_no_longer_imports(name: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"agentbus.{name}")
    assert not hasattr(agentbus, name)


def test_the_public_names_and_the_real_paths_still_import_in_a_fresh_process() -> None:
    code = (
        "import agentbus.core.messages as m, agentbus.core.events as e\n"
        "from agentbus import EventHub, Plan, Runtime, registry\n"
        "import agentbus.executors.runtime as r\n"
        "assert Plan is m.Plan and EventHub is e.EventHub and Runtime is r.Runtime\n"
        "import sys; assert not any(type(f).__name__ == '_Alias' for f in sys.meta_path)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

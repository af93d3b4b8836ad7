"""The plugin examples of docs/plugins.md run, and the docs show exactly their code.

``examples/plugins`` holds the smallest complete plugin of each kind. Here they
are loaded the way their ``pyproject.toml`` entry points would load them
(registered by the same names), a whole evaluation runs on the simulator with
the example environment, expert, module and agent, and the example backend
answers through the router. Each code block of docs/plugins.md that names an
example file must be that file verbatim, so the docs cannot drift from code
that runs.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rich.console import Console

from agentbus import Actor, Environment, Expert, TaskSource, registry
from agentbus.app.config import build_config
from agentbus.app.evaluate import evaluate
from agentbus.llm.config import LLMConfig
from agentbus.llm.router import LLMRouter

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "plugins"
DOC = ROOT / "docs" / "plugins.md"
GROUP_NAMES = {f"agentbus.{group}": group for group in registry.GROUPS}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _entry_points() -> list[tuple[str, str, str]]:
    """(registry group, name, "module:attr") for every entry point of the example package."""
    project = tomllib.loads((EXAMPLES / "pyproject.toml").read_text())["project"]
    return [
        (GROUP_NAMES[group], name, value)
        for group, entries in project["entry-points"].items()
        for name, value in entries.items()
    ]


@pytest.fixture
def plugins() -> Iterator[dict[tuple[str, str], Any]]:
    """Register every example plugin under its entry-point name, as pip install -e would."""
    loaded: dict[tuple[str, str], Any] = {}
    for group, name, value in _entry_points():
        module_name, _, attr = value.partition(":")
        module = sys.modules.get(module_name) or _load(module_name)
        loaded[group, name] = getattr(module, attr)
        registry.register(group, name, loaded[group, name])
    try:
        yield loaded
    finally:
        for group, name, _ in _entry_points():
            registry.unregister(group, name)


def test_every_kind_of_plugin_has_an_example(plugins: dict[tuple[str, str], Any]) -> None:
    groups = {group for group, _ in plugins}
    assert groups == {"environments", "experts", "modules", "agents", "backends"}
    env_cls = plugins["environments", "word"]
    assert issubclass(env_cls, Environment)
    assert issubclass(plugins["modules", "example.solo"], Actor)
    assert set(plugins["agents", "solo"].values()) == {"example.solo"}
    setup = env_cls.setup(TaskSource(count=3))
    expert = plugins["experts", "word"]()
    assert isinstance(expert, Expert)
    expert.add_tasks(setup.tasks)
    task = setup.tasks[0]
    assert expert.find_task([{"role": "user", "content": f"## Task\n{task.instruction}"}]) == task


async def test_the_example_plugins_run_a_whole_evaluation_on_the_simulator(
    plugins: dict[tuple[str, str], Any], tmp_path: Path
) -> None:
    config = build_config(
        {
            "env": "word",
            "agent": "solo",
            "tasks": 8,
            "default": "sim:weak",
            "test": ["sim:strong"],
            "progress": "off",
            "run_dir": str(tmp_path / "run"),
            "sim": {"speed": 0, "experts": ["word"]},
        }
    )
    report = await evaluate(config, Console(quiet=True))
    model = report.results["models"]["sim:strong"]
    assert set(model["coalitions"]) == {"", "action"}
    assert all(c["n"] == 8 for c in model["coalitions"].values())
    # the expert answers: the strong model reverses more words than the weak one
    assert model["coalitions"]["action"]["mean"] > model["coalitions"][""]["mean"]
    assert set(model["shapley"]) == {"action"}


async def test_the_example_backend_answers_through_the_router(
    plugins: dict[tuple[str, str], Any],
) -> None:
    async with LLMRouter(LLMConfig()) as router:
        llm = router.client("echo:parrot")
        answer = await llm.complete([{"role": "user", "content": "hello there"}])
    assert answer.text == "hello there" and answer.model == "parrot"


def test_the_docs_show_the_examples_verbatim() -> None:
    """Every code block whose first line is ``# examples/plugins/FILE`` is FILE, byte for byte."""
    text = DOC.read_text()
    fence = r"^```(?:python|toml)\n# (examples/plugins/\S+)\n(.*?)^```$"
    blocks = re.findall(fence, text, re.DOTALL | re.MULTILINE)
    shown = {path for path, _ in blocks}
    assert shown == {f"examples/plugins/{p.name}" for p in EXAMPLES.iterdir() if p.is_file()}
    for path, body in blocks:
        assert body == (ROOT / path).read_text(), f"docs/plugins.md shows an old {path}"

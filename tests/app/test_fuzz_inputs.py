"""Fuzzing the user's own input (hypothesis): TOML config, command-line flags, dataset files.

Whatever a config file, a flag or a task file holds, the command either
accepts it or refuses it with one :class:`UserError` that says what was wrong
and where: the key path for a setting, the file for a dataset. Anything else
(a KeyError, a TypeError, a traceback) is a finding. File contents are drawn
as raw bytes, as arbitrary JSON, and as JSON built from the keys the loaders
look for, which reaches their per-field checks.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentbus.core.errors import UserError

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------ config and flags

CONFIG_KEYS = [
    "env", "tasks", "limit", "seed", "default", "test", "agent", "modules", "slots", "repeats",
    "max_steps", "concurrency", "adaptive", "target_halfwidth", "max_episodes", "progress",
    "llm", "sim", "limits", "max_concurrency", "sampling", "temperature", "faults",
    "rate_429", "speed", "profiles", "cache", "run_dir", "serve", "token", "attempts",
]  # fmt: skip

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["sim:weak", "math", "auto", "vllm:http://h/v1#m"]),
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(CONFIG_KEYS) | st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
configs = st.dictionaries(st.sampled_from(CONFIG_KEYS) | st.text(max_size=8), values, max_size=5)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value).replace("inf", "inf").replace("nan", "nan")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        inner = ", ".join(
            f"{orjson.dumps(k).decode()} = {toml_value(v)}"
            for k, v in value.items()
            if v is not None
        )
        return "{" + inner + "}"
    return orjson.dumps(str(value)).decode()


def toml_text(config: dict[str, Any]) -> str:
    return "\n".join(
        f"{orjson.dumps(k).decode()} = {toml_value(v)}" for k, v in config.items() if v is not None
    )


def parse_quietly(argv: list[str]) -> None:
    """parse_command; argparse's own one-line refusal exits 2 (printed, not raised)."""
    from agentbus.app.cli_args import parse_command

    with contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            parse_command(argv)
        except SystemExit as exc:
            assert exc.code == 2
            line = err.getvalue().strip()
            assert line.startswith("agentbus: error:") and "\n" not in line, line


@SETTINGS
@given(configs)
def test_config_dicts(config: dict[str, Any]) -> None:
    from agentbus.app.config import build_config

    try:
        build_config(config)
    except UserError as exc:
        message = str(exc)
        # a count below 1 is said as on the command line (core.environment.check_count)
        count = " must be at least 1 (got " in message
        assert count or (message.startswith("invalid config: ") and ": " in message[16:]), message


@SETTINGS
@given(st.one_of(configs.map(toml_text), st.text(max_size=200)))
def test_toml_files(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.toml"
        path.write_text(text)
        try:
            parse_quietly(["--config", str(path), "--no-preflight"])
        except UserError as exc:
            message = str(exc)
            assert "\n" not in message
            # where: the file (TOML syntax) or the key path (a setting)
            assert (
                str(path) in message
                or message.startswith(("invalid config:", "--"))
                or ("env" in message or "dataset" in message or "knowledge" in message)
            ), message


FLAGS = [
    "--env", "--tasks", "--limit", "--seed", "--default", "--test", "--module", "--slots",
    "--repeats", "--max-steps", "--concurrency", "--target-halfwidth", "--max-episodes",
    "--serve", "--temperature", "--sim-speed", "--cache", "--progress", "--adaptive", "--best",
]  # fmt: skip


@SETTINGS
@given(
    st.lists(
        st.one_of(
            st.sampled_from(FLAGS),
            st.sampled_from(["-1", "0", "1e309", "nan", "sim:weak", "x=y", "planning", "math"]),
            st.text(max_size=10),
        ),
        max_size=8,
    )
)
def test_command_lines(argv: list[str]) -> None:
    try:
        parse_quietly([*argv, "--no-preflight"])
    except UserError as exc:
        assert str(exc).strip() and "\n" not in str(exc)


# ------------------------------------------------------------------- datasets

LOADER_KEYS = [
    "id", "question", "answer", "problem", "solution", "level", "type", "description",
    "evaluation", "start", "goal", "tree", "name", "title", "price", "asin", "instruction",
    "knowledge", "create", "init", "check", "example", "match", "theorem", "proof", "tasks",
    "levels", "steps", "query", "attributes", "product_information", "category", "labels",
    "file", "code", "language", "solutionCommand", "goalTreeString", "startTree", "commits",
    "branches", "HEAD", "parents", "target", "robots", "scene", "spec", "calls", "arguments",
]  # fmt: skip

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**9) | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(LOADER_KEYS) | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=20,
)
contents = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: orjson.dumps(v)),
    st.lists(
        st.dictionaries(st.sampled_from(LOADER_KEYS), json_values, max_size=6), max_size=4
    ).map(lambda v: orjson.dumps(v)),
    st.lists(
        st.dictionaries(st.sampled_from(LOADER_KEYS), json_values, max_size=6), max_size=4
    ).map(lambda v: b"\n".join(orjson.dumps(x) for x in v)),
)


def loaders() -> dict[str, Callable[[Path], Any]]:
    """Every dataset loader of the built-in environments, by name."""
    from environments.atp.loader import load_problems as atp_problems
    from environments.git.levels import load_levels
    from environments.math.loader import load_knowledge, load_problems
    from environments.os.loader import load_path
    from environments.robot.tasks import load_dataset
    from environments.shopping.webshop import load_products, load_webshop
    from environments.tools.tasks import load_specs

    return {
        "math problems": load_problems,
        "math knowledge": load_knowledge,
        "atp problems": atp_problems,
        "os tasks": load_path,
        "git levels": load_levels,
        "robot tasks": load_dataset,
        "tools tasks": load_specs,
        "shopping products": load_products,
        "shopping instructions": lambda p: load_webshop(p, p),
    }


LOADERS = sorted(loaders())


@pytest.mark.parametrize("name", LOADERS)
def test_dataset_loaders(name: str) -> None:
    load = loaders()[name]

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(contents)
    def check(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "tasks.json"
            path.write_bytes(data)
            try:
                load(path)
            except UserError as exc:
                message = str(exc)
                assert message.strip() and "\n" not in message.strip(), message
                assert "tasks.json" in message, f"{name}: the error must name the file: {message}"

    check()

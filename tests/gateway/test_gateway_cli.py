"""The command line of your own agent: flags map to the config, mistakes are one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentbus.app.cli_args import parse_command
from agentbus.core.errors import UserError

TASKS = str(Path(__file__).resolve().parents[2] / "examples" / "plain_openai" / "tasks.jsonl")


def test_flags_reach_the_config_and_the_env_defaults_to_the_dataset() -> None:
    config = parse_command(
        ["--agent-cmd", "node a.mjs", "--dataset", TASKS, "--slots", "planner,critic",
         "--scorer", "numeric", "--unmapped", "sim:weak", "--agent-timeout", "9",
         "--agent-processes", "3"]
    ).config  # fmt: skip
    assert config.env == "external" and config.agent_cmd == "node a.mjs"
    assert config.slots == ["planner", "critic"] and config.scorer == "numeric"
    assert config.unmapped == "sim:weak"
    assert config.agent_timeout_s == 9 and config.agent_processes == 3
    math = parse_command(["--agent", "pkg.mod:run", "--env", "math", "--slots", "a"]).config
    assert math.env == "math" and math.agent == "pkg.mod:run"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agent-cmd", "x", "--dataset", TASKS], "needs --slots"),
        (["--agent", "m:f", "--agent-cmd", "x", "--slots", "a", "--dataset", TASKS], "one way"),
        (["--scorer", "exact"], "applies to your own agent"),
        (["--agent-cmd", "x", "--dataset", TASKS, "--slots", "a", "--scorer", "nope"], "scorer"),
        (
            [
                "--agent-cmd",
                "x",
                "--dataset",
                TASKS,
                "--slots",
                "a",
                "--vary",
                "a=praf.planning:on",
            ],
            "not an agentbus module",
        ),
        (["--agent-url", "ftp://x", "--dataset", TASKS, "--slots", "a"], None),
    ],
)
def test_mistakes_are_one_line_errors(argv: list[str], message: str | None) -> None:
    if message is None:  # checked when the runner is made, still one line
        from agentbus.app.external import make_runner

        with pytest.raises(UserError, match="http"):
            make_runner(parse_command(argv).config)
        return
    with pytest.raises(UserError, match=message):
        parse_command(argv)

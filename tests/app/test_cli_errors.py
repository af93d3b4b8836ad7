"""The command line: help, and one clear line with exit 2 for bad input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli_run import python_m


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return python_m("agentbus.run", *args, cwd=cwd)


def test_help_lists_the_main_flags() -> None:
    out = run("--help")
    assert out.returncode == 0
    for flag in ("--env", "--default", "--test", "--slots", "--best", "--adaptive", "--run-dir"):
        assert flag in out.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--concurrency", "lots"], "invalid int value"),
        (["--env", "nope", "--progress", "off"], "unknown environment 'nope'"),
        (["--default", "gpt4", "--progress", "off"], "gpt4"),
        (["--slots", "planning,teleport", "--progress", "off"], "teleport"),
        (["--concurrency", "0"], "concurrency"),
        (["--test", "sim:genius", "--progress", "off"], "unknown sim profile 'genius'"),
        (["--dataset", "/no/such/file.json"], "dataset not found"),
        (["--resume", "/no/such/run"], "nothing to resume"),
        (["--env", "demo", "--progress", "off"], "unknown environment 'demo'"),
        (["--target-halfwidth", "0.05"], "--target-halfwidth (config key target_halfwidth) only"),
        (["--max-episodes", "50"], "--max-episodes (config key max_episodes) only applies"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], needle: str, tmp_path: Path) -> None:
    out = run(*args, "--run-dir", str(tmp_path / "run"), cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert needle in lines[0]
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "run").exists(), "bad input must not leave a run directory behind"


def test_malformed_config_file_names_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_text('env = "math"\nconcurency = 5\n')
    out = run("--config", str(cfg), cwd=tmp_path)
    assert out.returncode == 2
    assert "concurency: unknown setting" in out.stderr
    cfg.write_text("env = [unclosed\n")
    out = run("--config", str(cfg), cwd=tmp_path)
    assert out.returncode == 2 and "not valid TOML" in out.stderr


def test_environment_errors_list_only_runnable_environments(tmp_path: Path) -> None:
    for env in ("nope", "demo"):
        out = run("--env", env, "--run-dir", str(tmp_path / "run"), cwd=tmp_path)
        assert out.returncode == 2
        listed = out.stderr.strip().rsplit("runnable: ", 1)[1].split(", ")
        assert {"math", "git", "robot"} <= set(listed) and "demo" not in listed


def test_adaptive_only_settings_from_a_file(tmp_path: Path) -> None:
    """Set in TOML they count as set by the user; with adaptive on they are accepted."""
    from agentbus.app.cli_args import parse_command
    from agentbus.core.errors import UserError

    cfg = tmp_path / "run.toml"
    cfg.write_text("target_halfwidth = 0.05\n")
    out = run("--config", str(cfg), "--run-dir", str(tmp_path / "run"), cwd=tmp_path)
    assert out.returncode == 2 and "only applies with --adaptive" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert parse_command(["--config", str(cfg), "--adaptive"]).config.target_halfwidth == 0.05
    cfg.write_text("adaptive = true\ntarget_halfwidth = 0.05\nmax_episodes = 99\n")
    assert parse_command(["--config", str(cfg)]).config.max_episodes == 99
    with pytest.raises(UserError, match="only applies with --adaptive"):
        parse_command(["--max-episodes", "3"])


def test_a_resumed_manifest_does_not_count_as_user_set(tmp_path: Path) -> None:
    """A manifest stores every key, defaults included: resuming a plain run stays legal."""
    import orjson

    from agentbus.app.cli_args import parse_command
    from agentbus.app.config import RunConfig

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    stored = RunConfig(max_episodes=10).model_dump(mode="json", exclude_none=True)
    (run_dir / "manifest.json").write_bytes(orjson.dumps({"config": stored}))
    config = parse_command(["--resume", str(run_dir)]).config
    assert not config.adaptive and config.target_halfwidth == stored["target_halfwidth"]

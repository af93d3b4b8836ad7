"""``python -m agentbus.sim.serve``: starts alone, answers, stops on Ctrl-C, rejects bad flags."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from agentbus.sim.serve import main

ROOT = Path(__file__).resolve().parents[1]


def _main_exit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse errors
        code = int(exc.code or 0)
    return code, capsys.readouterr().err.strip().splitlines()


def test_bad_flags_print_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "p.toml"
    bad.write_text("[mine]\naction = { base = 2.0 }\n")
    broken = tmp_path / "broken.toml"
    broken.write_text("[mine\n")
    cases = (
        (["--bogus"], "unrecognized arguments"),
        (["--speed", "-1"], "config speed"),
        (["--port", "x"], "invalid int value"),
        (["--profiles", str(tmp_path / "none.toml")], "cannot read"),
        (["--profiles", str(broken)], "invalid TOML"),
        (["--profiles", str(bad), "--experts", ""], "profile 'mine': action.base"),
        (["--experts", "nope"], "unknown expert 'nope'"),
        (["--env", "math", "--experts", ""], "one --dataset per --env"),
    )
    for args, message in cases:
        code, lines = _main_exit(capsys, *args)
        assert code == 2, args
        assert len(lines) == 1 and lines[0].startswith("agentbus.sim.serve: error:"), lines
        assert message in lines[0], lines


def test_serves_until_interrupted(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles.toml"
    profiles.write_text('[mine]\nextends = "strong"\n')
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentbus.sim.serve",
            "--port",
            "0",
            "--speed",
            "0",
            "--experts",
            "",
            "--profiles",
            str(profiles),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]  # a log line, the URL, capacity
        url = next(line for line in lines if "serving at" in line).strip().rsplit(" ", 1)[-1]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert any("tokens/s at saturation" in line for line in lines)
        with urllib.request.urlopen(f"{url}/models", timeout=10) as r:
            ids = {m["id"] for m in json.load(r)["data"]}
        assert {"mine", "weak"} <= ids
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        assert "stopped" in out and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_env_datasets_reach_the_experts(tmp_path: Path) -> None:
    """--env/--dataset load tasks with the environment's own loader and hand them over."""
    from test_sim_model import AddExpert, prompt

    from agentbus import registry
    from agentbus.environment import EnvSetup, Task, TaskSource
    from agentbus.llm.types import SamplingParams
    from agentbus.sim.config import SimConfig
    from agentbus.sim.serve import build_model

    class ToyEnv:
        @classmethod
        def setup(cls, source: TaskSource) -> EnvSetup:
            assert source.dataset is not None
            tasks = [
                Task(id=f"t{i}", env="toy", instruction=line, hidden={"sum": i})
                for i, line in enumerate(source.dataset.read_text().splitlines())
            ]
            return EnvSetup(tasks=tasks, factory=lambda: None)  # type: ignore[arg-type,return-value]

    data = tmp_path / "toy.txt"
    data.write_text("Add 0 and 0.\nAdd 1 and 0.\n")
    registry.register("environments", "toy-serve", ToyEnv)
    registry.register(
        "experts", "toy-serve", type("ToyServeExpert", (AddExpert,), {"env": "toy-serve"})
    )
    try:
        model = build_model(SimConfig(experts=["toy-serve"]), ["toy-serve"], [data])
    finally:
        registry.unregister("environments", "toy-serve")
        registry.unregister("experts", "toy-serve")
    task = Task(id="t1", env="toy", instruction="Add 1 and 0.", hidden={"sum": 1})
    answer = model.generate("strong", prompt("action", task), SamplingParams())
    assert answer.task_id == "t1"

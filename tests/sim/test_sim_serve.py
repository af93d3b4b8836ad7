"""``python -m agentbus.sim.serve``: starts alone, answers, stops on Ctrl-C, rejects bad flags,
and by default knows the tasks ``python -m agentbus.run`` makes, so a run can use it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from agentbus.sim.serve import main

ROOT = Path(__file__).resolve().parents[2]


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
        (["--env", "math", "--experts", ""], "needs the 'math' expert"),
        (["--env", "math", "--dataset", "a", "--dataset", "b"], "one --dataset per --env"),
        (["--env", "demo"], "unknown environment 'demo'"),
        (["--env", "nope"], "unknown environment 'nope'"),
        (["--tasks", "0", "--env", "git"], "--tasks must be at least 1"),
    )
    for args, message in cases:
        code, lines = _main_exit(capsys, *args)
        assert code == 2, args
        assert len(lines) == 1 and lines[0].startswith("agentbus.sim.serve: error:"), lines
        assert message in lines[0], lines


def serve_process(*flags: str) -> subprocess.Popen[str]:
    """``python -m agentbus.sim.serve`` on a free port at full speed with ``flags``, from the
    repository root, its stdout and stderr piped as text (a user's standalone server)."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentbus.sim.serve", "--port", "0", "--speed", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def test_serves_until_interrupted(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles.toml"
    profiles.write_text('[mine]\nextends = "strong"\n')
    proc = serve_process("--experts", "", "--profiles", str(profiles))
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
    from agentbus.core import registry
    from agentbus.core.environment import EnvSetup, Task, TaskSource
    from agentbus.llm.types import SamplingParams
    from agentbus.sim.config import SimConfig
    from agentbus.sim.serve import build_model
    from tests.sim.test_sim_model import AddExpert, prompt

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


def test_default_tasks_are_the_runs_tasks() -> None:
    """No --dataset: the generators' tasks, exactly as agentbus.run makes them."""
    from agentbus.app.config import RunConfig
    from agentbus.app.preparation import load_environment
    from agentbus.sim.config import SimConfig
    from agentbus.sim.serve import build_model

    for env in ("math", "git"):
        model = build_model(SimConfig(experts=[env]), [], [], tasks=5, seed=7)
        expert = next(e for e in model.experts if e.env == env)
        run_tasks = load_environment(RunConfig(env=env, tasks=5, seed=7)).tasks
        for task in run_tasks:  # the expert recognises each task from its own instruction
            messages = [{"role": "user", "content": f"## Task\n{task.instruction}"}]
            found = expert.find_task(messages)  # type: ignore[arg-type]
            assert found is not None and found.id == task.id, (env, task.id)


def test_a_run_pointed_at_the_standalone_server_is_answered_by_its_experts(
    tmp_path: Path,
) -> None:
    """The user's path: start the server, point agentbus.run at it with vllm: specs."""
    proc = serve_process("--env", "math", "--tasks", "4")
    try:
        assert proc.stdout is not None
        url = ""
        seen: list[str] = []
        while not url:
            line = proc.stdout.readline()
            assert line, f"server ended early: {seen}"
            seen.append(line)
            if "serving at" in line:
                url = line.strip().rsplit(" ", 1)[-1]
        assert any("loaded 4 math tasks from the built-in generator" in s for s in seen), seen
        run_dir = tmp_path / "run"
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "agentbus.run",
                "--env",
                "math",
                "--tasks",
                "4",
                "--slots",
                "action",
                "--default",
                f"vllm:{url}#weak",
                "--test",
                f"vllm:{url}#strong",
                "--progress",
                "off",
                "--run-dir",
                str(run_dir),
            ],
            capture_output=True,
            text=True,
            timeout=240,
            cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr
        results = json.loads((run_dir / "results.json").read_text())
        (summary,) = results["models"].values()
        # unknown tasks get generic text that never solves a problem: a reward
        # above zero means the server's expert knew the run's tasks
        assert max(c["mean"] for c in summary["coalitions"].values()) > 0, summary
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

"""``python -m agentbus.serve_vllm --dry-run``: the vllm serve lines and the specs for a run.

vLLM is not installed here (no GPU, no weights), so the command is run as a
user would with --dry-run: every line must be a ``vllm serve`` call with
flags vLLM's engine arguments define, GPUs and ports must not collide, and
the printed ``python -m agentbus.run`` command must parse as a run whose
models have one replica URL per server.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from agentbus.app.cli_args import parse_command
from agentbus.llm.spec import parse_spec
from tests.helpers.cli_run import python_m

#: the engine arguments the launcher may use (vLLM's documented `vllm serve` flags)
VLLM_FLAGS = {
    "--host",
    "--port",
    "--tensor-parallel-size",
    "--max-num-seqs",
    "--gpu-memory-utilization",
    "--enable-prefix-caching",
    "--enable-auto-tool-choice",
    "--tool-call-parser",
}


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return python_m("agentbus.serve_vllm", *args, timeout=60)


def test_dry_run_prints_vllm_lines_and_the_run_command() -> None:
    result = serve(
        "--default", "meta-llama/Llama-3.1-70B-Instruct",
        "--test", "meta-llama/Llama-3.1-8B-Instruct",
        "--gpus", "0,1,2,3,4,5,6,7", "--gpu-memory", "80", "--dry-run",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    serve_lines = [shlex.split(line) for line in lines if not line.startswith("#")]
    gpus, ports = [], []
    for argv in serve_lines:
        env, cmd = argv[0], argv[1:]
        assert env.startswith("CUDA_VISIBLE_DEVICES=") and cmd[:2] == ["vllm", "serve"]
        flags = {a for a in cmd if a.startswith("--")}
        assert flags <= VLLM_FLAGS and "--enable-prefix-caching" in flags
        gpus += env.split("=", 1)[1].split(",")
        ports.append(int(cmd[cmd.index("--port") + 1]))
        tp = int(cmd[cmd.index("--tensor-parallel-size") + 1])
        assert tp == len(env.split("=", 1)[1].split(","))
        assert 16 <= int(cmd[cmd.index("--max-num-seqs") + 1]) <= 512
    assert sorted(gpus) == [str(i) for i in range(8)]  # every GPU once
    assert len(set(ports)) == len(ports) == len(serve_lines)
    # 70B (140 GB of weights) needs tensor parallelism; the 8B model gets replicas
    big = [a for a in serve_lines if "meta-llama/Llama-3.1-70B-Instruct" in a]
    small = [a for a in serve_lines if "meta-llama/Llama-3.1-8B-Instruct" in a]
    assert all(int(a[a.index("--tensor-parallel-size") + 1]) >= 2 for a in big)
    assert len(small) >= 2
    # the run command the servers are for parses, with one URL per server
    run_line = lines[-1].removeprefix("# then: ")
    argv = shlex.split(run_line)
    assert argv[:3] == ["python", "-m", "agentbus.run"]
    config = parse_command([*argv[3:], "--no-preflight"]).config
    assert len(parse_spec(config.default).base_urls) == len(big)
    assert len(parse_spec(config.test[0]).base_urls) == len(small)


def test_without_vllm_a_real_start_says_so_in_one_line() -> None:
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-m", "agentbus.serve_vllm", "--default", "a/m-8B", "--test", "b/m-7B",
         "--gpus", "0,1"],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )  # fmt: skip
    assert result.returncode == 2
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and "vllm is not installed" in errors[0]


def test_too_few_gpus_is_one_line() -> None:
    result = serve("--default", "x/Big-405B", "--test", "y/m-8B", "--gpus", "0", "--dry-run")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "cannot hold" in result.stderr


def test_tool_call_parser_flags_follow_the_model_family() -> None:
    """vLLM returns tool_calls only with --enable-auto-tool-choice and the family's parser."""
    result = serve(
        "--default", "Qwen/Qwen2.5-7B-Instruct",
        "--test", "meta-llama/Llama-3.1-8B-Instruct",
        "--test", "mistralai/Mistral-7B-Instruct-v0.3",
        "--test", "some-org/unknown-7B",
        "--gpus", "0,1,2,3", "--gpu-memory", "80", "--dry-run",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    parsers = {}
    for line in result.stdout.splitlines():
        if line.startswith("#"):
            continue
        cmd = shlex.split(line)[1:]
        model = cmd[2]
        if "--tool-call-parser" in cmd:
            assert "--enable-auto-tool-choice" in cmd
            parsers[model] = cmd[cmd.index("--tool-call-parser") + 1]
        else:
            parsers[model] = None
    assert parsers == {
        "Qwen/Qwen2.5-7B-Instruct": "hermes",
        "meta-llama/Llama-3.1-8B-Instruct": "llama3_json",
        "mistralai/Mistral-7B-Instruct-v0.3": "mistral",
        "some-org/unknown-7B": None,
    }
    off = serve("--default", "Qwen/Qwen2.5-7B-Instruct", "--test", "Qwen/Qwen2.5-7B-Instruct",
                "--gpus", "0", "--tool-call-parser", "none", "--dry-run")  # fmt: skip
    assert off.returncode == 0 and "--tool-call-parser" not in off.stdout

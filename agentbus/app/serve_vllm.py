"""``python -m agentbus.serve_vllm``: start vLLM servers for a run, print its model specs.

::

    python -m agentbus.serve_vllm --default meta-llama/Llama-3.1-8B-Instruct \\
        --test Qwen/Qwen2.5-7B-Instruct [--gpus 0,1,2,3] [--dry-run]

Shares the GPUs among the models, sizes each server (tensor parallelism,
``--max-num-seqs`` for the GPU memory, prefix caching on; see
:mod:`agentbus.llm.vllm_launch`), prints the ``vllm serve`` command lines,
and (without ``--dry-run``) starts them, waits until every one answers
/health, prints the ``python -m agentbus.run`` command with the model specs,
and keeps the servers up until Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import NoReturn

from agentbus.core.errors import UserError
from agentbus.llm.vllm_launch import describe, detect_gpus, launch, plan, stop


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"agentbus.serve_vllm: error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m agentbus.serve_vllm", description=__doc__.split("\n\n")[0])
    a = p.add_argument
    a("--default", required=True, metavar="MODEL", help="Hugging Face id of the default model")
    a("--test", action="append", required=True, metavar="MODEL", help="model under test")
    a("--gpus", help="GPU indices to use, e.g. 0,1,2,3 (default: every GPU nvidia-smi lists)")
    a(
        "--gpu-memory",
        type=float,
        metavar="GB",
        help="memory per GPU (default: nvidia-smi, else 80)",
    )
    a("--gpu-memory-utilization", type=float, default=0.9, help="vLLM's share of it (0.9)")
    a("--context-tokens", type=int, default=2048, help="tokens per sequence to size the KV cache")
    a("--tensor-parallel", type=int, help="GPUs per server (default: from the model size)")
    a("--max-num-seqs", type=int, help="sequences per server (default: from the GPU memory)")
    a(
        "--tool-call-parser",
        default="auto",
        metavar="NAME",
        help="vLLM's tool-call parser: auto (by model family: hermes for Qwen, llama3_json "
        "for Llama 3, mistral for Mistral...), none, or a parser name",
    )
    a("--port", type=int, default=8000, help="first port (one per server)")
    a("--host", default="127.0.0.1", help="address the servers listen on")
    a("--dry-run", action="store_true", help="print the command lines, start nothing")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    ns = parser().parse_args(argv)
    try:
        found, memory = detect_gpus()
        gpus = [g.strip() for g in ns.gpus.split(",") if g.strip()] if ns.gpus else found
        roles = [("default", ns.default)] + [
            (f"test{i}" if len(ns.test) > 1 else "test", m) for i, m in enumerate(ns.test, 1)
        ]
        servers = plan(
            roles,
            gpus,
            gpu_memory_gb=ns.gpu_memory or memory or 80.0,
            utilization=ns.gpu_memory_utilization,
            context_tokens=ns.context_tokens,
            port=ns.port,
            host=ns.host,
            tp_override=ns.tensor_parallel,
            seqs_override=ns.max_num_seqs,
            tool_parser=ns.tool_call_parser,
        )
        for line in describe(servers):
            print(f"# {line}")
        for server in servers.all():
            print(server.command_line())
        if ns.dry_run:
            print(f"# then: {servers.run_command()}")
            return 0
        procs = launch(servers.all())
    except UserError as exc:
        print(f"agentbus.serve_vllm: error: {exc}", file=sys.stderr)
        return 2
    print(f"all {len(procs)} servers healthy; run:\n{servers.run_command()}", flush=True)
    try:
        while all(p.poll() is None for p in procs):
            time.sleep(5)
        print("agentbus.serve_vllm: a server exited; stopping the others", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        stop(procs)


if __name__ == "__main__":
    raise SystemExit(main())

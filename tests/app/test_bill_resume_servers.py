"""The bill after a resume equals the uninterrupted run's, to the call (issue 39 item 2).

Two simulated OpenAI-compatible servers run on loopback as separate
processes, one for the default model and one for the test model, as a user's
vLLM servers would. ``python -m agentbus.run`` evaluates two math tasks
against them twice: straight through (the reference), and in three
processes: stopped with Ctrl-C mid-run; resumed, with the test model's server
killed in the middle (the run gives up the cells it cannot finish and exits
1); the server restarted and the run resumed to its end. Calls answered in
an earlier process were paid there and are read back from the run's cache as
free after a resume, so a bill summed from the last process or from the
episodes' records comes out short.

After each process the run's calls, tokens and dollars, per slot and in
total, must equal what its call file (``llm-cache.jsonl``) holds, summed
here line by line with the prices the run was given, and at the end the
reference's. The servers keep no prefix cache, so a call's usage does not
depend on what a server saw before (a restarted server starts cold) and the
totals compare exactly.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
TASKS = 2
EPISODES = TASKS * 4  # two varied slots: four coalitions
SPEED = "60"  # fast, yet an episode takes long enough for a signal to land mid-run
#: USD per million tokens: input, cached input, output
PRICES = {"weak": (1.0, 0.5, 4.0), "strong": (3.0, 1.5, 12.0)}
#: the cost section's totals (``cost.run``) and its rows per slot and model (``by_slot``)
TOTAL_KEYS = (
    "sent_calls",
    "sent_tokens",
    "sent_input_tokens",
    "sent_cached_input_tokens",
    "sent_output_tokens",
    "billed_usd",
)
ROW_KEYS = ("calls", "input_tokens", "cached_input_tokens", "output_tokens", "usd")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Servers:
    """The default (``weak``) and test (``strong``) model servers, each restartable on its port."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        (workdir / "sim.toml").write_text("prefix_cache_tokens = 0\n")
        self.ports = {"weak": _free_port(), "strong": _free_port()}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def spec(self, model: str) -> str:
        return f"vllm:http://127.0.0.1:{self.ports[model]}/v1#{model}"

    def start(self, *models: str) -> None:
        for model in models:
            self.procs[model] = subprocess.Popen(
                [sys.executable, "-m", "agentbus.sim.serve", "--port", str(self.ports[model]),
                 "--speed", SPEED, "--env", "math", "--tasks", str(TASKS),
                 "--config", str(self.workdir / "sim.toml")],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        for model in models:
            while True:
                assert self.procs[model].poll() is None, f"the {model} server exited"
                try:
                    socket.create_connection(("127.0.0.1", self.ports[model]), 0.5).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"the {model} server did not start"
                    time.sleep(0.1)

    def kill(self, model: str) -> None:
        proc = self.procs.pop(model)
        proc.kill()
        proc.wait(timeout=10)

    def stop(self) -> None:
        for model in list(self.procs):
            self.kill(model)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    both = Servers(tmp_path_factory.mktemp("servers"))
    try:
        both.start("weak", "strong")
        yield both
    finally:
        both.stop()


def run_cmd(servers: Servers, run_dir: Path) -> list[str]:
    config = run_dir.parent / "run.toml"
    config.write_text(
        # a dead server fails fast: one try per episode, one retry, short backoff
        "attempts = 1\n"
        + "".join(
            f'[prices."vllm:{m}"]\ninput = {i}\ncached_input = {c}\noutput = {o}\n'
            for m, (i, c, o) in PRICES.items()
        )
        + f'[llm.models."{servers.spec("strong")}"]\n'
        "max_retries = 1\nbackoff_base = 0.05\nbackoff_max = 0.1\nconnect_timeout = 2.0\n"
    )
    return [
        sys.executable, "-m", "agentbus.run", "--config", str(config), "--env", "math",
        "--tasks", str(TASKS), "--max-steps", "4", "--slots", "action,reasoning",
        "--default", servers.spec("weak"), "--test", servers.spec("strong"),
        "--concurrency", "2", "--run-dir", str(run_dir), "--progress", "off", "--no-plots",
    ]  # fmt: skip


def resume_cmd(run_dir: Path) -> list[str]:
    """Resumed as the README says: the run directory alone, its config from the manifest."""
    return [sys.executable, "-m", "agentbus.run", "--resume", str(run_dir), "--progress", "off"]


def ended(run_dir: Path) -> int:
    path = run_dir / "events.jsonl"
    return path.read_bytes().count(b'"type":"episode.ended"') if path.exists() else 0


def start_and_wait(
    servers: Servers, run_dir: Path, cmd: list[str], episodes: int
) -> subprocess.Popen[str]:
    """``cmd`` started; returned once ``episodes`` episodes of the run have ended."""
    proc = subprocess.Popen(
        cmd, cwd=ROOT, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while ended(run_dir) < episodes:
        assert proc.poll() is None, "the run ended before it could be interrupted"
        assert time.monotonic() < deadline, "no episode ended in 60 s"
        time.sleep(0.02)
    return proc


def results(run_dir: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads((run_dir / "results.json").read_bytes())
    return loaded


def call_log(run_dir: Path) -> tuple[dict[str, Any], list[str]]:
    """The bill summed here from ``llm-cache.jsonl``: totals, per slot and model; the keys."""
    total = dict.fromkeys(TOTAL_KEYS, 0)
    by_slot: dict[str, dict[str, dict[str, Any]]] = {}
    keys = []
    for raw in (run_dir / "llm-cache.jsonl").read_bytes().splitlines():
        line = orjson.loads(raw)
        keys.append(line["k"])
        c = line["c"]
        inp, cached, out = c["prompt_tokens"], c["cached_prompt_tokens"], c["completion_tokens"]
        price_in, price_cached, price_out = PRICES[c["model"]]
        usd = ((inp - cached) * price_in + cached * price_cached + out * price_out) / 1e6
        row = by_slot.setdefault(line["s"], {}).setdefault(line["a"], dict.fromkeys(ROW_KEYS, 0))
        for key, value in zip(ROW_KEYS, (1, inp, cached, out, usd), strict=True):
            row[key] += value
        for key, value in zip(TOTAL_KEYS, (1, inp + out, inp, cached, out, usd), strict=True):
            total[key] += value
    return {**total, "by_slot": by_slot}, keys


def bill(results_json: dict[str, Any]) -> dict[str, Any]:
    """The cost section's bill, in the keys :func:`call_log` sums."""
    run = results_json["cost"]["run"]
    rows = {
        slot: {model: {k: row[k] for k in ROW_KEYS} for model, row in models.items()}
        for slot, models in run.get("by_slot", {}).items()  # none: billed from the records
    }
    return {k: run[k] for k in TOTAL_KEYS} | {"by_slot": rows}


def rounded(b: dict[str, Any]) -> dict[str, Any]:
    """Dollars to 1e-9 (sums of floats in another order); the rest exact."""
    out = {k: round(v, 9) if isinstance(v, float) else v for k, v in b.items() if k != "by_slot"}
    out["by_slot"] = {
        slot: {m: {k: round(v, 9) for k, v in row.items()} for m, row in models.items()}
        for slot, models in b["by_slot"].items()
    }
    return out


@pytest.fixture(scope="module")
def reference(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The uninterrupted run's bill (checked against its own call file first)."""
    run_dir = tmp_path_factory.mktemp("reference") / "run"
    subprocess.run(run_cmd(servers, run_dir), cwd=ROOT, check=True, capture_output=True)
    logged, keys = call_log(run_dir)
    assert rounded(bill(results(run_dir))) == rounded(logged)
    assert len(set(keys)) == len(keys) == logged["sent_calls"] > 0
    return logged


def check_bill(run_dir: Path, processes: int) -> dict[str, Any]:
    """The cost section's bill equals the call file's, calls of every process counted once."""
    logged, keys = call_log(run_dir)
    assert len(set(keys)) == len(keys), "a call was made (and billed) twice"
    got = results(run_dir)
    billed = rounded(bill(got))
    assert billed["sent_calls"] == logged["sent_calls"], "calls of an earlier process left out"
    assert billed == rounded(logged)
    assert got["llm"]["run"]["processes"] == processes
    assert got["llm"]["run"]["sent"] == logged["sent_calls"]
    return got


def test_ctrl_c_and_a_dead_test_server_then_resume_bill_every_call_once(
    servers: Servers, reference: dict[str, Any], tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    first = start_and_wait(servers, run_dir, run_cmd(servers, run_dir), episodes=2)
    first.send_signal(signal.SIGINT)  # Ctrl-C mid-run
    out, err = first.communicate(timeout=60)
    assert first.returncode == 130, out[-2000:] + err[-2000:]
    assert 2 <= ended(run_dir) < EPISODES

    # the resume loses the test model's server mid-run: it gives those cells up and exits 1
    second = start_and_wait(servers, run_dir, resume_cmd(run_dir), episodes=ended(run_dir) + 1)
    servers.kill("strong")
    try:
        out, err = second.communicate(timeout=90)
    finally:
        servers.start("strong")  # on its old port, for the next resume
    assert second.returncode == 1, out[-2000:] + err[-2000:]
    assert f"--resume {run_dir}" in out + err  # the run names its next step
    check_bill(run_dir, processes=2)

    third = subprocess.run(
        resume_cmd(run_dir), cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert third.returncode == 0, third.stdout[-2000:] + third.stderr[-2000:]
    got = check_bill(run_dir, processes=3)
    assert rounded(bill(got)) == rounded(reference)  # to the call, per slot and in total
    whole = got["llm"]["run"]
    assert (
        f"LLM calls over the whole run (3 processes): requested {whole['requested']}, "
        f"sent {whole['sent']}"
    ) in third.stdout
    counted = sum(v["n"] for s in got["models"].values() for v in s["coalitions"].values())
    assert counted == EPISODES

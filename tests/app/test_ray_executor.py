"""``--executor ray``: the same table as the local executor, a killed worker costs nothing.

One local Ray instance on 2 CPUs is shared by the module. The in-process run
kills one worker's process (SIGKILL) as soon as the first record is in the
log: the episodes it had in flight never produce a record, go to another
worker, and every cell still counts exactly once, with the per-coalition
table identical to the local executor's (temperature 0).
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from rich.console import Console

from agentbus.app.config import build_config
from agentbus.app.evaluate import RunReport, evaluate

pytestmark = pytest.mark.slow

TASKS = 4


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
        configure_logging=False,
    )
    yield ray
    ray.shutdown()


def config(run_dir: Path, **kw: Any) -> Any:
    data: dict[str, Any] = {
        "tasks": TASKS,
        "progress": "off",
        "plots": False,
        "run_dir": str(run_dir),
        "sim": {"speed": 0, "transport": "inprocess"},
    }
    data.update(kw)
    return build_config(data)


def table(results: dict[str, Any]) -> dict[str, Any]:
    """Per test model and coalition: episodes and mean reward."""
    return {
        model: {key: (c["n"], c["mean"]) for key, c in entry["coalitions"].items()}
        for model, entry in results["models"].items()
    }


def ended(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "events.jsonl"
    if not path.exists():
        return []
    lines = path.read_bytes().splitlines()
    events = [orjson.loads(line) for line in lines if line.strip()]
    return [e for e in events if e["type"] == "episode.ended"]


async def kill_a_worker_after_first_record(ray: Any, run_dir: Path) -> int:
    """SIGKILL worker 0's process once the log holds a record; its pid."""
    for _ in range(6000):  # up to 5 minutes on a loaded machine
        if ended(run_dir):
            break
        await anyio.sleep(0.05)
    names = [a for a in ray.util.list_named_actors(all_namespaces=True)]
    worker = next(a for a in names if a["name"].endswith("-worker-0"))
    handle = ray.get_actor(worker["name"], namespace=worker["namespace"])
    pid = int(await handle.pid.remote())
    os.kill(pid, signal.SIGKILL)
    return pid


async def test_ray_matches_local_and_survives_a_killed_worker(
    ray_instance: Any, tmp_path: Path
) -> None:
    quiet = Console(file=io.StringIO())
    local = await evaluate(config(tmp_path / "local"), quiet)
    # slow enough (sim speed 20) that worker 0 still has episodes in flight when killed
    ray_config = config(
        tmp_path / "ray", executor="ray", workers=2, sim={"speed": 20, "transport": "inprocess"}
    )
    reports: list[RunReport] = []

    async def run_ray() -> None:
        reports.append(await evaluate(ray_config, quiet))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_ray)
        killed = await kill_a_worker_after_first_record(ray_instance, tmp_path / "ray")
    remote = reports[0]

    assert killed != os.getpid()
    executor = remote.results["executor"]
    assert executor["workers_lost"] == 1 and executor["workers_replaced"] == 1
    assert executor["episodes_resent"] >= 1  # the killed worker had unfinished episodes
    assert table(remote.results) == table(local.results)
    cells = 16 * TASKS
    assert all(n == TASKS for n, _ in table(remote.results)["sim:strong"].values())
    # every cell ended once in the log: a resent episode is the same attempt, not a second one
    records = ended(tmp_path / "ray")
    assert len(records) == cells == len({r["episode_id"] for r in records})
    assert remote.infra_errors == 0 and remote.episodes_run == cells
    assert remote.results["llm"]["total"]["requested"] > 0  # summed over the workers


def test_cli_ray_run_prints_the_local_table(ray_instance: Any, tmp_path: Path) -> None:
    common = [
        "--tasks", "2", "--sim-speed", "0", "--sim-transport", "inprocess",
        "--progress", "off", "--no-preflight",
    ]  # fmt: skip
    outputs = []
    for extra in ([], ["--executor", "ray", "--workers", "2"]):
        run_dir = tmp_path / (extra[1] if extra else "local")
        result = subprocess.run(
            [sys.executable, "-m", "agentbus.run", *common, "--run-dir", str(run_dir), *extra],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        saved = orjson.loads((run_dir / "results.json").read_bytes())
        outputs.append((attribution_tables(result.stdout), table(saved)))
    (local_out, local_table), (ray_out, ray_table) = outputs
    assert ray_table == local_table
    assert "Shapley" in local_out
    assert ray_out == local_out  # the printed attribution tables, character for character


def attribution_tables(stdout: str) -> str:
    """The printed MVP line and Shapley table, without the cost line.

    Costs may differ by a cent: each Ray worker has its own simulator, whose
    prompt cache (billed at the cached rate) saw only that worker's calls.
    """
    start = stdout.index("MVP")
    lines = stdout[start:].splitlines()
    end = next(i for i, line in enumerate(lines) if "cost" in line.lower())
    return "\n".join(lines[:end])


def test_without_ray_the_flag_says_how_to_install_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from agentbus.app.run import main\n"
        f"raise SystemExit(main(['--executor', 'ray', '--run-dir', {str(tmp_path / 'r')!r}]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install -e '.[ray]'" in lines[0]
    assert not (tmp_path / "r").exists()

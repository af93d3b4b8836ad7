"""Command-line flags of ``python -m agentbus.run``, mapped onto :class:`RunConfig`.

Every flag sets one config key; flags not given leave the file's (or the
default) value alone. The exceptions act on the command, not on the run:
``--config`` and ``--resume`` say where settings come from, ``--no-preflight``
skips the check of keys and endpoints (:mod:`agentbus.app.preflight`). Errors
print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import orjson

from agentbus.app import external
from agentbus.app.config import RunConfig, build_config, load_toml, merge
from agentbus.app.flag_scope import check_task_flags
from agentbus.app.listing import environment_names
from agentbus.app.presets import preset_fragment
from agentbus.core.errors import UserError
from agentbus.core.inputs import CONFIG_LIMIT_MB, MIB, check_file, read_bounded
from agentbus.core.logs import scrub
from agentbus.core.runnable import require_runnable

#: settings that only steer an adaptive run; without --adaptive they would do nothing
ADAPTIVE_ONLY: tuple[tuple[str, str], ...] = (
    ("target_halfwidth", "--target-halfwidth"),
    ("max_episodes", "--max-episodes"),
    ("stop", "--stop"),
)


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad flag as one line instead of usage + error.

    Abbreviated flags are off: ``--tok X`` would set ``--token`` without the
    name that the manifest's redaction of credential flags looks for.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        # one line even when a flag's value holds a line break (found by fuzzing)
        message = message.replace("\r", "\\r").replace("\n", "\\n")
        print(f"agentbus: error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def _kv(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected SLOT=MODULE, got {text!r}")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def _stop(words: list[str]) -> dict[str, Any]:
    """``--stop mvp|ranking|halfwidth X`` as config keys (an adaptive run)."""
    rule, rest = words[0], words[1:]
    if rule not in ("mvp", "ranking", "halfwidth"):
        raise UserError(f"--stop {rule}: the rules are mvp, ranking and halfwidth X")
    out: dict[str, Any] = {"adaptive": True, "stop": rule}
    if rule == "halfwidth" and len(rest) == 1:
        try:
            out["target_halfwidth"] = float(rest[0])
        except ValueError:
            raise UserError(f"--stop halfwidth {rest[0]}: X must be a number") from None
    elif rest:
        raise UserError(f"--stop {' '.join(words)}: only halfwidth takes a value (halfwidth X)")
    return out


def _vary(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected SLOT=DEFAULT:TEST, got {text!r}")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def _specs(text: str) -> list[str]:
    """Comma-separated model specs; a part that is a URL continues the spec before it.

    ``vllm:http://a/v1,http://b/v1#M`` is one model with two replicas, not two models.
    """
    specs: list[str] = []
    for part in _csv(text):
        if specs and part.lower().startswith(("http://", "https://")):
            specs[-1] = f"{specs[-1]},{part}"
        else:
            specs.append(part)
    return specs


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def parser() -> OneLineParser:
    p = OneLineParser(
        prog="python -m agentbus.run",
        description=(
            "Run a coalition evaluation: every combination of default and test "
            "implementations of the agent's modules on every task, concurrently, "
            "and print each module's Shapley and Banzhaf value with 95% intervals. "
            "With no arguments: math on the built-in generator, sim:weak vs sim:strong."
        ),
    )
    a = p.add_argument
    a("--config", type=Path, help="TOML file with any of the settings below (flags win)")
    a(
        "--env",
        help=f"environment name: {', '.join(environment_names())}, or a plugin's "
        "(python -m agentbus.list envs says what each is)",
    )
    a("--dataset", type=Path, help="task file instead of the built-in generator")
    a("--knowledge", type=Path, help="knowledge-point file (math)")
    a("--tasks", type=int, help="how many tasks the built-in generator makes")
    a("--limit", type=int, help="run only the first N tasks")
    a("--seed", type=int, help="seed of the task generator")
    a("--default", help="model spec of the default implementation, e.g. sim:weak")
    a(
        "--test",
        action="append",
        help="model spec under test (repeat or comma-separate for one column each)",
    )
    a(
        "--agent",
        help="agent by registry name (default praf), or your own async function "
        "MODULE:FUNC run through the module gateway (docs/your-agent.md)",
    )
    a("--agent-cmd", metavar="CMD", help="your agent as a command, run once per episode")
    a("--agent-url", metavar="URL", help="your agent as an HTTP service")
    a("--inspect", metavar="FILE@TASK", help="an Inspect AI task, roles as slots (docs/inspect.md)")
    a("--inspect-log", type=Path, metavar="DIR", help="each coalition's samples as an .eval log")
    a(
        "--scorer",
        help="how your agent's answer is scored: final (default), exact, contains, numeric, regex, "
        "result or MODULE:FUNC",
    )
    a("--unmapped", metavar="MODEL", help="model for modules of your agent that are no slot")
    a("--agent-timeout", type=float, dest="agent_timeout_s", help="seconds per agent run")
    at_once = "command agents at once (default: the run's CPUs; as workers 4 per CPU, 16 at most)"
    a("--agent-processes", type=int, help=at_once)
    a(
        "--keep-going",
        action="store_true",
        default=None,
        help="run on when the first block shows a misconfigured agent (stops by default)",
    )
    a("--agent-isolation", choices=("sandbox", "none"), help="where --agent-cmd runs (sandbox)")
    workers = "--agent-cmd as long-lived workers or not (default: as its worker handshake says)"
    a("--agent-workers", action=argparse.BooleanOptionalAction, help=workers)
    a("--agent-memory-mb", type=int, help="memory of a sandboxed agent's process tree (4096)")
    a("--agent-disk-mb", type=int, help="size of a sandboxed agent's private directory (1024)")
    a("--agent-path", dest="agent_paths", type=_csv, help="more paths a sandboxed agent reads")
    a("--agent-output-mb", type=float, help="MiB an agent command may print per stream (64)")
    a("--gateway-body-mb", type=float, help="largest request body the gateway reads (16)")
    a("--responses-remote", action="store_true", default=None, help="MCP/store in /v1/responses")
    a("--module", action="append", type=_kv, metavar="SLOT=MODULE", help="replace a module")
    a("--slots", type=_csv, help="vary only these slots, e.g. planning,action")
    a(
        "--vary",
        action="append",
        type=_vary,
        metavar="SLOT=DEFAULT:TEST",
        help="vary a slot over implementations: each side off, on, @MODEL, MODULE or "
        "MODULE@MODEL (e.g. reflection=off:on); repeatable; docs/variants.md",
    )
    a("--preset", help="start from a named preset (capabench, mmau-planner-shift, ...)")
    a("--shift", metavar="SLOT", help="also tabulate pass rate per variant of SLOT (MMAU)")
    a("--repeats", type=int, help="episodes per (coalition, task)")
    a("--max-steps", type=int, help="round limit per episode (default: the environment's)")
    a("--episode-timeout", type=float, dest="episode_timeout_s", help="seconds per episode")
    a("--concurrency", type=int, help="episodes in flight at once (default 1000)")
    a("--best", action="store_true", default=None, help="also run the best-combination agent")
    a("--adaptive", action="store_true", default=None, help="stop when intervals are narrow")
    a(
        "--target-halfwidth",
        type=float,
        help="adaptive stop: every 95%% half-width below this, 20 tasks or more in",
    )
    a("--max-episodes", type=int, help="adaptive stop: at most this many episodes")
    a(
        "--stop",
        nargs="+",
        metavar="RULE",
        help="adaptive run that stops on: mvp (top slot identified), ranking, or "
        "halfwidth X (every 95%% half-width below X); implies --adaptive",
    )
    a(
        "--estimator",
        choices=["auto", "exact", "loo", "permutation", "stratified", "msr", "leverage"],
        help="how phi is estimated: auto = exact up to 5 slots, msr above (docs/statistics.md)",
    )
    a(
        "--screen",
        choices=["off", "loo"],
        help="loo: screen out modules that cannot matter at --target-halfwidth first",
    )
    a("--run-dir", type=Path, help="run directory (resumes if it holds this run)")
    a("--resume", type=Path, metavar="DIR", help="resume the run in DIR with its own config")
    a("--serve", metavar="[HOST:]PORT", help="serve the live dashboard and event stream")
    a("--token", help="bearer token for --serve on a non-loopback address")
    a("--progress", choices=["auto", "rich", "plain", "off"], help="console progress display")
    a(
        "--details",
        action="store_true",
        default=None,
        help="after the MVP line and the attribution table, print the coalition, Banzhaf and "
        "cost tables too (results.md always has them)",
    )
    a("--no-trace", dest="trace", action="store_false", default=None, help="keep no traces")
    a(
        "--no-plots",
        dest="plots",
        action="store_false",
        default=None,
        help="write no PNG/SVG plots (results.json and results.md are still written)",
    )
    a("--temperature", type=float, help="sampling temperature (default 0)")
    a("--sampling-seed", type=int, help="fixed sampling seed (makes T>0 cacheable)")
    a(
        "--max-tokens",
        type=int,
        help="output cap per model call (default 512; per model: [llm.models.SPEC] max_tokens)",
    )
    a("--cache", choices=["auto", "on", "off"], help="shared LLM calls (default auto)")
    a("--sim-speed", type=float, help="simulator speed factor (0 = no delays)")
    a("--sim-transport", choices=["http", "inprocess"], help="how the simulator is served")
    a("--budget-usd", type=float, help="stop before the billed cost would pass X USD")
    a("--budget-tokens", type=int, help="stop before the tokens sent would pass N")
    a(
        "--pareto",
        type=int,
        metavar="K",
        help="predict every per-slot model assignment's accuracy and cost, show the "
        "Pareto front, run the K most promising for real",
    )
    a("--executor", choices=["local", "ray"], help="where episodes run (default local)")
    a("--ray-address", metavar="ADDR", help="Ray cluster to join (default: a local instance)")
    a("--workers", type=int, help="Ray workers, each running --concurrency episodes (default 2)")
    a(
        "--no-preflight",
        dest="preflight",
        action="store_false",
        help="skip the check of API keys and endpoint reachability before the run",
    )
    return p


FLAT_KEYS = (
    "env",
    "dataset",
    "knowledge",
    "tasks",
    "limit",
    "seed",
    "default",
    "agent",
    "agent_cmd",
    "agent_url",
    "inspect",
    "inspect_log",
    "scorer",
    "unmapped",
    "agent_timeout_s",
    "agent_processes",
    "keep_going",
    "agent_isolation",
    "agent_workers",
    "agent_memory_mb",
    "agent_disk_mb",
    "agent_paths",
    "agent_output_mb",
    "gateway_body_mb",
    "responses_remote",
    "slots",
    "repeats",
    "max_steps",
    "episode_timeout_s",
    "concurrency",
    "best",
    "adaptive",
    "target_halfwidth",
    "max_episodes",
    "estimator",
    "screen",
    "run_dir",
    "serve",
    "token",
    "progress",
    "details",
    "trace",
    "plots",
    "budget_usd",
    "budget_tokens",
    "pareto",
    "preset",
    "shift",
    "executor",
    "ray_address",
    "workers",
)


#: flags that set a key inside a table of the config: flag -> the key's path
NESTED_KEYS: dict[str, tuple[str, ...]] = {
    "temperature": ("llm", "sampling", "temperature"),
    "max_tokens": ("llm", "sampling", "max_tokens"),
    "sampling_seed": ("llm", "sampling", "seed"),
    "cache": ("llm", "cache"),
    "sim_speed": ("sim", "speed"),
    "sim_transport": ("sim", "transport"),
}


def overrides(ns: argparse.Namespace) -> dict[str, Any]:
    """The config keys set by flags."""
    out: dict[str, Any] = {k: getattr(ns, k) for k in FLAT_KEYS if getattr(ns, k) is not None}
    if ns.test:
        out["test"] = [spec for item in ns.test for spec in _specs(item)]
    if ns.module:
        out["modules"] = dict(ns.module)
    if ns.vary:
        out["vary"] = dict(ns.vary)
    if ns.stop:
        out.update(_stop(ns.stop))
    for flag, path in NESTED_KEYS.items():
        value = getattr(ns, flag)
        if value is not None:
            table = out
            for name in path[:-1]:
                table = table.setdefault(name, {})
            table[path[-1]] = value
    return out


def manifest_config(run_dir: Path) -> dict[str, Any]:
    """The config a run directory was made with (``manifest.json`` -> ``config``)."""
    path = run_dir / "manifest.json"
    if run_dir.exists() and not run_dir.is_dir():
        raise UserError(f"--resume takes a run directory; {run_dir} is a file")
    try:
        data = orjson.loads(read_bounded(path, "run manifest", CONFIG_LIMIT_MB * MIB))
    except FileNotFoundError:
        raise UserError(f"nothing to resume: {path} does not exist") from None
    except orjson.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from None
    config = data.get("config") if isinstance(data, dict) else None
    if not isinstance(config, dict):
        raise UserError(f"{path} holds no run config")
    return config


@dataclass(frozen=True)
class Command:
    """A parsed command line: the run's config and what the command itself should do."""

    config: RunConfig
    #: check keys and endpoints before the run (``--no-preflight`` turns it off)
    preflight: bool = True


def check_no_credentials(config: RunConfig) -> None:
    """Refuse a model spec with a credential in its URL (``http://u:p@host``, ``?api_key=``).

    Specs are written to the manifest and the log and printed in summaries; a
    key belongs in the backend's environment variable, where it is sent as a
    header and scrubbed from everything written.
    """
    for model in config.models():
        shown = scrub(model)
        if shown != model:
            raise UserError(
                f"model spec {shown} carries a credential in its URL; it would be written to "
                "the run's files: give the key in the backend's environment variable "
                "(OPENAI_API_KEY, ANTHROPIC_API_KEY, VLLM_API_KEY) instead"
            )


def check_adaptive_only(config: RunConfig, user_set: dict[str, Any]) -> None:
    """Refuse adaptive-only settings the user gave without ``--adaptive``.

    ``user_set`` holds only what the user wrote (flags and the TOML file), not
    the defaults nor a resumed manifest (which stores every key), so a value
    that merely has a default never trips this.
    """
    if config.adaptive:
        return
    for key, flag in ADAPTIVE_ONLY:
        if key == "target_halfwidth" and config.screen != "off":
            continue  # the screen's precision
        if key in user_set:
            raise UserError(
                f"{flag} (config key {key}) only applies with --adaptive; add --adaptive or drop it"
            )


def check_executor(config: RunConfig, user_set: dict[str, Any]) -> None:
    """Ray settings need ``--executor ray``, and Ray itself (one line on how to install it)."""
    if config.executor != "ray":
        for key, flag in (("ray_address", "--ray-address"), ("workers", "--workers")):
            if key in user_set:
                raise UserError(f"{flag} only applies with --executor ray")
        return
    from agentbus.executors.ray_runtime import require_ray

    require_ray()


def parse_command(argv: list[str] | None = None) -> Command:
    """Flags (and the optional file, or a resumed run's manifest) -> a validated command."""
    ns = parser().parse_args(argv)
    base: dict[str, Any] = {}
    if ns.resume is not None:
        base = manifest_config(ns.resume)
        base["run_dir"] = str(ns.resume)
    user: dict[str, Any] = load_toml(ns.config) if ns.config is not None else {}
    user = merge(user, overrides(ns))
    base = merge(preset_fragment(user.get("preset") or base.get("preset")), base)
    config = build_config(merge(base, user))
    if external.is_external(config) and "env" not in user and "env" not in base:
        config = config.model_copy(update={"env": external.ENV})  # tasks from --dataset
    external.check(config)
    check_adaptive_only(config, user)
    check_executor(config, user)
    require_runnable(config.env)
    check_no_credentials(config)
    if config.dataset is not None and not config.dataset.exists():
        raise UserError(f"dataset not found: {config.dataset}")
    if config.dataset is not None and not config.dataset.is_dir():  # a folder of task files
        check_file(config.dataset, "dataset")
    check_task_flags(config, user)  # --knowledge, --tasks where the run would ignore them
    return Command(config=config, preflight=ns.preflight)


def parse(argv: list[str] | None = None) -> RunConfig:
    """Flags (and the optional file, or a resumed run's manifest) -> a validated config."""
    return parse_command(argv).config


__all__ = ["Command", "parse", "parse_command", "parser"]

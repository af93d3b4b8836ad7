"""Planning and starting vLLM servers for a run: ``python -m agentbus.serve_vllm``.

Given the default and test models and the GPUs, :func:`plan` decides per
model how many GPUs one server needs (tensor parallelism: the smallest power
of two whose memory holds the weights with room for a KV cache), how many
replicas the model's share of the GPUs gives, and a ``--max-num-seqs`` that
the KV cache left over can hold at the expected context length. Every server
gets ``--enable-prefix-caching`` (the coalitions of a task share their
prompt prefixes) and its own port. :func:`launch` starts the servers, waits
until each answers ``/health``, and the command prints the model specs to
give ``python -m agentbus.run`` (several URLs per model = replicas, balanced
by load with prefix affinity).

The sizes are estimates from the model's name (``8B``, ``70B``): weights at 2
bytes per parameter (bf16), KV cache at ``KV_BYTES_PER_TOKEN_PER_B`` bytes
per token per billion parameters (Llama-3-8B: 32 layers x 8 KV heads x 128 x
2 (K, V) x 2 bytes = 128 KiB per token, 16 KiB per billion). Models with
grouped-query attention larger than 8B need less; the estimate errs on the
safe side. ``--tensor-parallel`` and ``--max-num-seqs`` override them.

Function calling: vLLM returns a model's calls in ``tool_calls`` only when it
is started with ``--enable-auto-tool-choice --tool-call-parser NAME``, and the
parser must match the model family's chat template (:data:`TOOL_PARSERS`:
``hermes`` for Qwen and Hermes, ``llama3_json`` for Llama 3, ``mistral`` for
Mistral...). Without them the calls come back as text; agentbus reads them
from there too (agentbus/llm/tools.py), but the server's parser is the
reliable path. ``--tool-call-parser`` overrides the choice (``none``: no flags).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field

from agentbus.core.errors import UserError

#: KV cache per token per billion parameters (bf16), see the module docstring
KV_BYTES_PER_TOKEN_PER_B = 16 * 1024
#: used when the name says nothing about the size
DEFAULT_PARAMS_B = 8.0
#: weights may take at most this share of a server's usable memory
MAX_WEIGHT_SHARE = 0.6
SEQS_MIN, SEQS_MAX, SEQS_STEP = 16, 512, 16

INSTALL_HINT = "vllm is not installed here: pip install -e '.[vllm]' (needs a CUDA GPU)"


#: vLLM's tool-call parser per model family: (pattern on the model id, parser name)
TOOL_PARSERS: tuple[tuple[str, str], ...] = (
    (r"qwen|qwq", "hermes"),
    (r"hermes", "hermes"),
    (r"llama-?4", "llama4_pythonic"),
    (r"llama-?3", "llama3_json"),
    (r"mistral|mixtral|ministral|codestral", "mistral"),
    (r"granite", "granite"),
    (r"internlm", "internlm"),
    (r"deepseek-?v3", "deepseek_v3"),
    (r"phi-?4-?mini", "phi4_mini_json"),
    (r"xlam", "xlam"),
)


def tool_call_parser(model: str) -> str | None:
    """vLLM's ``--tool-call-parser`` for ``model``'s family (None: no known parser)."""
    name = model.lower()
    for pattern, parser in TOOL_PARSERS:
        if re.search(pattern, name):
            return parser
    return None


def params_billion(model: str) -> float:
    """Parameters in billions from a name like ``Llama-3.1-8B-Instruct`` (else 8)."""
    found = re.findall(r"(?<![\d.])(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])", model.split("/")[-1])
    return float(found[-1]) if found else DEFAULT_PARAMS_B


@dataclass(frozen=True)
class Server:
    """One ``vllm serve`` process: its model, GPUs, port and engine flags."""

    model: str
    gpus: tuple[str, ...]
    port: int
    tensor_parallel: int
    max_num_seqs: int
    host: str = "127.0.0.1"
    gpu_memory_utilization: float = 0.9
    extra: tuple[str, ...] = ()
    #: vLLM's tool-call parser for this model (None: tools come back as text)
    tool_parser: str | None = None

    def argv(self) -> list[str]:
        return [
            "vllm",
            "serve",
            self.model,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--tensor-parallel-size",
            str(self.tensor_parallel),
            "--max-num-seqs",
            str(self.max_num_seqs),
            "--gpu-memory-utilization",
            f"{self.gpu_memory_utilization:g}",
            "--enable-prefix-caching",
            *(
                ("--enable-auto-tool-choice", "--tool-call-parser", self.tool_parser)
                if self.tool_parser
                else ()
            ),
            *self.extra,
        ]

    def env(self) -> dict[str, str]:
        return {"CUDA_VISIBLE_DEVICES": ",".join(self.gpus)}

    def command_line(self) -> str:
        """The shell line: environment, then the command."""
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env().items())
        return f"{env} {shlex.join(self.argv())}"

    @property
    def base_url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}/v1"


@dataclass
class Plan:
    """All servers of a run, by role (``default``, ``test``)."""

    servers: dict[str, list[Server]] = field(default_factory=dict)

    def spec(self, role: str) -> str:
        """The model spec for ``python -m agentbus.run``: every replica's URL, then the model."""
        servers = self.servers[role]
        urls = ",".join(s.base_url for s in servers)
        return f"vllm:{urls}#{servers[0].model}"

    def run_command(self) -> str:
        parts = ["python -m agentbus.run", "--default", shlex.quote(self.spec("default"))]
        for role in self.servers:
            if role.startswith("test"):
                parts += ["--test", shlex.quote(self.spec(role))]
        return " ".join(parts)

    def all(self) -> list[Server]:
        return [s for servers in self.servers.values() for s in servers]


def tensor_parallel(params_b: float, gpu_memory_gb: float, utilization: float) -> int:
    """The smallest power of two of GPUs whose memory holds the weights with KV room."""
    weights_gb = 2 * params_b
    tp = 1
    while weights_gb > MAX_WEIGHT_SHARE * tp * gpu_memory_gb * utilization:
        tp *= 2
        if tp > 64:
            break
    return tp


def max_num_seqs(
    params_b: float, tp: int, gpu_memory_gb: float, utilization: float, context_tokens: int
) -> int:
    """Sequences whose KV cache (at ``context_tokens`` each) fits beside the weights."""
    free = tp * gpu_memory_gb * utilization * 1e9 - 2 * params_b * 1e9
    per_seq = context_tokens * KV_BYTES_PER_TOKEN_PER_B * params_b
    seqs = int(free / per_seq) // SEQS_STEP * SEQS_STEP
    return max(SEQS_MIN, min(SEQS_MAX, seqs))


def plan(
    models: list[tuple[str, str]],
    gpus: list[str],
    *,
    gpu_memory_gb: float = 80.0,
    utilization: float = 0.9,
    context_tokens: int = 2048,
    port: int = 8000,
    host: str = "127.0.0.1",
    tp_override: int | None = None,
    seqs_override: int | None = None,
    tool_parser: str = "auto",
) -> Plan:
    """Share the GPUs among the models (in order) and size each model's servers.

    ``models`` is a list of (role, model); a model named twice (the same
    model as default and test) gets one set of servers. ``tool_parser``:
    ``auto`` picks vLLM's parser by model family, ``none`` adds no tool flags,
    any other value is passed as ``--tool-call-parser``.
    """
    if not gpus:
        raise UserError("no GPUs: give --gpus 0,1,... (none were found by nvidia-smi)")
    distinct = list(dict.fromkeys(m for _, m in models))
    sizes = {m: tp_override or tensor_parallel(params_billion(m), gpu_memory_gb, utilization)
             for m in distinct}  # fmt: skip
    need = sum(sizes.values())
    if need > len(gpus):
        raise UserError(
            f"{len(gpus)} GPUs cannot hold one server of each model "
            f"({', '.join(f'{m}: {sizes[m]}' for m in distinct)} GPUs each)"
        )
    # each model gets whole servers; leftover GPUs go round-robin as more replicas
    share = {m: sizes[m] for m in distinct}
    spare = len(gpus) - need
    i = 0
    while spare > 0 and any(sizes[m] <= spare for m in distinct):
        m = distinct[i % len(distinct)]
        if sizes[m] <= spare:
            share[m] += sizes[m]
            spare -= sizes[m]
        i += 1
    by_model: dict[str, list[Server]] = {}
    next_gpu, next_port = 0, port
    for m in distinct:
        tp = sizes[m]
        seqs = seqs_override or max_num_seqs(
            params_billion(m), tp, gpu_memory_gb, utilization, context_tokens
        )
        servers = []
        for _ in range(share[m] // tp):
            ids = tuple(gpus[next_gpu : next_gpu + tp])
            next_gpu += tp
            parser = (
                tool_call_parser(m)
                if tool_parser == "auto"
                else (None if tool_parser == "none" else tool_parser)
            )
            servers.append(
                Server(m, ids, next_port, tp, seqs, host, utilization, tool_parser=parser)
            )
            next_port += 1
        by_model[m] = servers
    return Plan({role: by_model[m] for role, m in models})


def detect_gpus() -> tuple[list[str], float | None]:
    """GPU indices and memory (GB) from nvidia-smi; ([], None) without it."""
    if shutil.which("nvidia-smi") is None:
        return [], None
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return [], None
    rows = [line.split(",") for line in out.strip().splitlines() if "," in line]
    if not rows:
        return [], None
    return [r[0].strip() for r in rows], min(float(r[1]) for r in rows) / 1024


def launch(servers: list[Server], *, wait_s: float = 1800.0) -> list[subprocess.Popen[bytes]]:
    """Start every server; return once each answers /health (a UserError if vllm is missing)."""
    if shutil.which("vllm") is None:
        raise UserError(INSTALL_HINT)
    procs = [
        subprocess.Popen(s.argv(), env={**os.environ, **s.env()}, start_new_session=True)
        for s in servers
    ]
    deadline = time.monotonic() + wait_s
    pending = list(zip(servers, procs, strict=True))
    while pending:
        for server, proc in list(pending):
            if proc.poll() is not None:
                stop(procs)
                raise UserError(
                    f"vllm serve {server.model} on port {server.port} exited with "
                    f"status {proc.returncode} before it was healthy"
                )
            if _healthy(server):
                pending.remove((server, proc))
        if pending and time.monotonic() > deadline:
            stop(procs)
            raise UserError(f"servers not healthy after {wait_s:g}s: {len(pending)} left")
        if pending:
            time.sleep(2.0)
    return procs


def _healthy(server: Server) -> bool:
    import urllib.error
    import urllib.request

    url = server.base_url.removesuffix("/v1") + "/health"
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Terminate the servers (then kill any that do not stop within 30 s)."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    end = time.monotonic() + 30
    for p in procs:
        try:
            p.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()


def describe(p: Plan) -> list[str]:
    """Human lines: per role the servers, GPUs and sizes."""
    lines = []
    for role, servers in p.servers.items():
        s = servers[0]
        lines.append(
            f"{role}: {s.model}: {len(servers)} server(s), tensor parallel {s.tensor_parallel}, "
            f"max-num-seqs {s.max_num_seqs}, GPUs "
            + " ".join(",".join(x.gpus) for x in servers)
            + f", tool-call parser {s.tool_parser or 'none (calls come back as text)'}"
        )
    return lines


__all__ = [
    "TOOL_PARSERS",
    "Plan",
    "Server",
    "describe",
    "detect_gpus",
    "launch",
    "plan",
    "stop",
    "tool_call_parser",
]

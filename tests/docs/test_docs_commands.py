"""Every command in the docs is run (or, where it needs keys, GPUs or remote servers, parsed).

The commands are *extracted* from the markdown files listed in ``DOCS``: every
line of a fenced ``bash``/``sh``/``shell``/``console`` block (comments dropped,
backslash continuations joined) and every inline code span that starts with
``python -m``. A new command in the docs is therefore covered automatically,
and a command that no rule in ``RULES`` recognises fails
``test_every_command_is_classified``: the docs cannot gain an untested command
silently.

How a command is shortened (the only changes made to what the docs say):

* ``RULES`` gives each kind of command its extra flags, appended at the end
  (argparse keeps the last value, so ``--tasks 2000`` in the docs becomes
  ``--tasks 2``): evaluations run 2 tasks at ``--sim-speed 0`` (no simulated
  serving delays) with ``--progress off`` and ``--no-plots`` in a fresh
  temporary ``--run-dir`` (the Quick start's run keeps its plots);
  a run with ``--serve`` keeps ``--sim-speed 3`` so that ``tail`` (given
  ``--from 0``) can attach while it runs; the simulator server gets
  ``--speed 0``; ``agentbus.truth make`` computes 30 tasks with one worker
  into a temporary ``--out``; ``agentbus.report`` gets ``--quiet --no-plots``;
* ``Env.substitute`` replaces what only exists on the writer's machine: the
  ports 8000/8080 become free ports, a run directory such as
  ``runs/math-20261122-120000`` becomes a short run the test made first,
  ``capabench/math/...`` files become two-problem files in CapaBench's format,
  and other data files that are not in the repository become placeholders
  (those commands are parse-only, see the ``external data`` rule);
* ``pip install -e examples/NAME`` is replaced by putting every example
  package on ``PYTHONPATH`` with a ``.dist-info`` holding its entry points
  (what the install would register), so the shared virtualenv is not modified.

Kinds: ``run`` (a subprocess that must exit 0), ``background`` (a server; a
later command of the same block that uses its port runs after it, and the
server is stopped, or for a run with ``--serve`` awaited, afterwards),
``parse`` (needs API keys, a remote vLLM server or data files that are not
shipped: its flags go through the real argument parser, ``parse_command``,
and the config validates; nothing runs), ``help`` (a command named in prose
without arguments: its ``--help`` must work) and ``shape`` (the Quick start
block, checked by ``test_quick_start_is_two_commands``; its evaluation is run
shortened by ``test_quick_start_run_shortened``). Every command that starts an
evaluation or a server is marked ``slow`` (each takes seconds, not minutes,
once shortened); classification, parsing and ``--help`` are not.
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted(
    [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").glob("*/README.md")]
)
SHELL_LANGS = {"bash", "sh", "shell", "console"}
PY = sys.executable

RUN_MODULE = r"agentbus(?:\.app)?\.run"
SHORT_RUN = ["--tasks", "2", "--sim-speed", "0", "--progress", "off", "--run-dir", "{run}"]
#: plots are drawn by the Quick start's shortened run (and tests/attribution/test_attribution_report.py); the
#: other shortened runs skip them (a second of CPU each)
NO_PLOTS = ["--no-plots"]


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: str  # re.search on the command as written in the docs
    kind: str  # run | background | parse | shape | help
    extra: tuple[str, ...] = ()  # flags appended (after substitution)
    why: str = ""  # for parse and shape: why the command is not run
    slow: bool = False
    ready: str = ""  # background: what to wait for ("port" or "http:/api/status")
    on_end: str = "terminate"  # background: terminate, or wait (it ends by itself)


REAL_MODELS = r"(vllm:http://(?!127\.0\.0\.1)|openai:|anthropic:)"

#: first match wins; order matters
RULES: tuple[Rule, ...] = (
    Rule(
        "module mentioned in prose",
        r"^python3? -m [\w.]+$",
        "help",
        why="an inline mention of a command without arguments: its --help must work",
    ),
    Rule(
        "quick start",
        r"^python3 -m venv \.venv && ",
        "shape",
        why="installs the project; checked for shape",
    ),
    Rule("test suite", r"-m pytest", "shape", why="the test suite itself"),
    Rule(
        "install example",
        r"^pip install -e examples/",
        "shape",
        why="would modify the virtualenv; the run after it gets the plugin via PYTHONPATH",
    ),
    Rule(
        "a framework's own virtualenv (docs/your-agent.md, examples/dspy)",
        r"(^python3? -m venv \.venv-\w+ && |\.venv-\w+/bin/|benchmarks/frameworks_first_table)",
        "shape",
        why="installs a framework from the package index into a virtualenv of its own; "
        "benchmarks/frameworks_resolve.py checks that such installs resolve (and "
        "frameworks_first_table.py takes minutes per framework to install)",
    ),
    Rule(
        "real small model (docs/real-models.md)",
        r"(llama-venv|llama_cpp\.server|benchmarks/real_model\.py|#smollm2)",
        "shape",
        why="needs llama-cpp-python built (about 25 minutes) and a GGUF: benchmarks/real_model.py "
        "runs these steps (pytest -m real_model) and its figures are in benchmarks/README.md",
    ),
    Rule(
        "real models",
        rf"-m {RUN_MODULE} .*{REAL_MODELS}",
        "parse",
        why="needs API keys (OpenAI, Anthropic) and remote vLLM servers",
    ),
    Rule(
        "external data",
        rf"-m {RUN_MODULE} .*--dataset (?!\S*capabench/math/)",
        "parse",
        why="released data files (CapaBench os/atp, WebShop, ...) are not shipped in the "
        "repository; the flags are parsed with placeholder files",
    ),
    Rule(
        "live run",
        rf"-m {RUN_MODULE} .*--serve",
        "background",
        extra=("--tasks", "2", "--sim-speed", "3", "--progress", "off", "--run-dir", "{run}"),
        ready="http:/api/status",
        on_end="wait",
        slow=True,
    ),
    Rule(
        "ray executor",
        rf"-m {RUN_MODULE} .*--executor ray",
        "parse",
        why="tests/app/test_ray_executor.py runs this command line through the CLI; starting a "
        "Ray cluster again here would cost about a minute of both cores",
    ),
    Rule(
        "Inspect task (docs/inspect.md, examples/inspect)",
        rf"-m {RUN_MODULE} .*--inspect ",
        "parse",
        why="tests/examples/test_inspect_example.py runs the example's README command in full and "
        "tests/app/test_inspect_cli.py the theory-of-mind one; parsing loads the task",
    ),
    Rule("resume", rf"-m {RUN_MODULE} .*--resume", "run", extra=("--progress", "off")),
    Rule("evaluation", rf"-m {RUN_MODULE}(\s|$)", "run", extra=(*SHORT_RUN, *NO_PLOTS)),
    Rule("report", r"-m agentbus(?:\.app)?\.report(\s|$)", "run", extra=("--quiet", "--no-plots")),
    Rule("tail", r"-m agentbus(?:\.runs)?\.tail(\s|$)", "run", extra=("--from", "0")),
    Rule("plan", r"-m agentbus\.plan(\s|$)", "run"),
    Rule("blame", r"-m agentbus\.blame(\s|$)", "run", extra=("--sample", "1"), slow=True),
    Rule("plugin lists", r"-m agentbus\.list(\s|$)", "run"),
    Rule("agent sandbox view", r"-m agentbus\.sandbox(\s|$)", "run"),
    Rule(
        "viewer",
        r"-m agentbus\.view(\s|$)",
        "parse",
        why="serves a run until Ctrl-C; tests/runs/test_view_runs.py opens it on real runs",
    ),
    Rule(
        "truth table computation",
        r"-m agentbus\.truth make(\s|$)",
        "run",
        extra=("--tasks", "30", "--workers", "1", "--out", "{run}"),
        slow=True,
    ),
    Rule("truth tables", r"-m agentbus\.truth (list|show|compare)(\s|$)", "run"),
    Rule("cost truth", r"-m agentbus\.truth_cost (show|compare)(\s|$)", "run", slow=True),
    Rule(
        "module discovery (docs/your-agent.md)",
        r"-m agentbus\.discover(\s|$)",
        "parse",
        why="runs the user's agent; tests/gateway/test_gateway_run.py runs it on the plain example",
    ),
    Rule("example truth (examples/plain_openai)", r"^python examples/\w+/truth\.py$", "run"),
    Rule(
        "npm install of an example",
        r"^npm ci ",
        "shape",
        why="installs the Node example's pinned package; tests/gateway/test_gateway_run.py does it",
    ),
    Rule(
        "vllm launcher",
        r"-m agentbus\.serve_vllm(\s|$)",
        "run",
        extra=("--dry-run",),
        why="vLLM and GPUs are not here: the dry run prints the command lines",
    ),
    Rule(
        "simulator server",
        r"-m agentbus\.sim\.serve(\s|$)",
        "background",
        extra=("--speed", "0"),
        ready="port",
    ),
)


@dataclass
class Command:
    text: str  # joined, comments removed
    source: str  # file:line
    block: int  # fenced block number within the file (-1: inline)

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.text)


def _fenced(path: Path) -> Iterator[tuple[int, int, list[str], str]]:
    """(block number, first line number, lines, language) of each fenced block."""
    return _fenced_lines(path.read_text().splitlines())


def _fenced_lines(lines: list[str]) -> Iterator[tuple[int, int, list[str], str]]:
    i, n = 0, 0
    while i < len(lines):
        m = re.match(r"^\s*(```+)\s*([\w-]*)", lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2).lower(), i + 1
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        yield n, start + 1, body, lang
        n += 1
        i += 1


def extract(path: Path) -> list[Command]:
    rel = path.relative_to(ROOT)
    found: list[Command] = []
    text = path.read_text()
    for number, first, body, lang in _fenced(path):
        if lang not in SHELL_LANGS:
            continue
        pending, at = "", first
        for k, line in enumerate(body):
            stripped = line.strip()
            if not pending and (not stripped or stripped.startswith("#")):
                continue
            if not pending:
                at = first + k
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            # a trailing comment starts at a '#' after whitespace ('#model' in a spec is not one)
            joined = re.sub(r"\s+#\s.*$", "", pending + stripped).strip()
            found.append(Command(joined, f"{rel}:{at}", number))
            pending = ""
    # inline `python -m ...` spans in prose (outside fenced blocks)
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for m in re.finditer(r"`(python3? -m [^`]+)`", prose):
        line = text[: text.find(m.group(0))].count("\n") + 1
        found.append(Command(m.group(1), f"{rel}:{line}", -1))
    return found


ALL = [c for p in DOCS for c in extract(p)]


def classify(cmd: Command) -> Rule | None:
    for rule in RULES:
        if re.search(rule.pattern, cmd.text):
            return rule
    return None


def test_docs_have_commands() -> None:
    assert len(DOCS) >= 3 and len(ALL) >= 10, [c.text for c in ALL]


@pytest.mark.parametrize("cmd", ALL, ids=lambda c: c.source)
def test_every_command_is_classified(cmd: Command) -> None:
    assert classify(cmd) is not None, (
        f"{cmd.source}: no rule in tests/docs/test_docs_commands.py knows how to test "
        f"{cmd.text!r}; add one (run it shortened, or parse it and say why)"
    )


def test_quick_start_is_two_commands() -> None:
    """README's Quick start: exactly install+run and the tests, nothing else."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = [b for _, _, b, lang in _fenced_lines(section.splitlines()) if lang in SHELL_LANGS]
    assert len(blocks) == 1, "Quick start has one shell block"
    lines = [line for line in blocks[0] if line.strip()]
    assert len(lines) == 2, lines
    install, tests = lines
    assert install.startswith("python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && ")
    run = install.rsplit("&& ", 1)[1].split()
    assert (
        run[:2] == [".venv/bin/python", "-m"] and re.fullmatch(RUN_MODULE, run[2]) and len(run) == 3
    )
    assert tests.split()[:3] == [".venv/bin/python", "-m", "pytest"]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if "pytest" in line]
    assert ci == [tests], ".ci/run runs exactly the README's test command"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert "dev" in extras


@pytest.mark.slow
def test_quick_start_run_shortened(tmp_path: Path) -> None:
    """The Quick start's evaluation (the embedded defaults), shortened like every run."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    module = re.search(rf"-m ({RUN_MODULE})\s*$", section, flags=re.M)
    assert module is not None, section
    argv = [PY, "-m", module.group(1), *SHORT_RUN]
    argv[-1] = str(tmp_path / "run")
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "run" / "results.json").exists()
    assert (tmp_path / "run" / "plots" / "shapley.png").exists(), "the default run draws plots"


# -- running ------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CAPABENCH_MATH = [
    {
        "problem": "Calculate $2 + 3$.",
        "level": "Level 1",
        "type": "Algebra",
        "solution": "$2 + 3 = \\boxed{5}$.",
        "knowledge_point": "Arithmetic",
        "id": 1,
    },
    {
        "problem": "Solve $2x = 8$ for $x$.",
        "level": "Level 1",
        "type": "Algebra",
        "solution": "$x = \\boxed{4}$.",
        "knowledge_point": "Linear Equations",
        "id": 2,
    },
]


@dataclass
class Env:
    tmp: Path
    shared: Path  # one directory for the whole session (the shared prior run)
    ports: dict[str, str] = field(default_factory=dict)
    prior_run: Path | None = None
    runs: int = 0

    def environ(self) -> dict[str, str]:
        env = dict(os.environ)
        site = self.tmp / "site"
        examples = [p.parent for p in sorted((ROOT / "examples").glob("*/pyproject.toml"))]
        if not site.exists():
            for project in examples:
                _fake_install(project, site)
        paths = [str(site), *(str(p) for p in examples), str(ROOT)]
        env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            env.pop(key, None)
        return env

    def substitute(self, text: str) -> str:
        for port in ("8000", "8080"):
            if re.search(rf"(?<![\w.]){port}\b", text):
                new = self.ports.setdefault(port, str(_free_port()))
                text = re.sub(rf"(?<=[\s:]){port}\b", new, text)
        if re.search(r"runs/[\w.-]+-\d{8}-\d{6}", text):
            module = re.search(RUN_MODULE, text)
            run = module.group(0) if module else "agentbus.app.run"
            text = re.sub(r"runs/[\w.-]+-\d{8}-\d{6}", str(self.prior(run)), text)
        text = re.sub(
            r"\S*capabench/(\w+)/([\w.-]+)\.json",
            lambda m: str(self.capabench(m.group(1), m.group(2))),
            text,
        )
        text = re.sub(r"(--(?:dataset|knowledge)\s+)(\S+)", self._placeholder, text)
        return text

    def capabench(self, env: str, name: str) -> Path:
        """A two-problem stand-in in CapaBench's math format; a placeholder for the others."""
        import json

        path = self.tmp / "capabench" / env / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        data: object = []
        if env == "math":
            data = (
                ["Add the numbers.", "Isolate x."] if name.endswith("knowledge") else CAPABENCH_MATH
            )
        path.write_text(json.dumps(data))
        return path

    def _placeholder(self, m: re.Match[str]) -> str:
        """A data file that is neither in the repository nor a stand-in: an empty placeholder."""
        flag, name = m.group(1), m.group(2)
        if Path(name).is_absolute() or (ROOT / name).exists():
            return m.group(0)
        path = self.tmp / "data" / Path(name).name
        path.parent.mkdir(exist_ok=True)
        path.write_text("[]")
        return f"{flag}{path}"

    def prior(self, module: str) -> Path:
        """A finished short run, for the commands that resume or report one.

        Made once per session (in ``shared``) and copied, so each test may change its copy.
        """
        if self.prior_run is None:
            made = self.shared / f"prior-{module}"
            if not (made / "results.json").exists():
                argv = [PY, "-m", module, *SHORT_RUN]
                argv[-1] = str(made)
                done = subprocess.run(
                    argv, cwd=ROOT, env=self.environ(), capture_output=True, text=True, timeout=300
                )
                assert done.returncode == 0, done.stderr[-3000:]
            self.prior_run = self.tmp / "prior"
            shutil.copytree(made, self.prior_run, ignore=shutil.ignore_patterns(".lock"))
        return self.prior_run


def _fake_install(project: Path, site: Path) -> None:
    """What ``pip install -e project`` registers: a dist-info with its entry points."""
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    dist = site / f"{meta['name'].replace('-', '_')}-{meta['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n"
    )
    lines = []
    for group, eps in meta.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{k} = {v}" for k, v in eps.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")


def _argv(cmd: Command, rule: Rule, env: Env) -> list[str]:
    env.runs += 1  # a fresh run directory for every command ("{run}")
    fresh = str(env.tmp / f"run{env.runs}")
    extra = [a.format(run=fresh) for a in rule.extra]
    if "--dataset" in cmd.text and "--tasks" in extra:  # a task file's count is --limit
        extra[extra.index("--tasks")] = "--limit"
    argv = shlex.split(env.substitute(cmd.text)) + extra
    if argv[0] in ("python", "python3"):
        argv[0] = PY
    return argv


def _wait_ready(proc: subprocess.Popen[str], rule: Rule, argv: list[str], port: str) -> None:
    import urllib.request

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"{argv} exited early: {proc.communicate()[0][-3000:]}"
        try:
            if rule.ready == "port":
                socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
            else:
                path = rule.ready.removeprefix("http:")
                urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{argv} never became ready")


def _parse_only(cmd: Command, rule: Rule, env: Env) -> None:
    argv = _argv(cmd, rule, env)
    if argv[0].endswith(".py") or (len(argv) > 1 and argv[1].endswith(".py")):
        script = ROOT / argv[1] if argv[0] == PY else ROOT / argv[0]
        assert "<" in str(script) or script.exists(), script
        if "<" in str(script):  # `python benchmarks/<name>.py`: a pattern, some must exist
            assert list(ROOT.glob(str(script.relative_to(ROOT)).replace("<name>", "*")))
        return
    assert argv[1] == "-m"
    module = argv[2]
    if re.fullmatch(RUN_MODULE, module):
        cli = importlib.import_module("agentbus.app.cli_args")
        cli.parse_command(argv[3:])  # the real parser and config validation; raises on error
    else:  # any other CLI: its --help must work
        done = subprocess.run(
            [PY, "-m", module, "--help"],
            cwd=ROOT,
            env=env.environ(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr


def _ports(cmd: Command) -> set[str]:
    return set(re.findall(r"(?<![\w.])(?:\S*:)?(8000|8080)\b", cmd.text))


def _params() -> list[object]:
    """One test per command; a command that talks to a server started earlier in its
    block (same port) runs after that server, which is then not a test of its own.
    Inline commands: one test per distinct text. A command (with its servers) written
    word for word in two places (docs/varying.md summarises docs/variants.md) is run
    once, under the id of its first place: the second run would test nothing new."""
    groups: dict[str, list[Command]] = {}
    seen: set[tuple[str, ...]] = set()
    for cmd in ALL:
        key = f"{cmd.source.split(':')[0]}#{cmd.block}" if cmd.block >= 0 else cmd.text
        groups.setdefault(key, []).append(cmd)
    params = []
    for cmds in groups.values():
        cmds = cmds if cmds[0].block >= 0 else cmds[:1]
        servers: list[Command] = []
        used: set[int] = set()
        tests: list[list[Command]] = []
        for cmd in cmds:
            rule = classify(cmd)
            if rule is None or rule.kind == "shape":
                continue
            if rule.kind == "background":
                servers.append(cmd)
                continue
            needs = [b for b in servers if _ports(b) & _ports(cmd)]
            used.update(id(b) for b in needs)
            tests.append([*needs, cmd])
        tests += [[b] for b in servers if id(b) not in used]
        for test in tests:
            texts = tuple(c.text for c in test)
            if texts in seen:
                continue
            seen.add(texts)
            rules = [classify(c) for c in test]
            slow = any(r is not None and (r.slow or r.kind in ("run", "background")) for r in rules)
            params.append(
                pytest.param(test, id=test[-1].source, marks=[pytest.mark.slow] if slow else [])
            )
    return params


@pytest.mark.parametrize("cmds", _params())
def test_doc_commands_run(
    cmds: list[Command], tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Run one command (after the server it talks to, if any), shortened."""
    env = Env(tmp_path, tmp_path_factory.getbasetemp())
    background: list[tuple[subprocess.Popen[str], Rule, list[str]]] = []
    try:
        for cmd in cmds:
            rule = classify(cmd)
            assert rule is not None, cmd.source
            if rule.kind == "shape":
                continue
            if rule.kind == "parse":
                _parse_only(cmd, rule, env)
                continue
            if rule.kind == "help":
                done = subprocess.run(
                    [*_argv(cmd, rule, env), "--help"],
                    cwd=ROOT,
                    env=env.environ(),
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                assert done.returncode == 0, (
                    f"{cmd.source}: {cmd.text} --help\n{done.stderr[-2000:]}"
                )
                continue
            argv = _argv(cmd, rule, env)
            if rule.kind == "background":
                proc = subprocess.Popen(
                    argv,
                    cwd=ROOT,
                    env=env.environ(),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                background.append((proc, rule, argv))
                port = next(p for p in env.ports.values() if p in " ".join(argv))
                _wait_ready(proc, rule, argv, port)
                continue
            done = subprocess.run(
                argv,
                cwd=ROOT,
                env=env.environ(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=400,
            )
            assert done.returncode == 0, (
                f"{cmd.source}: {argv}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            )
            if rule.name == "tail":
                assert "episode.ended" in done.stdout, done.stdout[-2000:]
        for proc, rule, argv in background:
            if rule.on_end == "wait":
                out, _ = proc.communicate(timeout=400)
                assert proc.returncode == 0, f"{argv}\n{out[-3000:]}"
    finally:
        for proc, _, _ in background:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

"""A seeded generator of OS tasks in CapaBench's three categories.

File-system manipulation, system settings and process handling, each ten
times per 30-task block in a seeded order (so any first T tasks sample the
truth table's mix, where ``i mod 3`` gave a 3-task run one of each); each
task is drawn from its own random stream ``(seed, i)``, so the first N tasks
of a larger set are the N tasks of a smaller one. Every task has an init
script, a check script that exits 0 only when the work is done (or an
expected answer), an example solution that the tests run in a real sandbox,
and the expert's step list with plausible wrong commands per step.

The fifteen templates are data: their texts and scripts are patterns in
``templates.toml`` next to this file, filled with the values each
template's draw here picks (:class:`Template`), so adding a template is a
table and one draw, and the tasks' shared shape is written once.
"""

from __future__ import annotations

import random
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from environments.os.script import Script
from environments.os.task import OsTask, Step
from environments.task_order import kind_at, source_index

WORDS = (
    "alpha", "bravo", "cedar", "delta", "ember", "fjord", "garnet", "harbor",
    "indigo", "juniper", "kestrel", "lumen", "maple", "nectar", "onyx", "pylon",
    "quartz", "raven", "sierra", "tundra", "umber", "velvet", "willow", "zephyr",
)  # fmt: skip


def _bash(code: str) -> Script:
    return Script("bash", code)


def _pick(rng: random.Random, k: int = 1) -> list[str]:
    return rng.sample(WORDS, k)


def _until_running(secs: int, count: int = 1) -> str:
    """Shell that waits (5 s at most) until ``count`` processes run exactly ``sleep secs``.

    A background ``sleep`` is a forked shell until it execs; on a loaded machine
    the init can return, and the agent's first ``pgrep`` run, before that, so a
    correct answer would be scored wrong (CI saw 'how many' answered short).
    """
    found = f"$(pgrep -c -f '^sleep {secs}$')"
    return f'for _ in $(seq 100); do [ "{found}" -ge {count} ] && break; sleep 0.05; done'


Values = dict[str, object]


@dataclass(frozen=True)
class Template:
    """One kind of task: ``str.format`` patterns over the values ``draw`` picks, and ``i``.

    Every template's solution is one bash command, then ``finish``; or, for a
    question (``reply``), the command and an answer read off its output. A
    question with a known answer names it (``answer``) and is judged by match;
    the others by the ``check`` script. ``wrong`` are plausible wrong commands.
    """

    name: str
    draw: Callable[[random.Random], Values]
    desc: str
    cmd: str
    wrong: tuple[str, str]
    labels: tuple[str, ...]
    check: str = ""
    init: str = ""
    reply: bool = False
    answer: str | None = None

    def make(self, rng: random.Random, i: int, category: str) -> OsTask:
        """Task ``i`` of this template with the values ``rng`` draws."""
        values = {"i": i, **self.draw(rng)}

        def fill(pattern: str) -> str:
            return pattern.format(**values)

        cmd, match = fill(self.cmd), None if self.answer is None else fill(self.answer)
        last = Step("answer", "$OUTPUT") if self.reply else Step("finish")
        return OsTask(
            id=f"os-{i:04d}",
            description=fill(self.desc),
            init=(_bash(fill(self.init)),) if self.init else (),
            check=() if match is not None else (_bash(fill(self.check)),),
            match={"answer": match, "strip": True} if match is not None else None,
            example=_bash(cmd),
            labels=self.labels,
            category=category,
            steps=(Step("bash", cmd, tuple(fill(w) for w in self.wrong)), last),
        )


def _word(rng: random.Random) -> str:
    return _pick(rng)[0]


def _move_logs(rng: random.Random) -> Values:
    src, dst = _pick(rng, 2)
    n = rng.randint(2, 5)
    files = " ".join(f"~/{src}/part{k}.log" for k in range(n))
    return {"src": src, "dst": dst, "n": n, "files": files}


def _sleeps(rng: random.Random, count: int, low: int, high: int, gap: int) -> Values:
    """``count`` processes ``sleep secs`` and one ``sleep secs+gap``, and the wait for them."""
    secs = rng.randint(low, high)
    wait = f"{_until_running(secs, count)}; {_until_running(secs + gap)}"
    return {"n": count, "secs": secs, "other": secs + gap, "wait": wait}


def _background(rng: random.Random) -> Values:
    name = _word(rng)
    secs = rng.randint(600, 999)
    return {"name": name, "secs": secs, "wait": _until_running(secs)}


def _ip(rng: random.Random) -> str:
    return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


#: each template's random values, by name (its texts are in templates.toml); a
#: dict's values are drawn in the order written
DRAWS: dict[str, Callable[[random.Random], Values]] = {
    "move_logs": _move_logs,
    "count_lines": lambda rng: (
        dict(zip(("name", "word"), _pick(rng, 2), strict=True))
        | {"hits": rng.randint(3, 12), "misses": rng.randint(4, 15)}
    ),
    "make_executable": lambda rng: {"name": _word(rng), "mode": rng.choice(("700", "750", "755"))},
    "archive_dir": lambda rng: {"name": _word(rng), "n": rng.randint(2, 4)},
    "replace_text": lambda rng: dict(zip(("old", "new"), _pick(rng, 2), strict=True)),
    "add_group": lambda rng: {"group": f"{_word(rng)}team", "gid": rng.randint(2000, 2999)},
    "delete_group": lambda rng: {"group": f"{_word(rng)}ops"},
    "set_env_var": lambda rng: {
        "value": _word(rng),
        "var": rng.choice(("APP_MODE", "DEPLOY_ENV", "BUILD_FLAVOR")),
    },
    "host_entry": lambda rng: {"host": f"{_word(rng)}.internal", "ip": _ip(rng)},
    "hostname_file": lambda rng: {"host": f"{_word(rng)}-{rng.randint(10, 99)}"},
    "kill_process": lambda rng: _sleeps(rng, 1, 400, 900, 1),
    "renice_process": lambda rng: {"name": _word(rng), "nice": rng.randint(5, 19)},
    "count_processes": lambda rng: _sleeps(rng, rng.randint(2, 6), 300, 899, 7),
    "background_job": _background,
    "find_pid": lambda rng: _sleeps(rng, 1, 300, 899, 3),
}


def _load() -> tuple[tuple[str, tuple[Template, ...]], ...]:
    """The categories and their templates: texts from templates.toml, draws from DRAWS."""
    data = resources.files(__package__ or "environments.os").joinpath("templates.toml")
    table: dict[str, dict[str, dict[str, Any]]] = tomllib.loads(data.read_text("utf-8"))
    named = [name for rows in table.values() for name in rows]
    if sorted(named) != sorted(DRAWS):
        raise RuntimeError(f"os templates.toml {sorted(named)} and DRAWS {sorted(DRAWS)} differ")
    return tuple(
        (
            category,
            tuple(
                Template(
                    name,
                    DRAWS[name],
                    **{**row, "wrong": tuple(row["wrong"]), "labels": tuple(row["labels"])},
                )
                for name, row in rows.items()
            ),
        )
        for category, rows in table.items()
    )


#: (category, its templates in the order a task's stream chooses among them)
CATEGORIES: tuple[tuple[str, tuple[Template, ...]], ...] = _load()


def category_at(seed: int, index: int) -> str:
    """Task ``index``'s category: each ten times per 30-task block, in a seeded order.

    Any first T tasks are a random sample of the truth table's mix
    (:mod:`environments.task_order`).
    """
    return kind_at([name for name, _ in CATEGORIES], "os", seed, index)


def maker_at(seed: int, index: int) -> tuple[Template, random.Random, int]:
    """Task ``index``'s template, its random stream and its number (``os-NNNN``).

    Task ``index`` is the old order's task ``source_index`` (category ``j mod 3``,
    stream ``(seed, j)``, id ``os-j``): a 30-task block holds the old block's
    very tasks, reordered, so the simulator's per-id trap rates pair with the
    same tasks as in the table's reference runs, and any first T tasks are a
    random sample of them. The template is the stream's first draw.
    """
    number = source_index("os", seed, index)
    rng = random.Random(f"os:{seed}:{number}")
    makers = dict(CATEGORIES)[category_at(seed, index)]
    return rng.choice(makers), rng, number


def generate(count: int, seed: int = 0) -> list[OsTask]:
    """``count`` tasks in :func:`maker_at`'s order, each from its own random stream."""
    tasks: list[OsTask] = []
    for i in range(count):
        template, rng, number = maker_at(seed, i)
        tasks.append(template.make(rng, number, category_at(seed, i)))
    return tasks

"""A seeded generator of OS tasks in CapaBench's three categories.

File-system manipulation, system settings and process handling, each ten
times per 30-task block in a seeded order (so any first T tasks sample the
truth table's mix, where ``i mod 3`` gave a 3-task run one of each); each
task is drawn from its own random stream ``(seed, i)``, so the first N tasks
of a larger set are the N tasks of a smaller one. Every task has an init script, a check script that
exits 0 only when the work is done (or an expected answer), an example
solution that the tests run in a real sandbox, and the expert's step list
with plausible wrong commands per step.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from environments.os.script import Script
from environments.os.task import OsTask, Step
from environments.task_order import kind_at

WORDS = (
    "alpha", "bravo", "cedar", "delta", "ember", "fjord", "garnet", "harbor",
    "indigo", "juniper", "kestrel", "lumen", "maple", "nectar", "onyx", "pylon",
    "quartz", "raven", "sierra", "tundra", "umber", "velvet", "willow", "zephyr",
)  # fmt: skip

Maker = Callable[[random.Random, int], OsTask]


def _bash(code: str) -> Script:
    return Script("bash", code)


def _task(
    i: int,
    category: str,
    description: str,
    init: str,
    check: str,
    steps: list[Step],
    example: str,
    labels: tuple[str, ...],
    match: str | None = None,
) -> OsTask:
    return OsTask(
        id=f"os-{i:04d}",
        description=description,
        init=(_bash(init),) if init else (),
        check=() if match is not None else (_bash(check),),
        match={"answer": match, "strip": True} if match is not None else None,
        example=_bash(example),
        labels=labels,
        category=category,
        steps=tuple(steps),
    )


def _pick(rng: random.Random, k: int = 1) -> list[str]:
    return rng.sample(WORDS, k)


# --- file-system manipulation ------------------------------------------------------


def move_logs(rng: random.Random, i: int) -> OsTask:
    src, dst = _pick(rng, 2)
    n = rng.randint(2, 5)
    files = " ".join(f"~/{src}/part{k}.log" for k in range(n))
    init = f"mkdir -p ~/{src} && touch {files} ~/{src}/notes.txt"
    move = f"mkdir -p ~/{dst} && mv ~/{src}/*.log ~/{dst}/"
    check = (
        f"[ $(ls ~/{dst}/*.log 2>/dev/null | wc -l) -eq {n} ] && "
        f"! ls ~/{src}/*.log >/dev/null 2>&1 && [ -f ~/{src}/notes.txt ]"
    )
    desc = (
        f"Task {i}: move every .log file from the directory ~/{src} into a new directory "
        f"~/{dst} (create it); leave the other files of ~/{src} where they are."
    )
    wrong = (f"mv ~/{src}/* ~/{dst}/", f"mkdir ~/{dst} && cp ~/{src}/*.log ~/{dst}/")
    steps = [Step("bash", move, wrong), Step("finish")]
    return _task(i, "file", desc, init, check, steps, move, ("file system",))


def count_lines(rng: random.Random, i: int) -> OsTask:
    name, word = _pick(rng, 2)
    hits = rng.randint(3, 12)
    misses = rng.randint(4, 15)
    init = (
        f'mkdir -p ~/data && {{ for k in $(seq {hits}); do echo "line $k has {word} in it"; '
        f'done; for k in $(seq {misses}); do echo "line $k is plain"; done; }} '
        f"| shuf --random-source=<(yes) > ~/data/{name}.txt"
    )
    desc = f"Task {i}: how many lines of the file ~/data/{name}.txt contain the word '{word}'?"
    cmd = f"grep -c {word} ~/data/{name}.txt"
    steps = [
        Step("bash", cmd, (f"wc -l ~/data/{name}.txt", f"grep {word} ~/data/{name}.txt | wc -w")),
        Step("answer", "$OUTPUT"),
    ]
    return _task(i, "file", desc, init, "", steps, cmd, ("file system", "text"), str(hits))


def make_executable(rng: random.Random, i: int) -> OsTask:
    (name,) = _pick(rng)
    mode = rng.choice(("700", "750", "755"))
    init = f"mkdir -p ~/scripts && printf '#!/bin/sh\\necho {name}\\n' > ~/scripts/{name}.sh"
    init += f" && chmod 644 ~/scripts/{name}.sh"
    cmd = f"chmod {mode} ~/scripts/{name}.sh"
    check = f'[ "$(stat -c %a ~/scripts/{name}.sh)" = {mode} ]'
    desc = f"Task {i}: set the permissions of ~/scripts/{name}.sh to exactly {mode} (octal)."
    steps = [Step("bash", cmd, (f"chmod +x ~/scripts/{name}.sh", f"chmod {mode} ~/{name}.sh"))]
    steps.append(Step("finish"))
    return _task(i, "file", desc, init, check, steps, cmd, ("permission",))


def archive_dir(rng: random.Random, i: int) -> OsTask:
    (name,) = _pick(rng)
    n = rng.randint(2, 4)
    init = f"mkdir -p ~/{name} && for k in $(seq {n}); do echo $k > ~/{name}/f$k.txt; done"
    cmd = f"cd ~ && tar -czf ~/{name}.tar.gz {name}"
    check = f"[ $(tar -tzf ~/{name}.tar.gz | grep -c 'f[0-9]*.txt') -eq {n} ]"
    desc = (
        f"Task {i}: pack the directory ~/{name} into a gzip-compressed tar archive ~/{name}.tar.gz."
    )
    wrong = (f"tar -cf ~/{name}.tar.gz ~/{name}/*.log", f"gzip -r ~/{name}")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "file", desc, init, check, steps, cmd, ("compression",))


def replace_text(rng: random.Random, i: int) -> OsTask:
    old, new = _pick(rng, 2)
    init = (
        f"mkdir -p ~/config && printf 'mode={old}\\nbackup={old}\\nlevel=3\\n' > ~/config/app.conf"
    )
    cmd = f"sed -i 's/{old}/{new}/g' ~/config/app.conf"
    check = (
        f"! grep -q {old} ~/config/app.conf && [ $(grep -c {new} ~/config/app.conf) -eq 2 ] "
        f"&& grep -q level=3 ~/config/app.conf"
    )
    desc = (
        f"Task {i}: in ~/config/app.conf replace every occurrence of '{old}' with '{new}', "
        "changing nothing else."
    )
    wrong = (f"sed 's/{old}/{new}/' ~/config/app.conf", f"echo 'mode={new}' > ~/config/app.conf")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "file", desc, init, check, steps, cmd, ("text", "file system"))


# --- system settings ---------------------------------------------------------------


def add_group(rng: random.Random, i: int) -> OsTask:
    (name,) = _pick(rng)
    group = f"{name}team"
    gid = rng.randint(2000, 2999)
    cmd = f"groupadd -g {gid} {group}"
    check = f'[ "$(getent group {group} | cut -d: -f3)" = {gid} ]'
    desc = f"Task {i}: create a group named '{group}' with the group id {gid}."
    wrong = (f"groupadd {group}", f"addgroup {group} {gid}")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "settings", desc, "", check, steps, cmd, ("user configuration",))


def delete_group(rng: random.Random, i: int) -> OsTask:
    (name,) = _pick(rng)
    group = f"{name}ops"
    init = f"groupadd {group} && groupadd {group}2"
    cmd = f"groupdel {group}"
    check = f"! getent group {group} >/dev/null && getent group {group}2 >/dev/null"
    desc = f"Task {i}: remove the group '{group}' from the system (keep '{group}2')."
    wrong = (f"groupdel {group}2", f"userdel {group}")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "settings", desc, init, check, steps, cmd, ("user configuration",))


def set_env_var(rng: random.Random, i: int) -> OsTask:
    (value,) = _pick(rng)
    var = rng.choice(("APP_MODE", "DEPLOY_ENV", "BUILD_FLAVOR"))
    init = "touch ~/.bashrc"
    cmd = f"echo 'export {var}={value}' >> ~/.bashrc"
    check = f"[ \"$(bash -ic 'echo ${var}' 2>/dev/null)\" = {value} ]"
    desc = (
        f"Task {i}: make every new interactive bash shell of root start with the "
        f"environment variable {var} set to '{value}'."
    )
    wrong = (f"export {var}={value}", f"echo '{var}={value}' >> ~/.profile")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "settings", desc, init, check, steps, cmd, ("environment",))


def host_entry(rng: random.Random, i: int) -> OsTask:
    (name,) = _pick(rng)
    host = f"{name}.internal"
    ip = f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    cmd = f"echo '{ip} {host}' >> /etc/hosts"
    check = f'[ "$(getent hosts {host} | cut -d" " -f1)" = {ip} ]'
    desc = f"Task {i}: make the host name {host} resolve to the address {ip} on this machine."
    wrong = (f"echo '{host} {ip}' >> /etc/hosts", f"echo '{ip} {host}' > ~/hosts")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "settings", desc, "", check, steps, cmd, ("network configuration",))


def hostname_file(rng: random.Random, i: int) -> OsTask:
    (name,) = _pick(rng)
    host = f"{name}-{rng.randint(10, 99)}"
    cmd = f"echo {host} > /etc/hostname"
    check = f'[ "$(cat /etc/hostname)" = {host} ]'
    desc = f"Task {i}: set the host name stored in /etc/hostname to '{host}'."
    wrong = (f"hostname {host}", f"echo {host} >> /etc/hosts")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "settings", desc, "", check, steps, cmd, ("system information",))


# --- process handling --------------------------------------------------------------


def _until_running(secs: int, count: int = 1) -> str:
    """Shell that waits (5 s at most) until ``count`` processes run exactly ``sleep secs``.

    A background ``sleep`` is a forked shell until it execs; on a loaded machine
    the init can return, and the agent's first ``pgrep`` run, before that, so a
    correct answer would be scored wrong (CI saw 'how many' answered short).
    """
    found = f"$(pgrep -c -f '^sleep {secs}$')"
    return f'for _ in $(seq 100); do [ "{found}" -ge {count} ] && break; sleep 0.05; done'


def kill_process(rng: random.Random, i: int) -> OsTask:
    secs = rng.randint(400, 900)
    init = f"sleep {secs} & sleep {secs + 1} & {_until_running(secs)}; {_until_running(secs + 1)}"
    cmd = f"pkill -f 'sleep {secs}$'"
    check = f"! pgrep -f 'sleep {secs}$' >/dev/null && pgrep -f 'sleep {secs + 1}$' >/dev/null"
    desc = (
        f"Task {i}: a process 'sleep {secs}' is running. Terminate it, and only it "
        f"('sleep {secs + 1}' must keep running)."
    )
    wrong = ("pkill sleep", f"kill {secs}")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "process", desc, init, check, steps, cmd, ("process",))


def renice_process(rng: random.Random, i: int) -> OsTask:
    (name,) = _pick(rng)
    nice = rng.randint(5, 19)
    init = f"sleep 900 & echo $! > /tmp/{name}.pid"
    cmd = f"renice -n {nice} -p $(cat /tmp/{name}.pid)"
    check = f'[ "$(ps -o ni= -p $(cat /tmp/{name}.pid) | tr -d " ")" = {nice} ]'
    desc = (
        f"Task {i}: change the nice value of the process whose PID is stored in "
        f"/tmp/{name}.pid to {nice}."
    )
    wrong = (f"nice -n {nice} sleep 900 &", f"renice {nice} $(cat /tmp/{name}.pid)x")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "process", desc, init, check, steps, cmd, ("process", "priority"))


def count_processes(rng: random.Random, i: int) -> OsTask:
    n = rng.randint(2, 6)
    secs = rng.randint(300, 899)
    init = (
        f"for k in $(seq {n}); do sleep {secs} & done; sleep {secs + 7} & "
        f"{_until_running(secs, n)}; {_until_running(secs + 7)}"
    )
    cmd = f"pgrep -c -f 'sleep {secs}$'"
    desc = f"Task {i}: how many processes running exactly 'sleep {secs}' are there right now?"
    steps = [
        Step("bash", cmd, ("pgrep -c sleep", f"ps aux | grep -c 'sleep {secs}'")),
        Step("answer", "$OUTPUT"),
    ]
    return _task(i, "process", desc, init, "", steps, cmd, ("process",), str(n))


def background_job(rng: random.Random, i: int) -> OsTask:
    (name,) = _pick(rng)
    secs = rng.randint(600, 999)
    cmd = f"sleep {secs} > /dev/null 2>&1 & echo $! > ~/{name}.pid"
    # The agent's sleep may not have exec'd yet on a loaded machine: wait for it first.
    check = (
        f'p=$(cat ~/{name}.pid) && kill -0 "$p" && {_until_running(secs)} && '
        f'[ "$(ps -o args= -p "$p")" = "sleep {secs}" ]'
    )
    desc = (
        f"Task {i}: start 'sleep {secs}' as a background process that keeps running, "
        f"and write its PID to ~/{name}.pid."
    )
    wrong = (f"sleep {secs} && echo $! > ~/{name}.pid", f"echo $$ > ~/{name}.pid")
    steps = [Step("bash", cmd, wrong), Step("finish")]
    return _task(i, "process", desc, "", check, steps, cmd, ("process",))


def find_pid(rng: random.Random, i: int) -> OsTask:
    secs = rng.randint(300, 899)
    init = f"sleep {secs} & sleep {secs + 3} & {_until_running(secs)}; {_until_running(secs + 3)}"
    cmd = f"pgrep -f 'sleep {secs}$'"
    check = f'[ "$(echo $1)" = "$(pgrep -f \'sleep {secs}$\')" ]'
    desc = f"Task {i}: what is the PID of the process running 'sleep {secs}'?"
    steps = [Step("bash", cmd, ("pgrep sleep", "echo $$")), Step("answer", "$OUTPUT")]
    task = _task(i, "process", desc, init, check, steps, cmd, ("process",))
    return task


CATEGORIES: tuple[tuple[str, tuple[Maker, ...]], ...] = (
    ("file", (move_logs, count_lines, make_executable, archive_dir, replace_text)),
    ("settings", (add_group, delete_group, set_env_var, host_entry, hostname_file)),
    ("process", (kill_process, renice_process, count_processes, background_job, find_pid)),
)


def category_at(seed: int, index: int) -> str:
    """Task ``index``'s category: each ten times per 30-task block, in a seeded order.

    Any first T tasks are a random sample of the truth table's mix
    (:mod:`environments.task_order`).
    """
    return kind_at([name for name, _ in CATEGORIES], "os", seed, index)


def maker_at(seed: int, index: int) -> tuple[Maker, random.Random]:
    """Task ``index``'s template (the stream's first draw in its category) and its stream."""
    rng = random.Random(f"os:{seed}:{index}")
    makers = dict(CATEGORIES)[category_at(seed, index)]
    return rng.choice(makers), rng


def generate(count: int, seed: int = 0) -> list[OsTask]:
    """``count`` tasks in :func:`maker_at`'s order, each from its own random stream."""
    tasks: list[OsTask] = []
    for i in range(count):
        maker, rng = maker_at(seed, i)
        tasks.append(maker(rng, i))
    return tasks

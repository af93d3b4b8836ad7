"""Deciding an OS task, inside the episode's sandbox, as AgentBench does.

``match`` compares the submitted answer (stripped unless told otherwise)
with the expected one, or searches it with a regex. ``check`` runs each
script independently of the agent's shell with the arguments: the answer,
then the outputs of the earlier scripts; a ``null`` entry runs the example
solution. Only the script's stdout and exit status decide (its stderr is
kept for the transcript, never judged): a non-zero exit fails; otherwise
the last non-empty line of stdout decides when it is ``0`` (pass) or ``1``
(fail), CapaBench's convention (``... && echo 0 || echo 1``); a script that
prints neither passes on exit 0, AgentBench's exit-status checks. With
stderr merged in, ``grep -q x missing && echo 0 || echo 1`` printed an
error line before its ``1`` and passed for an agent that did nothing.

Checks run on the sandbox's trusted side (``Sandbox.run(check=True)``):
the agent's leftover processes are stopped first, the script gets a fixed
environment and a system ``PATH``, and its output comes back on a channel
the agent cannot write to. If the sandbox breaks during a check (its init
dies or frames an answer wrongly), the task is *failed*, not an
infrastructure error: an error would be retried or left out of v(S), so an
agent that can break its sandbox at will could turn a certain failure into
a re-roll or make a hard task vanish from the mean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from environments.os.script import Script
from environments.os.task import OsTask
from environments.sandbox import CommandResult, Sandbox

#: seconds a check script may run
CHECK_TIMEOUT_S = 20.0


#: characters of the checks' stderr kept in a verdict (for the transcript, never judged)
STDERR_CHARS = 400


@dataclass(frozen=True)
class Verdict:
    passed: bool
    why: str
    #: what the checks wrote to stderr, cut: kept for the transcript, never judged
    stderr: str = ""


def match_answer(task: OsTask, answer: str) -> Verdict:
    m = task.match or {}
    if m.get("strip", True):
        answer = answer.strip()
    if "answer" in m:
        ok = answer == str(m["answer"])
        return Verdict(ok, "the answer matches" if ok else "the answer does not match")
    ok = re.search(str(m.get("regex", "")), answer) is not None
    return Verdict(ok, "the answer matches" if ok else "the answer does not match")


def decides(result: CommandResult) -> bool:
    """The rule: exit status, then the last non-empty stdout line when it is 0 or 1."""
    if result.broken or not result.ok:
        return False
    lines = [line.strip() for line in result.output.splitlines() if line.strip()]
    return not lines or lines[-1] != "1"


async def run_script(box: Sandbox, script: Script, args: list[str]) -> CommandResult:
    """Run one check script on the sandbox's trusted side."""
    command, code_first = script.as_command()
    argv = [script.code, *args] if code_first else args
    return await box.run(command, argv, timeout_s=CHECK_TIMEOUT_S, check=True)


async def judge(task: OsTask, box: Sandbox, answer: str | None) -> Verdict:
    """Pass or fail, with a short reason."""
    if task.match is not None:
        if answer is None:
            return Verdict(False, "no answer was given")
        return match_answer(task, answer)
    if not task.check:
        return Verdict(False, "the task has no check")
    params = [answer or ""]
    stderr = ""
    for k, script in enumerate(task.check):
        script = script or task.example
        if script is None:
            return Verdict(False, "a null check without an example")
        result = await run_script(box, script, params)
        stderr = (stderr + result.stderr)[:STDERR_CHARS]
        if not decides(result):
            why = "the sandbox broke" if result.broken else "failed"
            return Verdict(False, f"check {k + 1} of {len(task.check)} {why}", stderr)
        params.append(result.output)
    return Verdict(True, "every check passed", stderr)


async def prepare(task: OsTask, box: Sandbox) -> list[str]:
    """Run init scripts (independently) and the start script (in the agent's shell).

    Returns the problems, if any (a broken init makes the task unscorable).
    """
    problems: list[str] = []
    for k, script in enumerate(task.init):
        command, code_first = script.as_command()
        args = [script.code] if code_first else []
        result = await box.run(command, args, timeout_s=30, independent=True)
        if not result.ok:
            problems.append(f"init {k + 1} exited {result.exit_code}: {result.output[:200]}")
    if task.start is not None:
        command, code_first = task.start.as_command()
        await box.run(command, [task.start.code] if code_first else [], timeout_s=30)
    return problems

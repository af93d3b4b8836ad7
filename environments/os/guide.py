"""The OS specialisation of the four PRAF prompts (``Environment.guide``).

It tells the modules what the world is (a root shell on a small Linux
system with no network), what a step is, and the exact action syntax.
"""

from __future__ import annotations

from agentbus import env_guide


def os_guide() -> dict[str, str]:
    return env_guide(
        system="""\
Domain: a Linux terminal. You are root in a fresh, isolated Linux system (bash,
coreutils, findutils, grep, sed, awk, tar, gzip, zip/unzip, procps; no network).
Each step runs one bash command (several lines are allowed) in the same shell
session: the working directory, exported variables and background processes carry
over. The output of each command is shown, cut after 800 characters. Commands must
not wait for input. A task is either a question (answer it) or a job to do on the
system (do it, then say it is finished).""",
        planning="""\
Write the plan as short numbered steps. Name the bash command for each step in
backticks, e.g. 1. `ls -la ~/data`. End with the answer or with finish.""",
        reasoning="""\
Read the outputs so far and decide the single next step. Name the exact command in
backticks, e.g. "Next command: `grep -c error ~/log.txt`"; or, when the work is
done or the answer is known, say `finish` or `answer(<value>)`.""",
        action="""\
Action syntax: exactly one fence holding one of
- a bash command (one or more lines) to run now,
- answer(<value>) to submit the answer to a question (just the value),
- finish when the job on the system is done.
For example:
```action
ls -la ~/documents
```""",
        reflection="""\
The last command failed (non-zero exit status) or did not do what was needed. Use
its output to say what went wrong in one or two sentences, then name the command to
run next in backticks.""",
    )

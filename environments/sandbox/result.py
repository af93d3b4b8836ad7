"""What one sandboxed command produced."""

from __future__ import annotations

from dataclasses import dataclass

#: the exit status of a command killed by SIGKILL (timeout, memory, ``kill -9``)
KILLED = 137


@dataclass(frozen=True)
class CommandResult:
    """A command's exit status and output.

    For the agent's commands ``output`` is stdout and stderr interleaved, as a
    terminal shows them. For a check ``output`` is its stdout alone and
    ``stderr`` is kept apart: a verdict read from merged streams is moved by
    any error message a tool prints (a missing file made ``echo 1`` read as
    something else, so the check passed).
    """

    exit_code: int
    output: str
    #: a check's standard error (empty for the agent's commands: merged into ``output``)
    stderr: str = ""
    #: the output was longer than what the sandbox kept
    truncated: bool = False
    #: the wall-clock timeout killed the command
    timed_out: bool = False
    #: the sandbox broke (its init died, stopped answering or framed an answer wrongly):
    #: nothing it said can be trusted, and a check that got this has failed
    broken: bool = False
    #: before a check, processes the agent left could not be stopped and were killed
    stopped_killed: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def shown(self, limit: int = 800) -> str:
        """The output as an agent sees it: cut at ``limit`` characters, as AgentBench does."""
        text = self.output
        if len(text) > limit or self.truncated:
            text = text[:limit] + "\n[truncated because the output is too long]"
        if self.timed_out:
            text = (text + "\n" if text else "") + "[killed: the command ran past its time limit]"
        return text

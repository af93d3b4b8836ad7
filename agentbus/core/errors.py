"""Exception types shared by the core and its plugins.

``InfraError`` marks failures of the infrastructure (servers, networks,
timeouts) rather than of the agent: an episode that ends with one is retried
or reported, never scored as a task failure. ``UserError`` is anything the user
can fix by changing input; the CLI prints it as one line and exits with 2.
"""

from __future__ import annotations


class AgentbusError(Exception):
    """Base of every error agentbus raises on purpose."""


class UserError(AgentbusError):
    """Bad input: a malformed config, an unknown name, a missing file."""


class InfraError(AgentbusError):
    """The infrastructure failed: a server is unreachable or kept failing."""


class ContextOverflow(AgentbusError):
    """The prompt outgrew the model's context window (the server's HTTP 400).

    Not an infrastructure failure: the agent built a prompt its model cannot
    read, so the episode ends as the agent's failure of the task (error kind
    ``context_overflow``) and counts in v(S), like running out of steps.
    """

    def __init__(self, message: str, *, slot: str | None = None) -> None:
        super().__init__(message)
        self.slot = slot


class RequestTimeout(AgentbusError):
    """A bus request got no reply in time."""


class NoHandler(AgentbusError):
    """A bus request was sent for a message type nobody handles."""

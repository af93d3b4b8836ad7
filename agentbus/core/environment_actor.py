"""The environment adapter as an actor: actions in, feedback out.

Kept apart from the episode's loop: this is where an action is judged before
it reaches the environment (unparsable, copied from the prompt, or rejected by
the environment), counted per slot, and where the step limit ends an episode.
"""

from __future__ import annotations

from collections.abc import Callable

from agentbus.core.actor import Actor, on
from agentbus.core.environment import Environment
from agentbus.core.messages import ActionProposed, Feedback, StopEpisode
from agentbus.core.outcome import ErrorKind
from agentbus.core.refusals import PromptCopies


class EnvironmentActor(Actor):
    """Runs the environment adapter as an actor: actions in, feedback out."""

    publishes = (Feedback,)

    def __init__(
        self,
        env: Environment,
        max_steps: int,
        end: Callable[[str, ErrorKind | None], None],
        refused: Callable[[str, str, str], None] | None = None,
        copies: PromptCopies | None = None,
    ):
        self.env = env
        self.max_steps = max_steps
        self.steps = 0
        self._end = end
        #: told (sender, kind, reason) of each refused action (agentbus.core.refusals; per slot)
        self._refused = refused
        #: what the agent was shown, to recognise it handed back as an action
        self.copies = copies if copies is not None else PromptCopies()

    @on(ActionProposed)
    async def act(self, msg: ActionProposed) -> None:
        self.steps += 1
        refuse = self._refused or (lambda sender, kind, reason: None)
        copied = self.copies.copied(msg.text) if msg.valid else None
        if copied is not None:
            refuse(msg.sender, "copied", copied)
            feedback = Feedback(text=f"Invalid action: {copied}", valid=False)
        elif msg.valid:
            feedback = await self.env.step(msg)
            if not feedback.valid:  # read, and not an action this environment knows
                refuse(msg.sender, "rejected", feedback.text)
        else:
            reason = msg.parse_error or "the action could not be parsed"
            refuse(msg.sender, "unparsable", reason)
            feedback = Feedback(text=f"Invalid action: {reason}", valid=False)
        # numbers and lines an agent may fairly reuse come from the environment's own answers
        self.copies.saw(msg.text, feedback.text if msg.valid and copied is None else "")
        if feedback.round != msg.round:
            if feedback.seq == 0:  # fresh from the environment: nobody holds it yet
                feedback.__dict__["round"] = msg.round
            else:
                feedback = feedback.model_copy(update={"round": msg.round})
        await self.publish(feedback)
        if feedback.done:
            self._end("done", None)
        elif self.steps >= self.max_steps:
            self._end(f"step limit: {self.max_steps} steps without finishing", "step_limit")

    @on(StopEpisode)
    async def ended(self, msg: StopEpisode) -> None:
        self._end(msg.reason, None)


__all__ = ["EnvironmentActor"]

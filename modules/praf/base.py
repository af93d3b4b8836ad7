"""The shared base of the four PRAF actors: the episode view and the LLM call."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from agentbus import Message, Observation, SamplingParams, on
from modules.praf.prompt import build
from modules.praf.viewer import ViewActor


class PrafModule(ViewActor):
    """An actor that keeps its own :class:`EpisodeView` and asks its model.

    Subclasses set ``role`` and ``instructions`` (their prompt, in their own
    file) and add handlers for the messages their step depends on.
    """

    role: ClassVar[str] = "other"
    instructions: ClassVar[str] = ""
    #: where the model's answer is cut: the lines the environment writes, so a
    #: model that runs on cannot put its own "Feedback:" into its answer
    stop: ClassVar[tuple[str, ...]] = ("\nFeedback:", "\nObservation:")
    #: prompt tokens the history may take (None: all of it); the oldest rounds
    #: go first, so a long episode fits a small context window (docs/real-models.md)
    history_budget_tokens: ClassVar[int | None] = None

    def __init__(self) -> None:
        super().__init__()
        #: how the last answer ended (``length``: cut at the output limit)
        self.finish_reason = "stop"
        #: the text of the last prompt (to tell an answer that copies its examples)
        self.prompt = ""

    @on(Observation)
    async def observed(self, msg: Observation) -> Message | None:
        """Takes the observation in; the planning and reasoning modules answer it."""
        self.view.observe(msg)
        return None

    async def ask(self, items: Iterable[tuple[str, str]], request: str) -> str:
        """Call this module's model on a contract-shaped prompt; returns the text."""
        messages = build(self.role, self.instructions, self.view, items, request)
        completion = await self.llm.complete(messages, SamplingParams(stop=self.stop))
        self.finish_reason = completion.finish_reason
        # the examples a model may copy are the system message's (instructions and
        # the environment's guide); the user message's plan, history and thought are
        # what a right action repeats (a robot round is the plan's lines)
        self.prompt = "\n".join(m["content"] for m in messages if m["role"] == "system")
        return completion.text.strip()

    def history(self) -> str:
        """The finished rounds as this module shows them (within its history budget)."""
        return self.view.history(self.history_budget_tokens)


__all__ = ["PrafModule"]

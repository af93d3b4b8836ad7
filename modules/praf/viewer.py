"""Actors that keep their own :class:`~modules.praf.view.EpisodeView` of the episode.

The PRAF modules and MMAU's two stages each rebuild the episode from the
messages they receive: the task when it starts, the observations, and (per
module) the plan, thoughts, actions and feedback. :class:`ViewActor` holds
the view and the start of the episode; :func:`follows` declares a handler
that only takes a message into the view, which is most of what a module
does with the messages it does not answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from agentbus import Actor, Message, Observation, TaskStarted, on
from modules.praf.view import EpisodeView

M = TypeVar("M", bound=Message)


class ViewActor(Actor):
    """An actor with an :class:`EpisodeView`, started by the episode's ``TaskStarted``."""

    def __init__(self) -> None:
        self.view = EpisodeView()

    @on(TaskStarted)
    async def started(self, msg: TaskStarted) -> None:
        self.view.start(msg)

    def first_observation(self, msg: Observation) -> bool:
        """Take ``msg`` into the view; True when it is the episode's first observation."""
        first = not self.view.observation
        self.view.observe(msg)
        return first


def follows(
    msg_type: type[M], update: Callable[[EpisodeView, M], object]
) -> Callable[[ViewActor, M], Awaitable[None]]:
    """A handler for ``msg_type`` that does ``update(view, msg)`` and answers nothing."""

    async def handler(self: ViewActor, msg: M) -> None:
        update(self.view, msg)

    return on(msg_type)(handler)


__all__ = ["ViewActor", "follows"]

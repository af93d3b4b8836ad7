"""One module's own view of the episode, rebuilt from the messages it receives.

Modules share nothing but the bus: each keeps the instruction, the plan, the
finished rounds and the latest reflection it has seen. That keeps actors
independent (any of them can be swapped for another implementation) and
makes each prompt a pure function of the messages that reached the module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentbus import (
    ActionFormat,
    ActionProposed,
    Feedback,
    Observation,
    Plan,
    Reflection,
    TaskStarted,
    Thought,
)


@dataclass
class Round:
    """One reasoning -> action -> feedback cycle."""

    number: int
    thought: str = ""
    action: str = ""
    feedback: str = ""

    def render(self) -> str:
        return (
            f"Round {self.number}\nThought: {self.thought or '(none)'}\n"
            f"Action: {self.action or '(none)'}\nFeedback: {self.feedback or '(none)'}"
        )


@dataclass
class EpisodeView:
    """What one module knows about the episode so far."""

    task_id: str = ""
    instruction: str = ""
    env: str = ""
    max_steps: int = 10
    guide: dict[str, str] = field(default_factory=dict)
    #: how the environment writes its actions (the action parser reads them that way)
    action_format: ActionFormat = "command"
    observation: str = ""
    plan: str = ""
    rounds: list[Round] = field(default_factory=list)
    current: Round | None = None
    reflection: str = ""
    done: bool = False

    def start(self, msg: TaskStarted) -> None:
        self.task_id, self.instruction, self.env = msg.task_id, msg.instruction, msg.env
        self.max_steps, self.guide = msg.max_steps, dict(msg.guide)
        self.action_format = msg.action_format

    def observe(self, msg: Observation) -> None:
        self.observation = msg.text

    def set_plan(self, msg: Plan) -> None:
        self.plan = msg.text

    def _round(self, number: int) -> Round:
        if self.current is None or self.current.number != number:
            self.current = Round(number)
        return self.current

    def think(self, msg: Thought) -> None:
        self._round(msg.round).thought = msg.text

    def act(self, msg: ActionProposed) -> None:
        # no reason or note beside an unreadable action: small models copy whatever
        # the history shows as their next action; the feedback says it was invalid
        self._round(msg.round).action = msg.text if msg.valid else "(none)"

    def feedback(self, msg: Feedback) -> Round:
        """Close the round the feedback answers; returns it."""
        finished = self._round(msg.round)
        finished.feedback = msg.text
        self.rounds.append(finished)
        self.current = None
        self.done = self.done or msg.done
        return finished

    def reflect(self, msg: Reflection) -> None:
        self.reflection = msg.text

    @property
    def next_round(self) -> int:
        return len(self.rounds) + 1

    def history(self, budget_tokens: int | None = None) -> str:
        """The finished rounds; with a budget, only the newest that fit in it.

        ``budget_tokens`` (about four characters a token) keeps a long episode's
        prompt inside a small context window: the oldest rounds are left out
        first, and one line says how many, so the prompt degrades instead of
        overflowing. The newest round is always kept.
        """
        rendered = [r.render() for r in self.rounds]
        if budget_tokens is None or not rendered:
            return "\n\n".join(rendered)
        room = budget_tokens * 4
        kept: list[str] = []
        for text in reversed(rendered):
            if kept and room < len(text) + 2:
                break
            kept.append(text)
            room -= len(text) + 2
        kept.reverse()
        left_out = len(rendered) - len(kept)
        if left_out:
            kept.insert(0, f"({left_out} earlier rounds are not shown)")
        return "\n\n".join(kept)


__all__ = ["EpisodeView", "Round"]

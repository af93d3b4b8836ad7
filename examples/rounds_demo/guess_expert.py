"""The guess environment's simulated expert, on the kit's rounds scaffold.

:class:`agentbus.RoundsExpert` brings the task index, the situation memo, the
answers by the simulator's verdict and the default judgement (``assess``):
the plan by :meth:`GuessExpert.plan_good`, and each proposal (the current
thought, the last round's thought, the latest reflection) by
:meth:`GuessExpert.proposal_good` in the state it was written for. What is
left is the domain: replaying the history into the range still possible, and
the right and wrong texts of each role.

The rule: a plan is good when it says to guess the middle; a proposal is good
when its guess is a middle of the range still possible (a ruled-out number or
an edge wastes the round). A correct actor carries out the thought's guess
(or the middle when the thought names none); a wrong one repeats a wrong
thought or makes a mistake of its own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from guess_env import ENV, TOP, guessed, middles, narrowed

from agentbus import (
    ExpertQuery,
    Moment,
    PastRound,
    RoundsExpert,
    Task,
    Verdict,
    action_fence,
    prompt_sections,
    role_answers,
    rounds_so_far,
)

#: difficulty in logits per role, the same for every model and task: positive is
#: harder (the simulator takes it off every model's chance), negative easier
DIFFICULTY: dict[str, float] = {"planning": 0.0, "reasoning": 0.4, "action": -0.5}


@dataclass
class Situation:
    """A guess prompt, understood: its sections, its last round and the ranges along the way."""

    task: Task
    parts: dict[str, str]
    last: PastRound | None
    #: the range still possible now, and before the last round (what its thought was about)
    now: tuple[int, int]
    before_last: tuple[int, int]

    @property
    def secret(self) -> int:
        return int(self.task.hidden["secret"])

    def middle(self) -> int:
        return middles(*self.now)[0]

    def ruled_out(self, rng: random.Random) -> int:
        """A wrong guess: a number already ruled out, or an edge of the range when none is."""
        lo, hi = self.now
        outside = [n for n in range(1, TOP + 1) if n < lo or n > hi]
        if outside:
            return rng.choice(outside)
        return rng.choice([n for n in (lo, hi) if n not in middles(lo, hi)] or [lo])


def understand(task: Task, user: str) -> Situation:
    """Replay the prompt's rounds (``## History`` and a newer ``## Last step``) into the range."""
    parts = prompt_sections(user)
    past = rounds_so_far(parts)
    secret = int(task.hidden["secret"])
    now = before = (1, TOP)
    for r in past:
        before = now
        guess = guessed(r.action) if r.executed else None
        if guess is not None and 1 <= guess <= TOP:
            now = narrowed(*now, guess, secret)
    return Situation(task, parts, past[-1] if past else None, now, before)


class Writer:
    """The right and a wrong text of each free-text role (``agentbus.Writer``)."""

    @staticmethod
    def plan_text(sit: Situation) -> str:
        return (
            "Plan: keep the range of numbers still possible, guess its middle with "
            "guess[N], and narrow the range after each answer."
        )

    @staticmethod
    def wrong_plan(sit: Situation, rng: random.Random) -> str:
        return rng.choice(
            (
                "Plan: guess 1, 2, 3 and so on with guess[N] until one is right.",
                f"Plan: start from {TOP} and guess downwards with guess[N].",
            )
        )

    @staticmethod
    def thought_text(sit: Situation) -> str:
        (lo, hi), mid = sit.now, sit.middle()
        return f"The number is from {lo} to {hi}; its middle is {mid}, so guess[{mid}]."

    @staticmethod
    def wrong_thought(sit: Situation, rng: random.Random) -> str:
        wrong = sit.ruled_out(rng)
        return f"It feels like a {wrong}, so guess[{wrong}]."

    @staticmethod
    def reflection_text(sit: Situation) -> str:
        lo, hi = sit.now
        return (
            f"The last guess did not halve the range. The number is from {lo} to {hi}: "
            f"guess its middle next, guess[{sit.middle()}]."
        )

    @staticmethod
    def wrong_reflection(sit: Situation, rng: random.Random) -> str:
        return "That guess was unlucky; keep going as before."


class GuessExpert(RoundsExpert[Situation]):
    """Knows every guess task's hidden number."""

    env = ENV
    answers = role_answers(
        Writer(),
        planning="Plan: guess.",
        reasoning="Some number from 1 to 31, I suppose.",
        reflection="Something went wrong.",
    )
    idle = "Guess the middle of what is still possible."

    def understand(self, task: Task, user: str) -> Situation:
        return understand(task, user)

    def difficulty(self, query: ExpertQuery) -> float:
        return DIFFICULTY.get(query.role, 0.0)

    def plan_good(self, sit: Situation, plan: str) -> bool:
        return "middle" in plan.lower()

    def proposal_good(self, sit: Situation, text: str, moment: Moment) -> bool:
        """Is the guess ``text`` proposes a middle of the range it was written for?"""
        guess = guessed(text)
        state = sit.before_last if moment == "last" else sit.now
        return guess is not None and guess in middles(*state)

    def act(self, sit: Situation, verdict: Verdict, rng: random.Random) -> str:
        if verdict.malformed:
            return "Somewhere in the middle, I think."
        proposed = guessed(sit.parts.get("Current thought", ""))
        if verdict.correct:
            guess = proposed if proposed is not None else sit.middle()
        elif proposed is not None and proposed not in middles(*sit.now):
            guess = proposed  # misled by a wrong thought
        else:
            guess = sit.ruled_out(rng)
        return action_fence(f"guess[{guess}]")

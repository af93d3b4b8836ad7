"""The guess environment: find a hidden number in a few rounds, told higher or lower.

A task hides a whole number from 1 to ``TOP``; each round the agent guesses
it with ``guess[N]`` and is told whether the number is higher or lower. The
range still possible halves with a guess at its middle, so ``TOP = 31`` takes
at most five guesses and the step limit (``MAX_STEPS = 6``) leaves room for
one mistake. A guess that is not a middle of the range still possible (or
cannot be read) asks for a reflection: that is what gives the reflection
module something to do, and a good reflection puts the next guess back on
the middle. Success is finding the number; the reward is 1 for success, else 0.
"""

from __future__ import annotations

import random
from typing import ClassVar

from agentbus import (
    ActionProposed,
    Environment,
    EnvSetup,
    Feedback,
    Observation,
    Score,
    Task,
    TaskSource,
    action_fence,
    env_guide,
    generated_count,
    last_action,
)

ENV = "guess"
TOP = 31
MAX_STEPS = 6


def make_task(seed: int, index: int) -> Task:
    """The ``index``-th task of ``seed``; the instruction (unique) is how the expert finds it."""
    secret = random.Random(f"{ENV}:{seed}:{index}").randint(1, TOP)
    return Task(
        id=f"{ENV}-{seed}-{index:03d}",
        env=ENV,
        instruction=(
            f"Guess task {seed}-{index}: find the hidden whole number from 1 to {TOP} "
            f"in at most {MAX_STEPS} guesses."
        ),
        hidden={"secret": secret},
    )


def tasks_from(source: TaskSource) -> list[Task]:
    """``--tasks`` seeded tasks (the first ``--limit``); no dataset format."""
    count = generated_count(source, ENV, "it uses its seeded generator (--tasks, --seed)")
    return [make_task(source.seed, i) for i in range(count)]


def guessed(text: str) -> int | None:
    """The number of the last ``guess[N]`` in ``text`` (None when there is none)."""
    action = last_action(text, ("guess",))
    number = action[len("guess[") : -1] if action else ""
    return int(number) if number.isdigit() else None


def middles(lo: int, hi: int) -> tuple[int, ...]:
    """The guesses that halve the range ``lo..hi`` (two when it holds an even count)."""
    return tuple({(lo + hi) // 2, (lo + hi + 1) // 2})


def narrowed(lo: int, hi: int, guess: int, secret: int) -> tuple[int, int]:
    """The range still possible after ``guess`` was answered (unchanged by a ruled-out guess)."""
    if guess < secret:
        return max(lo, guess + 1), hi
    if guess > secret:
        return lo, min(hi, guess - 1)
    return guess, guess


class GuessEnvironment(Environment):
    """One hidden number per episode; state lives on the instance (one per episode)."""

    name: ClassVar[str] = ENV
    default_max_steps: ClassVar[int] = MAX_STEPS
    action_format = "command"

    def __init__(self) -> None:
        self.secret = 0
        self.lo, self.hi = 1, TOP
        self.found = False
        self.guesses: list[int] = []

    @classmethod
    def setup(cls, source: TaskSource) -> EnvSetup:
        return EnvSetup(tasks=tasks_from(source), factory=cls)

    def guide(self, task: Task) -> dict[str, str]:
        return env_guide(
            system=f"You find a hidden whole number from 1 to {TOP}; each guess is "
            "answered with higher or lower.",
            planning="Say how you will choose each guess from the answers so far.",
            reasoning="Say which numbers are still possible and end with the guess to make, "
            "written guess[N].",
            action="Write the one guess to make, for example:\n" + action_fence("guess[16]"),
            reflection="Say what was wrong with the last guess and which guess comes next.",
        )

    async def reset(self, task: Task) -> Observation:
        self.secret = int(task.hidden["secret"])
        self.lo, self.hi, self.found, self.guesses = 1, TOP, False, []
        return Observation(
            text=f"A whole number from 1 to {TOP} is hidden. Guess it with guess[N]; "
            "each answer says whether it is higher or lower."
        )

    async def step(self, action: ActionProposed) -> Feedback:
        guess = guessed(action.text)
        if guess is None or not 1 <= guess <= TOP:
            return Feedback(
                text=f"Write guess[N] with N a whole number from 1 to {TOP}.",
                valid=False,
                needs_reflection=True,
            )
        halving = guess in middles(self.lo, self.hi)
        self.guesses.append(guess)
        self.lo, self.hi = narrowed(self.lo, self.hi, guess, self.secret)
        if guess == self.secret:
            self.found = True
            return Feedback(text=f"{guess} is right.", done=True, success=True, reward=1.0)
        word = "higher" if guess < self.secret else "lower"
        return Feedback(text=f"The number is {word} than {guess}.", needs_reflection=not halving)

    async def score(self) -> Score:
        return Score(
            reward=1.0 if self.found else 0.0,
            success=self.found,
            details={"secret": self.secret, "guesses": self.guesses},
        )

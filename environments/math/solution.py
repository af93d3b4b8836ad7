"""What the math expert knows about one task, and how far a history got with it.

:class:`Solution` holds a task's worked solution (generated: the calculator
inputs in order with the method and a wrong method; CapaBench: steps read from
the worked solution and a perturbed wrong answer), and reads a prompt's
history (:func:`rounds`) to say which steps are done and what move is due.
Kept apart from :mod:`environments.math.expert`, which turns that state into
answers at a skill level.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agentbus import Task
from environments.math.generator import KNOWLEDGE_POINTS
from environments.math.safeparse import CalcError, to_plain

_ROUND = re.compile(
    r"^Round (\d+)\nThought: (.*?)\nAction: (.*?)\nFeedback: (.*?)(?=\n\nRound \d+\n|\Z)",
    re.DOTALL | re.MULTILINE,
)


@dataclass(frozen=True)
class Step:
    thought: str
    action: str
    feedback: str


def rounds(history: str) -> list[Step]:
    return list(_rounds(history or ""))


@functools.lru_cache(maxsize=256)
def _rounds(history: str) -> tuple[Step, ...]:
    return tuple(Step(m.group(2), m.group(3), m.group(4)) for m in _ROUND.finditer(history))


#: what the history shows for a round whose action could not be read
#: (modules/praf's ``NO_ACTION``; environments do not import modules)
NO_ACTION = "(none)"
#: the expert's malformed action in prose (of its answers the one the parser refuses)
PROSE_ACTION = "I will now use the calculator.\nThe input is {}."
#: how the history showed that answer before it showed ``(none)`` (the parser's
#: reason, then the answer); :meth:`Solution.replay` puts this text back
REFUSED_PROSE = (
    "(invalid: no action found: expected one ```action``` block, an 'Action:' line, "
    "or a single-line answer) " + PROSE_ACTION
)

_SQUASHED = re.compile(r"[\s`$]")


def squash(text: str) -> str:
    """Lowercase without spaces or backticks, for containment checks."""
    return _SQUASHED.sub("", text).lower()


def contains(text: str, value: str) -> bool:
    """``value`` occurs in squashed ``text``, not as part of a longer number.

    Squashed text has no spaces, so only digits (and a decimal point or power
    sign before them) count as a boundary: ``24`` is in ``answeris24.`` but
    not in ``124`` or ``2.24`` or ``x^24``.
    """
    if not value:
        return False
    before = r"(?<![\d.^])" if value[0].isdigit() else ""
    after = r"(?!\d|\.\d)" if value[-1].isdigit() else ""
    return re.search(before + re.escape(value) + after, text) is not None


@dataclass(frozen=True)
class Solution:
    """What the expert knows about one task."""

    answer: str
    steps: tuple[str, ...]
    method: str
    keywords: tuple[str, ...]
    wrong_method: str
    wrong_steps: tuple[str, ...]
    wrong_answer: str
    knowledge_point: str

    @classmethod
    def of(cls, task: Task) -> Solution:
        h = task.hidden
        answer = str(h.get("answer", ""))
        kp = str(h.get("knowledge_point") or "")
        if "steps" in h:
            return cls(
                answer=answer,
                steps=tuple(h["steps"]),
                method=str(h["method"]),
                keywords=tuple(str(k).lower() for k in h["keywords"]),
                wrong_method=str(h["wrong_method"]),
                wrong_steps=tuple(h["wrong_steps"]),
                wrong_answer=str(h["wrong_answer"]),
                knowledge_point=kp,
            )
        # a CapaBench task: only the boxed answer and the knowledge point are known
        others = [k for k in KNOWLEDGE_POINTS if k.lower() != kp.lower()]
        wrong_kp = others[sum(map(ord, task.id)) % len(others)]
        topic = kp or "the topic of the problem"
        level = task.data.get("level") or 1
        steps = solution_steps(str(h.get("solution", "")), (int(level) + 1) // 2)
        return cls(
            answer=answer,
            steps=steps,
            method=f"{topic}: apply the standard rules of {topic.lower()} step by step",
            keywords=(kp.lower(),) if kp else (squash(answer),),
            wrong_method=f"{wrong_kp.lower()}, reading the numbers off the statement",
            wrong_steps=(),
            wrong_answer=perturb(answer, random.Random(task.id)),
            knowledge_point=kp,
        )

    @functools.cached_property
    def squashed_steps(self) -> tuple[str, ...]:
        return tuple(squash(step) for step in self.steps)

    def replay(self, history: Sequence[Step]) -> tuple[Step, ...]:
        """``history`` with each unreadable action as the expert wrote it.

        The history shows an action the parser could not read as ``(none)``
        (no copyable text for real models). Of the expert's own answers only
        its prose ones are unreadable (PRAF's :data:`PROSE_ACTION`, MMAU's
        solver in a sentence), and they name the step that was due (or the
        answer), so that text is put back: the expert then judges
        the state as it did when the history carried the refused answer (a
        prose round counts as that step done), and the stored truth tables,
        made so, still hold.
        """
        if not any(s.action.strip() == NO_ACTION for s in history):
            return tuple(history)
        out: list[Step] = []
        for s in history:
            if s.action.strip() == NO_ACTION:
                due = self.next_step(out) or self.answer
                s = replace(s, action=REFUSED_PROSE.format(due))
            out.append(s)
        return tuple(out)

    def done(self, history: Sequence[Step]) -> int:
        """How many solution steps the history's actions already ran, in order."""
        actions = [squash(s.action) for s in self.replay(history)]
        steps = self.squashed_steps
        k = 0
        while k < len(steps) and any(steps[k] in a for a in actions):
            k += 1
        return k

    def next_step(self, history: Sequence[Step]) -> str | None:
        k = self.done(history)
        return self.steps[k] if k < len(self.steps) else None

    def good_move(self, text: str, history: Sequence[Step]) -> bool:
        """Whether ``text`` names the right next step (or the answer, once it is due)."""
        t = squash(text)
        step = self.next_step(history)
        if step is not None:
            return squash(step) in t
        return contains(t, squash(self.answer)) and not contains(t, squash(self.wrong_answer))

    def mentions_method(self, text: str) -> bool:
        t = text.lower()
        return any(k in t or k in squash(text) for k in self.keywords if k)


_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)


def solution_steps(solution: str, count: int) -> tuple[str, ...]:
    """Up to ``count`` computations of a worked solution, for the calculator.

    A CapaBench solution carries its working in ``$...$`` segments such as
    ``$(3 + 2i) + (1 + 4i) = (3 + 1) + (2i + 4i)$``; the sides of those chains
    that the calculator accepts (numbers and operators, no boxed answer) are
    the steps a careful solver would check. The last ones, nearest the
    answer, are kept.
    """
    found: list[str] = []
    for m in _MATH.finditer(solution):
        segment = next(g for g in m.groups() if g is not None)
        if "boxed" in segment:
            segment = segment.split("\\boxed")[0]
        for piece in re.split(r"=|\\approx|\\Rightarrow|\\implies", segment):
            piece = piece.strip().rstrip(".,")
            if not re.search(r"\d", piece) or not re.search(r"[-+*/^]|\\frac|\\cdot", piece):
                continue
            try:
                to_plain(piece)
            except CalcError:
                continue
            if piece not in found:
                found.append(piece)
    return tuple(found[-count:]) if count > 0 else ()


def perturb(answer: str, rng: random.Random) -> str:
    """A plausible wrong answer: one number in it nudged (or a sign flipped)."""
    numbers = list(re.finditer(r"\d+(?:\.\d+)?", answer))
    if not numbers:
        return f"-({answer})" if answer else "0"
    m = numbers[rng.randrange(len(numbers))]
    value = m.group(0)
    if "." in value:
        new = f"{float(value) + rng.choice([-1, 1]) * 0.5:g}"
    else:
        new = str(max(0, int(value) + rng.choice([-2, -1, 1, 2, 3])))
        if new == value:
            new = str(int(value) + 1)
    return answer[: m.start()] + new + answer[m.end() :]


__all__ = [
    "NO_ACTION",
    "PROSE_ACTION",
    "Solution",
    "Step",
    "contains",
    "perturb",
    "rounds",
    "solution_steps",
    "squash",
]

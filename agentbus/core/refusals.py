"""Refused actions: one definition, three kinds, counted per slot.

An action is *refused* when it never reaches the environment as the model's
own move, for one of three reasons, each counted apart in the slot's usage
(:class:`~agentbus.core.outcome.SlotUsage`):

* ``unparsable``: the module found no action in the answer (its parser);
* ``copied``: the action is a copy of the prompt rather than a move: one of
  the guide's example lines (``answer: \\frac{7}{2}``, ``calculator: 2^10 - 24``)
  handed back unchanged, or a line of the environment's earlier feedback
  (a small model that writes ``git: 'rebrand' is not a git command ...`` as
  its next command: 90% of the action or more is earlier feedback lines).
  The parser cannot tell, as these parse fine; the episode sees the
  prompt's parts (guide, task, feedback) and checks here;
* ``rejected``: the environment read it and said it is no action it knows
  (its feedback has ``valid=False``: ``<answer: 12.0</answer>`` in math).

Why strict about copies: a copied example that happens to be right would be
scored as the model's skill, and one that is wrong as its failure of
reasoning, when it is a failure to answer at all; either way the per-slot
counts would hide that the model did not follow the format.

A guide example counts as a copy only where it carries a number that neither
the task nor any feedback so far mentions: ``answer: \frac{7}{2}`` on a task
about ``4x + 15 = 3``. An example without numbers (``git rebase main``,
``search: area of a sector``) is a fair move whenever the task calls for it,
and the episode cannot tell when that is; short actions (``ls``) are never
called copies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentbus.core.outcome import SlotUsage

#: the kinds of refusal, in table order
KINDS: tuple[str, ...] = ("unparsable", "copied", "rejected")

#: shorter actions are common moves (``ls``, ``git status``), never called copies
MIN_COPY_CHARS = 12
#: a feedback line must be at least this long to count as copied back
MIN_FEEDBACK_LINE = 20
#: the share of an action that feedback lines must make up for it to be their copy
COPY_SHARE = 0.9

_FENCE = re.compile(r"^\s*```")
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.strip().strip("`").strip()).lower()


def _example_lines(guide: str) -> set[str]:
    """Every line of a guide that could be handed back as an action, normalised."""
    out: set[str] = set()
    for line in guide.splitlines():
        if _FENCE.match(line):
            continue
        for part in re.findall(r"`([^`\n]+)`", line) or [line]:
            text = _norm(part)
            if len(text) >= MIN_COPY_CHARS and "<" not in text:  # ``<expression>``: a template
                out.add(text)
    return out


class PromptCopies:
    """What an episode's acting module was shown, to recognise it handed back as an action."""

    def __init__(self) -> None:
        self._examples: set[str] = set()
        #: the numbers the task and the feedback so far mention
        self._numbers: set[str] = set()
        self._feedback: set[str] = set()
        self._actions: set[str] = set()

    def learn(self, guide: Mapping[str, str] | str | None, task_text: Iterable[str]) -> None:
        """The guide (all roles' parts) and the texts that state the task."""
        parts = guide.values() if isinstance(guide, Mapping) else [guide or ""]
        for part in parts:
            self._examples |= _example_lines(str(part))
        for text in task_text:
            self._numbers |= set(_NUMBER.findall(text))

    def saw(self, action: str, feedback: str) -> None:
        """One round: the action as sent and the environment's feedback to it."""
        self._actions |= {_norm(line) for line in action.splitlines() if line.strip()}
        self._numbers |= set(_NUMBER.findall(feedback))
        for line in feedback.splitlines():
            text = _norm(line)
            if len(text) >= MIN_FEEDBACK_LINE and text not in self._actions:
                self._feedback.add(text)

    def copied(self, action: str) -> str | None:
        """Why ``action`` is a copy of the prompt (one line), or None when it is a move."""
        text = _norm(action)
        if len(text) < MIN_COPY_CHARS:
            return None
        if text in self._examples and not self._fits_task(text):
            return f"a copy of the guide's example {action.strip()[:80]!r}, not an action"
        found = [line for line in self._feedback if line in text]
        # mostly feedback: a command may quote one output line (``grep "..." f``), a copy is
        # the output itself
        if found and sum(len(line) for line in found) >= COPY_SHARE * len(text):
            longest = max(found, key=len)
            return f"a copy of the environment's feedback ({longest[:60]!r}), not an action"
        return None

    def _fits_task(self, example: str) -> bool:
        """Whether the example could be a move in this task: every number it has was mentioned."""
        return all(n in self._numbers for n in _NUMBER.findall(example))


def count_refusal(usage: SlotUsage, kind: str, reason: str) -> None:
    """Count one refused action of ``kind`` in a slot's usage; keep the first reason."""
    if kind not in KINDS:
        raise ValueError(f"unknown refusal kind {kind!r}")
    setattr(usage, kind, getattr(usage, kind) + 1)
    if usage.refusal is None:
        usage.refusal = f"{kind}: {' '.join(reason.split())[:160]}"


def refused_total(usage: SlotUsage) -> int:
    """Every refused action of a slot, whatever the kind."""
    return usage.unparsable + usage.copied + usage.rejected


__all__ = ["KINDS", "PromptCopies", "count_refusal", "refused_total"]

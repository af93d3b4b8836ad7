"""Reading robot rounds out of text.

Two readers: :func:`parse_execute` is the environment's strict reader of
``EXECUTE`` blocks (what the action module sends), and :func:`extract_round`
is the expert's tolerant reader of a round written in prose ("Next round:
Alice MOVE red_cube; Bob WAIT"), used to judge thoughts, plans and reflections.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from environments.robot.scene import KEYWORDS, Act

_EXECUTE = re.compile(r"^\W*EXECUTE\W*$", re.IGNORECASE)
_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?NAME\s*:\s*(?P<name>[A-Za-z][\w-]*)\s*[,;]?\s*"
    r"ACTION\s*:\s*(?P<action>.*?)\s*$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s*```")


@dataclass
class ParsedRound:
    """One ``EXECUTE`` block: its actions, and the lines that did not parse."""

    acts: list[Act] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def parse_action(robot: str, action: str) -> Act | None:
    """``"MOVE red_cube"`` -> Act; None when there is no verb."""
    words = [w.strip(",.;:") for w in action.split()]
    words = [w for w in words if w]
    if not words:
        return None
    return Act(robot=robot, verb=words[0].upper(), args=tuple(w.lower() for w in words[1:]))


def parse_execute(text: str) -> list[ParsedRound]:
    """Split ``text`` into rounds, one per ``EXECUTE`` line.

    Lines of the form ``NAME: <robot> ACTION: <action>`` before any
    ``EXECUTE`` form one implicit round (a lenient reading of a single round);
    code-fence lines and blank lines are ignored; any other line inside a
    block is recorded as that round's error, so the round is rejected with the
    offending line quoted rather than silently half-executed.
    """
    rounds: list[ParsedRound] = []
    current: ParsedRound | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or _FENCE.match(line):
            continue
        if _EXECUTE.match(line):
            current = ParsedRound()
            rounds.append(current)
            continue
        m = _LINE.match(line)
        if m is None:
            if current is not None:
                current.errors.append(
                    f"line {line!r} is not of the form 'NAME: <robot> ACTION: <action>'"
                )
            continue
        if current is None:
            current = ParsedRound()
            rounds.append(current)
        act = parse_action(m.group("name"), m.group("action"))
        if act is None:
            current.errors.append(f"line {line!r} names robot {m.group('name')} but no action")
        else:
            current.acts.append(act)
    return [r for r in rounds if r.acts or r.errors]


def extract_acts(
    text: str, robots: Iterable[str], verbs: Iterable[str], vocab: set[str]
) -> list[Act]:
    """Every ``<Robot> ... <VERB> args`` mention in prose, in order of appearance.

    Arguments are the words after the verb that belong to the scene's
    vocabulary (object, place and keyword names); the first other word ends them.
    """
    robot_alt = "|".join(re.escape(r) for r in robots)
    verb_alt = "|".join(re.escape(v) for v in verbs)
    if not robot_alt or not verb_alt:
        return []
    pattern = re.compile(
        rf"\b(?P<robot>{robot_alt})\b(?:\s*ACTION\s*:)?[^\n;.A-Z]{{0,24}}?\b(?P<verb>{verb_alt})\b"
        r"(?P<rest>[^\n;]*)"
    )
    acts: list[Act] = []
    for m in pattern.finditer(text):
        args: list[str] = []
        for word in m.group("rest").split():
            w = word.strip(",.:()").lower()
            if w in vocab or w in KEYWORDS:
                args.append(w)
            else:
                break
        acts.append(Act(robot=m.group("robot"), verb=m.group("verb"), args=tuple(args)))
    return acts


def extract_round(
    text: str, robots: Iterable[str], verbs: Iterable[str], vocab: set[str]
) -> dict[str, Act]:
    """The round a thought or reflection proposes: first mention per robot.

    When the text has a ``Next round:`` marker only what follows the last one
    counts, so a recap of earlier rounds is not mistaken for the proposal.
    """
    marks = list(re.finditer(r"next round\s*:", text, re.IGNORECASE))
    segment = text[marks[-1].end() :] if marks else text
    found: dict[str, Act] = {}
    for act in extract_acts(segment, robots, verbs, vocab):
        found.setdefault(act.robot, act)
    return found

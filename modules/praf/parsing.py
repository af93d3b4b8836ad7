"""Tolerant parsing of model answers into actions and plan steps.

Models rarely follow a format perfectly: they drop the fence's language tag,
forget the fence, or prefix the action with ``Action:``. The action module
accepts all of those; only an answer from which no action can be read at all
becomes an invalid step (never an exception), so a sloppy model loses a round
instead of crashing the episode.

Real small models (SmolLM2-135M, Qwen2.5-Coder-0.5B through llama.cpp; the
recorded answers are in tests/data/real_answers/) add three ways to go wrong
that a first-fenced-block rule reads as an action:

* several fenced blocks, the first in another language (a ```latex block of
  working before the ```action block): the block tagged with the expected
  language wins, then an untagged one, then any other tag except the
  formatting languages in :data:`NOT_ACTIONS`;
* the instruction echoed back ("... as one ```action``` block"): a fence
  counts only where a line starts with it, so three backticks in the middle
  of a sentence open nothing;
* the prompt's template copied instead of filled in (``<the action>``, or a
  placeholder of the history such as ``(none)``), the history's round format
  copied (``round 1`` / ``thought: ...``), or several lines most of which are
  the prompt's own example lines: such a block is skipped, and an answer that holds
  nothing else is unparsable;
* prose where an action belongs: a block or a lone line made only of
  sentences (a capitalised line of six words or more that ends a sentence),
  or a display formula (``$$...$$``), is no action, where the environment's
  actions are commands (``calculator: ...``, ``git status``, ``move r1 left``).

How actions are written is the environment's to say
(:data:`agentbus.core.messages.ActionFormat`, sent in ``TaskStarted``). A proof
script or a free-text answer may read like sentences (CapaBench's one-line
Coq proofs do: ``Proof. intros a c H1 H2. lia. Qed.``), so for those formats
neither the prose test nor the copied-example test applies: the prover or the
grader judges the text, and a copy of the guide's example proof is a proof.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentbus import ActionFormat

#: a fence opens where a line starts with three backticks (after indentation or a
#: quote mark); it closes at the next three backticks or runs to the end
_FENCE = re.compile(r"^[ \t>]*```[ \t]*([\w.+-]*)[ \t]*\n(.*?)(```|\Z)", re.DOTALL | re.MULTILINE)
#: a fence opened and closed on one line: ```git status```
_ONE_LINE = re.compile(r"^[ \t>]*```[ \t]*([^`\n]+?)[ \t]*```[ \t]*$", re.MULTILINE)
_ACTION_LINE = re.compile(r"^[ \t>*_#-]*action[ \t*_]*:[ \t*_]*(.*)$", re.IGNORECASE | re.MULTILINE)
_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*•]|step\s*\d+\s*[:.)])\s+(.+?)\s*$", re.IGNORECASE)
#: a line of the history's round format: "Round 2", "Thought: ...", "Feedback: ..."
_HISTORY_LINE = re.compile(r"^\s*(?:round \d+\s*$|(?:thought|feedback)\s*:)", re.IGNORECASE)
#: a command's prefix within its first words ("answer:", "Alice:"): not prose
_COMMAND_PREFIX = re.compile(r"^\s*(?:\S+\s+){0,2}?\S*:")
#: a template slot copied as it stands: <the action>, <command>, [ACTION]
_PLACEHOLDER = re.compile(r"^(?:<[^<>\n]{1,40}>|\[[A-Z _-]{1,30}\]|\.\.\.|…)$")
#: what the history shows for a round without a readable action
NO_ACTION = "(none)"

#: formats whose actions may read like sentences: no prose or copied-example test
FREE_TEXT: frozenset[ActionFormat] = frozenset({"proof", "answer"})

#: fence tags of formatting, never of an action (a model's working, not its move)
NOT_ACTIONS: frozenset[str] = frozenset(
    {"latex", "tex", "math", "katex", "markdown", "md", "mermaid", "html", "css"}
)


@dataclass(frozen=True)
class ParsedAction:
    """The action text read from an answer, or why none could be read."""

    text: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.text is not None


def _strip_inline(text: str) -> str:
    """Drop surrounding inline-code backticks and blank edges."""
    text = text.strip()
    if len(text) >= 2 and text.startswith("`") and text.endswith("`"):
        text = text.strip("`").strip()
    return text


def is_copy(text: str) -> bool:
    """Whether ``text`` is a template or a history placeholder rather than an action."""
    t = text.strip()
    return (
        _PLACEHOLDER.match(t) is not None
        or t == NO_ACTION
        or t.startswith("(invalid")
        or t.lower() in ("(no call)", "none", "n/a")
    )


def is_prose(line: str) -> bool:
    """A sentence rather than a command: capitalised, six words or more, ending a sentence."""
    t = line.strip()
    if len(t.split()) < 6 or not t[:1].isupper() or _COMMAND_PREFIX.match(t):
        return False
    return t[-1] in ".!?" or re.search(r"[.!?]\s+[A-Z]", t) is not None


def _formula(line: str) -> bool:
    t = line.strip()
    return (t.startswith("$$") and t.endswith("$$")) or (t.startswith("\\[") and t.endswith("\\]"))


def _not_an_action(body: str, prompt: str, fmt: ActionFormat = "command") -> str | None:
    """Why ``body`` (a block or a lone line) is no action, or None when it may be one."""
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines:
        return "the fenced block is empty"
    if is_copy(body):
        return "the answer repeats the prompt's template instead of an action"
    if any(_HISTORY_LINE.match(ln) for ln in lines):
        return "the answer copies the history's rounds instead of an action"
    if fmt in FREE_TEXT:
        return None
    if len(lines) >= 2 and prompt:
        copied = sum(len(ln.strip()) >= 8 and ln.strip() in prompt for ln in lines)
        if copied * 2 > len(lines):
            return "the answer copies the prompt's examples instead of an action"
    if all(is_prose(ln) or _formula(ln) for ln in lines):
        return "the answer is prose, not an action"
    return None


@dataclass(frozen=True)
class _Block:
    tag: str
    body: str
    closed: bool = True


def _blocks(answer: str, tag: str) -> list[_Block]:
    """Fenced blocks of ``answer`` in the order they are tried (see the module docstring)."""
    found = [
        (m.start(), _Block(m.group(1).lower(), m.group(2).strip(), bool(m.group(3))))
        for m in _FENCE.finditer(answer)
    ]
    spans = [m.span() for m in _FENCE.finditer(answer)]
    for m in _ONE_LINE.finditer(answer):
        if any(a <= m.start() < b for a, b in spans):
            continue
        body = m.group(1).strip()
        head, _, rest = body.partition(" ")
        one_tag = head.lower() if head.lower() == tag and rest else ""
        found.append((m.start(), _Block(one_tag, rest.strip() if one_tag else body)))
    found.sort(key=lambda item: item[0])
    blocks = [b for _, b in found]

    def rank(b: _Block) -> int:
        if b.tag == tag:
            return 0
        return 1 if not b.tag else 2

    return sorted((b for b in blocks if b.tag not in NOT_ACTIONS), key=rank) + [
        b for b in blocks if b.tag in NOT_ACTIONS
    ]


def parse_action(
    answer: str,
    tag: str = "action",
    *,
    cut: bool = False,
    prompt: str = "",
    fmt: ActionFormat = "command",
) -> ParsedAction:
    """Read the action from a model answer.

    Tried in order: a fenced block (the one tagged ``tag`` first, then an
    untagged one, then another tag; an unclosed fence runs to the end), the
    text after an ``Action:`` label (up to the next blank line), the whole
    answer when it is a single line. Blocks in a formatting language
    (:data:`NOT_ACTIONS`), empty blocks and copied templates are skipped.

    ``cut``: the answer stopped at the output limit (``finish_reason`` length).
    Then only a closed fenced block counts: an unclosed one, a label or a
    lone line may be an action cut in half, or the model's rambling.
    ``prompt``: the text the model was sent, to tell a copy of its examples.
    ``fmt``: how the environment writes its actions; for :data:`FREE_TEXT`
    formats sentences are no reason to refuse.
    """
    if not answer or not answer.strip():
        return ParsedAction(None, "the answer is empty")
    blocks = _blocks(answer, tag.lower())
    if cut:
        blocks = [b for b in blocks if b.closed]
        usable = (b for b in blocks if b.tag not in NOT_ACTIONS)
        if not any(not _not_an_action(b.body, prompt, fmt) for b in usable):
            return ParsedAction(
                None, "the answer was cut at the output limit before a complete action"
            )
    reasons: list[str] = []
    for block in blocks:
        if block.tag in NOT_ACTIONS:
            break
        why = _not_an_action(block.body, prompt, fmt)
        if why is None:
            return ParsedAction(block.body)
        reasons.append(why)
    if blocks:
        if all(b.tag in NOT_ACTIONS for b in blocks if b.body) and any(b.body for b in blocks):
            shown = next(b.tag for b in blocks if b.body)
            return ParsedAction(None, f"the only fenced block is {shown}, not {tag}")
        told = [r for r in reasons if r != "the fenced block is empty"]
        return ParsedAction(None, told[0] if told else "the fenced block is empty")
    label = _ACTION_LINE.search(answer)
    if label is not None:
        lines = [label.group(1)]
        rest = answer[label.end() :].split("\n")[1:]
        for line in rest:
            if not line.strip():
                break
            lines.append(line)
        text = _strip_inline("\n".join(lines).strip())
        if text and _not_an_action(text, prompt, fmt) is None:
            return ParsedAction(text)
    lines = [ln for ln in answer.strip().splitlines() if ln.strip()]
    if len(lines) == 1 and "```" not in lines[0]:
        text = _strip_inline(lines[0])
        if text and _not_an_action(text, prompt, fmt) is None:
            return ParsedAction(text)
    return ParsedAction(
        None,
        f"no action found: expected one ```{tag}``` block, an 'Action:' line, "
        "or a single-line answer",
    )


def parse_steps(plan: str) -> list[str]:
    """Numbered or bulleted lines of a plan (empty when the plan is prose)."""
    steps = []
    for line in plan.splitlines():
        m = _STEP.match(line)
        if m:
            steps.append(m.group(1))
    return steps


__all__ = [
    "FREE_TEXT",
    "NOT_ACTIONS",
    "NO_ACTION",
    "ParsedAction",
    "is_copy",
    "is_prose",
    "parse_action",
    "parse_steps",
]

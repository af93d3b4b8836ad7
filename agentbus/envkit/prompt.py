"""Reading and writing the parts of a prompt that every environment shares.

The prompt contract (docs/prompt-contract.md) sends each module a user message
made of ``## Title`` sections, asks the action module for one fenced
``action`` block, and specialises the four roles with the environment's guide.
An expert reads the same prompt several times per call (to find the task, to
judge, to answer), so the section reading is memoised.
"""

from __future__ import annotations

import re
from functools import lru_cache

_HEADER = re.compile(r"^## (.+?)\s*$", re.MULTILINE)
#: prompts whose sections are remembered
_MEMO = 256

#: the keys of an environment's guide (``Environment.guide``), in prompt order
GUIDE_KEYS: tuple[str, ...] = ("system", "planning", "reasoning", "action", "reflection")


def prompt_sections(text: str) -> dict[str, str]:
    """``## title`` -> its body up to the next ``## `` line, stripped; the first title wins."""
    return dict(_sections(text))


@lru_cache(maxsize=_MEMO)
def _sections(text: str) -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {}
    heads = list(_HEADER.finditer(text))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        out.setdefault(m.group(1).strip(), text[m.end() : end].strip())
    return tuple(out.items())


def action_fence(action: str, kind: str = "action") -> str:
    """``action`` inside one fenced block, the form the action module must answer in."""
    return f"```{kind}\n{action}\n```"


def env_guide(
    *, system: str, planning: str, reasoning: str, action: str, reflection: str
) -> dict[str, str]:
    """An environment's guide: the domain (``system``) and what each role must do.

    Keyword arguments keep the five texts from being swapped silently; the
    ``action`` text must give the exact action syntax (use :func:`action_fence` for the
    example).
    """
    texts = (system, planning, reasoning, action, reflection)
    for key, text in zip(GUIDE_KEYS, texts, strict=True):
        if not text.strip():
            raise ValueError(f"environment guide: the {key!r} text is empty")
    return dict(zip(GUIDE_KEYS, texts, strict=True))

"""Splitting one command line into the flags and positional arguments of a git command.

Each command declares which flags it knows and which of them take a value
(``commit -m "msg"``); anything else is an unknown option, reported the way
git reports it, so a model that invents a flag learns it from the feedback.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from environments.git.refs import GitError


@dataclass
class Args:
    """Parsed arguments: flags (with their value, or "") and positionals in order."""

    command: str
    flags: dict[str, str] = field(default_factory=dict)
    positional: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(n in self.flags for n in names)

    def expect(self, low: int, high: int, usage: str) -> list[str]:
        """The positionals, checked to number between ``low`` and ``high``."""
        n = len(self.positional)
        if n < low or n > high:
            problem = "too few arguments" if n < low else "too many arguments"
            raise GitError(f"error: {problem}\nusage: {usage}")
        return self.positional


def split_line(line: str) -> list[str]:
    if not any(ch in line for ch in "'\"\\"):
        return line.split()
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise GitError(f"bash: syntax error: {exc}") from None


def parse(
    command: str,
    words: list[str],
    flags: frozenset[str],
    valued: frozenset[str] = frozenset(),
    usage: str = "",
) -> Args:
    """Sort ``words`` into known flags and positionals (GitError for an unknown flag)."""
    out = Args(command)
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("-") and len(word) > 1:
            name, eq, value = word.partition("=")
            if name in valued:
                if not eq:
                    if i + 1 >= len(words):
                        raise GitError(f"error: option '{name}' requires a value")
                    i += 1
                    value = words[i]
                out.flags[name] = value
            elif name in flags and not eq:
                out.flags[name] = ""
            else:
                hint = f"\nusage: {usage}" if usage else ""
                raise GitError(f"error: unknown option '{word.lstrip('-')}'{hint}")
        else:
            out.positional.append(word)
        i += 1
    return out

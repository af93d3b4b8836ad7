"""Scripts of an OS task (init, start, check, example) and how they run.

AgentBench writes a script as a string (bash), or an object with a
``language`` (bash or python) and ``code`` or ``file`` (relative to the task
file's directory). A check list may hold ``null``: "run the example solution
here" (its output becomes an argument of the next check).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentbus import UserError, read_text

#: largest script file a task may name (scripts are a few lines; this is a bound, not a size)
SCRIPT_LIMIT = 1 << 20

LANGUAGES = ("bash", "python")


@dataclass(frozen=True)
class Script:
    """One script: its language and source text."""

    language: str
    code: str

    def as_command(self) -> tuple[str, bool]:
        """The bash text that runs it, and whether the code travels as the first argument.

        Python code is passed as an argument, never spliced into the bash text.
        It runs isolated (``-I``: no user site directory, no ``PYTHON*``
        variables, not the current directory on ``sys.path``), so a check in
        python cannot import a module the agent left in ``/root``. The code also
        follows, as comments after the ``exec`` (never run), so that the paths it names
        are in the check's text (``pristine.named``: which of the agent's hidden and
        ``/etc`` files a check sees).
        """
        if self.language == "python":
            named = "".join(f"# {line}\n" for line in self.code.splitlines())
            return 'exec /usr/bin/python3 -I -c "$1" "${@:2}"\n' + named, True
        return self.code, False

    def dump(self) -> list[str]:
        return [self.language, self.code]

    @classmethod
    def load(cls, raw: Any) -> Script:
        return cls(str(raw[0]), str(raw[1]))


def parse_script(raw: Any, base: Path | None, where: str) -> Script:
    """A script from AgentBench's JSON forms; a UserError names what is wrong."""
    if isinstance(raw, str):
        return Script("bash", raw)
    if not isinstance(raw, dict):
        raise UserError(f"{where}: expected a script (string or object), got {raw!r:.60}")
    language = str(raw.get("language", "bash"))
    if language not in LANGUAGES:
        raise UserError(f"{where}: unsupported script language {language!r}")
    if "code" in raw:
        return Script(language, str(raw["code"]))
    if "file" in raw:
        path = (base or Path(".")) / str(raw["file"])
        try:
            return Script(language, read_text(path, f"{where}: script file", SCRIPT_LIMIT))
        except OSError as exc:
            raise UserError(f"{where}: cannot read script file {path}: {exc}") from None
    raise UserError(f"{where}: a script object needs 'code' or 'file'")

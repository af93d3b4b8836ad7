"""``python -m agentbus.run``: one command for a whole coalition evaluation.

With no arguments it evaluates the CapaBench agent on the built-in math
generator with ``sim:weak`` as the default and ``sim:strong`` as the test
model, and prints every module's Shapley and Banzhaf value with 95%
intervals. Every problem the user can fix is reported as one line with exit
status 2; infrastructure failures exit with 1; an interrupted run keeps every
finished episode and resumes with ``--resume DIR``. Before anything is printed
or written, :mod:`agentbus.app.preflight` checks the models' keys and endpoints,
so a missing key or a server that is down costs one line, not a run.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio

from agentbus.core.errors import InfraError, UserError
from agentbus.core.interrupt import Interruptible, is_interrupt, until_interrupted
from agentbus.core.logs import add_secret, configure
from agentbus.runs.pipes import pipe_safe

if TYPE_CHECKING:
    from agentbus.app.evaluate import RunReport


def uvloop_available() -> bool:
    """uvloop is used automatically where installed (AGENTBUS_UVLOOP=0 turns it off)."""
    if os.environ.get("AGENTBUS_UVLOOP", "1") == "0":
        return False
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def first_error(exc: BaseException) -> BaseException:
    """The first UserError/InfraError inside (possibly nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = first_error(inner)
            if isinstance(found, UserError | InfraError):
                return found
        return exc.exceptions[0] if exc.exceptions else exc
    return exc


def exit_status(exc: BaseException, prog: str = "agentbus") -> int:
    """The exit status of a command that raised: a user error (2) or an infrastructure
    error (1), even inside exception groups, is one line on stderr; anything else is
    raised again, traceback and all, since it is a bug."""
    err = first_error(exc)
    if isinstance(err, UserError):
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    if isinstance(err, InfraError):
        print(f"{prog}: infrastructure error: {err}", file=sys.stderr)
        return 1
    raise exc


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # before the run's own handler is in place (imports, checks)
        print("\nagentbus: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None = None) -> int:
    configure(os.environ.get("AGENTBUS_LOG_LEVEL", "warning"))
    from agentbus.app.cli_args import parse_command
    from agentbus.app.preflight import check

    try:
        command = parse_command(list(argv) if argv is not None else None)
        config = command.config
        add_secret(config.token)  # scrubbed from everything written, like the API keys
        if command.preflight:
            check(config)
    except (UserError, InfraError) as exc:
        return exit_status(exc)
    from agentbus.app.evaluate import evaluate
    from agentbus.app.preparation import default_run_dir

    if config.run_dir is None:  # named now, so an interrupted run can say where it is
        config = config.model_copy(update={"run_dir": default_run_dir(config)})

    finished: list[RunReport] = []
    linger = bool(config.serve) and sys.stdin.isatty() and sys.stdout.isatty()

    async def run() -> Interruptible[RunReport]:
        return await until_interrupted(
            lambda: evaluate(config, linger=linger, on_report=finished.append)
        )

    def interrupted(sig: signal.Signals | None = None) -> int:
        """The resume hint; exit 130 for Ctrl-C, 143 for SIGTERM (128 + the signal)."""
        what = "stopped by SIGTERM" if sig == signal.SIGTERM else "interrupted"
        if config.run_dir is not None and not (config.run_dir / "manifest.json").exists():
            print(f"\nagentbus: {what} while the tasks were prepared; nothing was written")
        else:
            print(
                f"\nagentbus: {what}; finished episodes are saved. "
                f"Resume with --resume {config.run_dir}"
            )
        return 128 + int(sig or signal.SIGINT)

    try:
        done = anyio.run(run, backend_options={"use_uvloop": uvloop_available()})
        if done.result is not None:
            report = done.result
        elif finished:  # --serve lingering after the run: Ctrl-C ends the dashboard
            report = finished[0]
        else:
            return interrupted(done.signal)
    except BaseException as exc:
        if is_interrupt(exc):  # a second Ctrl-C, or one before the handler was in place
            if not finished:
                return interrupted()
            report = finished[0]
        else:
            return exit_status(exc)
    print(f"run directory: {report.run_dir}  (results.json, results.md, events.jsonl)")
    print(
        f"episodes: {report.episodes_run} run, {report.episodes_skipped} resumed from the log, "
        f"{report.infra_errors} infrastructure errors"
    )
    print(report.llm_summary)
    whole = _whole_run_line(report)
    if whole:
        print(whole)
    return _next_step(report)


def _whole_run_line(report: RunReport) -> str | None:
    """The calls of every process of a resumed run (the line above counts this process's)."""
    llm = report.results.get("llm") if isinstance(report.results, dict) else None
    run = (llm or {}).get("run") if isinstance(llm, dict) else None
    if not isinstance(run, dict) or int(run.get("processes") or 0) < 2:
        return None
    return (
        f"LLM calls over the whole run ({run['processes']} processes): requested "
        f"{run.get('requested', 0)}, sent {run.get('sent', 0)}"
    )


def _next_step(report: RunReport) -> int:
    """Exit status of a run that ended on its own, with the command that carries it on.

    A run that stopped itself after repeated infrastructure failures, or that
    gave cells up after every attempt failed, is not finished: its estimate
    leaves those cells out. It exits 1 and names ``--resume``, which tries
    the missing cells again (the signal paths already say so).
    """
    resume = f"python -m agentbus.run --resume {report.run_dir}"
    failures = report.results.get("failures") if isinstance(report.results, dict) else None
    unresolved = int((failures or {}).get("unresolved_cells") or 0)
    missing = max(report.given_up, unresolved)
    if report.stopped_early:
        print(f"agentbus: {report.stopped_early}", file=sys.stderr)
        print(f"agentbus: fix the cause, then resume the run: {resume}", file=sys.stderr)
        return 1
    if missing:
        print(
            f"agentbus: {missing} cells given up after every attempt failed on the "
            f"infrastructure (left out of the estimate); resume to try them again: {resume}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

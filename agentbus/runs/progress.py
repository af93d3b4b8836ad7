"""Progress of a run on the console: the ``Progress`` display.

The numbers it shows come from :class:`~agentbus.runs.run_state.RunState`
(shared with the live server); snapshots are read by
:mod:`agentbus.runs.snapshots`. Both are imported back here, the old import
path.

``Progress`` subscribes with the *drop* policy: a slow terminal must never
slow the run down. Dropped events are shown as such, not silently ignored.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, Any

import anyio
import anyio.abc

from agentbus.core.events import (
    EventHub,
)
from agentbus.llm.labels import model_labels
from agentbus.runs.run_state import RunState, episodes_rate, eta_text, token_rates_text

__all__ = ["Progress", "run_console"]


def run_console(**kwargs: Any) -> Any:
    """The run's rich Console: text is printed as written, never read as markup.

    Model names, file paths, task text and hints such as ``[prices]`` come
    from outside the program; as markup, square brackets vanish or raise.
    """
    from rich.console import Console

    return Console(markup=False, **kwargs)


class Progress:
    """Console progress of a run: rich Live on a terminal, plain lines otherwise."""

    def __init__(
        self,
        hub: EventHub,
        total: int,
        *,
        plain: bool | None = None,
        done: int = 0,
        interval_s: float | None = None,
        file: IO[str] | None = None,
        status: Callable[[], str | None] | None = None,
        served: Callable[[], int | tuple[int, int]] | None = None,
        total_is_cap: bool = False,
        console: Any = None,
    ) -> None:
        self.hub = hub
        #: a live note for the line (``rate-limited: openai:... ``), read at each refresh
        self.status = status
        #: tokens the model servers have served so far (the router's count), for tok/s
        self.served = served
        #: the run's own rich Console: lines it prints during the run (the cost
        #: estimate) then go above the live display instead of under a stale frame
        self.console = console
        self.file = file if file is not None else (console.file if console else sys.stdout)
        self.plain = (not self.file.isatty()) if plain is None else plain
        self.interval_s = interval_s if interval_s is not None else (5.0 if self.plain else 0.5)
        self.state = RunState(total, done=done, total_is_cap=total_is_cap)

    def _sample(self) -> None:
        if self.served is not None:
            try:
                self.state.sample_served(self.served())
            except Exception:  # a display never ends a run
                self.served = None

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Show progress until the hub closes; start with ``await tg.start(progress.run)``."""
        sub = self.hub.subscribe(maxsize=4096, policy="drop")
        task_status.started()
        self._sample()
        try:
            if self.plain:
                await self._run_plain(sub)
            else:
                await self._run_live(sub)
        finally:
            sub.close()
            with anyio.CancelScope(shield=True):  # cancelled: count what was published
                while len(sub.mailbox):
                    self.state.apply((await sub.get()).to_json())
            # run.finished is published only by a run that got to its end
            self.state.interrupted = not self.state.finished
            end = "finished" if self.state.finished else "stopped before the end"
            if self.plain:
                print(self.state.line() + f" | {end}", file=self.file, flush=True)

    async def _pump(self, sub: Any, done: anyio.Event) -> None:
        try:
            async for event in sub:
                self.state.apply(event.to_json())
                self.state.dropped = sub.dropped
        finally:
            done.set()

    async def _run_plain(self, sub: Any) -> None:
        finished = anyio.Event()
        last = ""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._pump, sub, finished)
            while not finished.is_set():
                with anyio.move_on_after(self.interval_s):
                    await finished.wait()
                if finished.is_set():
                    break
                self._sample()
                text = self.state.line()
                note = self.status() if self.status is not None else None
                if note:
                    text += f" | {note}"
                if text != last:
                    print(text, file=self.file, flush=True)
                    last = text

    async def _run_live(self, sub: Any) -> None:
        from rich.live import Live

        console = self.console if self.console is not None else run_console(file=self.file)
        finished = anyio.Event()
        with Live(self._render(), console=console, refresh_per_second=4, transient=False) as live:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._pump, sub, finished)
                while not finished.is_set():
                    with anyio.move_on_after(self.interval_s):
                        await finished.wait()
                    self._sample()
                    live.update(self._render())

    def _render(self) -> Any:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        s = self.state.summary()
        total = s["total"] or 0
        head = Text.assemble(
            ("episodes ", "bold"),
            f"{self.state.head()}  ",
            (f"{episodes_rate(s['episodes_per_s'])}  ", "cyan"),
            (f"{token_rates_text(s)}  ", "cyan"),
            (f"errors {s['errors']}", "red" if s["errors"] else "green"),
        )
        if s["eta_s"] is not None:
            head.append(f"  {eta_text(s['eta_s'], s['total_is_cap'])}", style="cyan")
        if s["dropped"]:
            head.append(f"  (display skipped {s['dropped']} events)", style="yellow")
        note = self.status() if self.status is not None else None
        if note:
            head.append(f"  {note}", style="yellow")
        parts: list[Any] = [head]
        if total:
            bar = Table.grid()  # a bare bar ends no line: the table would start on its row
            bar.add_row(ProgressBar(total=total, completed=min(s["done"], total), width=60))
            parts.append(bar)
        if s["phi"]:
            table = Table(box=None, pad_edge=False)
            table.add_column("test model")
            table.add_column("slot")
            table.add_column("phi", justify="right")
            table.add_column("95% interval", justify="right")
            labels = model_labels([str(r.get("model") or "") for r in s["phi"]])
            for row in s["phi"]:
                ci = (
                    f"[{row['lo']:+.3f}, {row['hi']:+.3f}]"
                    if row.get("lo") is not None and row.get("hi") is not None
                    else ""
                )
                model = str(row.get("model") or "")
                table.add_row(labels.get(model, model), row["slot"], f"{row['phi']:+.3f}", ci)
            parts.append(table)
        elif s["phi_note"]:  # never a number before the estimate is honest; say why
            parts.append(Text(s["phi_note"], style="yellow"))
        return Group(*parts)

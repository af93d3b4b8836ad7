"""Progress of a run: the numbers (``RunState``) and the console display (``Progress``).

``RunState`` folds run events (as JSON dicts, the shape of ``events.jsonl``)
into the figures people watch: episodes done of total, rates, errors, tokens,
per-coalition means and the latest attribution estimates. The console display
and the live server share it, so the terminal and the dashboard never
disagree about what "done" means: an episode counts once, by its id, when it
has an outcome that counts for v(S) (see :func:`agentbus.runs.store.counts`).

``Progress`` subscribes with the *drop* policy: a slow terminal must never
slow the run down. Dropped events are shown as such, not silently ignored.
"""

from __future__ import annotations

import math
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import IO, Any

import anyio
import anyio.abc

from agentbus.events import (
    ATTRIBUTION_SNAPSHOT,
    EPISODE_ENDED,
    EPISODE_STARTED,
    RUN_FINISHED,
    RUN_STARTED,
    EventHub,
)
from agentbus.labels import model_labels
from agentbus.outcome import is_agent_failure
from agentbus.record import payload_counts

RATE_WINDOW_S = 30.0
#: the rates cover at least this many counted episodes, however long ago they ended: at one
#: episode a minute a 30 s window holds 0 or 1 of them, and its ETA jumped 3x between lines
RATE_MIN_EPISODES = 20
RECENT = 50
#: an interval from fewer complete tasks than this is shown as "not yet", not as +0.000 [-0.5, +0.5]
MIN_TASKS_SHOWN = 2
#: episode kinds beyond the coalition grid (``--best``, ``--pareto``): shown apart from done/total
_GRID_KINDS = (None, "coalition")

_VALUE_KEYS = ("phi", "value", "estimate", "mean", "shapley")
_LO_KEYS = ("lo", "low", "ci_low", "lower", "ci_lo")
_HI_KEYS = ("hi", "high", "ci_high", "upper", "ci_hi")
_CI_KEYS = ("ci", "ci95", "interval", "intervals")
_SE_KEYS = ("se", "stderr", "std_err", "sem")


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    f = float(x)
    return f if math.isfinite(f) else None


def _first(d: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in d:
            return d[k]
    return None


def _interval(x: Any) -> tuple[float | None, float | None]:
    if isinstance(x, list | tuple) and len(x) == 2:
        return _num(x[0]), _num(x[1])
    if isinstance(x, Mapping):
        return _num(_first(x, _LO_KEYS)), _num(_first(x, _HI_KEYS))
    return None, None


def _entry(slot: str, value: Any, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    lo = hi = se = None
    if isinstance(value, Mapping):
        phi = _num(_first(value, _VALUE_KEYS))
        lo, hi = _num(_first(value, _LO_KEYS)), _num(_first(value, _HI_KEYS))
        if lo is None or hi is None:
            lo, hi = _interval(_first(value, _CI_KEYS))
        se = _num(_first(value, _SE_KEYS))
    else:
        phi = _num(value)
    if phi is None:
        return None
    if lo is None or hi is None:
        for key in _CI_KEYS:
            table = payload.get(key)
            if isinstance(table, Mapping) and slot in table:
                lo, hi = _interval(table[slot])
                break
    if se is None:
        for key in _SE_KEYS:
            table = payload.get(key)
            if isinstance(table, Mapping) and slot in table:
                se = _num(table[slot])
                break
    if (lo is None or hi is None) and se is not None:
        lo, hi = phi - 1.96 * se, phi + 1.96 * se
    return {"slot": slot, "phi": phi, "lo": lo, "hi": hi}


def normalize_snapshot(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``[{"slot", "phi", "lo", "hi"[, "model"]}]`` from an ``attribution.snapshot`` payload.

    Tolerant on purpose: the attribution service owns the payload. This reads
    its shape (``models: {test_model: {shapley: {slot: {value, ci_low,
    ci_high, se}}}}``, one row per model and slot) and the other common ones
    (``phi: {slot: x}`` with ``ci``/``se`` tables, ``phi: {slot: {phi, lo,
    hi}}``, a list of ``{slot, phi, ...}``). Unknown shapes give ``[]``.
    """
    models = payload.get("models")
    if isinstance(models, Mapping):
        rows: list[dict[str, Any]] = []
        for model, summary in models.items():
            if isinstance(summary, Mapping):
                for row in _slot_rows(summary):
                    rows.append({**row, "model": str(model)})
        if rows:
            return rows
    return _slot_rows(payload)


def _slot_rows(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    for key in ("shapley", "phi", "estimates", "values_by_slot"):
        table = payload.get(key)
        rows: list[dict[str, Any]] = []
        if isinstance(table, Mapping):
            if any(k in table for k in ("phi", "shapley", "estimates")) and not all(
                isinstance(v, int | float) for v in table.values()
            ):
                rows = _slot_rows(table)
            else:
                for slot, value in table.items():
                    row = _entry(str(slot), value, payload)
                    if row is not None:
                        rows.append(row)
        elif isinstance(table, list):
            for item in table:
                if isinstance(item, Mapping):
                    name = item.get("slot", item.get("name"))
                    row = _entry(str(name), item, payload) if name is not None else None
                    if row is not None:
                        rows.append(row)
        if rows:
            return rows
    return []


def payload_key(coalition: Any) -> str:
    """The coalition key (:mod:`agentbus.coalitions`) of an event's ``coalition`` field.

    Payloads list the members in slot order already; a string is taken as is.
    """
    if isinstance(coalition, list | tuple):
        return "+".join(str(s) for s in coalition)
    return "" if coalition is None else str(coalition)


class RunState:
    """Folds run events into progress figures; see the module docstring."""

    def __init__(
        self, total: int | None = None, *, done: int = 0, total_is_cap: bool = False
    ) -> None:
        self.total = total
        #: an adaptive run: ``total`` is the most it may run, not what it will run
        self.total_is_cap = total_is_cap
        #: counted episodes beyond the grid, by kind (``best``: the --best agent)
        self.extra: dict[str, int] = {}
        self.interrupted = False
        #: (time, prompt and output tokens the servers served so far): :meth:`sample_served`
        self._served: deque[tuple[float, int, int]] = deque()
        self.base_done = done  # episodes finished before this process (resume)
        self.started = 0
        self.done = 0
        self.errors = 0
        #: counted episodes that ended in one of a user's agent's own failures
        self.agent_failures = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.llm_calls = 0
        self.reward_sum = 0.0
        self.successes = 0
        self.seen: set[str] = set()
        self.coalitions: dict[tuple[str, str], dict[str, Any]] = {}
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT)
        self.snapshot: list[dict[str, Any]] = []
        self.snapshot_raw: dict[str, Any] | None = None
        self.run_started_ts: float | None = None
        self.finished = False
        self.last_seq = 0
        self.dropped = 0
        #: counted episodes for the rates: (time, prompt tokens, output tokens)
        self._window: deque[tuple[float, int, int]] = deque()

    def apply(self, event: Mapping[str, Any]) -> None:
        """Fold one event (a dict as stored) into the figures."""
        kind = event.get("type")
        ts = _num(event.get("ts")) or time.time()
        seq = event.get("seq")
        if isinstance(seq, int):
            self.last_seq = max(self.last_seq, seq)
        if self.run_started_ts is None:
            self.run_started_ts = ts
        if kind == EPISODE_ENDED:
            self._ended(event, ts)
        elif kind == EPISODE_STARTED:
            self.started += 1
        elif kind == ATTRIBUTION_SNAPSHOT:
            rows = normalize_snapshot(event)
            if rows:
                self.snapshot = rows
            self.snapshot_raw = dict(event)
        elif kind == RUN_STARTED:
            self.run_started_ts = ts
            self.finished = False
            total = event.get("total")
            if isinstance(total, int):
                self.total = total
        elif kind == RUN_FINISHED:
            self.finished = True

    def _ended(self, event: Mapping[str, Any], ts: float) -> None:
        eid = str(event.get("episode_id", ""))
        outcome = event.get("outcome")
        outcome = outcome if isinstance(outcome, Mapping) else {}
        ok = payload_counts(event)
        prompt = int(outcome.get("prompt_tokens", 0) or 0)
        completion = int(outcome.get("completion_tokens", 0) or 0)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.llm_calls += int(outcome.get("llm_calls", 0) or 0)
        key = payload_key(event.get("coalition"))
        model = str(event.get("test_model") or "")
        row = self.coalitions.get((model, key))
        if row is None:
            coalition = event.get("coalition")
            row = self.coalitions[(model, key)] = {
                "coalition": list(coalition) if isinstance(coalition, list | tuple) else [],
                "key": key,
                "test_model": model,
                "n": 0,
                "reward_sum": 0.0,
                "successes": 0,
                "errors": 0,
            }
        reward = _num(outcome.get("reward")) or 0.0
        success = bool(outcome.get("success"))
        if not ok:
            self.errors += 1
            row["errors"] += 1
        elif eid not in self.seen:
            self.seen.add(eid)
            # only counted episodes make the rate (infra failures of a dead server do not)
            self._window.append((ts, prompt, completion))
            kind = event.get("kind")
            if kind not in _GRID_KINDS:
                self.extra[str(kind)] = self.extra.get(str(kind), 0) + 1
            else:
                self.done += 1
            self.reward_sum += reward
            self.successes += success
            self.agent_failures += is_agent_failure(outcome.get("error_kind"))
            row["n"] += 1
            row["reward_sum"] += reward
            row["successes"] += success
        self.recent.appendleft(
            {
                "seq": event.get("seq"),
                "ts": ts,
                "episode_id": eid,
                "task_id": event.get("task_id"),
                "coalition": key,
                "test_model": model,
                "repeat": event.get("repeat"),
                "reward": reward,
                "success": success,
                "steps": outcome.get("steps", 0),
                "tokens": prompt + completion,
                "latency_s": outcome.get("latency_s"),
                "error_kind": outcome.get("error_kind"),
                "error": outcome.get("error"),
                "traced": "trace" in outcome,
            }
        )

    def sample_served(self, tokens: int | tuple[int, int], now: float | None = None) -> None:
        """Record how many tokens the model servers have served so far (the router's count).

        ``tokens`` is ``(prompt, output)`` (or one total, which then counts as
        output). With samples, tokens/s is what the servers served in the
        window: calls answered from the cache or coalesced are not in it, and a
        call is counted when it was served, not when its episode ended.
        """
        now = time.time() if now is None else now
        prompt, output = tokens if isinstance(tokens, tuple) else (0, tokens)
        self._served.append((now, int(prompt), int(output)))
        while len(self._served) > 2 and self._served[1][0] <= now - RATE_WINDOW_S:
            self._served.popleft()

    def _begin(self, now: float) -> float:
        """Where the episode window starts: the last half minute, or the last
        :data:`RATE_MIN_EPISODES` counted episodes when they reach further back."""
        window = self._window
        while len(window) > RATE_MIN_EPISODES and window[0][0] < now - RATE_WINDOW_S:
            window.popleft()
        begin = now - RATE_WINDOW_S
        if window:
            begin = min(begin, window[0][0])
        started = self.run_started_ts
        return max(begin, now if started is None else started)

    def token_rates(self, now: float | None = None) -> tuple[float, float]:
        """Prompt and output tokens per second: the servers' count when sampled, else the
        episodes' in the rate window (a log being followed)."""
        now = time.time() if now is None else now
        if len(self._served) >= 2:
            (t0, p0, o0), (t1, p1, o1) = self._served[0], self._served[-1]
            dt = max(t1 - t0, 1e-9)
            return (p1 - p0) / dt, (o1 - o0) / dt
        if self._served:
            return 0.0, 0.0
        span = max(now - self._begin(now), 1.0)
        return (
            sum(p for _, p, _ in self._window) / span,
            sum(o for _, _, o in self._window) / span,
        )

    def rates(self, now: float | None = None) -> tuple[float, float]:
        """Counted episodes per second and tokens per second (prompt and output together).

        The episode rate covers the last half minute or the last
        :data:`RATE_MIN_EPISODES` counted episodes, whichever reaches further
        back, so a slow run's rate (and ETA) rests on enough episodes to hold
        still between lines.
        """
        now = time.time() if now is None else now
        span = max(now - self._begin(now), 1.0)
        eps = len(self._window) / span
        prompt, output = self.token_rates(now)
        return eps, prompt + output

    def eta_s(self, now: float | None = None) -> float | None:
        """Seconds left at the current rate (None before any rate, or with no total)."""
        eps, _ = self.rates(now)
        if not self.total or eps <= 0:
            return None
        return max(self.total - (self.base_done + self.done), 0) / eps

    def summary(self, now: float | None = None) -> dict[str, Any]:
        """The figures as one JSON-friendly dict (``/api/status``)."""
        eps, tps = self.rates(now)
        prompt_tps, output_tps = self.token_rates(now)
        done = self.base_done + self.done
        coalitions = []
        rows = sorted(
            self.coalitions.values(),
            key=lambda r: (r["test_model"], len(r["coalition"]), r["key"]),
        )
        for row in rows:
            n = row["n"]
            coalitions.append(
                {
                    "key": row["key"],
                    "test_model": row["test_model"],
                    "coalition": row["coalition"],
                    "n": n,
                    "mean_reward": row["reward_sum"] / n if n else None,
                    "success_rate": row["successes"] / n if n else None,
                    "errors": row["errors"],
                }
            )
        return {
            "total": self.total,
            "total_is_cap": self.total_is_cap,
            "extra": dict(self.extra),
            "eta_s": None if self.finished else self.eta_s(now),
            "done": done,
            "done_this_process": self.done,
            "started": self.started,
            "errors": self.errors,
            "agent_failures": self.agent_failures,
            "mean_reward": self.reward_sum / self.done if self.done else None,
            "episodes_per_s": eps,
            "tokens_per_s": tps,
            "prompt_tokens_per_s": prompt_tps,
            "output_tokens_per_s": output_tps,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "llm_calls": self.llm_calls,
            "finished": self.finished,
            "offset": self.last_seq,
            "dropped": self.dropped,
            "phi": self._shown_phi(),
            "phi_episodes": _snapshot_count(self.snapshot_raw),
            "phi_note": self._phi_note(),
            # per-coalition means of the estimate (admitted task blocks), not of
            # whatever has ended so far: the dashboard shows only these
            "estimate_coalitions": _estimate_coalitions(self.snapshot_raw),
            "admitted_tasks": (self.snapshot_raw or {}).get("admitted_tasks"),
            "coalitions": coalitions,
            "recent": list(self.recent),
        }

    def _tasks_in(self) -> int | None:
        raw = self.snapshot_raw or {}
        n = raw.get("admitted_tasks")
        return n if isinstance(n, int) and not isinstance(n, bool) else None

    def _shown_phi(self) -> list[dict[str, Any]]:
        """The snapshot's rows once they rest on enough complete tasks to mean something."""
        tasks = self._tasks_in()
        if tasks is not None and tasks < MIN_TASKS_SHOWN:
            return []
        return self.snapshot

    def _phi_note(self) -> str | None:
        note = snapshot_note(self.snapshot_raw)
        tasks = self._tasks_in()
        if note is None and self.snapshot and tasks is not None and tasks < MIN_TASKS_SHOWN:
            note = (
                f"not estimable yet: {tasks} complete task(s), an interval needs {MIN_TASKS_SHOWN}"
            )
        if note and (self.finished or self.interrupted):  # nothing more is coming
            note = note.replace("not estimable yet: ", "not estimable: ")
        return note

    def head(self, now: float | None = None) -> str:
        """``episodes 120/480 +4 best`` (adaptive: ``120, at most 3200``)."""
        s = self.summary(now)
        total = s["total"]
        if not total:
            text = f"{s['done']}"
        elif s["total_is_cap"]:
            text = f"{s['done']} (adaptive, at most {total})"
        else:
            text = f"{s['done']}/{total}"
        for kind, n in s["extra"].items():
            text += f" +{n} {kind}"
        return text

    def line(self, now: float | None = None) -> str:
        """One plain progress line, for logs and pipes."""
        s = self.summary(now)
        parts = [
            f"episodes {self.head(now)}",
            f"{episodes_rate(s['episodes_per_s'])}",
            token_rates_text(s),
            f"errors {s['errors']}",
        ]
        if s["agent_failures"]:
            parts.append(f"agent failures {s['agent_failures']}")
        if s["eta_s"] is not None:
            parts.append(eta_text(s["eta_s"], s["total_is_cap"]))
        if s["phi"]:
            models = list(dict.fromkeys(str(r.get("model") or "") for r in s["phi"]))
            labels = model_labels(models) if len(models) > 1 else None
            parts.append("phi " + " ".join(_phi_text(r, labels) for r in s["phi"]))
        elif s["phi_note"]:
            parts.append(s["phi_note"])
        if s["dropped"]:
            parts.append(f"(display skipped {s['dropped']} events)")
        return " | ".join(parts)


def episodes_rate(eps: float) -> str:
    """``2.40 ep/s``, or ``1.0 ep/min`` below one episode in ten seconds (not ``0.00 ep/s``)."""
    if 0 < eps < 0.1:
        return f"{eps * 60:.1f} ep/min"
    return f"{eps:.2f} ep/s"


def token_rates_text(s: Mapping[str, Any]) -> str:
    """``8 out tok/s (290 prompt)``: what a model writes apart from what it reads."""
    output = float(s.get("output_tokens_per_s") or 0.0)
    prompt = float(s.get("prompt_tokens_per_s") or 0.0)
    return f"{output:.0f} out tok/s ({prompt:.0f} prompt)"


def run_console(**kwargs: Any) -> Any:
    """The run's rich Console: text is printed as written, never read as markup.

    Model names, file paths, task text and hints such as ``[prices]`` come
    from outside the program; as markup, square brackets vanish or raise.
    """
    from rich.console import Console

    return Console(markup=False, **kwargs)


def eta_text(seconds: float, cap: bool = False) -> str:
    """``ETA 4m05s`` (an adaptive run: ``ETA at most 4m05s``: it may stop sooner)."""
    s = round(seconds)
    if s >= 3600:
        text = f"{s // 3600}h{s % 3600 // 60:02d}m"
    elif s >= 60:
        text = f"{s // 60}m{s % 60:02d}s"
    else:
        text = f"{s}s"
    return f"ETA at most {text}" if cap else f"ETA {text}"


def snapshot_note(raw: Mapping[str, Any] | None) -> str | None:
    """Why a snapshot has no estimates yet (the service says, per model), if it says."""
    if not raw:
        return None
    if raw.get("estimable") is False and raw.get("reason"):
        return f"not estimable yet: {raw['reason']}"
    models = raw.get("models")
    if isinstance(models, Mapping):
        for model, summary in models.items():
            if isinstance(summary, Mapping) and summary.get("not_estimable"):
                return f"{model}: {summary['not_estimable']}"
    note = raw.get("not_estimable")
    return str(note) if note else None


def _estimate_coalitions(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """model -> coalition key -> {n, mean} of the latest estimable snapshot."""
    if not raw or raw.get("estimable") is False:
        return {}
    models = raw.get("models")
    if not isinstance(models, Mapping):
        return {}
    return {
        str(m): {"coalitions": dict(s.get("coalitions") or {})}
        for m, s in models.items()
        if isinstance(s, Mapping)
    }


def _snapshot_count(raw: Mapping[str, Any] | None) -> int | None:
    """How many episodes the latest snapshot was estimated from, when it says."""
    if not raw:
        return None
    for key in ("n", "episodes", "n_episodes", "count"):
        value = raw.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _phi_text(row: Mapping[str, Any], labels: Mapping[str, str] | None = None) -> str:
    model = str(row.get("model") or "")
    name = f"{row['slot']}@{labels.get(model, model)}" if labels and model else row["slot"]
    text = f"{name}={row['phi']:+.3f}"
    if row.get("lo") is not None and row.get("hi") is not None:
        text += f"[{row['lo']:+.3f},{row['hi']:+.3f}]"
    return text


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

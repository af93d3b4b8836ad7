"""The numbers of a run's progress: :class:`RunState` folds run events into them.

``RunState`` folds run events (as JSON dicts, the shape of ``events.jsonl``)
into the figures people watch: episodes done of total, rates, errors, tokens,
per-coalition means and the latest attribution estimates. The console display
(:mod:`agentbus.runs.progress`) and the live server share it, so the terminal
and the dashboard never disagree about what "done" means: an episode counts
once, by its id, when it has an outcome that counts for v(S) (see
:func:`agentbus.runs.store.counts`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from agentbus.core.events import (
    ATTRIBUTION_SNAPSHOT,
    EPISODE_ENDED,
    EPISODE_STARTED,
    RUN_FINISHED,
    RUN_STARTED,
)
from agentbus.core.outcome import is_agent_failure
from agentbus.core.record import payload_counts
from agentbus.llm.labels import model_labels
from agentbus.runs.bill import sent_of
from agentbus.runs.snapshots import (
    _estimate_coalitions,
    _num,
    _phi_text,
    _snapshot_count,
    normalize_snapshot,
    payload_key,
    snapshot_note,
)

RATE_WINDOW_S = 30.0
#: the rates cover at least this many counted episodes, however long ago they ended: at one
#: episode a minute a 30 s window holds 0 or 1 of them, and its ETA jumped 3x between lines
RATE_MIN_EPISODES = 20
RECENT = 50
#: an interval from fewer complete tasks than this is shown as "not yet", not as +0.000 [-0.5, +0.5]
MIN_TASKS_SHOWN = 2
#: episode kinds beyond the coalition grid (``--best``, ``--pareto``): shown apart from done/total
_GRID_KINDS = (None, "coalition")


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
        #: what the ended episodes' calls upstream cost (None: no priced call), every attempt
        self.spent_usd: float | None = None
        self.sent_calls = 0
        self.sent_tokens = 0
        self.reward_sum = 0.0
        self.successes = 0
        self.seen: set[str] = set()
        self.coalitions: dict[tuple[str, str], dict[str, Any]] = {}
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT)
        self.snapshot: list[dict[str, Any]] = []
        self.snapshot_raw: dict[str, Any] | None = None
        self.run_started_ts: float | None = None
        #: the latest event time seen, and the seconds earlier processes of a resumed
        #: run ran (each run.started to its last event): the run's own duration
        self.last_ts: float | None = None
        self._earlier_s = 0.0
        self.finished = False
        #: when the run finished, and why it stopped early (run.finished's "stopped")
        self.finished_ts: float | None = None
        self.stopped: str | None = None
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
        if kind == RUN_STARTED and self.run_started_ts is not None and self.last_ts is not None:
            # a resumed run: the process before ran from its start to its last event
            self._earlier_s += max(self.last_ts - self.run_started_ts, 0.0)
            self._window.clear()  # this process's rate is its own episodes'
        if self.run_started_ts is None:
            self.run_started_ts = ts
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
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
            self.finished_ts = ts
            stopped = event.get("stopped")
            self.stopped = str(stopped) if stopped else None

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
        usd, calls, tokens = sent_of(outcome)
        if usd is not None:
            self.spent_usd = (self.spent_usd or 0.0) + usd
        self.sent_calls += calls
        self.sent_tokens += tokens
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
                "agent_failures": 0,
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
            failed = is_agent_failure(outcome.get("error_kind"))
            self.agent_failures += failed
            row["agent_failures"] += failed
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

    def duration_s(self) -> float | None:
        """Seconds the run ran: each process from its run.started to its run.finished
        (or its last event), summed over a resumed run's processes; None before any."""
        started = self.run_started_ts
        if started is None:
            return None
        end = self.finished_ts if self.finished and self.finished_ts is not None else self.last_ts
        return max(self._earlier_s + (end or started) - started, 1e-9)

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
        span = self.duration_s() if self.finished or self.interrupted else None
        if span is not None:
            # nothing more is coming: the rates are over the run's own duration, not
            # a window that ends at the wall clock (and so falls while a page is open)
            eps = len(self.seen) / span
            prompt_tps, output_tps = self.prompt_tokens / span, self.completion_tokens / span
            tps = prompt_tps + output_tps
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
                    "agent_failures": row["agent_failures"],
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
            # the run's own duration, once nothing more is coming (the rates are over it)
            "duration_s": span,
            "tokens_per_s": tps,
            "prompt_tokens_per_s": prompt_tps,
            "output_tokens_per_s": output_tps,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "llm_calls": self.llm_calls,
            # summed from the episodes' records (the finished run's bill: agentbus.runs.bill)
            "spent": {
                "usd": self.spent_usd,
                "sent_calls": self.sent_calls,
                "sent_tokens": self.sent_tokens,
                "source": "records",
            },
            "finished": self.finished,
            "stopped": self.stopped,
            "offset": self.last_seq,
            "dropped": self.dropped,
            "phi": self._shown_phi(),
            "phi_episodes": _snapshot_count(self.snapshot_raw),
            "phi_note": self._phi_note(),
            # per-coalition means of the estimate (admitted task blocks), not of
            # whatever has ended so far: the dashboard shows only these
            "estimate_coalitions": _estimate_coalitions(self.snapshot_raw),
            "admitted_tasks": (self.snapshot_raw or {}).get("admitted_tasks"),
            "headline": (self.snapshot_raw or {}).get("headline"),  # the console's MVP line
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

"""Reading attribution snapshots: whatever shape the service sends, one row per slot.

The attribution service's snapshot events name their figures in several ways
(``phi`` or ``value``, ``ci`` or ``lo``/``hi``, per model or flat). The console,
the live server, the phi history and ``tail`` all read them through
:func:`normalize_snapshot` and say why there are none yet with
:func:`snapshot_note`, so they show the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

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
    """The coalition key (:mod:`agentbus.core.coalitions`) of an event's ``coalition`` field.

    Payloads list the members in slot order already; a string is taken as is.
    """
    if isinstance(coalition, list | tuple):
        return "+".join(str(s) for s in coalition)
    return "" if coalition is None else str(coalition)


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

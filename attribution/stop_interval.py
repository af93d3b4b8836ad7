"""Which interval a run leads with when an adaptive ``--stop`` rule ends it.

The fixed-sample interval is valid at a ``halfwidth`` stop; at a stop chosen
on the data (``mvp``, ``ranking``) only the anytime-valid one holds, so the
results file swaps it into ``ci_low``/``ci_high`` and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: what ``ci_low``/``ci_high`` are (adaptive runs included: they stop on it, see
#: :meth:`attribution.service.AttributionService.done`); ``cs_*`` is the anytime-valid one
FIXED = "fixed-sample"
#: ``ci_low``/``ci_high`` when a run leads with the anytime-valid interval
ANYTIME = "anytime-valid"
#: the interval a run leads with when ``--stop RULE`` stops it on the data. At an
#: ``mvp`` or ``ranking`` stop the fixed-sample interval is not valid (stopping when
#: the top slot looks separated selects runs where it is high: its interval covered
#: 0.90, action's 0.80); the anytime-valid one holds at any stop. At a ``halfwidth``
#: stop (Chow-Robbins, 20 tasks or more) the fixed-sample one was measured to cover
#: at the stop (benchmarks/stop_coverage.py, docs/statistics.md).
STOP_INTERVAL = {"halfwidth": FIXED, "mvp": ANYTIME, "ranking": ANYTIME}


def lead_with_stop_interval(results: dict[str, Any], stop: str | None) -> dict[str, Any]:
    """Make ``ci_low``/``ci_high`` the interval valid at an adaptive ``stop`` (in place).

    Where that is the anytime-valid one, every index row's ``ci_*`` becomes
    its ``cs_*`` and the fixed-sample bounds move to ``fixed_low`` /
    ``fixed_high``; ``results["interval"]`` says which it is, so the
    console, results.md, the plots and the dashboard, which all read
    ``ci_*``, lead with it. ``stop`` None (not adaptive): unchanged.
    """
    if (
        stop is None
        or STOP_INTERVAL.get(stop, FIXED) == FIXED
        or results.get("interval") == ANYTIME
    ):
        return results
    for summary in (results.get("models") or {}).values():
        for index in ("shapley", "banzhaf", "interactions"):
            for row in (summary.get(index) or {}).values():
                if row.get("cs_low") is None:
                    continue
                row["fixed_low"], row["fixed_high"] = row["ci_low"], row["ci_high"]
                row["ci_low"], row["ci_high"] = row["cs_low"], row["cs_high"]
    results["interval"] = ANYTIME
    return results


def stop_interval_line(results: Mapping[str, Any]) -> str:
    """One console line after an adaptive stop: which interval the figures above are."""
    if results.get("interval") == ANYTIME:
        return (
            "intervals shown: anytime-valid (they hold at a stop chosen on the data; "
            "the fixed-sample ones, which do not, are fixed_low/fixed_high in results.json)"
        )
    return (
        "intervals shown: fixed-sample (measured to cover at a --stop halfwidth stop; "
        "the anytime-valid ones are cs_low/cs_high in results.json)"
    )

"""An agentbus run of an Inspect task, written as Inspect logs: one ``.eval`` per coalition.

``--inspect-log DIR`` keeps each episode's sample (messages, output, scores,
transcript events) in its record, and after the run writes, per test model
and coalition, an Inspect ``EvalLog`` of that coalition's samples: the task's
name, version and file, each role's model (``model_roles``), the main
model, the scorer's mean as its ``accuracy``. ``inspect view --log-dir DIR``
then lists the coalitions as evaluations side by side.
"""

from __future__ import annotations

import math
import re
import uuid
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentbus.core.record import EpisodeRecord
from agentbus.gateway.inspect_task import MAIN_MODULE, LoadedTask


def _label(coalition: tuple[str, ...]) -> str:
    return "+".join(coalition) if coalition else "none"


def _file_name(test_model: str, coalition: tuple[str, ...]) -> str:
    raw = f"{test_model}_{_label(coalition)}"
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", raw) + ".eval"


def write_logs(loaded: LoadedTask, records: Iterable[EpisodeRecord], out_dir: Path) -> list[Path]:
    """One Inspect log per (test model, coalition) of the counted episodes; the paths."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalSample,
        EvalScore,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ModelConfig

    groups: dict[tuple[str, tuple[str, ...]], list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        groups[(record.test_model or "", tuple(record.coalition))].append(record)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    created = datetime.now(UTC).isoformat()
    run_id = uuid.uuid4().hex  # one run, one evaluation per coalition (the viewer keys by id)
    for (test_model, coalition), group in sorted(groups.items()):
        samples = [_sample(r) for r in group]
        kept = [EvalSample.model_validate(s) for s in samples if s is not None]
        assignment = group[0].assignment
        roles = {s: ModelConfig(model=str(m)) for s, m in assignment.items() if s != MAIN_MODULE}
        main = assignment.get(MAIN_MODULE, "none")
        mean = sum(r.outcome.reward for r in group) / len(group)
        scorer = _scorer_name(kept)
        spec = EvalSpec(
            created=created,
            task=loaded.name,
            task_id=f"{loaded.name}-{_file_name(test_model, coalition)[: -len('.eval')]}",
            eval_id=uuid.uuid4().hex,
            run_id=run_id,
            task_version=loaded.task.version,
            task_file=str(loaded.spec.partition("@")[0]),
            dataset=EvalDataset(name=loaded.name, samples=len(loaded.samples)),
            model=str(main),
            model_roles=dict(roles) or None,
            config=EvalConfig(),
            metadata={"agentbus": {"test_model": test_model, "coalition": list(coalition)}},
        )
        log = EvalLog(
            status="success",
            eval=spec,
            samples=kept,
            results=EvalResults(
                total_samples=len(group),
                completed_samples=len(group),
                scores=[
                    EvalScore(
                        name=scorer,
                        scorer=scorer,
                        metrics={"accuracy": EvalMetric(name="accuracy", value=mean)},
                    )
                ],
            ),
        )
        path = out_dir / _file_name(test_model, coalition)
        write_eval_log(log, str(path))
        written.append(path)
    return written


def _sample(record: EpisodeRecord) -> dict[str, Any] | None:
    result = record.outcome.details.get("result") or {}
    sample = (result.get("inspect") or {}).get("sample")
    if not isinstance(sample, dict):
        return None
    for score in (sample.get("scores") or {}).values():
        if isinstance(score, dict) and score.get("value") is None:
            score["value"] = math.nan  # unscored: NaN in Inspect, null once stored as JSON
    return sample


def _scorer_name(samples: list[Any]) -> str:
    for sample in samples:
        if sample.scores:
            return str(next(iter(sample.scores)))
    return "score"


__all__ = ["write_logs"]

"""``--screen loo``: a leave-one-out screen first, then the game of the modules that can matter.

Phase 1 runs the loo design (every slot alone, every slot left out, empty
and full) on the first share of the tasks
(:data:`attribution.screening.SCREEN_SHARE`) into ``RUN_DIR.screen``, beside
the run directory; :func:`attribution.screening.screen` drops the slots
whose loo interval lies inside half the target half-width
(``--target-halfwidth``). Phase 2 is the ordinary run (``--estimator``, any
stop rule) over the kept slots only, the dropped ones held at their default
side, in ``RUN_DIR``. ``RUN_DIR/screen.json``, written when phase 2 is done,
keeps the screen: every slot's loo estimate and interval, and which were
dropped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console

from agentbus.app.config import RunConfig
from agentbus.app.preparation import default_run_dir
from agentbus.core.errors import UserError
from attribution.collect import collect_from_log
from attribution.estimators import Estimator
from attribution.screening import SCREEN_SHARE, screen

Evaluate = Callable[[RunConfig, Console], Awaitable[Any]]


async def evaluate_screened(config: RunConfig, console: Console, run: Evaluate) -> Any:
    """Run the screen, then the run over the slots that can matter; returns the last report."""
    run_dir = config.run_dir or default_run_dir(config)
    screen_dir = run_dir.with_name(run_dir.name + ".screen")
    size = config.limit or config.tasks
    first = max(2, math.ceil(SCREEN_SHARE * size))
    phase1 = config.model_copy(
        update={
            "screen": "off",
            "estimator": "loo",
            "limit": first,
            "run_dir": screen_dir,
            "adaptive": False,
            "best": False,
            "pareto": None,
        }
    )
    console.print(f"screen: leave-one-out on {first} tasks ({screen_dir})")
    first_report = await run(phase1, console)
    collector = collect_from_log(screen_dir / "events.jsonl")
    if not collector.games:
        raise UserError("the screen ran no coalition episode")
    kept: set[str] = set()
    report: dict[str, Any] = {"halfwidth": config.target_halfwidth, "models": {}}
    for model, game in sorted(collector.games.items()):
        phi_t = Estimator("loo", game.n).per_task_values(game)
        result = screen(phi_t, game.slots, config.target_halfwidth)
        console.print(f"{model}: {result.summary()}")
        kept |= {game.slots[i] for i in result.kept}
        report["models"][model] = {
            "loo": result.estimates.to_dict(),
            "dropped": [game.slots[i] for i in result.dropped],
        }
        slots = game.slots
    report["kept"] = [s for s in slots if s in kept]
    if not kept:
        (screen_dir / "screen.json").write_text(json.dumps(report, indent=1) + "\n")
        console.print("screen: no module can matter at this precision; nothing left to play")
        return first_report
    phase2 = config.model_copy(
        update={
            "screen": "off",
            "slots": report["kept"],
            "vary": {s: v for s, v in config.vary.items() if s in kept},
            "run_dir": run_dir,
        }
    )
    final = await run(phase2, console)
    (run_dir / "screen.json").write_text(json.dumps(report, indent=1) + "\n")
    return final

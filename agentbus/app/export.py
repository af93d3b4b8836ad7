"""``python -m agentbus.export RUN_DIR --format csv|jsonl|parquet``: a run's episodes as a table.

One row per counted episode (ids, test model, coalition, each slot's model,
reward, success, steps, tokens and cost in total and per slot, failure kind
and reason; for your own agent also its answer, the expected answer and the
scorer's verdict);
see :mod:`agentbus.runs.frames`. ``agentbus.load(RUN_DIR)`` gives the same rows,
the coalition means and the attribution table as pandas DataFrames. Parquet
and ``load`` need the ``[data]`` extra (pandas, pyarrow). The kernel never
imports this; ``python -m agentbus.export`` runs it through :mod:`agentbus.export`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from agentbus.core.errors import UserError
from agentbus.runs.frames import FORMATS, episode_rows, write_rows
from agentbus.runs.pipes import pipe_safe


@pipe_safe
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentbus.export",
        description="Write one row per counted episode of RUN_DIR as csv, jsonl or parquet.",
    )
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    parser.add_argument("--format", default="csv", help="csv (default), jsonl or parquet")
    parser.add_argument(
        "--out", type=Path, default=None, help="output file (default RUN_DIR/episodes.FORMAT)"
    )
    args = parser.parse_args(argv)
    try:
        if args.format not in FORMATS:
            raise UserError(f"--format must be one of {', '.join(FORMATS)}, got {args.format!r}")
        rows = episode_rows(args.run_dir)
        out = args.out or args.run_dir / f"episodes.{args.format}"
        write_rows(rows, args.format, out)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(rows)} episodes to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

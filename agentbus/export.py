"""``python -m agentbus.export RUN_DIR --format csv|jsonl|parquet``: a run's episodes as a table.

The command lives in :mod:`agentbus.app.export`.
Kept at the top level so the command users type stays short and stable; the
kernel never imports this. ``agentbus.load(RUN_DIR)`` is :func:`agentbus.runs.frames.load`.
"""

from agentbus.app.export import main

if __name__ == "__main__":
    raise SystemExit(main())

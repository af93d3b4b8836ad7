"""``python -m agentbus.view RUN_DIR [RUN_DIR ...]``: open finished runs in the dashboard.

Lives in :mod:`agentbus.runs.viewer`; kept at the top level so the command is
short. One run opens on its dashboard (attribution, the course of phi,
coalitions, the episode list, transcripts, coalition diffs); two or more open
on their comparison. The kernel never imports this.
"""

from agentbus.runs.viewer import main

if __name__ == "__main__":
    raise SystemExit(main())

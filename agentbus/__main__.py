"""``python -m agentbus COMMAND ...``: the same commands as the ``agentbus`` script."""

from agentbus.app.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

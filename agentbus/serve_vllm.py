"""``python -m agentbus.serve_vllm``: start vLLM servers for a run, print its model specs.

The command lives in :mod:`agentbus.app.serve_vllm`.
Kept at the top level so the command users type stays short and stable; the
kernel never imports this.
"""

from agentbus.app.serve_vllm import main

if __name__ == "__main__":
    raise SystemExit(main())

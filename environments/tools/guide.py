"""What the agent is told: the first observation and the PRAF prompt specialisation."""

from __future__ import annotations

from typing import Any

import orjson

from agentbus import Task, action_fence, env_guide


def signature(schema: dict[str, Any]) -> str:
    """``name(arg: type, arg: type = default): description`` for one tool schema."""
    fn = schema.get("function", schema)
    props = fn.get("parameters", {}).get("properties", {})
    required = set(fn.get("parameters", {}).get("required", []))
    args = []
    for name, prop in props.items():
        kind = "|".join(map(repr, prop["enum"])) if "enum" in prop else prop.get("type", "any")
        default = "" if name in required else f" = {prop.get('default')!r}"
        args.append(f"{name}: {kind}{default}")
    return f"{fn['name']}({', '.join(args)}): {fn.get('description', '')}"


def observation_text(task: Task) -> str:
    lines = ["Functions you can call:"]
    lines += [f"- {signature(s)}" for s in task.data["tools"]]
    lines.append("- finish(answer: string): give the final answer to the user and end the task")
    prior = task.data.get("prior")
    if prior:
        call = orjson.dumps(prior["call"]).decode()
        lines.append(
            f"Earlier in this conversation the assistant already called {call} and got: "
            f"{prior['error']}"
        )
    return "\n".join(lines)


def tools_guide() -> dict[str, str]:
    return env_guide(
        system=(
            "You answer a user's query by calling functions (APIs) and reporting what they "
            "return. Each action is one call, written as one JSON object "
            '{"name": FUNCTION, "arguments": {...}}. A call can fail: an invalid argument or an '
            "unknown name must be fixed; a rate limit or a timeout is transient and the same "
            'call should be retried. When every fact is known, call {"name": "finish", '
            '"arguments": {"answer": "..."}} with an answer that states the values returned.'
        ),
        planning=(
            "List the calls needed, in order, as numbered steps naming each function and its "
            "arguments (an id returned by one call feeds the next)."
        ),
        reasoning=(
            "Decide the single next call from what the earlier calls returned, or finish when "
            "every fact is known. End with one line 'Next action: {JSON call}'."
        ),
        action=(
            "Write exactly one call inside one ```action fence, for example:\n"
            + action_fence('{"name": "get_timezone", "arguments": {"city": "Oslo"}}')
        ),
        reflection=(
            "The last call failed. Say why (a wrong function, a bad argument, or a transient "
            "error to retry) and end with one line 'Next action: {JSON call}'."
        ),
    )

"""The robot specialisation of the four PRAF prompts (``Environment.guide``).

Modules stay environment-agnostic: all they learn about robots comes from
these texts. They name the robots, point at their reach in the scene, list
this task kind's action vocabulary and give the exact ``EXECUTE`` syntax the
action module must write inside its ```action fence.
"""

from __future__ import annotations

from agentbus import action_fence, env_guide
from environments.robot.rules import Rules


def _example(rules: Rules) -> str:
    first, *rest = rules.robots
    syntax = next(iter(rules.verbs))
    lines = ["EXECUTE", f"NAME: {first} ACTION: {syntax}"]
    lines += [f"NAME: {r} ACTION: WAIT" for r in rest]
    return "\n".join(lines)


def build_guide(rules: Rules) -> dict[str, str]:
    robots = ", ".join(rules.robots)
    vocab = "\n".join(f"- {syntax}: {meaning}" for syntax, meaning in rules.verbs.items())
    return env_guide(
        system=(
            f"You help coordinate a team of robots ({robots}) on a tabletop; this is a "
            f"{rules.kind} task. The robots act in rounds: in every round each robot performs "
            "exactly one action, all at the same time. A robot can only touch what is listed in "
            "its reach in the scene description. A round that breaks a rule is rejected as a "
            "whole and changes nothing. The task has a round limit.\n"
            f"Actions of this task:\n{vocab}"
        ),
        planning=(
            "Plan the whole task as numbered steps in the order they must happen. Give each step "
            "to a robot that can do it (reach, tool), one action per line, like "
            f"'1. {rules.robots[0]}: <ACTION>'. Respect the order the goal asks for."
        ),
        reasoning=(
            "Decide only the next round: one action for every robot "
            f"({robots}), WAIT for a robot with nothing useful to do. Check each precondition "
            "against the current state (reach, what is held, where the tools are, the required "
            "order). Explain briefly, then end with one line of the form "
            f"'Next round: {rules.robots[0]} <ACTION>; {rules.robots[-1]} <ACTION>'."
        ),
        action=(
            "Write the round inside one ```action fence: the line EXECUTE, then exactly one "
            f"line per robot ({robots}) of the form 'NAME: <robot> ACTION: <action>', using only "
            "the actions listed for this task. For example:\n"
            f"{action_fence(_example(rules))}\n"
            "Several EXECUTE blocks in the fence propose several rounds; they run in order and "
            "execution stops at the first invalid round."
        ),
        reflection=(
            "The last round was rejected or went wrong. Name the robot and the action at fault and "
            "the rule it broke (the feedback says why), then state the correct next round as "
            f"'Next round: {rules.robots[0]} <ACTION>; {rules.robots[-1]} <ACTION>'."
        ),
    )

"""The neutral sentences the simulator pads its answers with, and how to see past them.

A simulated answer is its content (a plan, a thought, an action, a value)
followed by neutral sentences drawn from the answering profile's random
stream, so two profiles that agree on the content still word it differently.
An injected mistake (:mod:`agentbus.sim.mistakes`) must not depend on that
wording: a later call whose upstream was put right by another profile, with
the same content, is the same situation and errs the same way.
"""

from __future__ import annotations

#: padding of module answers (agentbus.sim.model)
PADDING = (
    "I will keep the overall goal in view while working through this.",
    "Each step should follow from the information given so far.",
    "It is worth checking the result against the task statement before moving on.",
    "If something looks inconsistent, the earlier steps deserve a second look.",
    "Keeping the approach simple makes mistakes easier to spot.",
    "The feedback from the environment is the best guide for what to try next.",
    "A careful reading of the task avoids wasted rounds.",
    "I should not assume anything the observation does not state.",
)

#: padding of a gateway agent's answers (agentbus.sim.gateway_model)
GATEWAY_PADDING = (
    "Let me restate the task in my own words first.",
    "The given facts constrain the result, so I work from them.",
    "Checking each step against the statement avoids slips.",
    "A simple approach is easiest to verify.",
    "I keep the intermediate results short and exact.",
    "Before answering I compare the result with what was asked.",
)


def without_filler(text: str) -> str:
    """``text`` with every padding sentence taken out and its whitespace collapsed."""
    for sentence in (*PADDING, *GATEWAY_PADDING):
        if sentence in text:
            text = text.replace(sentence, " ")
    return " ".join(text.split())


__all__ = ["GATEWAY_PADDING", "PADDING", "without_filler"]

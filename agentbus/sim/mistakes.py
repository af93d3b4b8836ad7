"""Injected mistakes: a profile that errs on named prompts, so blame has a known truth.

Blame (``python -m agentbus.blame``) is checked against the simulator's own
rolled mistakes, but in a failed episode of a weak agent most calls are
mistakes, so naming *some* mistake proves little. Injection gives a truth
that can fail: an agent whose modules are near-perfect is run once cleanly,
one of its calls is picked, and the run is made again with the profile told
to answer exactly that prompt wrong. The failure then has one known cause.

A profile's ``mistakes`` lists :func:`prompt_key` digests. The key covers the
prompt only (not the sampling), so the same model asked the same thing again
at any temperature or seed still errs: a fault of the model, which the
placebo replays of blame must meet again, while another profile (the repair
model) is not affected. The answer is drawn from the same random streams as
without the fault, with every role's base accuracy at the floor, so only the
verdict and what follows from it change. A profile without ``mistakes``
answers exactly as before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import orjson

from agentbus.llm.types import ChatMessage
from agentbus.sim.filler import without_filler
from agentbus.sim.profiles import SKILL_ROLES, Profile

#: the base accuracy of an injected mistake (a logit of about -18: wrong whatever helps it)
FLOOR = 1e-8


def prompt_key(messages: Sequence[ChatMessage]) -> str:
    """A short digest of a prompt's (role, content) pairs: the name of an injected mistake.

    The simulator's padding sentences are left out (:mod:`agentbus.sim.filler`):
    an upstream answer worded differently with the same content (the repair
    model's right answer where the agent's was right too) leaves the situation,
    and so the mistake, as it was.
    """
    prompt = [
        [str(m.get("role", "")), without_filler(str(m.get("content") or ""))] for m in messages
    ]
    return hashlib.sha256(orjson.dumps(prompt)).hexdigest()[:16]


def injected(profile: Profile, messages: Sequence[ChatMessage]) -> Profile:
    """``profile``, or a copy that answers wrong when ``messages`` is one of its mistakes."""
    if not profile.mistakes or prompt_key(messages) not in profile.mistakes:
        return profile
    floor = {
        role: getattr(profile, role).model_copy(update={"base": FLOOR}) for role in SKILL_ROLES
    }
    return profile.model_copy(update=floor)


__all__ = ["FLOOR", "injected", "prompt_key"]

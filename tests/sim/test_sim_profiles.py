"""Skill profiles: the built-ins, config overrides and clear errors."""

from __future__ import annotations

import pytest

from agentbus.core.errors import UserError
from agentbus.sim.expert import Upstream
from agentbus.sim.model import probability_correct
from agentbus.sim.profiles import BUILTIN, SKILL_ROLES, ProfileSet


def test_builtins_and_single_role_profiles() -> None:
    assert {"weak", "strong"} <= set(BUILTIN.names())
    weak, strong = BUILTIN.get("weak"), BUILTIN.get("strong")
    for role in SKILL_ROLES:
        assert strong.skill(role).base > weak.skill(role).base
    for role in ("planning", "reasoning", "action", "reflection"):
        one = BUILTIN.get(f"strong-{role}")
        for other in SKILL_ROLES:
            expected = strong if other == role else weak
            assert one.skill(other) == expected.skill(other)
    # a strong actor is misled less by a wrong thought: under one it is still
    # right far more often than a weak actor (its logit shift may be larger:
    # it also leans on good thoughts, which keeps reasoning worth something)
    bad = Upstream(thought=False)
    assert probability_correct(strong.action, bad) > 0.5 > 4 * probability_correct(weak.action, bad)
    assert weak.skill("unknown-role") == weak.other


def test_overrides_merge_and_extend() -> None:
    profiles = ProfileSet(
        {
            "mine": {"extends": "strong", "planning": {"malformed": 0.2, "tokens": 300}},
            "fresh": {"reasoning": {"base": 0.6}},
            "weak": {"action": {"base": 0.5}},
        }
    )
    assert profiles.get("weak").action.base == 0.5
    assert profiles.get("weak").action.thought == BUILTIN.get("weak").action.thought
    mine = profiles.get("mine")
    assert mine.planning.base == BUILTIN.get("strong").planning.base
    assert (mine.planning.malformed, mine.planning.tokens) == (0.2, 300)
    # new names start from weak, as overridden, whatever the order
    assert profiles.get("fresh").action == profiles.get("weak").action
    assert "mine" in profiles and "mine" not in BUILTIN


def test_bad_profiles_are_user_errors() -> None:
    with pytest.raises(UserError, match="unknown sim profile 'x'; known: strong, strong-action"):
        BUILTIN.get("x")
    with pytest.raises(UserError, match=r"profile 'p': action.base"):
        ProfileSet({"p": {"action": {"base": 1.5}}})
    with pytest.raises(UserError, match="profile 'p': speling"):
        ProfileSet({"p": {"speling": 1}})
    with pytest.raises(UserError, match="extends unknown profile 'nope'"):
        ProfileSet({"p": {"extends": "nope"}})

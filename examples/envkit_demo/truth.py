"""The exact v(S) of the tally environment under the simulator's profiles.

One round: the planner writes a plan, the reasoner a thought, the actor one
number, and the episode ends. The simulator makes each answer correct with
``P = logistic(logit(base) - difficulty + shifts)``, where the shifts come from
the expert's judgement of the plan and thought the prompt shows, and
independently malformed with the profile's ``malformed`` rate
(agentbus/sim/model.py). tally_expert.py judges a plan or thought good only
when it is correct and well formed, and the episode succeeds only when the
action is correct and well formed. So, with each slot on its coalition's model:

    P(plan good)              = p_plan() * (1 - m_plan)
    P(thought good | plan)    = p_reason(plan) * (1 - m_reason)
    v(S) = sum over plan, thought of
           P(plan) * P(thought | plan) * p_act(plan, thought) * (1 - m_act)

Reflection never runs (the one round ends the episode), so its Shapley value
is exactly 0. ``python truth.py`` prints the table for sim:weak -> sim:strong.
"""

from __future__ import annotations

import itertools

from tally_expert import DIFFICULTY

from agentbus.sim import gateway_truth
from agentbus.sim.expert import Upstream
from agentbus.sim.model import probability_correct
from agentbus.sim.profiles import BUILTIN, RoleSkill

SLOTS = ("planning", "reasoning", "action", "reflection")


def success(models: dict[str, str], reads_thought: bool = True) -> float:
    """P(success) of one episode with each slot on the model ``models`` names.

    ``reads_thought=False`` is a wrong truth kept for the test: an actor whose
    chance does not depend on the thought it is shown.
    """

    def skill(role: str) -> RoleSkill:
        return BUILTIN.get(models[role]).skill(role)

    def p(role: str, plan: bool | None = None, thought: bool | None = None) -> float:
        up = Upstream(plan=plan, thought=thought, difficulty=DIFFICULTY.get(role, 0.0))
        return probability_correct(skill(role), up)

    def well_formed(role: str) -> float:
        return 1.0 - skill(role).malformed

    plan_good = p("planning") * well_formed("planning")
    total = 0.0
    for plan in (True, False):
        p_plan = plan_good if plan else 1.0 - plan_good
        thought_good = p("reasoning", plan=plan) * well_formed("reasoning")
        for thought in (True, False):
            p_thought = thought_good if thought else 1.0 - thought_good
            shown = thought if reads_thought else None
            right = p("action", plan=plan, thought=shown) * well_formed("action")
            total += p_plan * p_thought * right
    return total


def values(
    default: str = "weak", test: str = "strong", reads_thought: bool = True
) -> dict[tuple[str, ...], float]:
    """v(S) for every coalition S (the slots on ``test``, the others on ``default``)."""
    out: dict[tuple[str, ...], float] = {}
    for k in range(len(SLOTS) + 1):
        for coalition in itertools.combinations(SLOTS, k):
            models = {s: test if s in coalition else default for s in SLOTS}
            out[coalition] = success(models, reads_thought)
    return out


def shapley(v: dict[tuple[str, ...], float]) -> dict[str, float]:
    """Exact Shapley values of the game ``v`` over SLOTS (the simulator's shared enumeration)."""
    return gateway_truth.shapley(v, SLOTS)


if __name__ == "__main__":
    v = values()
    for coalition, value in v.items():
        print(f"{'+'.join(coalition) or '(none)':40s} {value:.4f}")
    for slot, value in shapley(v).items():
        print(f"phi {slot:10s} {value:+.4f}")

"""The expert's answer texts per role: correct, realistically wrong, or malformed.

Correct answers follow the optimal policy; wrong ones are the mistakes people
see from weaker models in RoCo-style tasks (a robot acting out of reach, the
wrong tool, skipping a precondition, the wrong order); malformed ones break
the format the next stage relies on.
"""

from __future__ import annotations

import random

from environments.robot.rules import Rules, rules_for
from environments.robot.scene import Act, Round, State, round_inline, round_text
from environments.robot.situation import Situation

#: share of wrong thoughts that obey the rules (a strategic mistake) rather than break one
STRATEGIC = 0.6

#: goal key holding the ordered list, per kind (unordered kinds are absent)
ORDER_KEY = {"sweep": "cubes", "cabinet": "order", "sandwich": "recipe"}


def inline(rules: Rules, rnd: Round) -> str:
    return round_inline(rnd, rules.robots)


def fence(rules: Rules, rnd: Round) -> str:
    return f"```action\n{round_text(rnd, rules.robots)}\n```"


# --- plans -------------------------------------------------------------------------
def plan_text(rules: Rules) -> str:
    """Numbered steps from the policy's roll-out, with the required order up front."""
    plan = rules.rollout(rules.initial()) or []
    lines: list[str] = []
    order = rules.key_order()
    if order:
        lines.append(f"Required order: {' -> '.join(order)}.")
    step = 0
    for rnd in plan:
        acts = [a for a in rnd.values() if a.verb != "WAIT"]
        if acts:
            step += 1
            lines.append(f"{step}. " + "; ".join(f"{a.robot} {a.action}" for a in acts) + ".")
    lines.append("Robots without a step in a round WAIT.")
    return "\n".join(lines)


def wrong_plan(rules: Rules, rng: random.Random) -> str:
    """A plausible plan with a wrong order or a robot given a step it cannot do."""
    order = rules.key_order()
    if order and len(order) >= 2 and rng.random() < 0.6:
        key = ORDER_KEY[rules.kind]
        seq = list(rules.scene.goal[key])
        i = rng.randrange(len(seq) - 1)
        seq[i], seq[i + 1] = seq[i + 1], seq[i]
        other = rules_for(rules.scene.model_copy(update={"goal": {**rules.scene.goal, key: seq}}))
        if other.rollout(other.initial()) is not None:
            return plan_text(other)
    text = plan_text(rules)
    plan = rules.rollout(rules.initial()) or []
    acts = [a for rnd in plan for a in rnd.values() if a.verb != "WAIT"]
    rng.shuffle(acts)
    for act in acts:
        for robot in rules.robots:
            wrong = Act(robot, act.verb, act.args)
            if robot != act.robot and not rules.feasible(wrong):
                return text.replace(f"{act.robot} {act.action}", f"{robot} {act.action}", 1)
    return text.replace(rules.robots[0], rules.robots[-1]).replace(
        "Required order", "Suggested order"
    )


def plan_good(sit: Situation, text: str) -> bool:
    rules = sit.rules
    acts = sit.mentions(text)
    if any(not rules.feasible(a) for a in acts):
        return False
    order = rules.key_order()
    if order:
        low = text.lower()
        positions = []
        for key in order:
            at = _word_at(low, key)
            if at < 0:
                return False
            positions.append(at)
        if positions != sorted(positions):
            return False
    return bool(acts) or bool(order)


def _word_at(text: str, word: str) -> int:
    start = 0
    while True:
        at = text.find(word, start)
        if at < 0:
            return -1
        end = at + len(word)
        before = text[at - 1] if at > 0 else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return at
        start = at + 1


# --- rounds --------------------------------------------------------------------------
def action_space(rules: Rules) -> list[tuple[str, tuple[str, ...]]]:
    """Every (verb, args) the task's syntax allows, filled from the scene's vocabulary."""
    vocab = sorted(rules.vocabulary())
    out: list[tuple[str, tuple[str, ...]]] = []
    for syntax in rules.verbs:
        verb, *slots = syntax.split()
        fills: list[tuple[str, ...]] = [()]
        for slot in slots:
            options = vocab if slot.startswith("<") else [slot.lower()]
            fills = [(*f, o) for f in fills for o in options]
        out += [(verb, args) for args in fills]
    return out


def strategic_round(rules: Rules, state: State, rng: random.Random) -> Round | None:
    """A round that obeys every rule but works against the goal (wrong order, object, item).

    These are the reasoning mistakes an actor cannot catch by checking the rules.
    """
    pol = rules.policy(state)
    space = action_space(rules)
    base = rules.distance(state)
    robots = list(rules.robots)
    rng.shuffle(robots)
    for robot in robots:
        options = [Act(robot, v, a) for v, a in space]
        options = [a for a in options if a != pol[robot] and not rules.check_act(state, a, pol)]
        rng.shuffle(options)
        for act in options[:12]:
            rnd = {**pol, robot: act}
            if not rules.check(state, list(rnd.values())) and not rules.is_good(state, rnd, base):
                return rnd
    return None


def invalid_round(rules: Rules, state: State, rng: random.Random) -> Round:
    """A round that breaks a rule: out of reach, wrong tool, a skipped precondition."""
    cands = list(rules.mistakes(state))
    pol = rules.policy(state)
    busy = [r for r, a in pol.items() if a.verb != "WAIT"]
    if len(rules.robots) >= 2 and busy:
        a = rng.choice(busy)
        b = rng.choice([r for r in rules.robots if r != a])
        swapped = dict(pol)
        swapped[a] = Act(a, pol[b].verb, pol[b].args)
        swapped[b] = Act(b, pol[a].verb, pol[a].args)
        cands.append(swapped)
    rng.shuffle(cands)
    base = rules.distance(state)
    for rnd in cands:
        if not rules.is_good(state, rnd, base):
            return rnd
    return rules.wait_all()


def wrong_round(
    rules: Rules, state: State, rng: random.Random, strategic: float = STRATEGIC
) -> Round:
    """A wrong round: with probability ``strategic`` a rule-abiding bad one, else an invalid one."""
    if rng.random() < strategic:
        rnd = strategic_round(rules, state, rng)
        if rnd is not None:
            return rnd
    return invalid_round(rules, state, rng)


def progress(rules: Rules, state: State) -> str:
    done = rules.completed(state)
    rest = [s for s in rules.subtasks() if s not in done]
    head = f"{len(done)} of {len(rules.subtasks())} sub-tasks are done"
    return head + (f"; next: {rest[0]}." if rest else ".")


def thought_text(rules: Rules, state: State) -> str:
    rnd = rules.policy(state)
    return f"{progress(rules, state)} {rules.explain(state, rnd)}\nNext round: {inline(rules, rnd)}"


def wrong_thought(rules: Rules, state: State, rng: random.Random) -> str:
    rnd = wrong_round(rules, state, rng)
    busy = [a for a in rnd.values() if a.verb != "WAIT"]
    why = (
        f"{busy[0].robot} seems free and close enough, so it can {busy[0].action} right away "
        "and save a round."
        if busy
        else "Nothing can be done safely yet, so everyone waits for now."
    )
    return f"{progress(rules, state)} {why}\nNext round: {inline(rules, rnd)}"


# --- actions -------------------------------------------------------------------------
def malformed_action(rules: Rules, rnd: Round, rng: random.Random) -> str:
    acts = [rnd[r] for r in rules.robots if r in rnd]
    style = rng.randrange(4)
    if style == 0:
        body = "EXECUTE\n" + "\n".join(f"{a.robot} -> {a.action}" for a in acts)
    elif style == 1:
        body = ", ".join(f"{a.robot}: {a.action}" for a in acts)
    elif style == 2:
        body = "EXECUTE\n" + acts[0].line
        if len(acts) == 1:
            body += f"\nNAME: {acts[0].robot} ACTION: {acts[0].action}"
    else:
        body = "EXECUTE\n" + "\n".join(f"NAME {a.robot} ACTION {a.action}" for a in acts)
    return f"```action\n{body}\n```"


# --- reflections ---------------------------------------------------------------------
def failure_reason(feedback: str) -> str:
    for line in feedback.splitlines():
        s = line.strip()
        if s.startswith("- proposed round") or s.startswith("- no robot actions"):
            return s.lstrip("- ").strip()
    for line in feedback.splitlines():
        if "invalid" in line.lower() or "failed" in line.lower():
            return line.strip()
    return "the round did not bring the task closer to the goal"


def reflection_text(sit: Situation) -> str:
    rules, state = sit.rules, sit.state
    reason = failure_reason(sit.last.feedback if sit.last else "")
    rnd = rules.policy(state)
    return (
        f"The last step went wrong: {reason}. That rule has to hold before the action is "
        f"possible. {rules.explain(state, rnd)}\nNext round: {inline(rules, rnd)}"
    )


def wrong_reflection(sit: Situation, rng: random.Random) -> str:
    rules, state = sit.rules, sit.state
    rnd = wrong_round(rules, state, rng)
    blame = rng.choice(rules.robots)
    return (
        f"The step probably failed because {blame} was too slow to get into position; "
        "the plan itself looks fine, so we should push on with the same idea.\n"
        f"Next round: {inline(rules, rnd)}"
    )

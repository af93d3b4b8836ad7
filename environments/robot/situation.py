"""What the expert knows about one prompt: the task's rules and the true state.

The state is rebuilt by replaying the prompt's history (each executed step's
action text) on the initial scene through the environment's own
:class:`~environments.robot.runner.World`, so expert and environment agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentbus import PastRound, Task, rounds_so_far
from environments.robot.parser import extract_acts, extract_round
from environments.robot.prompt import history_rounds, sections
from environments.robot.rules import Rules
from environments.robot.runner import World
from environments.robot.scene import Act, Round, Scene, State


@dataclass
class Situation:
    """A prompt, understood: its sections, the rules and the states along the history."""

    task: Task
    rules: Rules
    parts: dict[str, str]
    #: states before the first step and after each executed step
    states: list[State] = field(default_factory=list)
    #: the state before the last history round (what the last thought was about)
    before_last: State | None = None
    last: PastRound | None = None
    #: the state right after the latest rejected step (what a reflection is about)
    after_rejected: State | None = None

    @property
    def state(self) -> State:
        return self.states[-1]

    @property
    def vocab(self) -> set[str]:
        return self.rules.vocabulary()

    def proposal(self, text: str) -> Round:
        """The round a text proposes; robots it does not mention WAIT."""
        found = extract_round(text, self.rules.robots, self.rules.verb_names(), self.vocab)
        if not found:
            return {}
        return {r: found.get(r, Act(r, "WAIT")) for r in self.rules.robots}

    def mentions(self, text: str) -> list[Act]:
        return extract_acts(text, self.rules.robots, self.rules.verb_names(), self.vocab)

    def good_round(self, text: str, state: State | None = None) -> bool:
        rnd = self.proposal(text)
        return bool(rnd) and self.rules.is_good(state or self.state, rnd)


#: what a replay remembers: the executed-action texts so far -> the state after them
Replays = dict[tuple[str | None, ...], State]
#: states one replay memo holds before it starts afresh
_REPLAY_MEMO = 4096


def understand(
    task: Task,
    scene: Scene,
    user: str,
    rules: Rules | None = None,
    replays: Replays | None = None,
) -> Situation:
    """The prompt's situation.

    ``rules`` (this scene's) saves building them again; ``replays`` (one per
    scene, kept by the caller) remembers the state after each history prefix,
    so a prompt one round longer than one seen before replays one round.
    """
    parts = sections(user)
    world = World(scene, rules)
    rounds = rounds_so_far(parts, history_rounds)
    # ``current`` is never changed in place (it may be a remembered state): a
    # round is executed on a copy of it
    current = world.state
    states = [current.copy()]
    before_last: State | None = None
    after_rejected: State | None = None
    prefix: tuple[str | None, ...] = ()
    for i, r in enumerate(rounds):
        if i == len(rounds) - 1:
            before_last = current.copy()
        prefix = (*prefix, r.action if r.executed else None)
        known = replays.get(prefix) if replays is not None else None
        if known is None:
            world.state = current
            if r.executed and not world.done:
                world.state = current.copy()
                world.execute(r.action)
            known = world.state
            if replays is not None:
                if len(replays) >= _REPLAY_MEMO:
                    replays.clear()
                replays[prefix] = known
        current = known
        states.append(current.copy())
        if is_rejected(r.feedback):
            after_rejected = states[-1]
    return Situation(
        task=task,
        rules=world.rules,
        parts=parts,
        states=states,
        before_last=before_last,
        last=rounds[-1] if rounds else None,
        after_rejected=after_rejected,
    )


def is_rejected(feedback: str) -> bool:
    """Whether a step's feedback reports a rejected round (ours, or the episode's)."""
    text = feedback.lstrip()
    return text.startswith("Invalid action") or "Rejected, nothing of this round" in text

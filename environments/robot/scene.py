"""The static scene of one task and the mutable state a run changes.

The scene is what a generator draws (or a dataset file holds): robots with
their positions, tools and reach, things on the table with positions, the
goal and the round limit. It is plain JSON so a task can carry it in
``Task.data`` and the expert can rebuild the very same world from the prompt's
task. The state is deliberately one generic shape for all four task kinds so
that copying it (for the expert's look-ahead) is cheap and uniform.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["sweep", "cabinet", "sandwich", "sort"]
KINDS: tuple[Kind, ...] = ("sweep", "cabinet", "sandwich", "sort")

#: argument words that are keywords, not object names (``PICK x PLACE panel3``)
KEYWORDS = frozenset({"place"})


class RobotSpec(BaseModel):
    """One robot: where it stands, what it holds as a tool, what it can reach."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    position: tuple[float, float]
    reach: list[str]
    tool: str | None = None


class Thing(BaseModel):
    """An object or fixture on the table, with its initial place."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    position: tuple[float, float]
    place: str = "table"


class Scene(BaseModel):
    """Everything that defines one task instance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind
    robots: list[RobotSpec]
    things: list[Thing]
    goal: dict[str, Any] = Field(default_factory=dict)
    round_limit: int = Field(default=12, ge=1, le=100)

    def robot(self, name: str) -> RobotSpec | None:
        for r in self.robots:
            if r.name == name:
                return r
        return None

    def thing(self, name: str) -> Thing | None:
        for t in self.things:
            if t.name == name:
                return t
        return None

    @property
    def robot_names(self) -> list[str]:
        return [r.name for r in self.robots]

    def reaches(self, robot: str, name: str) -> bool:
        spec = self.robot(robot)
        return spec is not None and name in spec.reach


@dataclass(frozen=True)
class Act:
    """One robot's action in one round: ``NAME: robot ACTION: VERB args``."""

    robot: str
    verb: str
    args: tuple[str, ...] = ()

    @property
    def action(self) -> str:
        words = [self.verb, *(a.upper() if a in KEYWORDS else a for a in self.args)]
        return " ".join(words)

    @property
    def line(self) -> str:
        return f"NAME: {self.robot} ACTION: {self.action}"

    def __str__(self) -> str:
        return f"{self.robot}: {self.action}"


#: one round: robot name -> its action
Round = dict[str, Act]


@dataclass
class State:
    """The mutable world: one shape for every task kind (unused fields stay empty)."""

    #: robot -> where its tool/gripper is (sweep: a cube name, "start" or "trash_bin")
    at: dict[str, str] = field(default_factory=dict)
    #: robot -> what its gripper holds
    holding: dict[str, str | None] = field(default_factory=dict)
    #: object -> where it is now (a panel, "table", "cabinet", a coaster, "dustpan", ...)
    location: dict[str, str] = field(default_factory=dict)
    #: sandwich: the stack on the cutting board, bottom first
    stack: list[str] = field(default_factory=list)
    #: cabinet: doors currently open
    opened: set[str] = field(default_factory=set)
    #: sub-tasks completed, in the order they were completed
    done: list[str] = field(default_factory=list)
    #: a fatal mistake that ended the task (sandwich: wrong item on the board)
    failure: str | None = None
    #: rounds executed so far
    rounds: int = 0

    def copy(self) -> State:
        # every value is an immutable string (or None), so copying the
        # containers is a deep copy; copy.deepcopy is the expert's hot spot
        return State(
            at=dict(self.at),
            holding=dict(self.holding),
            location=dict(self.location),
            stack=list(self.stack),
            opened=set(self.opened),
            done=list(self.done),
            failure=self.failure,
            rounds=self.rounds,
        )


def round_text(rnd: Round, order: list[str]) -> str:
    """An ``EXECUTE`` block for one round, robots in scene order."""
    lines = ["EXECUTE"] + [rnd[name].line for name in order if name in rnd]
    return "\n".join(lines)


def round_inline(rnd: Round, order: list[str]) -> str:
    """A round in prose-friendly form: ``Alice MOVE red_cube; Bob WAIT``."""
    return "; ".join(f"{name} {rnd[name].action}" for name in order if name in rnd)


def fmt_pos(p: tuple[float, float]) -> str:
    return f"({p[0]:.2f}, {p[1]:.2f})"

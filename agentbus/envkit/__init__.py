"""The environment kit: the scaffolding every built-in environment shares, once.

An environment has two halves. The adapter (an :class:`agentbus.Environment`)
loads its tasks, tells the modules what the domain is (its guide) and scores
episodes; the simulated expert (an :class:`agentbus.Expert`) finds a prompt's
task, judges what the other modules wrote and answers at a given skill. Most
of that is the same in every environment, and this package holds that part:

- :mod:`~agentbus.envkit.prompt`: reading a prompt's ``## `` sections, the
  action fence, and the five-part guide;
- :mod:`~agentbus.envkit.tasks`: counting a generator's tasks from a
  :class:`~agentbus.TaskSource` and finding a task from a prompt;
- :mod:`~agentbus.envkit.expert`: the expert scaffold (task index, situation
  memo, a default judgement of upstream messages built from three checks,
  per-role answers by the verdict);
- :mod:`~agentbus.envkit.history` and :mod:`~agentbus.envkit.rounds`: for an
  environment of many rounds, reading the rounds a prompt's history shows
  and the expert scaffold that replays them (:class:`RoundsExpert`).

Plugins import these names from ``agentbus`` (docs/write-an-environment.md).
"""

from agentbus.envkit.expert import (
    STEP_ROLES,
    CheckedExpert,
    ExpertKit,
    Moment,
    RoleAnswer,
    SituationMemo,
    answer_by_verdict,
    judged,
)
from agentbus.envkit.history import PastRound, last_action, read_rounds, rounds_so_far
from agentbus.envkit.prompt import GUIDE_KEYS, action_fence, env_guide, prompt_sections
from agentbus.envkit.rounds import RoundsExpert, RoundSituation, Writer, role_answers
from agentbus.envkit.tasks import TaskIndex, generated_count

__all__ = [
    "GUIDE_KEYS",
    "STEP_ROLES",
    "CheckedExpert",
    "ExpertKit",
    "Moment",
    "PastRound",
    "RoleAnswer",
    "RoundSituation",
    "RoundsExpert",
    "SituationMemo",
    "TaskIndex",
    "Writer",
    "action_fence",
    "answer_by_verdict",
    "env_guide",
    "generated_count",
    "judged",
    "last_action",
    "prompt_sections",
    "read_rounds",
    "role_answers",
    "rounds_so_far",
]

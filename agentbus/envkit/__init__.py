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
  memo, judgement of upstream messages, per-role answers by the verdict).

Plugins import these names from ``agentbus`` (docs/write-an-environment.md).
"""

from agentbus.envkit.expert import ExpertKit, RoleAnswer, SituationMemo, answer_by_verdict, judged
from agentbus.envkit.prompt import GUIDE_KEYS, action_fence, env_guide, prompt_sections
from agentbus.envkit.tasks import TaskIndex, generated_count

__all__ = [
    "GUIDE_KEYS",
    "ExpertKit",
    "RoleAnswer",
    "SituationMemo",
    "TaskIndex",
    "action_fence",
    "answer_by_verdict",
    "env_guide",
    "generated_count",
    "judged",
    "prompt_sections",
]

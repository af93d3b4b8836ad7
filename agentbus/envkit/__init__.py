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

Plugins import these names from ``agentbus`` (docs/write-an-environment.md),
which exports every one of them; each lives in one of the modules above and
is imported from nowhere else (this package re-exports nothing).
"""

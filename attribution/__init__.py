"""Attribution of an agent's success to its slots (modules), with honest uncertainty.

A library that needs no LLM:

* :mod:`attribution.game`: :class:`~attribution.game.Game`, per-coalition and
  per-task reward statistics (coalition = slots on the test implementation);
* :mod:`attribution.exact`: exact Shapley and Banzhaf values, pairwise Shapley
  interactions, each with standard errors and 95% intervals
  (:mod:`attribution.variance`: independent / task-paired / covariance forms,
  anytime-valid confidence sequences);
* :mod:`attribution.estimates`: intervals, differences and rank intervals;
* :mod:`attribution.sampling`: estimators for many slots (size-stratified,
  paired KernelSHAP);
* :mod:`attribution.allocation`: greedy Neyman allocation and task blocks;
* :mod:`attribution.service`: the live service on the run's EventHub;
* :mod:`attribution.collect`, :mod:`attribution.results`,
  :mod:`attribution.plots`, :mod:`attribution.multi`: event replay, the
  results file and tables, figures, and cross-model comparisons;
* :mod:`attribution.synthetic`: games with a known answer for tests.
"""

from attribution.estimates import Estimates, NotEstimable
from attribution.exact import banzhaf_values, interaction_values, shapley_values
from attribution.game import Game, coalition_key

__all__ = [
    "Estimates",
    "Game",
    "NotEstimable",
    "banzhaf_values",
    "coalition_key",
    "interaction_values",
    "shapley_values",
]

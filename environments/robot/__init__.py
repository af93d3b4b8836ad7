"""A symbolic multi-robot tabletop in the style of RoCo.

One agent plans for several robots at once: every round each robot performs
exactly one action, written as an ``EXECUTE`` block. Four task kinds (sweep,
cabinet, sandwich, sort) share the scene model, the parser and the round
runner; each kind has its own rules file with preconditions, effects, ordered
sub-tasks and an optimal policy used by the simulated expert.
"""

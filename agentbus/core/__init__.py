"""The kernel: the bus, mailboxes, messages, actors, the episode, events and outcomes.

Everything an episode needs to run in one process lives here and imports
nothing of the executors, the run store, the application or any plugin, so
the rules of a run can be read in one folder. Users and plugins import these
names from the top-level ``agentbus`` package, which keeps working when a
file here moves.
"""

"""The executors: where episodes run (this process, a worker process, a Ray cluster).

They sit on top of :mod:`agentbus.core`, which never imports them:
``runtime`` runs many episodes concurrently on this event loop, ``remote``
turns an episode into a portable spec and the worker that runs it in another
process, and ``ray_runtime`` hands those workers to a Ray cluster. The
application picks one (``--executor local|ray``) in ``agentbus.app.executor``.
"""

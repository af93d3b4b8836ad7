"""The module gateway: attribute an agent that lives in its own code, any framework or language.

Every agent framework lets each component name its model and point its client
at a base URL. During a run agentbus serves the OpenAI and Anthropic APIs on
loopback (:class:`agentbus.gateway.server.Gateway`); each episode gets its own
token as API key, each request's ``model`` names the module, and the gateway
sends the call to the model that module's slot has in the episode's coalition,
through the run's router. The agent runs as a Python callable, a command or an HTTP service
(:mod:`agentbus.gateway.runners`). The kernel part: it imports neither the
application layer nor the run store.
"""

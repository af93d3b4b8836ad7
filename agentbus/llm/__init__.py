"""The LLM layer: one client protocol, several backends, shared calls and limits.

Typical use::

    async with LLMRouter(LLMConfig(), sim=sim) as router:
        llm = router.client("sim:weak")
        answer = await llm.complete(messages, SamplingParams())
        print(router.summary())
"""

"""Ctrl-C as a level-triggered cancel scope (agentbus.core.interrupt).

The CLI-level behaviour (exit 130 and a resume hint, then ``--resume``) is
tested in test_resume_kill.py; here the property that made the change: code
that absorbs one cancellation cannot absorb the interrupt.
"""

from __future__ import annotations

import os
import signal

import anyio
import anyio.lowlevel

from agentbus.core.interrupt import is_interrupt, until_interrupted


def _sigint_soon() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_work_that_ends_returns_its_result() -> None:
    async def work() -> str:
        await anyio.lowlevel.checkpoint()
        return "done"

    outcome = anyio.run(until_interrupted, work)
    assert outcome.result == "done" and not outcome.interrupted


def test_sigint_stops_work_even_if_it_absorbs_one_cancellation() -> None:
    async def careless() -> str:
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            pass  # a cleanup path that swallows cancellation (what used to lose Ctrl-C)
        await anyio.sleep(30)  # a native one-shot cancel would let this run on
        return "finished anyway"

    async def main() -> tuple[object, bool, float]:
        asyncio_loop_call_later(0.2, _sigint_soon)
        started = anyio.current_time()
        outcome = await until_interrupted(careless)
        return outcome.result, outcome.interrupted, anyio.current_time() - started

    result, interrupted, took = anyio.run(main)
    assert interrupted and result is None
    assert took < 10


def test_second_sigint_is_a_plain_keyboard_interrupt_again() -> None:
    """After the first Ctrl-C the handler is gone: a second one during shutdown gets out."""

    async def slow_shutdown() -> None:
        try:
            await anyio.sleep(30)
        finally:
            with anyio.CancelScope(shield=True):
                _sigint_soon()  # the user presses Ctrl-C again while we clean up
                await anyio.sleep(30)

    async def main() -> None:
        asyncio_loop_call_later(0.2, _sigint_soon)
        await until_interrupted(slow_shutdown)

    try:
        anyio.run(main)
    except BaseException as exc:  # raised inside a task group it may come wrapped
        caught = exc
    else:
        raise AssertionError("the second Ctrl-C did not get out")
    assert is_interrupt(caught)


def asyncio_loop_call_later(delay: float, fn: object) -> None:
    import asyncio

    asyncio.get_running_loop().call_later(delay, fn)  # type: ignore[arg-type]


def test_an_error_of_the_work_comes_out_unwrapped() -> None:
    class Boom(Exception):
        pass

    async def work() -> None:
        raise Boom("bad port")

    try:
        anyio.run(until_interrupted, work)
    except Boom as exc:
        assert str(exc) == "bad port"
    else:
        raise AssertionError("the error was lost")

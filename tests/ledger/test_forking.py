"""``ledger.forking``: Ctrl-C held back while worker processes start, then handed on."""

from __future__ import annotations

import os
import signal

import pytest

from ledger.forking import interrupts_held, started


def test_a_sigint_within_the_block_is_held_and_raised_when_it_is_released() -> None:
    before, reached = signal.getsignal(signal.SIGINT), False
    with pytest.raises(KeyboardInterrupt), interrupts_held() as release:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # bytecode boundaries enough for Python to run a handler
            pass
        reached = True  # held: nothing was raised inside the block
        release()
        pytest.fail("release() hands the interrupt on")
    assert reached
    assert signal.getsignal(signal.SIGINT) is before


def test_a_sigint_held_is_raised_at_the_end_of_the_block_when_not_released_before() -> None:
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt), interrupts_held():
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass
    assert signal.getsignal(signal.SIGINT) is before


def test_without_a_sigint_nothing_is_raised_and_the_handler_is_put_back() -> None:
    before = signal.getsignal(signal.SIGINT)
    with interrupts_held() as release:
        assert signal.getsignal(signal.SIGINT) is not before
        release()
        assert signal.getsignal(signal.SIGINT) is before
        release()  # once is enough: a second call does nothing
    assert signal.getsignal(signal.SIGINT) is before


def test_started_stops_what_it_started_when_a_sigint_came_meanwhile_then_hands_it_on() -> None:
    stopped: list[str] = []

    def start() -> str:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass
        return "workers"

    with pytest.raises(KeyboardInterrupt):
        started(start, stopped.append)
    assert stopped == ["workers"]
    assert started(lambda: "workers", stopped.append) == "workers"  # no SIGINT: the caller's to stop
    assert stopped == ["workers"]

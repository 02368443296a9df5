"""``benchmarks/inside.py``'s core-time clock, on real processes: the figures issue 16's
notes give for the work beside each signature (docs/benchmarks.md) are only as good as
its count of the children's time, read from Linux's ``/proc`` for a child still running
(ingest's signature checker) and from ``getrusage`` for one reaped (verify's workers)."""

from __future__ import annotations

import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import benchmark

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="benchmarks/inside.py reads child processes' core time from /proc (Linux)")


def _spin(seconds: float, done: Any, stay: Any) -> None:
    """Burn ``seconds`` of core time, say so, then wait (alive, idle) until told to go."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    done.set()
    stay.wait(30)


@pytest.mark.skipif(sys.platform != "linux", reason="fork and /proc: Linux")
def test_core_clock_counts_a_live_child_then_a_reaped_one_once_each() -> None:
    clock = benchmark("inside").CoreClock()
    ctx = multiprocessing.get_context("fork")
    done, stay = ctx.Event(), ctx.Event()
    clock.start()
    child = ctx.Process(target=_spin, args=(0.4, done, stay))
    child.start()
    assert done.wait(30)
    alive = clock.stop()  # the child is still running: counted from /proc
    assert 0.35 <= alive["children_s"] <= 1.0, alive
    assert alive["own_s"] < 0.3, alive  # this process waited; it did not spin
    clock.start()  # the child's earlier time must not count again once it is reaped
    stay.set()
    child.join(30)
    assert child.exitcode == 0
    reaped = clock.stop()
    assert reaped["children_s"] < 0.2, reaped

"""Starting worker processes so that Ctrl-C never leaves one behind.

A process started by ``multiprocessing`` is known to its parent, and so stopped when the
parent stops, only once ``start`` (or ``Pool(...)``) has returned: the fork comes first,
the bookkeeping after it. Ctrl-C between the two (or, for a pool, after its worker
handler thread has started but before the pool registers its own clean-up) left a child
that nobody stopped: an orphan holding the terminal's or the caller's pipes, waiting
forever on its work queue, so that whoever read the command's output never saw its end
(seen: ``pitboss verify`` answered Ctrl-C with its one line and exit 130, and a pool
worker, forked by the pool's handler thread after the parent had stopped the others,
lived on). ``interrupts_held`` holds Ctrl-C back while processes are being started and
hands it on, as if it had just arrived, once they are all known to their parent.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext
    from multiprocessing.pool import Pool


@contextmanager
def interrupts_held() -> Iterator[Callable[[], None]]:
    """Within the block, SIGINT is noted rather than acted on; it is handed on (raised
    again, to whatever handler was there before) when the block ends or when the function
    the block is given is called, whichever comes first. Call it once the processes
    started in the block are in the hands of something that stops them (inside the pool's
    ``with``, say), so that the interrupt lands there.

    Only the main thread receives Python's signals: elsewhere this holds nothing back.
    The processes forked in the block inherit the holding handler until they set their
    own (every worker of ours ignores Ctrl-C: the parent answers it)."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    noted: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        noted.append(signum)

    previous = signal.signal(signal.SIGINT, note)
    released = False

    def release() -> None:
        nonlocal released
        if released:
            return
        released = True
        signal.signal(signal.SIGINT, previous)
        if noted:
            signal.raise_signal(signal.SIGINT)

    try:
        yield release
    finally:
        release()


T = TypeVar("T")


def started(start: Callable[[], T], stop: Callable[[T], object]) -> T:
    """``start()``, which starts processes, with Ctrl-C held back until it has returned
    what stops them: an interrupt that came meanwhile then stops them (``stop``, itself
    with Ctrl-C held back) and is handed on. What is returned is the caller's to stop."""
    with interrupts_held() as release:
        workers = start()
        try:
            release()
        except BaseException:
            with interrupts_held():
                stop(workers)
            raise
    return workers


@contextmanager
def worker_pool(ctx: BaseContext, processes: int, initializer: Callable[..., object], initargs: tuple[Any, ...]
                ) -> Iterator[Pool]:
    """``ctx.Pool(...)`` as a ``with`` block, with Ctrl-C held back while the pool starts
    and while it is stopped: an interrupt that comes while the pool starts lands once the
    block owns it, and one that comes while it is being stopped (a second Ctrl-C) waits
    until every worker is stopped. (``Pool``'s own ``with`` stops it too, but a Ctrl-C
    inside ``Pool(...)`` after its worker handler thread has started leaves a pool that
    nothing stops; the handler thread then forks new workers as the interpreter's exit
    stops the old ones.)"""
    pool = started(lambda: ctx.Pool(processes, initializer=initializer, initargs=initargs), _terminate)
    try:
        yield pool
    finally:
        with interrupts_held():
            _terminate(pool)


def _terminate(pool: Pool) -> None:
    pool.terminate()

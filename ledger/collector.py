"""The cyclic garbage collector paused around work whose objects all live to its end."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block; the collector as it was after (a
    pause inside a pause, or a collector already off, stays off). For work that makes
    objects which all live to its end, where a collection walks live objects and finds
    nothing: a game's module loaded on first use (classes, schemas, registries:
    ``ledger.kinds.Registry``) and an ingest batch, held whole from its parse to its
    commit by design (``ledger.ingest``; measured on a 2-core machine, the collections
    during ingest took about 2 µs an event of 41). ``cli.main`` pauses the collector the
    same way, inline, while it imports the ledger: importing this module would import the
    ledger first (``ledger/__init__.py`` loads the engines and judges). Reference counting
    still frees whatever is dropped meanwhile; only cycles wait for the next collection."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()

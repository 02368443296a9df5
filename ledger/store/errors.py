"""The store's errors (``ledger.store``)."""

from __future__ import annotations


class StoreError(Exception):
    """The store cannot be reached or is not a pitboss ledger."""


class ConflictError(StoreError):
    """Another writer stored an event at a (stream, seq) this batch wanted."""


class AlreadyStoredError(ConflictError):
    """The batch's (stream, seq) places are taken by exactly its events (same hashes).

    Happens when a commit succeeded but its acknowledgement was lost (the connection
    dropped after COMMIT reached the server) and eventsourcing's recorder retried the
    insert on its own; or another writer sent the very same signed events. Either way
    the batch is in the store once, as sent."""


def first_line(exc: BaseException) -> str:
    """An exception's first line, for one-line errors."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]

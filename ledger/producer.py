"""Producer SDK: how game servers, table devices, the cage and tests build signed events.

A ``BatchBuilder`` keeps each stream's next seq and ``prev`` (read lazily from a store,
or starting fresh) so several signers can write one batch; ``add`` signs an event for
one ledger, named by its origin (``BatchBuilder.for_store`` reads it from the store's key
ring; a producer away from the store is given it, e.g. from the published ``log.vkey``).
The ledger checks everything again at ingest: producers are not trusted, only
accountable.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ledger.canonical import GENESIS_PREV
from ledger.events import SignedEvent, sign_event
from ledger.keys import Signer
from ledger.kinds import KEYRING_STREAM
from ledger.timeutil import utc_now

HeadSource = Callable[[str], SignedEvent | None]


def ledger_origin(store: Any) -> str:
    """The ledger's origin: the ``ledger`` of its first key-ring event (``pitboss init``)."""
    first = store.event_at(KEYRING_STREAM, 1)
    if first is None:
        raise ValueError(f"{store.url.redacted()} holds no ledger yet: run 'pitboss init' first")
    return str(first.ledger)


class BatchBuilder:
    def __init__(self, heads: HeadSource | None = None, clock: Callable[[], str] = utc_now, *, ledger: str):
        self.ledger = ledger
        self._source = heads
        self._heads: dict[str, tuple[int, str]] = {}
        self.clock = clock
        self.events: list[SignedEvent] = []

    @classmethod
    def for_store(cls, store: Any, clock: Callable[[], str] = utc_now) -> BatchBuilder:
        """Events for the ledger in ``store`` (a ``ledger.store.Store``), chained on its heads."""
        return cls(store.head, clock, ledger=ledger_origin(store))

    def _head(self, stream: str) -> tuple[int, str]:
        if stream not in self._heads:
            ev = self._source(stream) if self._source else None
            self._heads[stream] = (ev.seq, ev.hash) if ev else (0, GENESIS_PREV)
        return self._heads[stream]

    def add(self, signer: Signer, stream: str, kind: str, payload: dict[str, Any], at: str | None = None) -> SignedEvent:
        seq, prev = self._head(stream)
        ev = sign_event(
            signer, ledger=self.ledger, stream=stream, seq=seq + 1, kind=kind, payload=payload, prev=prev,
            at=at or self.clock(),
        )
        self._heads[stream] = (ev.seq, ev.hash)
        self.events.append(ev)
        return ev

    def lines(self) -> list[str]:
        return [ev.to_json_line() for ev in self.events]

    def write_jsonl(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text("".join(line + "\n" for line in self.lines()), encoding="utf-8")
        return path

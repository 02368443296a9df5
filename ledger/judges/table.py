"""The judge of ``table:<id>`` streams: ``table.open`` when the table is closed (or new),
``table.close`` only when it is open. The state is the table's last event."""

from __future__ import annotations

from typing import Any

from ledger.events import EventError, SignedEvent
from ledger.judges import BaseJudge, World, register_judge


def is_open(head: SignedEvent | None) -> bool:
    """Whether a table whose stream's last event is ``head`` is open."""
    return head is not None and head.kind == "table.open.v1"


class TableJudge(BaseJudge):
    stream_types = ("table",)
    keeps_state = True

    def step(self, state: Any, ev: SignedEvent, world: World) -> SignedEvent:
        return ev

    def admit(self, state: SignedEvent | None, ev: SignedEvent, world: World) -> None:
        ident = ev.stream.partition(":")[2]
        if ev.kind == "table.open.v1" and is_open(state):
            raise EventError("rule", f"table {ident} is already open")
        if ev.kind == "table.close.v1" and not is_open(state):
            raise EventError("rule", f"table {ident} is not open")


register_judge(TableJudge())

"""Lifecycle rules of the stream types (pure; the caller supplies stream heads).

- ``table:<id>``: ``table.open`` when the table is closed (or new), ``table.close``
  only when it is open.
- ``round:<id>``: seq 1 is ``round.open``, for a table that is open and deals that
  game; nothing follows ``round.close``.
- ``chips:<table>``: the table's chip movements and counts, only while ``table:<table>``
  is open (a separate stream, so the table stream's head stays its open/close).
- ``account:<id>``, ``keyring`` (see ``ledger.keyring``), ``ledger:checkpoints``: no
  ordering rule beyond the chain.
"""

from __future__ import annotations

from collections.abc import Callable

from ledger.events import EventError, SignedEvent

HeadLookup = Callable[[str], SignedEvent | None]


def check_lifecycle(ev: SignedEvent, head: SignedEvent | None, lookup: HeadLookup) -> None:
    stype, _, ident = ev.stream.partition(":")
    if stype == "table":
        is_open = head is not None and head.kind == "table.open.v1"
        if ev.kind == "table.open.v1" and is_open:
            raise EventError("rule", f"table {ident} is already open")
        if ev.kind == "table.close.v1" and not is_open:
            raise EventError("rule", f"table {ident} is not open")
    elif stype == "account" and ev.kind == "cash.transfer.v1":
        if ev.payload["beneficiary_type"] == "account" and ev.payload["beneficiary"] == ident:
            raise EventError("rule", f"a transfer from account {ident} to itself is not a transfer")
    elif stype == "chips":
        table_head = lookup(f"table:{ident}")
        if table_head is None or table_head.kind != "table.open.v1":
            raise EventError("rule", f"table {ident} is not open: no chips move or are counted there")
    elif stype == "round":
        if head is None and ev.kind != "round.open.v1":
            raise EventError("rule", f"round {ident} must start with round.open.v1, not {ev.kind}")
        if head is not None and head.kind == "round.close.v1":
            if ev.kind == "ruling.v1":
                raise EventError("rule", f"round {ident} is finished: a ruling voids or rolls back rounds in progress"
                                         " only (a finished hand is not rolled back: 000 refund policy)")
            raise EventError("rule", f"round {ident} is closed; nothing may follow round.close")
        if head is not None and ev.kind == "round.open.v1":
            raise EventError("rule", f"round {ident} is already open")
        if ev.kind == "round.open.v1":
            table = ev.payload["table"]
            table_head = lookup(f"table:{table}")
            if table_head is None or table_head.kind != "table.open.v1":
                raise EventError("rule", f"table {table} is not open")
            if table_head.payload["game"] != ev.payload["game"]:
                raise EventError(
                    "rule",
                    f"table {table} deals {table_head.payload['game']}, not {ev.payload['game']}",
                )

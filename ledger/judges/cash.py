"""The judges of money streams.

- ``account:<id>``: a player's money at the cage (deposits, withdrawals, transfers,
  location); a transfer from an account to itself is not a transfer.
- ``chips:<table>``: the table's chip movements and counts, only while ``table:<table>``
  is open (a separate stream, so the table stream's head stays its open/close).
"""

from __future__ import annotations

from ledger.events import EventError, SignedEvent
from ledger.judges import BaseJudge, World, register_judge
from ledger.judges.table import is_open


class AccountJudge(BaseJudge):
    stream_types = ("account",)

    def admit(self, state: None, ev: SignedEvent, world: World) -> None:
        ident = ev.stream.partition(":")[2]
        if ev.kind == "cash.transfer.v1" and ev.payload["beneficiary_type"] == "account" \
                and ev.payload["beneficiary"] == ident:
            raise EventError("rule", f"a transfer from account {ident} to itself is not a transfer")


class ChipsJudge(BaseJudge):
    stream_types = ("chips",)

    def admit(self, state: None, ev: SignedEvent, world: World) -> None:
        ident = ev.stream.partition(":")[2]
        if not is_open(world.head(f"table:{ident}")):
            raise EventError("rule", f"table {ident} is not open: no chips move or are counted there")
        book = world.table_book(ident) if ev.kind != "chips.count.v1" else None
        problem = book.chips_problem(ev.kind, ev.payload["player"], ev.payload["amount"]) if book else None
        if problem:
            raise EventError("rule", f"table {ident}: {problem}")

    def settle(self, before: None, after: None, ev: SignedEvent, world: World) -> None:
        """The chips the cage issues or redeems at a table are the players' stacks there
        between hands (``ledger.games.poker_table``)."""
        if ev.kind != "chips.count.v1":
            world.advance_book(ev.stream.partition(":")[2], ev)


register_judge(AccountJudge())
register_judge(ChipsJudge())

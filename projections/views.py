"""The read-side views: what each one holds and how one event changes it (no I/O here
beyond reading a closed round's own events from the ledger).

A view turns an event into row operations: ``Add(table, key, amounts)`` adds to a row's
counters (inserting it at zero first), ``Put(table, key, values)`` writes a row once.
``projections.runner`` writes a chunk's operations and the view's tracking position in
one transaction, so a view never counts an event twice or misses one.

Views:
- ``accounts``: per player account and currency: deposits, withdrawals, game results,
  rounds played; the balance is deposits − withdrawals + game results (issue #5 point 3).
- ``tables``: per table, gaming day and currency: rounds, amount staked and paid back,
  commission, rake and the house's net (house revenue per table and per day).
- ``rounds``: one row per closed round: table, game, status, times, staked, paid,
  commission, rake.

The gaming day is the UTC date of the round's close (a configurable day cut-off is
issue #5's reconciliation work).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledger.events import SignedEvent
from ledger.rounds import RoundState, walk
from projections.money import round_money


@dataclass(frozen=True)
class Add:
    table: str
    key: tuple[Any, ...]
    amounts: tuple[int, ...]


@dataclass(frozen=True)
class Put:
    table: str
    key: tuple[Any, ...]
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Table:
    name: str
    keys: tuple[str, ...]
    columns: tuple[str, ...]  # counters (Add) or values (Put)
    text_columns: tuple[str, ...] = ()  # the Put columns that are text, not integers


class View:
    name: str
    tables: tuple[Table, ...]

    def handle(self, ev: SignedEvent, ctx: Context) -> list[Add | Put]:
        raise NotImplementedError


class Context:
    """What views may look up: a closed round's events and its table's currency."""

    def __init__(self, store: Any):
        self.store = store
        self._rounds: dict[str, tuple[RoundState, SignedEvent, dict[str, Any] | None]] = {}
        self._currency: dict[str, list[tuple[str, str]]] = {}

    def closed_round(self, stream: str) -> tuple[RoundState, SignedEvent, dict[str, Any] | None]:
        """(the round's state, its round.open event, the engine's outcome) at its close."""
        if stream not in self._rounds:
            events = self.store.stream_events(stream)
            rs, refused = walk(events)
            assert rs is not None  # the round's first event is its round.open (stored only so)
            outcome = None
            # a round the rules refuse (events altered behind ingest) is not priced; reconciliation names it
            if not refused and rs.engine is not None and not rs.engine.close_problem(rs.st):
                outcome = rs.engine.outcome(rs.st)
            self._rounds = {stream: (rs, events[0], outcome)}  # rounds close once: keep one
        return self._rounds[stream]

    def currency(self, table: str, at: str) -> str:
        """The currency of the table as opened at or before ``at``."""
        if table not in self._currency:
            self._currency[table] = [(ev.at, ev.payload["currency"]) for ev in self.store.stream_events(f"table:{table}")
                                     if ev.kind == "table.open.v1"]
        opened = [c for when, c in self._currency[table] if when <= at]
        return opened[-1] if opened else (self._currency[table][0][1] if self._currency[table] else "?")


class AccountsView(View):
    name = "accounts"
    tables = (Table("accounts", ("account", "currency"), ("deposits", "withdrawals", "game_net", "rounds")),)

    def handle(self, ev: SignedEvent, ctx: Context) -> list[Add | Put]:
        if ev.kind == "cash.deposit.v1":
            return [Add("accounts", (ev.stream.split(":", 1)[1], ev.payload["currency"]), (ev.payload["amount"], 0, 0, 0))]
        if ev.kind == "cash.withdrawal.v1":
            return [Add("accounts", (ev.stream.split(":", 1)[1], ev.payload["currency"]), (0, ev.payload["amount"], 0, 0))]
        if ev.kind == "round.close.v1":
            rs, opening, outcome = ctx.closed_round(ev.stream)
            money = round_money(rs.game, outcome, ev.payload["status"])
            currency = ctx.currency(opening.payload["table"], opening.at)
            return [Add("accounts", (player, currency), (0, 0, net, 1)) for player, net in sorted(money.nets.items())]
        return []


class TablesView(View):
    name = "tables"
    tables = (Table("tables", ("table_id", "day", "currency"),
                    ("rounds", "voided", "staked", "paid", "commission", "rake", "house_net")),)

    def handle(self, ev: SignedEvent, ctx: Context) -> list[Add | Put]:
        if ev.kind != "round.close.v1":
            return []
        rs, opening, outcome = ctx.closed_round(ev.stream)
        status = ev.payload["status"]
        money = round_money(rs.game, outcome, status)
        table = opening.payload["table"]
        key = (table, ev.at[:10], ctx.currency(table, opening.at))
        return [Add("tables", key, (1, int(status == "void"), money.staked, money.paid, money.commission, money.rake,
                                    money.house_net))]


class RoundsView(View):
    name = "rounds"
    tables = (Table("rounds", ("round",), ("table_id", "game", "status", "opened_at", "closed_at", "staked", "paid",
                                            "commission", "rake"),
                    text_columns=("table_id", "game", "status", "opened_at", "closed_at")),)

    def handle(self, ev: SignedEvent, ctx: Context) -> list[Add | Put]:
        if ev.kind != "round.close.v1":
            return []
        rs, opening, outcome = ctx.closed_round(ev.stream)
        money = round_money(rs.game, outcome, ev.payload["status"])
        return [Put("rounds", (ev.stream.split(":", 1)[1],),
                    (opening.payload["table"], rs.game, ev.payload["status"], opening.at, ev.at, money.staked,
                     money.paid, money.commission, money.rake))]


VIEWS: dict[str, View] = {v.name: v for v in (AccountsView(), TablesView(), RoundsView())}

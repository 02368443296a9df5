"""The read-side views: what each one holds and how one event changes it (no I/O here
beyond reading a closed round's own events from the ledger).

A view turns an event into row operations: ``Add(table, key, amounts)`` adds to a row's
counters (inserting it at zero first), ``Put(table, key, values)`` writes a row once.
``projections.runner`` writes a chunk's operations and the view's tracking position in
one transaction, so a view never counts an event twice or misses one.

Views:
- ``accounts``: per player account and currency: deposits, withdrawals, transfers in and
  out, chips bought and cashed at tables, tournament money (entries, stakes, prizes,
  refunds; T$ as ``TDOLLAR``), the house's compensation for dealing misses, fines, game
  results, rounds played. The balance (what the house owes the player, at the cage and
  in chips) is deposits − withdrawals + transfers in − out + tournaments + compensation
  − fines + game results (issue #5 point 3); buying chips moves money from the cage to a
  table without changing it. Rounds at a table opened by an importer key (an imported
  hand history) are evidence in the hand's own unit: they move no player's money
  (issue 13 point 2).
- ``chips``: per table, player and currency: chips bought in, cashed out, and the
  player's results at that table; chips in play = bought − cashed + results (on tables
  that record buy-ins, ``chips:<table>`` streams).
- ``tables``: per table, gaming day and currency: rounds, amount staked and paid back,
  commission, rake and the house's net (house revenue per table and per day).
- ``rounds``: one row per closed round: table, game, status, times, staked, paid,
  commission, rake.
- ``round_index``: what finds a round (``projections.finder``, ``pitboss rounds``): each
  closed round's players (whoever the round's rules seat or its events name, with their
  net result) and its currency.

The gaming day is the UTC date of the round's close, here and in reconciliation and
AML; a gaming day that starts at another hour (a casino's business-day cut-off) is not
modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledger.events import SignedEvent
from ledger.judges import tournament as tournaments
from ledger.judges.round import RoundState, walk
from ledger.timeutil import gaming_day
from projections.money import opened_by_importer, readable_keyring, round_money


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
    kinds: frozenset[str] | None = None
    """The only kinds of event ``handle`` may answer with operations (None: any kind): the
    runner does not call it for another (most events change none of most views)."""

    def handle(self, ev: SignedEvent, ctx: Context) -> list[Add | Put]:
        raise NotImplementedError


class Context:
    """What views may look up: a closed round's events and its table's currency."""

    def __init__(self, store: Any):
        self.store = store
        self._rounds: dict[str, tuple[RoundState, SignedEvent, dict[str, Any] | None]] = {}
        self._events: dict[str, list[SignedEvent]] = {}
        self._tournaments: dict[str, tuple[int, Any, Any]] = {}
        self._currency: dict[str, list[tuple[str, str, bool]]] = {}
        self._ring: Any = None

    def closed_round(self, stream: str) -> tuple[RoundState, SignedEvent, dict[str, Any] | None]:
        """(the round's state, its round.open event, the engine's outcome) at its close."""
        if stream not in self._rounds:
            events = self.store.stream_events(stream)
            rs, refused = walk(events, self.store.event_at)
            self.remember(stream, events, rs, bool(refused))
        return self._rounds[stream]

    def remember(self, stream: str, events: list[SignedEvent], rs: RoundState | None, refused: bool) -> None:
        """The closed round ``stream`` as walked from ``events`` (``refused``: the rules
        refused one of them), by this context or by a caller that walked it already
        (reconciliation's one pass): the views then neither read nor walk it again."""
        assert rs is not None  # the round's first event is its round.open (stored only so)
        outcome = None
        # a round the rules refuse (events altered behind ingest) is not priced; reconciliation names it
        if not refused and rs.engine is not None and not rs.engine.close_problem(rs.st):
            outcome = rs.engine.outcome(rs.st)
        self._rounds = {stream: (rs, events[0], outcome)}  # rounds close once: keep one
        self._events = {stream: events}

    def tournament_step(self, ev: SignedEvent) -> tuple[tournaments.Tournament | None, tournaments.Tournament]:
        """The tournament just before and just after ``ev`` (``ledger.judges.tournament``; a
        satellite's recorded seats stand, as ingest judged them)."""
        cached = self._tournaments.get(ev.stream)
        if cached is not None and cached[0] == ev.seq:
            return cached[1], cached[2]
        if cached is not None and cached[0] == ev.seq - 1:
            before = cached[2]
        else:
            before = tournaments.fold(ev.stream, self.store.stream_events(ev.stream)[:ev.seq - 1])
        after = tournaments.step(before, ev)
        self._tournaments[ev.stream] = (ev.seq, before, after)
        return before, after

    def round_events(self, stream: str) -> list[SignedEvent]:
        """The events of the closed round ``stream`` (read once with ``closed_round``)."""
        self.closed_round(stream)
        return self._events[stream]

    def _opened(self, table: str, at: str) -> tuple[str, str, bool] | None:
        """(at, currency, imported) of the table's opening in force at ``at``."""
        if table not in self._currency:
            if self._ring is None:
                self._ring = readable_keyring(self.store)
            self._currency[table] = [
                (ev.at, ev.payload["currency"], opened_by_importer(self._ring, ev.key_id))
                for ev in self.store.stream_events(f"table:{table}") if ev.kind == "table.open.v1"]
        opened = [o for o in self._currency[table] if o[0] <= at]
        return opened[-1] if opened else (self._currency[table][0] if self._currency[table] else None)

    def currency(self, table: str, at: str) -> str:
        """The currency of the table as opened at or before ``at``."""
        opened = self._opened(table, at)
        return opened[1] if opened else "?"

    def imported(self, table: str, at: str) -> bool:
        """Whether the table was opened by an importer key: an imported hand history, whose
        results are evidence in the hand's own unit and move no player's money (issue 13
        point 2)."""
        opened = self._opened(table, at)
        return bool(opened and opened[2])


ACCOUNT_COLUMNS = ("deposits", "withdrawals", "transfers_in", "transfers_out", "buy_ins", "cash_outs", "tournaments",
                   "compensation", "penalties", "game_net", "rounds")


def _account(column: str, amount: int) -> tuple[int, ...]:
    return tuple(amount if c == column else 0 for c in ACCOUNT_COLUMNS)


def account_balance(row: dict[str, int]) -> int:
    """What the house owes the player (cage and chips): the sum of the account's events."""
    return (row["deposits"] - row["withdrawals"] + row["transfers_in"] - row["transfers_out"] + row["tournaments"]
            + row["compensation"] - row["penalties"] + row["game_net"])


def chips_held(bought: int, cashed: int, results: int) -> int:
    """A player's chips at one table (a ``chips`` row): bought − cashed + results where
    the player bought in there; where not, the table keeps no chips for the player and
    the results went to the account."""
    return bought - cashed + results if bought else 0


class AccountsView(View):
    name = "accounts"
    tables = (Table("accounts", ("account", "currency"), ACCOUNT_COLUMNS),)

    def handle(self, ev: SignedEvent, ctx: Context) -> list[Add | Put]:
        p = ev.payload
        if ev.kind in ("cash.deposit.v1", "cash.withdrawal.v1"):
            column = "deposits" if ev.kind == "cash.deposit.v1" else "withdrawals"
            return [Add("accounts", (ev.stream.split(":", 1)[1], p["currency"]), _account(column, p["amount"]))]
        if ev.kind == "cash.transfer.v1":
            ops: list[Add | Put] = [Add("accounts", (ev.stream.split(":", 1)[1], p["currency"]),
                                        _account("transfers_out", p["amount"]))]
            if p["beneficiary_type"] == "account":
                ops.append(Add("accounts", (p["beneficiary"], p["currency"]), _account("transfers_in", p["amount"])))
            return ops
        if ev.kind in ("chips.buy_in.v1", "chips.cash_out.v1"):
            column = "buy_ins" if ev.kind == "chips.buy_in.v1" else "cash_outs"
            currency = ctx.currency(ev.stream.split(":", 1)[1], ev.at)
            return [Add("accounts", (p["player"], currency), _account(column, p["amount"]))]
        if ev.stream.startswith("tournament:"):
            before, after = ctx.tournament_step(ev)
            return [Add("accounts", key, _account("tournaments", amount))
                    for key, amount in sorted(tournaments.cash_effects(before, ev.kind, p, after).items())]
        if ev.kind == "round.close.v1":
            rs, opening, outcome = ctx.closed_round(ev.stream)
            if ctx.imported(opening.payload["table"], opening.at):
                return []
            money = round_money(rs.game, outcome, p["status"])
            currency = ctx.currency(opening.payload["table"], opening.at)
            results: list[Add | Put] = [Add("accounts", (player, currency), _account("game_net", net)[:-1] + (1,))
                                        for player, net in sorted(money.nets.items())]
            return results + [Add("accounts", (player, currency), _account("compensation", amount))
                          for player, amount in rs.compensation]  # 001 dealing misses: paid by the house
        if ev.kind == "penalty.v1" and p.get("amount"):  # a fine (001): to the house, not the pot
            return [Add("accounts", (ev.stream.split(":", 1)[1], p["currency"]), _account("penalties", p["amount"]))]
        return []


class ChipsView(View):
    name = "chips"
    kinds = frozenset({"chips.buy_in.v1", "chips.cash_out.v1", "round.close.v1"})
    tables = (Table("chips", ("table_id", "player", "currency"), ("bought", "cashed", "results")),)

    def handle(self, ev: SignedEvent, ctx: Context) -> list[Add | Put]:
        if ev.kind in ("chips.buy_in.v1", "chips.cash_out.v1"):
            table = ev.stream.split(":", 1)[1]
            amount = ev.payload["amount"]
            return [Add("chips", (table, ev.payload["player"], ctx.currency(table, ev.at)),
                        (amount, 0, 0) if ev.kind == "chips.buy_in.v1" else (0, amount, 0))]
        if ev.kind == "round.close.v1":
            rs, opening, outcome = ctx.closed_round(ev.stream)
            table = opening.payload["table"]
            if ctx.imported(table, opening.at):
                return []
            money = round_money(rs.game, outcome, ev.payload["status"])
            currency = ctx.currency(table, opening.at)
            return [Add("chips", (table, player, currency), (0, 0, net)) for player, net in sorted(money.nets.items())]
        return []


class TablesView(View):
    name = "tables"
    kinds = frozenset({"round.close.v1"})
    tables = (Table("tables", ("table_id", "day", "currency"),
                    ("rounds", "voided", "staked", "paid", "commission", "rake", "house_net")),)

    def handle(self, ev: SignedEvent, ctx: Context) -> list[Add | Put]:
        if ev.kind != "round.close.v1":
            return []
        rs, opening, outcome = ctx.closed_round(ev.stream)
        status = ev.payload["status"]
        money = round_money(rs.game, outcome, status)
        table = opening.payload["table"]
        key = (table, gaming_day(ev.at), ctx.currency(table, opening.at))
        return [Add("tables", key, (1, int(status == "void"), money.staked, money.paid, money.commission, money.rake,
                                    money.house_net))]


class RoundsView(View):
    name = "rounds"
    kinds = frozenset({"round.close.v1"})
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


class RoundIndexView(View):
    name = "round_index"
    kinds = frozenset({"round.close.v1"})
    tables = (Table("round_players", ("round", "player"), ("table_id", "day", "net"), text_columns=("table_id", "day")),
              Table("round_currency", ("round",), ("currency",), text_columns=("currency",)))

    def handle(self, ev: SignedEvent, ctx: Context) -> list[Add | Put]:
        if ev.kind != "round.close.v1":
            return []
        rs, opening, outcome = ctx.closed_round(ev.stream)
        money = round_money(rs.game, outcome, ev.payload["status"])
        players = set(money.nets) | {p for p in opening.payload["rules"].get("players") or () if isinstance(p, str)}
        players |= {e.payload["player"] for e in ctx.round_events(ev.stream) if isinstance(e.payload.get("player"), str)}
        rid, table = ev.stream.split(":", 1)[1], opening.payload["table"]
        ops: list[Add | Put] = [Put("round_players", (rid, player), (table, gaming_day(ev.at), money.nets.get(player, 0)))
                                for player in sorted(players)]
        return ops + [Put("round_currency", (rid,), (ctx.currency(table, opening.at),))]


VIEWS: dict[str, View] = {v.name: v for v in (AccountsView(), ChipsView(), TablesView(), RoundsView(),
                                              RoundIndexView())}

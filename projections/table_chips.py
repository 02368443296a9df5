"""Chip conservation per table (issue #5 point 6): opening chips + buy-ins − cash-outs
(+ the players' results at the table) = closing chips, checked against every count.

Tables that record chip movements (``chips:<table>``: ``chips.buy_in``,
``chips.cash_out``, ``chips.count``) are followed in ledger order: each player's chips
at the table rise with a buy-in and their round results there and fall with a cash-out.
A count (``chips.count.v1``, e.g. at a table's close) must show exactly what the
ledger says each player holds; a cash-out of more than the player holds, a seat that
starts a round with more chips than the player holds there (a poker starting stack, or
the bets of a banked game), a wager at a table where the cage issued no chips, or a
round that leaves a player with fewer than zero chips, is a discrepancy too (issue 13
point 2: money reaches a table only through the cage). Imported hand histories are
evidence in their own unit and are not followed here. Results are the
engines' own (``projections.money``), so a house win leaves the players' chips and a
poker rake leaves the pot.

Pure: the caller feeds events in ledger order, with each round close's nets.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ledger.events import SignedEvent
from ledger.games import RoundMoney
from ledger.refs import event_ref
from ledger.timeutil import gaming_day
from projections.money import show


@dataclass
class TableDay:
    table: str
    opening: int = 0
    buy_ins: int = 0
    cash_outs: int = 0
    results: int = 0
    counts: list[dict[str, Any]] = field(default_factory=list)  # each count: event, counted, ledger's figure

    @property
    def closing(self) -> int:
        return self.opening + self.buy_ins - self.cash_outs + self.results

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "opening": self.opening, "buy_ins": self.buy_ins, "cash_outs": self.cash_outs,
                "results": self.results, "closing": self.closing, "counts": self.counts}


@dataclass
class ChipBook:
    """The chips each player holds at each table that records chip movements."""

    day: str
    chips: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    days: dict[str, TableDay] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)
    currency: dict[str, str] = field(default_factory=dict)
    """table -> the currency it opened in (the chips' value, for the problems' text)."""

    def _m(self, table: str, amount: int | None) -> str:
        """Chips as a person reads them: their value in the table's currency."""
        return "?" if amount is None else show(amount, self.currency.get(table, "CHIP"))

    def tracks(self, table: str) -> bool:
        return table in self.chips

    def _today(self, table: str, at: str) -> TableDay | None:
        if gaming_day(at) != self.day:
            return None
        if table not in self.days:
            self.days[table] = TableDay(table, opening=sum(self.chips[table].values()))
        return self.days[table]

    def _problem(self, ev: SignedEvent, reason: str, on_day: bool | None) -> None:
        """Name a problem of ``ev`` if it belongs to the day: dated that day, or (``on_day``,
        the caller's word) received that day though dated another (a late arrival)."""
        if on_day or (on_day is None and gaming_day(ev.at) == self.day):
            self.problems.append({"check": "table_chips", "stream": ev.stream, "seq": ev.seq, "reason": reason})

    def chip_event(self, ev: SignedEvent, on_day: bool | None = None) -> None:
        table = ev.stream.split(":", 1)[1]
        stacks = self.chips[table]
        today = self._today(table, ev.at)
        p = ev.payload
        if ev.kind == "chips.buy_in.v1":
            stacks[p["player"]] += p["amount"]
            if today:
                today.buy_ins += p["amount"]
        elif ev.kind == "chips.cash_out.v1":
            if p["amount"] > stacks[p["player"]]:
                self._problem(ev, f"{p['player']} cashes out {self._m(table, p['amount'])} at {table} holding"
                                  f" {self._m(table, stacks[p['player']])}", on_day)
            stacks[p["player"]] -= p["amount"]
            if today:
                today.cash_outs += p["amount"]
        elif ev.kind == "chips.count.v1":
            counted = p["stacks"]
            for player in sorted(set(counted) | {k for k, v in stacks.items() if v}):
                if counted.get(player, 0) != stacks.get(player, 0):
                    self._problem(ev, f"{player} is counted with {self._m(table, counted.get(player, 0))} in chips at"
                                      f" {table}; the ledger gives {self._m(table, stacks.get(player, 0))}"
                                      " (buy-ins − cash-outs + results)", on_day)
            if today:
                today.counts.append({"event": event_ref(ev.stream, ev.seq), "counted": sum(counted.values()),
                                     "ledger": sum(stacks.values())})

    def round_closed(self, ev: SignedEvent, table: str, money: RoundMoney | None, on_day: bool | None = None) -> None:
        """A round closed at ``table`` (``money``: what it did, None when the rules refuse
        it). Chips at a table come only from the cage (``chips.buy_in``, issue 13 point 2):
        no seat starts with more than the player holds there; at a table where the cage
        issued no chips at all, nobody plays for money."""
        if table not in self.chips:
            if money is not None:
                for player in sorted(p for p, n in money.wagered.items() if n):
                    self._problem(ev, f"{player} wagers {self._m(table, money.wagered[player])} at {table}, where the"
                                      " cage issued no"
                                      " chips (chips.buy_in): money at a table comes only from the cage", on_day)
            return
        stacks = self.chips[table]
        nets = money.nets if money is not None else {}
        if money is not None:
            for player in sorted(set(money.brought) | set(money.wagered)):
                brought = money.brought[player] if player in money.brought else money.wagered[player]
                if brought is None or brought > stacks.get(player, 0):
                    what = "an unrecorded stack" if brought is None else f"{self._m(table, brought)} in chips"
                    self._problem(ev, f"{player} starts the round at {table} with {what} but holds"
                                      f" {self._m(table, stacks.get(player, 0))} there (buy-ins − cash-outs + results):"
                                      " a seat may not"
                                      " start with more than the chips the cage issued to the player", on_day)
        today = self._today(table, ev.at)
        for player, net in sorted(nets.items()):
            stacks[player] += net
            if stacks[player] < 0:
                self._problem(ev, f"{player} ends the round with {self._m(table, stacks[player])} in chips at {table}:"
                                  f" played beyond the chips bought in", on_day)
        if today:
            today.results += sum(nets.values())

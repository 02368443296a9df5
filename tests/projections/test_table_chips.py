"""Chips at a table (issue #5 points 3 and 6): buy-ins, cash-outs and counts on the
table's ``chips:`` stream; reconciliation checks opening chips + buy-ins − cash-outs +
the players' results = the chips counted, and names the event when they differ. The
expected stacks here are summed straight from the coups' own bets and settlements, not
through the product's views. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.house import create_key
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import EVERY_TABLE, add_round, checkpointed, ingest

pytestmark = pytest.mark.usefixtures("past_dated")  # nights on fixed dates (tests/conftest.py)

DAY1, DAY2 = "2026-11-20", "2026-11-21"
SINCE = "2026-11-01T00:00:00Z"


class Table:
    """A baccarat table whose stacks the test follows from the coups' own events."""

    def __init__(self, ledger: Any, table: str = "B") -> None:
        self.ledger, self.table = ledger, table
        self.floor = create_key(ledger.store, ledger.keys, f"floor:{table}", "floor", valid_from=SINCE)
        self.dealer = create_key(ledger.store, ledger.keys, f"dealer:{table}", "dealer", valid_from=SINCE, scope=EVERY_TABLE)
        self.cage = create_key(ledger.store, ledger.keys, f"cage:{table}", "cage", valid_from=SINCE)
        self.shoe = iter(deck() * 8)
        self.stacks: dict[str, int] = {}
        self.n = 0

    def batch(self, at: str) -> BatchBuilder:
        return BatchBuilder.for_store(self.ledger.store, clock=lambda: at)

    def open(self, b: BatchBuilder) -> None:
        b.add(self.floor, f"table:{self.table}", "table.open.v1", {"game": "baccarat", "seats": 7, "currency": "EUR"})

    def chips(self, b: BatchBuilder, kind: str, player: str, amount: int) -> None:
        """A buy-in is paid at the cage first (a deposit of the amount: projections.cage)."""
        if kind == "buy_in":
            b.add(self.cage, f"account:{player}", "cash.deposit.v1",
                  {"amount": amount, "currency": "EUR", "method": "cash", "reference": f"{self.table}-{player}-{amount}"})
        b.add(self.cage, f"chips:{self.table}", f"chips.{kind}.v1", {"player": player, "amount": amount})
        self.stacks[player] = self.stacks.get(player, 0) + (amount if kind == "buy_in" else -amount)

    def coups(self, b: BatchBuilder, bets: list[tuple[str, str, int]], count: int) -> None:
        for _ in range(count):
            self.n += 1
            events = coup_events(bets, self.shoe)
            staked = [p for k, p in events if k == "baccarat.bet.v1"]
            for k, p in events:
                if k == "baccarat.settle.v1":
                    bet = staked[p["bet"] - 1]
                    self.stacks[bet["player"]] += p["paid"] - bet["amount"]
            add_round(b, self.dealer, f"round:{self.table}-{self.n}", self.table, "baccarat", events)

    def count(self, b: BatchBuilder, adjust: dict[str, int] | None = None) -> None:
        stacks = {p: n + (adjust or {}).get(p, 0) for p, n in self.stacks.items() if n}
        b.add(self.floor, f"chips:{self.table}", "chips.count.v1", {"stacks": stacks})


def reconcile(ledger: Any, day: str, *flags: str) -> tuple[int, dict[str, Any]]:
    res = CliRunner().invoke(main, checkpointed(ledger.cli_args()) + ["reconcile", "--day", day, "--json", *flags])
    assert res.exit_code in (0, 1, 5), res.output
    return res.exit_code, json.loads(res.stdout)


def night(ledger: Any, adjust: dict[str, int] | None = None, cash_out_extra: int = 0) -> Table:
    """Open, two buy-ins, six coups, a count, everything cashed out (plus ``cash_out_extra``)."""
    t = Table(ledger)
    b = t.batch(f"{DAY1}T20:00:00Z")
    t.open(b)
    t.chips(b, "buy_in", "ANN", 10_000)
    t.chips(b, "buy_in", "ZED", 5_000)
    t.coups(b, [("ANN", "banker", 1000), ("ZED", "player", 500)], 6)
    t.count(b, adjust)
    for player in ("ANN", "ZED"):
        t.chips(b, "cash_out", player, t.stacks[player] + (cash_out_extra if player == "ANN" else 0))
    assert ingest(ledger.store, b.lines()).status == "stored"
    return t


def test_a_counted_table_reconciles_opening_plus_buy_ins_less_cash_outs(ledger) -> None:  # type: ignore[no-untyped-def]
    night(ledger)
    code, report = reconcile(ledger, DAY1)
    assert code == 0, report["discrepancies"]
    (table,) = report["tables"]
    assert table["opening"] == 0 and table["buy_ins"] == 15_000 and table["closing"] == 0
    assert table["cash_outs"] == 15_000 + table["results"] and table["results"] != 0
    (count,) = table["counts"]
    assert count["counted"] == count["ledger"] == 15_000 + table["results"]


def test_balances_show_buy_ins_and_cash_outs_without_changing_the_balance(ledger) -> None:  # type: ignore[no-untyped-def]
    night(ledger)
    res = CliRunner().invoke(main, ledger.cli_args() + ["balances", "ANN", "--json"])
    (ann,) = json.loads(res.stdout)["accounts"]
    assert ann["buy_ins"] == 10_000 and ann["cash_outs"] == 10_000 + ann["game_net"]
    assert ann["deposits"] == 10_000 and ann["balance"] == 10_000 + ann["game_net"]  # the buy-in moved none of it
    assert ann["chips_in_play"] == 0 and ann["at_cage"] == ann["balance"]


def test_a_count_that_differs_names_the_count_event_and_the_player(ledger) -> None:  # type: ignore[no-untyped-def]
    night(ledger, adjust={"ZED": -100})
    code, report = reconcile(ledger, DAY1)
    assert code == 1
    (d,) = report["discrepancies"]
    assert d["check"] == "table_chips" and d["stream"] == "chips:B" and d["seq"] == 3
    assert "ZED is counted with" in d["reason"]


def test_a_cash_out_of_more_than_the_player_holds_is_named(ledger) -> None:  # type: ignore[no-untyped-def]
    night(ledger, cash_out_extra=500)
    code, report = reconcile(ledger, DAY1)
    assert code == 1
    (d,) = report["discrepancies"]
    assert d["stream"] == "chips:B" and d["seq"] == 4 and "ANN cashes out" in d["reason"]


def test_play_beyond_the_chips_bought_is_named(ledger) -> None:  # type: ignore[no-untyped-def]
    t = Table(ledger)
    b = t.batch(f"{DAY1}T20:00:00Z")
    t.open(b)
    t.chips(b, "buy_in", "LOW", 1_000)
    t.coups(b, [("LOW", "tie", 1000)], 3)  # a tie bet loses most coups: the second loss is beyond the chips
    assert ingest(ledger.store, b.lines()).status == "stored"
    code, report = reconcile(ledger, DAY1)
    assert code == 1
    assert any(d["check"] == "table_chips" and d["stream"].startswith("round:B-") and "beyond the chips" in d["reason"]
               for d in report["discrepancies"])


def test_opening_chips_carry_over_from_the_previous_day(ledger) -> None:  # type: ignore[no-untyped-def]
    t = Table(ledger)
    b = t.batch(f"{DAY1}T23:00:00Z")
    t.open(b)
    t.chips(b, "buy_in", "ANN", 20_000)
    t.coups(b, [("ANN", "banker", 1000)], 3)
    assert ingest(ledger.store, b.lines()).status == "stored"
    carried = t.stacks["ANN"]
    b = t.batch(f"{DAY2}T01:00:00Z")
    t.coups(b, [("ANN", "player", 2000)], 3)
    t.count(b)
    assert ingest(ledger.store, b.lines()).status == "stored"
    code, report = reconcile(ledger, DAY2)
    assert code == 0, report["discrepancies"]
    (table,) = report["tables"]
    assert table["opening"] == carried and table["buy_ins"] == 0
    assert table["closing"] == t.stacks["ANN"] == table["counts"][0]["counted"]


def test_chips_move_only_at_an_open_table_nothing_stored(ledger) -> None:  # type: ignore[no-untyped-def]
    t = Table(ledger)
    b = t.batch(f"{DAY1}T20:00:00Z")
    t.open(b)
    b.add(t.floor, "table:B", "table.close.v1", {"reason": "end of shift"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    before = dump_rows(ledger.store)
    b = t.batch(f"{DAY1}T21:00:00Z")
    t.chips(b, "buy_in", "ANN", 1_000)
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and "table B is not open" in report.rejections[0].reason
    assert dump_rows(ledger.store) == before


def test_a_table_with_chip_movements_but_no_count_is_not_checked_and_fails_the_day_unless_accepted(ledger) -> None:  # type: ignore[no-untyped-def]
    """Issue 14 point 5: a check not made fails the job (INCOMPLETE, exit 5) unless the
    documented --accept-unchecked accepts it; either way the JSON lists it."""
    t = Table(ledger)
    b = t.batch(f"{DAY1}T20:00:00Z")
    t.open(b)
    t.chips(b, "buy_in", "ANN", 5_000)
    assert ingest(ledger.store, b.lines()).status == "stored"
    code, report = reconcile(ledger, DAY1)
    assert (code, report["verdict"], report["ok"]) == (5, "INCOMPLETE", False)
    assert any("B recorded chip movements" in n for n in report["not_checked"])
    code, report = reconcile(ledger, DAY1, "--accept-unchecked")
    assert (code, report["verdict"], report["accepted_unchecked"]) == (0, "RECONCILED", True)
    assert any("B recorded chip movements" in n for n in report["not_checked"])

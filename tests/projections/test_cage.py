"""Money at the cage (projections.cage; reconciliation, issue #5 point 6): what the cage
or the house takes from an account (a withdrawal, a transfer, a buy-in, a tournament
entry) must be covered by the account's money at the cage, or reconciliation names the
event. The old demo let players with no deposit buy in (its chip-dumping pair) and
withdraw after losing; a regulator reading the balances saw accounts below zero with no
credit recorded. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.house import create_key
from ledger.producer import BatchBuilder
from tests.helpers import EVERY_TABLE, checkpointed, ingest

pytestmark = pytest.mark.usefixtures("past_dated")  # nights on fixed dates (tests/conftest.py)

DAY1, DAY2 = "2026-11-20", "2026-11-21"
SINCE = "2026-11-01T00:00:00Z"


class Cage:
    def __init__(self, ledger: Any) -> None:
        self.ledger = ledger
        self.cage = create_key(ledger.store, ledger.keys, "cage:main", "cage", valid_from=SINCE)
        self.floor = create_key(ledger.store, ledger.keys, "floor:ana", "floor", valid_from=SINCE)
        self.game = create_key(ledger.store, ledger.keys, "game:server", "game", valid_from=SINCE, scope=EVERY_TABLE)
        self.n = 0

    def batch(self, day: str = DAY1) -> BatchBuilder:
        return BatchBuilder.for_store(self.ledger.store, clock=lambda: f"{day}T20:00:00Z")

    def cash(self, b: BatchBuilder, kind: str, player: str, amount: int, **extra: Any) -> None:
        self.n += 1
        b.add(self.cage, f"account:{player}", f"cash.{kind}.v1",
              {"amount": amount, "currency": "EUR", "method": "cash", "reference": f"r{self.n}", **extra})

    def transfer(self, b: BatchBuilder, player: str, to: str, amount: int) -> None:
        self.n += 1
        b.add(self.cage, f"account:{player}", "cash.transfer.v1",
              {"amount": amount, "currency": "EUR", "beneficiary": to, "beneficiary_type": "account",
               "reference": f"r{self.n}"})

    def chips(self, b: BatchBuilder, kind: str, player: str, amount: int, table: str = "T") -> None:
        b.add(self.cage, f"chips:{table}", f"chips.{kind}.v1", {"player": player, "amount": amount})

    def store(self, b: BatchBuilder) -> None:
        report = ingest(self.ledger.store, b.lines())
        assert report.status == "stored", [str(r) for r in report.rejections]


def reconcile(ledger: Any, day: str = DAY1) -> tuple[int, list[dict[str, Any]]]:
    res = CliRunner().invoke(main, checkpointed(ledger.cli_args()) + ["reconcile", "--day", day, "--json", "--accept-unchecked"])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, [d for d in json.loads(res.stdout)["discrepancies"] if d["check"] == "account_funds"]


def test_a_withdrawal_beyond_the_account_is_named(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Cage(ledger)
    b = c.batch()
    c.cash(b, "deposit", "ANN", 10_000)
    c.cash(b, "withdrawal", "ANN", 12_000)
    c.store(b)
    code, found = reconcile(ledger)
    assert code == 1
    assert [(d["stream"], d["seq"]) for d in found] == [("account:ANN", 2)]
    assert "had €100.00 at the cage" in found[0]["reason"] and "takes €120.00, leaving -€20.00" in found[0]["reason"]


def test_a_buy_in_with_nothing_at_the_cage_is_named(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Cage(ledger)
    b = c.batch()
    b.add(c.floor, "table:T", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    c.cash(b, "deposit", "BOB", 5_000)
    c.chips(b, "buy_in", "BOB", 5_000)  # covered
    c.chips(b, "buy_in", "C-DUMP", 20_000)  # no deposit: the cage sold chips on credit
    c.store(b)
    code, found = reconcile(ledger)
    assert code == 1
    assert [(d["stream"], d["seq"]) for d in found] == [("chips:T", 2)]
    assert found[0]["reason"].startswith("C-DUMP had €0.00") and "chips.buy_in.v1" in found[0]["reason"]


def test_a_tournament_entry_needs_funds_in_the_account_000_tournament_rules(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Cage(ledger)
    b = c.batch()
    b.add(c.game, "tournament:T1", "tournament.open.v1",
          {"currency": "EUR", "buy_in": 9_000, "fee": 1_000, "starting_chips": 10_000, "payouts_bp": [10_000],
           "rebuys": True})
    c.cash(b, "deposit", "ANN", 10_000)
    b.add(c.cage, "tournament:T1", "tournament.register.v1", {"player": "ANN", "entry": "register"})
    b.add(c.cage, "tournament:T1", "tournament.register.v1", {"player": "BOB", "entry": "register"})  # no deposit
    c.store(b)
    code, found = reconcile(ledger)
    assert code == 1
    assert [(d["stream"], d["seq"]) for d in found] == [("tournament:T1", 3)]
    assert found[0]["reason"].startswith("BOB had €0.00") and "takes €100.00" in found[0]["reason"]


def test_money_back_from_a_table_or_another_account_covers_what_is_taken_later(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Cage(ledger)
    b = c.batch()
    b.add(c.floor, "table:T", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    c.cash(b, "deposit", "ANN", 10_000)
    c.chips(b, "buy_in", "ANN", 10_000)  # all of it to the table: 0 at the cage
    c.chips(b, "cash_out", "ANN", 10_000)  # back
    c.transfer(b, "ANN", "BOB", 4_000)  # to another player's account
    c.cash(b, "withdrawal", "BOB", 4_000)  # BOB had nothing but the transfer
    c.cash(b, "withdrawal", "ANN", 6_000)  # exactly what is left
    c.store(b)
    code, found = reconcile(ledger)
    assert code == 0 and found == []


def test_an_account_overdrawn_on_one_day_fails_that_day_only(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Cage(ledger)
    b = c.batch(DAY1)
    c.cash(b, "deposit", "ANN", 1_000)
    c.cash(b, "withdrawal", "ANN", 3_000)
    c.store(b)
    b = c.batch(DAY2)
    c.cash(b, "deposit", "ANN", 5_000)  # brings it back to 3,000
    c.cash(b, "withdrawal", "ANN", 3_000)  # covered
    c.store(b)
    assert [d["seq"] for d in reconcile(ledger, DAY1)[1]] == [2]
    assert reconcile(ledger, DAY2) == (0, [])

"""AML flags (issue #5 point 4; rules and sources in projections/aml.py): planted patterns
are flagged, a control population without them raises none. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.house import create_key
from ledger.phh import hand_events
from ledger.producer import BatchBuilder
from ledger.sample import write_sample_batch
from projections.aml import AmlConfig, scan_store
from tests.helpers import add_round, ingest

T = "2026-11-20T{}Z"
SINCE = "2026-11-01T00:00:00Z"  # the planted history is dated before today: keys valid since


def producer_signer(store, keys, actor: str, role: str):  # type: ignore[no-untyped-def]
    return create_key(store, keys, actor + "-aml", role, valid_from=SINCE)


@pytest.fixture
def control(ledger, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Ordinary play: deposits, many coups, a withdrawal (the sample night)."""
    batch = tmp_path / "control.jsonl"
    write_sample_batch(ledger.store, ledger.keys, batch, 30)
    assert ingest(ledger.store, batch.read_text().splitlines()).status == "stored"
    return ledger


def _cash(b: BatchBuilder, cage, player: str, kind: str, amount: int, at: str, ref: str) -> None:  # type: ignore[no-untyped-def]
    b.add(cage, f"account:{player}", f"cash.{kind}.v1",
          {"amount": amount, "currency": "EUR", "method": "cash", "reference": ref}, at=at)


def test_control_population_raises_no_flag(control) -> None:  # type: ignore[no-untyped-def]
    assert scan_store(control.store) == []


def test_planted_cash_patterns_are_flagged(control) -> None:  # type: ignore[no-untyped-def]
    cage = producer_signer(control.store, control.keys, "cage:main", "cage")
    b = BatchBuilder(control.store.head)
    _cash(b, cage, "BIG", "deposit", 700_000, T.format("10:00:00"), "b1")  # over 1,000,000 in the day
    _cash(b, cage, "BIG", "deposit", 600_000, T.format("15:00:00"), "b2")
    for k, hour in enumerate(("09", "13", "17")):  # three just under the threshold within 24 h
        _cash(b, cage, "SPLIT", "deposit", 950_000 + k, T.format(f"{hour}:00:00"), f"s{k}")
    _cash(b, cage, "QUICK", "deposit", 300_000, T.format("20:00:00"), "q1")  # in and out, no play
    _cash(b, cage, "QUICK", "withdrawal", 299_000, T.format("20:25:00"), "q2")
    assert ingest(control.store, b.lines()).status == "stored"
    flags = scan_store(control.store)
    got = {(f.rule, tuple(f.players)) for f in flags}
    assert ("cash_over_threshold", ("BIG",)) in got
    assert ("structuring", ("SPLIT",)) in got
    assert ("minimal_play", ("QUICK",)) in got and ("rapid_in_out", ("QUICK",)) in got
    structuring = next(f for f in flags if f.rule == "structuring")
    assert structuring.amount == 950_000 * 3 + 3 and len(structuring.events) == 3
    assert not any("P00" in p for f in flags for p in f.players)  # the control players stay clean
    assert scan_store(control.store, AmlConfig(report_threshold=10_000_000)) == [
        f for f in scan_store(control.store, AmlConfig(report_threshold=10_000_000))]  # deterministic
    res = CliRunner().invoke(main, control.cli_args() + ["aml", "show", structuring.id, "--json"])
    assert res.exit_code == 0 and len(json.loads(res.stdout)["event_details"]) == 3


def test_chip_dumping_between_the_same_pair_is_flagged_TDA_58(ledger) -> None:  # type: ignore[no-untyped-def]
    importer = producer_signer(ledger.store, ledger.keys, "importer:aml", "importer")
    b = BatchBuilder(ledger.store.head)
    b.add(importer, "table:P", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    cards = [("AcAd", "7c2d"), ("KcKd", "8c3d"), ("QcQd", "9c4d"), ("JcJd", "Tc5d")]
    for n, (strong, weak) in enumerate(cards):
        # DUMPER holds the strong hand and folds it to RECEIVER's all-in, hand after hand
        hand = {"variant": "NT", "antes": [0, 0, 0], "blinds_or_straddles": [50, 100, 0], "min_bet": 100,
                "starting_stacks": [10_000] * 3, "players": ["DUMPER", "RECEIVER", "OTHER"],
                "actions": [f"d dh p1 {strong}", f"d dh p2 {weak}", "d dh p3 6h6s", "p3 f", "p1 cbr 3000",
                            "p2 cbr 10000", "p1 f"]}
        rules, events, _ = hand_events(hand)
        add_round(b, importer, f"round:P-{n}", "P", "poker", events, rules=rules)
    assert ingest(ledger.store, b.lines()).status == "stored", "hands must be legal"
    flags = [f for f in scan_store(ledger.store) if f.rule == "chip_dumping"]
    assert [(f.players, f.amount, len(f.events)) for f in flags] == [(["DUMPER", "RECEIVER"], 12_000, 4)]


def test_baccarat_player_wagering_counts_as_play(ledger) -> None:  # type: ignore[no-untyped-def]
    """In, a real session of coups, out: not minimal play."""
    cage = producer_signer(ledger.store, ledger.keys, "cage:main", "cage")
    floor = producer_signer(ledger.store, ledger.keys, "floor:x", "floor")
    dealer = producer_signer(ledger.store, ledger.keys, "dealer:x", "dealer")
    b = BatchBuilder(ledger.store.head)
    b.add(floor, "table:B", "table.open.v1", {"game": "baccarat", "seats": 7, "currency": "EUR"})
    _cash(b, cage, "REG", "deposit", 100_000, "2026-11-20T10:00:00Z", "r1")
    shoe = iter(deck() * 8)
    for n in range(12):
        rid = f"round:B-{n}"
        b.add(dealer, rid, "round.open.v1", {"table": "B", "game": "baccarat", "rules": {}}, at="2026-11-20T11:00:00Z")
        for kind, payload in coup_events([("REG", "banker", 5_000)], shoe):
            b.add(dealer, rid, kind, payload, at="2026-11-20T11:00:00Z")
        b.add(dealer, rid, "round.close.v1", {"status": "complete"}, at="2026-11-20T11:00:00Z")
    _cash(b, cage, "REG", "withdrawal", 90_000, "2026-11-20T12:00:00Z", "r2")
    assert ingest(ledger.store, b.lines()).status == "stored"
    assert scan_store(ledger.store) == []

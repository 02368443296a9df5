"""`pitboss table TABLE_ID [--at|--seq]` (issue #5 point 2): a table as it stood."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cli.main import main
from ledger.importers.phh import hand_events
from ledger.producer import BatchBuilder
from ledger.sim.sample import producer_signer, write_sample_batch
from tests.helpers import ingest


def test_a_live_table_with_its_shoe_and_rounds(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    batch = tmp_path / "b.jsonl"
    write_sample_batch(ledger.store, ledger.keys, batch, 4)
    assert ingest(ledger.store, batch.read_text().splitlines()).status == "stored"
    res = CliRunner().invoke(main, ledger.cli_args() + ["table", "sample-bac-1", "--json"])
    st = json.loads(res.stdout)
    assert res.exit_code == 0 and st["open"] and st["dealing"] == "live" and st["rounds_closed"] == 4
    assert st["equipment"][0]["stage"] == "loaded" and st["equipment"][0]["inspected_by"] == ["dealer", "floor"]
    early = json.loads(CliRunner().invoke(main, ledger.cli_args() + ["table", "sample-bac-1", "--seq", "1",
                                                                      "--json"]).stdout)
    assert early["open"] and early["rounds_closed"] == 0 and early["equipment"] == []
    missing = CliRunner().invoke(main, ledger.cli_args() + ["table", "nope"])
    assert missing.exit_code == 2 and "no table nope" in missing.stderr


def test_a_poker_hand_in_progress_shows_seats_stacks_and_who_acts(ledger) -> None:  # type: ignore[no-untyped-def]
    imp = producer_signer(ledger.store, ledger.keys, "importer:t", "importer", ["table:PK"])
    hand = {"variant": "NT", "antes": [0, 0, 0], "blinds_or_straddles": [50, 100, 0], "min_bet": 100,
            "starting_stacks": [1000, 2000, 3000], "players": ["ann", "bob", "cy"],
            "actions": ["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd", "p3 cbr 300"]}
    rules, events, _ = hand_events(hand, complete=False)
    b = BatchBuilder.for_store(ledger.store)
    b.add(imp, "table:PK", "table.open.v1", {"game": "poker", "seats": 9, "currency": "CHIP"})
    b.add(imp, "round:PK-1", "round.open.v1", {"table": "PK", "game": "poker", "rules": rules})
    for kind, payload in events:
        b.add(imp, "round:PK-1", kind, payload)
    assert ingest(ledger.store, b.lines()).status == "stored"
    st = json.loads(CliRunner().invoke(main, ledger.cli_args() + ["table", "PK", "--json"]).stdout)
    (r,) = st["open_rounds"]
    assert r["state"]["to_act"] == 1 and [s["stack"] for s in r["state"]["seats"]] == [950, 1900, 2700]

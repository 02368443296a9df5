"""What a stolen key can still do (issue 13 attacks 1-3 and the keys x scope matrix), on
SQLite and PostgreSQL, through ingest, verify and reconcile as an attacker would try them.
Each attack is refused at ingest with nothing stored, or named by verify or reconcile.

Attacks 4-7 have their tests beside the check they exercise: 4 and 5 in
``test_roles_matrix.py``, 6 in ``test_tamper.py``, 7 in ``test_ingest_bad_input.py``."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games.poker import random_hand
from ledger.house import HouseError, create_key, revoke_key
from ledger.producer import BatchBuilder
from ledger.timeutil import format_utc, utc_now
from tests.conftest import dump_rows
from tests.helpers import checkpointed, ingest, refused, stored


def _ago(**delta: float) -> str:
    return format_utc(datetime.now(UTC) - timedelta(**delta))


class Casino:
    """A cage, a floor, a dealer scoped to table T-A (and its shoe), a victim with
    10,000.00 at the cage, an accomplice with nothing."""

    def __init__(self, ledger: Any, since: str | None = None) -> None:
        self.ledger = ledger
        since = since or _ago(minutes=4)  # valid a little before now, within the skew (back-dating is the key's to try)
        self.cage = create_key(ledger.store, ledger.keys, "cage:main", "cage", valid_from=since)
        self.floor = create_key(ledger.store, ledger.keys, "floor:ana", "floor", valid_from=since)
        self.dealer = create_key(ledger.store, ledger.keys, "dealer:bo", "dealer", valid_from=since,
                                 scope=["table:T-A", "shoe:T-A"])
        b = self.batch()
        for table in ("T-A", "T-B"):
            b.add(self.floor, f"table:{table}", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
            for player in ("VICTIM", "ACCOMPLICE"):
                b.add(self.floor, f"seat:{player}", "seat.join.v1", {"table": table, "blind_level": "50/100"})
        b.add(self.cage, "account:VICTIM", "cash.deposit.v1",
              {"amount": 1_000_000, "currency": "EUR", "method": "bank", "reference": "salary"})
        stored(ledger.store, b)

    def batch(self) -> BatchBuilder:
        return BatchBuilder.for_store(self.ledger.store)

    def hand(self, b: BatchBuilder, signer: Any, table: str, rid: str, stacks: list[int]) -> None:
        """A heads-up hold'em hand: the victim raises and folds to the accomplice's shove."""
        rules, events = random_hand(random.Random(7), ["VICTIM", "ACCOMPLICE"], stacks, dump=(0, 1))
        b.add(signer, f"round:{rid}", "round.open.v1", {"table": table, "game": "poker", "rules": rules})
        for kind, payload in events:
            b.add(signer, f"round:{rid}", kind, payload)
        b.add(signer, f"round:{rid}", "round.close.v1", {"status": "complete"})

    def reconcile(self) -> tuple[int, dict[str, Any]]:
        res = CliRunner().invoke(main, checkpointed(self.ledger.cli_args()) + ["reconcile", "--day", utc_now()[:10], "--json"])
        return res.exit_code, json.loads(res.stdout)


def test_attack_1_a_dealer_key_cannot_buy_in_a_player_or_write_at_another_table(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Casino(ledger)
    for table in ("T-B", "T-A"):  # a table it has nothing to do with, then its own
        b = c.batch()
        b.add(c.dealer, f"chips:{table}", "chips.buy_in.v1", {"player": "VICTIM", "amount": 1_000_000})
        reason = refused(ledger.store, b)
        assert "role 'dealer' may not sign kind chips.buy_in.v1 (allowed: cage)" in reason
    b = c.batch()
    c.hand(b, c.dealer, "T-B", "stolen-1", [1_000_000, 1_000_000])
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and report.rejections[0].check == "scope"
    assert "may write only at table:T-A, shoe:T-A" in report.rejections[0].reason and "table:T-B" in report.rejections[0].reason
    b = c.batch()
    b.add(c.dealer, "chips:T-A", "chips.cash_out.v1", {"player": "ACCOMPLICE", "amount": 1_000_000})
    assert "may not sign kind chips.cash_out.v1" in refused(ledger.store, b)
    b = c.batch()
    b.add(c.dealer, "account:VICTIM", "cash.withdrawal.v1",
          {"amount": 1_000_000, "currency": "EUR", "method": "bank", "reference": "x"})
    assert "may not sign kind cash.withdrawal.v1" in refused(ledger.store, b)


def test_attack_1_a_seat_that_starts_with_more_chips_than_the_cage_issued_is_named_by_reconcile(ledger) -> None:  # type: ignore[no-untyped-def]
    """The dealer at its own table records the accomplice playing 1,000,000 having bought
    nothing; the victim's genuine buy-in flows to the accomplice, whom the cage pays out."""
    c = Casino(ledger)
    b = c.batch()
    b.add(c.cage, "chips:T-A", "chips.buy_in.v1", {"player": "VICTIM", "amount": 1_000_000})
    c.hand(b, c.dealer, "T-A", "dump-1", [1_000_000, 1_000_000])
    stored(ledger.store, b)  # the hand itself is legal poker
    code, report = c.reconcile()
    assert code == 1 and not report["ok"]
    named = [d for d in report["discrepancies"] if d["check"] == "table_chips" and d["stream"] == "round:dump-1"]
    assert any("ACCOMPLICE starts the round at T-A with €10,000.00 in chips but holds €0.00 there" in d["reason"]
               for d in named), report["discrepancies"]
    assert not any("VICTIM" in d["reason"] for d in named)  # the victim held what it brought


def test_attack_1_a_seat_within_the_chips_held_reconciles(ledger) -> None:  # type: ignore[no-untyped-def]
    """The control: both players bought in at the cage and start with what they hold."""
    c = Casino(ledger)
    b = c.batch()
    b.add(c.cage, "account:ACCOMPLICE", "cash.deposit.v1",
          {"amount": 20_000, "currency": "EUR", "method": "cash", "reference": "own"})
    b.add(c.cage, "chips:T-A", "chips.buy_in.v1", {"player": "VICTIM", "amount": 20_000})
    b.add(c.cage, "chips:T-A", "chips.buy_in.v1", {"player": "ACCOMPLICE", "amount": 20_000})
    c.hand(b, c.dealer, "T-A", "fair-1", [20_000, 20_000])
    stored(ledger.store, b)
    code, report = c.reconcile()
    assert [d for d in report["discrepancies"] if d["check"] == "table_chips"] == []


def test_attack_1_wagers_at_a_table_where_the_cage_issued_no_chips_are_named(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Casino(ledger)
    b = c.batch()
    c.hand(b, c.dealer, "T-A", "nochips-1", [1_000_000, 1_000_000])
    stored(ledger.store, b)
    code, report = c.reconcile()
    assert code == 1
    reasons = [d["reason"] for d in report["discrepancies"] if d["stream"] == "round:nochips-1"]
    assert any("where the cage issued no chips" in r for r in reasons), report["discrepancies"]


def test_attack_2_an_importer_key_moves_no_account_money(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = Casino(ledger)
    importer = create_key(ledger.store, ledger.keys, "importer:phh", "importer", scope=["table:phh-import"])
    b = c.batch()
    b.add(importer, "table:phh-T-A", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    assert "may write only at table:phh-import" in refused(ledger.store, b)
    b = c.batch()
    b.add(importer, "table:phh-import", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    c.hand(b, importer, "phh-import", "imported-1", [2_000_000, 2_000_000])
    stored(ledger.store, b)
    b = c.batch()
    b.add(importer, "chips:phh-import", "chips.buy_in.v1", {"player": "VICTIM", "amount": 1_000_000})
    assert "may not sign kind chips.buy_in.v1" in refused(ledger.store, b)
    res = CliRunner().invoke(main, ledger.cli_args() + ["balances", "--json"])
    accounts = {a["player"]: a for a in json.loads(res.stdout)["accounts"]}
    assert accounts["VICTIM"]["balance"] == 1_000_000 and accounts["VICTIM"]["game_net"] == 0
    assert "ACCOMPLICE" not in accounts  # the imported hand's winnings are evidence, not money
    code, report = c.reconcile()
    assert not [d for d in report["discrepancies"] if d["stream"] == "round:imported-1"], report["discrepancies"]


def test_attack_3_a_revoked_key_signs_nothing_more_whatever_its_at(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Casino(ledger)
    revoke_key(ledger.store, ledger.keys, c.cage.key_id, utc_now(), "cage terminal stolen")
    b = BatchBuilder.for_store(ledger.store, clock=lambda: _ago(minutes=1))  # back-dated before the revocation
    b.add(c.cage, "account:VICTIM", "cash.withdrawal.v1",
          {"amount": 1_000_000, "currency": "EUR", "method": "bank", "reference": "theft-2"})
    reason = refused(ledger.store, b)
    assert f"key {c.cage.key_id} was revoked" in reason and "whatever the event's at says" in reason


def test_attack_3_an_event_dated_outside_the_allowed_skew_is_refused(ledger, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A cage key valid since January (registered then) back-dates a theft to March: the
    key would allow the time, the ledger's clock does not."""
    monkeypatch.setenv("PITBOSS_MAX_SKEW", str(365 * 86400))  # the keys were registered in January
    c = Casino(ledger, since="2026-01-02T00:00:00Z")
    monkeypatch.delenv("PITBOSS_MAX_SKEW")  # today's ingest: the default skew of 5 minutes
    for at, word in (("2026-03-14T12:00:00Z", "behind"), (_ago(minutes=6), "behind"), (_ago(minutes=-6), "ahead of")):
        b = BatchBuilder.for_store(ledger.store, clock=lambda at=at: at)
        b.add(c.cage, "account:VICTIM", "cash.withdrawal.v1",
              {"amount": 100, "currency": "EUR", "method": "bank", "reference": f"w-{at[:10]}-{word[:2]}"})
        reason = refused(ledger.store, b)
        assert f"is {word} the ledger's clock" in reason and "allowed skew of 5 min" in reason
    b = BatchBuilder.for_store(ledger.store, clock=lambda: _ago(minutes=4))  # within the skew
    b.add(c.cage, "account:OTHER", "cash.deposit.v1",
          {"amount": 100, "currency": "EUR", "method": "bank", "reference": "d-ok"})
    stored(ledger.store, b)


def test_attack_3_at_never_goes_back_within_a_stream(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Casino(ledger)
    b = BatchBuilder.for_store(ledger.store, clock=lambda: _ago(minutes=1))
    b.add(c.cage, "account:VICTIM", "cash.withdrawal.v1",
          {"amount": 100, "currency": "EUR", "method": "bank", "reference": "back"})
    reason = refused(ledger.store, b)
    assert "goes back in time: account:VICTIM seq 1 is at" in reason


def test_attack_3_a_key_is_not_registered_into_the_past(ledger) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(HouseError, match="valid_from 2019-01-01T00:00:00Z is before this key-ring event"):
        create_key(ledger.store, ledger.keys, "cage:old", "cage", valid_from="2019-01-01T00:00:00Z")
    res = CliRunner().invoke(main, ledger.cli_args() + ["keys", "create", "cage:old", "--role", "cage",
                                                        "--valid-from", "2019-01-01T00:00:00Z"])
    assert res.exit_code == 2 and "a key is not registered into the past" in res.output


def test_attack_3_verify_names_a_row_stored_after_the_revocation_behind_ingests_back(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Casino(ledger)
    theft = c.batch()
    ev = theft.add(c.cage, "account:VICTIM", "cash.withdrawal.v1",
                   {"amount": 1_000_000, "currency": "EUR", "method": "bank", "reference": "theft"})
    revoke_key(ledger.store, ledger.keys, c.cage.key_id, format_utc(datetime.now(UTC) + timedelta(hours=1)), "stolen")
    ledger.store.append([ev])  # written behind ingest's back, after the revocation was recorded
    res = CliRunner().invoke(main, ledger.cli_args() + ["verify", "--json"])
    assert res.exit_code == 1
    problems = json.loads(res.stdout)["problems"]
    assert any(p["stream"] == "account:VICTIM" and "stored after the key ring recorded this key's revocation"
               in p["reason"] for p in problems), problems


def test_verify_names_an_event_outside_its_keys_scope_written_behind_ingests_back(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Casino(ledger)
    b = c.batch()
    b.add(c.cage, "chips:T-A", "chips.buy_in.v1", {"player": "VICTIM", "amount": 1_000_000})
    c.hand(b, c.dealer, "T-A", "in-scope", [1_000_000, 1_000_000])
    stored(ledger.store, b)
    outside = c.batch()
    c.hand(outside, c.dealer, "T-B", "out-of-scope", [1_000_000, 1_000_000])
    ledger.store.append(outside.events)
    res = CliRunner().invoke(main, ledger.cli_args() + ["verify", "--json"])
    assert res.exit_code == 1
    problems = json.loads(res.stdout)["problems"]
    assert {p["stream"] for p in problems} == {"round:out-of-scope"}
    assert all(p["check"] == "scope" and "not at table:T-B" in p["reason"] for p in problems)
    assert len(problems) == len(outside.events)


def test_a_scope_change_is_a_house_signed_key_ring_event_and_rotation_keeps_the_scope(ledger) -> None:  # type: ignore[no-untyped-def]
    c = Casino(ledger)
    cli = ledger.cli_args()
    res = CliRunner().invoke(main, cli + ["keys", "rotate", c.dealer.key_id, "--json"])
    assert res.exit_code == 0, res.output
    new_id = json.loads(res.stdout)["key_id"]
    res = CliRunner().invoke(main, cli + ["keys", "list", "--json"])
    keys = {k["key_id"]: k for k in json.loads(res.stdout)["keys"]}
    assert keys[new_id]["scope"] == ["table:T-A", "shoe:T-A"]
    res = CliRunner().invoke(main, cli + ["keys", "scope", new_id, "--scope", "table:T-B"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, cli + ["keys", "scope", new_id, "--scope", "*"])
    assert res.exit_code == 2 and "cannot be venue-wide" in res.output
    res = CliRunner().invoke(main, cli + ["keys", "create", "dealer:new", "--role", "dealer"])
    assert res.exit_code == 2 and "a dealer key needs a scope" in res.output
    kinds = [r[3] for r in dump_rows(ledger.store) if r[1] == "keyring"]
    assert kinds.count("key.scope.v1") == 1



def test_attack_3_ingest_commits_the_ledgers_clock_and_a_late_arrival_is_reconciled_the_day_it_arrives(ledger) -> None:  # type: ignore[no-untyped-def]
    """An imported hand dated in March (the one kind of event that may carry an old date)
    is received today: the ledger's receipt (signed by its log key, a leaf of the log)
    says when, and today's reconciliation lists it as a late arrival and replays it."""
    importer = create_key(ledger.store, ledger.keys, "importer:phh", "importer", scope=["table:phh-import"])
    b = BatchBuilder.for_store(ledger.store, clock=lambda: "2026-03-14T12:00:00Z")
    b.add(importer, "table:phh-import", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    rules, events = random_hand(random.Random(3), ["ANN", "BOB"], [10_000, 10_000])
    b.add(importer, "round:old-1", "round.open.v1", {"table": "phh-import", "game": "poker", "rules": rules})
    for kind, payload in events:
        b.add(importer, "round:old-1", kind, payload)
    b.add(importer, "round:old-1", "round.close.v1", {"status": "complete"})
    path = ledger.tmp / "old.jsonl"
    b.write_jsonl(path)
    res = CliRunner().invoke(main, ledger.cli_args() + ["ingest", str(path), "--json"])
    assert res.exit_code == 0, res.output
    received = json.loads(res.stdout)["received"]
    assert received is not None and received[:10] == utc_now()[:10]
    receipts = [r for r in dump_rows(ledger.store) if r[1] == "ledger:receipts"]
    assert len(receipts) == 1 and json.loads(receipts[0][4])["payload"]["received"] == received
    res = CliRunner().invoke(main, checkpointed(ledger.cli_args()) + ["reconcile", "--day", utc_now()[:10], "--json"])
    report = json.loads(res.stdout)
    late = {a["event"] for a in report["late_arrivals"]}
    assert "round:old-1#1" in late and "table:phh-import#1" in late
    assert report["rounds_closed"] == 1 and res.exit_code == 0, report["discrepancies"]
    march = json.loads(CliRunner().invoke(main, checkpointed(ledger.cli_args()) + ["reconcile", "--day", "2026-03-14",
                                                                     "--json"]).stdout)
    assert march["late_arrivals"] == [] and march["rounds_closed"] == 1  # and on its own date too


def test_attack_3_ingest_without_the_ledgers_log_key_is_refused_before_anything_is_read(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = Casino(ledger)
    b = c.batch()
    b.add(c.cage, "account:VICTIM", "cash.deposit.v1", {"amount": 5, "currency": "EUR", "method": "cash",
                                                        "reference": "k"})
    path = b.write_jsonl(tmp_path / "b.jsonl")
    before = dump_rows(ledger.store)
    args = ["--db", ledger.url, "--keys", str(tmp_path / "elsewhere"), "--public", str(ledger.public.path)]
    res = CliRunner().invoke(main, args + ["ingest", str(path)])
    assert res.exit_code == 2 and "receipts signed by its log key" in res.output
    assert dump_rows(ledger.store) == before


def test_attack_8_a_batch_over_its_cap_in_bytes_is_refused_with_nothing_stored(ledger, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The cap on a batch is in bytes as well as in lines (``MAX_BATCH_BYTES``; 128 MiB,
    lowered here to 50 kB): past it the batch is refused ("size") and the rest of the
    input is not read; the same file goes in as smaller batches."""
    import ledger.ingest as ingest_module

    monkeypatch.setattr(ingest_module, "MAX_BATCH_BYTES", 50_000)
    c = Casino(ledger)
    b = c.batch()
    for k in range(120):
        b.add(c.cage, f"account:P{k}", "cash.deposit.v1", {"amount": 100, "currency": "EUR", "method": "cash",
                                                           "reference": f"big-{k}-" + "x" * 150})
    path = b.write_jsonl(tmp_path / "big.jsonl")
    assert path.stat().st_size > 50_000
    before = dump_rows(ledger.store)
    res = CliRunner().invoke(main, ledger.cli_args() + ["ingest", str(path), "--json"])
    assert res.exit_code == 1 and dump_rows(ledger.store) == before
    (first,) = json.loads(res.stdout)["rejections"]
    assert first["check"] == "size" and "more than 50000 bytes" in first["reason"] and "--batch-size" in first["reason"]
    res = CliRunner().invoke(main, ledger.cli_args() + ["ingest", str(path), "--batch-size", "40", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["stored"] == 120


def test_attack_8_one_stream_is_read_from_the_store_once_in_a_run_not_once_an_event(ledger) -> None:  # type: ignore[no-untyped-def]
    """1,000 seat events of one player in ten batches of one run: the seat stream is folded
    from the store once, then carried from event to event (``ledger.judges.World``)."""
    from ledger.ingest import IngestSession

    game = create_key(ledger.store, ledger.keys, "game:seats", "game", scope=["table:T1"])
    b = BatchBuilder.for_store(ledger.store)
    for k in range(1000):
        payload: dict[str, Any] = {"table": "T1", "blind_level": "1/2"}
        if k % 2:
            payload.update(hands_played=0, others_seated=3)  # no hand dealt: the ledger counts 0
        b.add(game, "seat:P1", "seat.leave.v1" if k % 2 else "seat.join.v1", payload)
    lines = b.lines()
    reads: list[str] = []
    real = ledger.store.stream_events

    def counted(stream: str):  # type: ignore[no-untyped-def]
        reads.append(stream)
        return real(stream)

    ledger.store.stream_events = counted
    try:
        session = IngestSession(ledger.store)
        for i in range(0, 1000, 100):
            assert session.send(lines[i:i + 100]).status == "stored"
    finally:
        del ledger.store.stream_events
    assert reads.count("seat:P1") <= 1, reads
    assert len(ledger.store.stream_events("seat:P1")) == 1000


def test_attack_3_a_revocation_recorded_during_a_long_run_stops_the_key_at_its_next_batch(ledger) -> None:  # type: ignore[no-untyped-def]
    """An ingest run (``IngestSession``, as the demo, an import or a batched file uses)
    reads the key ring once; a revocation another writer records meanwhile still refuses
    the key's next batch, and the same run's other batches go on."""
    from ledger.ingest import IngestSession

    c = Casino(ledger)
    session = IngestSession(ledger.store)

    def deposit(ref: str) -> list[str]:
        b = c.batch()
        b.add(c.cage, "account:VICTIM", "cash.deposit.v1", {"amount": 5, "currency": "EUR", "method": "cash",
                                                            "reference": ref})
        return b.lines()

    assert session.send(deposit("before")).status == "stored"
    # untrusted only from an hour on: what refuses the next batch is that the revocation is recorded
    revoke_key(ledger.store, ledger.keys, c.cage.key_id, format_utc(datetime.now(UTC) + timedelta(hours=1)),
               "stolen during the run")
    report = session.send(deposit("after"))
    assert report.status == "rejected" and "was revoked" in report.rejections[0].reason
    b = c.batch()
    b.add(c.floor, "table:T-C", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    assert session.send(b.lines()).status == "stored"


MALFORMED_ACTIONS = [
    lambda p: dict(p, seat=str(p["seat"])), lambda p: dict(p, seat=1.5), lambda p: dict(p, to="x"),
    lambda p: dict(p, extra=1), lambda p: {}, lambda p: dict(p, action=None), lambda p: dict(p, seat=None),
    lambda p: dict(p, to=[1]),
]
MALFORMED_OTHERS = [
    ("cage", "account:VICTIM", "cash.deposit.v1", {"amount": "5", "currency": "EUR", "method": "bank", "reference": "x"}),
    ("cage", "account:VICTIM", "cash.withdrawal.v1", {"amount": None}),
    ("cage", "chips:T-A", "chips.buy_in.v1", {"player": "VICTIM", "amount": "100"}),
    ("cage", "chips:T-A", "chips.cash_out.v1", {"player": 5, "amount": 1.5}),
    ("floor", "seat:VICTIM", "seat.leave.v1", {"table": None}),
    ("floor", "table:T-C", "table.open.v1", {"game": 5, "seats": "9"}),
    ("dealer", "round:open-bad", "round.open.v1", {"table": "T-A", "game": "poker", "rules": "x"}),
]


def test_attack_3_events_in_a_form_ingest_refuses_written_behind_its_back_are_named_and_break_no_job(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A stolen key signs events whose payloads ingest refuses for their form (a seat as
    text, an amount as text, a field missing or extra: the kind's schema, ingest stage 2)
    and writes them behind ingest's back. The signatures hold, so only the form gives them
    away: every reader checks it as ingest does (``ledger.events.check_payload``).
    Reconcile names each with check "schema" (NOT RECONCILED, exit 1), replay names the
    step, an export names the event and writes nothing, and the views, balances, AML scan
    and table state count them for nothing; no job stops on them with an exception."""
    c = Casino(ledger)
    cli = checkpointed(ledger.cli_args())
    b = c.batch()
    b.add(c.cage, "chips:T-A", "chips.buy_in.v1", {"player": "VICTIM", "amount": 100_000})
    stored(ledger.store, b)
    assert CliRunner().invoke(main, cli + ["projections", "run"]).exit_code == 0
    balances_before = json.loads(CliRunner().invoke(main, cli + ["balances", "--json"]).stdout)
    out = c.batch()
    bad: list[tuple[str, int]] = []
    for n, spoil in enumerate(MALFORMED_ACTIONS):
        rules, events = random_hand(random.Random(n), ["VICTIM", "ACCOMPLICE"], [10_000, 10_000])
        rid = f"round:bad-{n}"
        out.add(c.dealer, rid, "round.open.v1", {"table": "T-A", "game": "poker", "rules": rules})
        k = next(i for i, (kind, _) in enumerate(events) if kind == "poker.action.v1")
        for i, (kind, payload) in enumerate(events):
            ev = out.add(c.dealer, rid, kind, spoil(payload) if i == k else payload)
            if i == k:
                bad.append((ev.stream, ev.seq))
        out.add(c.dealer, rid, "round.close.v1", {"status": "complete"})
    for who, stream, kind, payload in MALFORMED_OTHERS:
        ev = out.add(getattr(c, who), stream, kind, payload)
        bad.append((ev.stream, ev.seq))
    ledger.store.append(out.events)

    res = CliRunner().invoke(main, cli + ["reconcile", "--day", utc_now()[:10], "--json"])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    report = json.loads(res.stdout)
    assert res.exit_code == 1 and report["verdict"] == "NOT RECONCILED"
    named = {(d["stream"], d["seq"]) for d in report["discrepancies"] if d["check"] == "schema"}
    assert named == set(bad), named ^ set(bad)
    for n in range(len(MALFORMED_ACTIONS)):
        res = CliRunner().invoke(main, cli + ["replay", f"round:bad-{n}", "--json"])
        assert res.exit_code == 1 and res.exception is None or isinstance(res.exception, SystemExit), res.exception
        seqs = {d["seq"] for d in json.loads(res.stdout)["differences"]}
        assert {seq for stream, seq in bad if stream == f"round:bad-{n}"} <= seqs
    for n in range(len(MALFORMED_ACTIONS)):
        for fmt in ("phh", "ohh"):
            res = CliRunner().invoke(main, cli + ["export", fmt, f"round:bad-{n}", "-o", str(tmp_path / f"{n}.{fmt}")])
            assert res.exit_code == 1 and f"round:bad-{n} seq" in res.output, (fmt, n, res.output, res.exception)
    for cmd in (["projections", "run"], ["aml", "flags", "--json"], ["table", "T-A", "--json"],
                ["evidence", "round:bad-0", "-o", str(tmp_path / "bundle")]):
        res = CliRunner().invoke(main, cli + cmd)
        assert res.exception is None or isinstance(res.exception, SystemExit), (cmd, res.exception)
        assert res.exit_code in (0, 1), (cmd, res.output)
    after = json.loads(CliRunner().invoke(main, cli + ["balances", "--json"]).stdout)
    assert {k: v for k, v in after.items() if k != "house_revenue"} == {
        k: v for k, v in balances_before.items() if k != "house_revenue"}  # no account moved by them
    assert all(r["house_net"] == 0 for r in after["house_revenue"])  # the refused rounds moved no money

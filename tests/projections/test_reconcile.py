"""Nightly reconciliation (issue #5 point 6) on SQLite and PostgreSQL: a clean day
reconciles; an altered event, a forged payout signed with a real (compromised) dealer key
and written behind ingest's back, and a tampered view row are each named, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.keys import describe_libsodium
from ledger.producer import BatchBuilder
from ledger.sim.sample import producer_signer, write_sample_batch
from ledger.timeutil import utc_now
from projections.runner import ViewStore
from tests.conftest import execute_sql
from tests.helpers import checkpointed, ingest


@pytest.fixture
def day(ledger, tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    batch = tmp_path / "b.jsonl"
    write_sample_batch(ledger.store, ledger.keys, batch, 12)
    assert ingest(ledger.store, batch.read_text().splitlines()).status == "stored"
    return utc_now()[:10]


def run(ledger, day: str) -> tuple[int, dict]:  # type: ignore[no-untyped-def,type-arg]
    res = CliRunner().invoke(main, checkpointed(ledger.cli_args()) + ["reconcile", "--day", day, "--json"])
    return res.exit_code, json.loads(res.stdout)


def test_a_clean_day_reconciles(ledger, day: str) -> None:  # type: ignore[no-untyped-def]
    code, report = run(ledger, day)
    assert code == 0 and report["ok"] and report["rounds_closed"] == 12 == report["rounds_reconciled"]
    assert report["discrepancies"] == []
    # the verdict names the libsodium that judged the day's signatures (docs/operations.md)
    assert report["verification"]["signatures_checked_with"] == describe_libsodium()


def test_an_altered_event_is_named(ledger, day: str) -> None:  # type: ignore[no-untyped-def]
    row = next(r for r in ledger.store.rows() if r.kind == "baccarat.settle.v1")
    col = "rowid" if ledger.store.url.backend == "sqlite" else "notification_id"
    data = row.state.replace(b'"outcome":"', b'"outcome":"x', 1)
    execute_sql(ledger.store, f"UPDATE {ledger.store.events_table} SET state=? WHERE {col}=?", (data, row.notification_id))
    code, report = run(ledger, day)
    assert code == 1
    assert any(d["stream"] == row.stream and d["seq"] == row.seq for d in report["discrepancies"])


def test_a_forged_payout_signed_by_a_compromised_dealer_key_is_caught(ledger, day: str) -> None:  # type: ignore[no-untyped-def]
    dealer = producer_signer(ledger.store, ledger.keys, "dealer:sample", "dealer")
    b = BatchBuilder.for_store(ledger.store)
    rid = "round:sample-bac-1-forged"
    head = ledger.store.head("shoe:" + next(r.stream for r in ledger.store.rows() if r.stream.startswith("shoe:"))[5:])
    assert head is not None
    b.add(dealer, rid, "round.open.v1", {"table": "sample-bac-1", "game": "baccarat", "rules": {},
                                         "source": head.stream})
    events = coup_events([("P001", "player", 1000)], iter(deck()))
    for kind, payload in events:
        if kind == "baccarat.settle.v1":  # the dealer's accomplice is paid whatever happened
            payload = {"bet": 1, "outcome": "win", "paid": 2000, "commission": 0} if payload["paid"] != 2000 else \
                {"bet": 1, "outcome": "win", "paid": 4000, "commission": 0}
        b.add(dealer, rid, kind, payload)
    b.add(dealer, rid, "round.close.v1", {"status": "complete"})
    assert ingest(ledger.store, b.lines()).status == "rejected"  # ingest refuses it...
    ledger.store.append(b.events)  # ...so the attacker writes it straight into the table
    code, report = run(ledger, day)
    assert code == 1
    forged = [d for d in report["discrepancies"] if d["stream"] == rid]
    assert forged and forged[0]["check"] == "rules" and "wrong settlement" in forged[0]["reason"]


def test_a_tampered_view_row_is_named(ledger, day: str) -> None:  # type: ignore[no-untyped-def]
    assert run(ledger, day)[0] == 0  # views caught up
    with ViewStore(ledger.store.url) as vs, vs.datastore.transaction(commit=True) as c:
        c.execute(f"UPDATE {vs.table_name('accounts')} SET deposits = deposits + 1")
    code, report = run(ledger, day)
    assert code == 1
    reasons = [d["reason"] for d in report["discrepancies"] if d["check"] == "projection" and d["stream"] == "view:accounts"]
    assert any("is not what the ledger gives" in r for r in reasons) and any(r.endswith("is missing") for r in reasons)
    assert len(reasons) <= 40  # the first 20 of each, a page of keys looked up at a time (ViewStore.rows_at)


def test_reconcile_reads_no_round_twice(ledger, day: str, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 16 point 3: one pass over the log, each round walked from the rows it brings,
    for the checks, the views' recomputation and the AML scan alike: no query per round."""
    reads: list[str] = []
    plain = ledger.store.stream_events
    monkeypatch.setattr(ledger.store, "stream_events",
                        lambda stream: (reads.append(stream) if stream.startswith("round:") else None) or plain(stream))
    from projections.reconcile import reconcile_day

    report = reconcile_day(ledger.store, day, workers=1)  # the pass in this process, where the store is watched
    assert report["rounds_closed"] == 12 == report["rounds_reconciled"] and reads == []


def test_reconcile_reads_no_table_configuration_per_round(ledger, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                                         tmp_path: Path) -> None:
    """Issue 16 point 3: a round is walked by the table configuration its round.open cites,
    taken from the pass over the log (``runner.TableConfigs``), not read again per round."""
    demo = CliRunner().invoke(main, ledger.cli_args() + ["demo", "--hands", "40", "-o", str(tmp_path / "o"), "--json"])
    assert demo.exit_code == 0, demo.output
    cited = [r for r in ledger.store.rows_of_kind("round.open.v1") if b'"config":' in r.state]
    reads: list[tuple[str, int]] = []
    at = ledger.store.event_at
    monkeypatch.setattr(ledger.store, "event_at", lambda stream, seq: reads.append((stream, seq)) or at(stream, seq))
    from projections.reconcile import reconcile_day

    day = ledger.store.rows_of_kind("round.close.v1")[-1].state.split(b'"at":"')[1][:10].decode()
    report = reconcile_day(ledger.store, day, workers=1)  # the pass in this process, where the store is watched
    assert report["rounds_reconciled"] == report["rounds_closed"] > 0 and report["discrepancies"] == []
    assert len(cited) >= 40 and not [r for r in reads if r[0].startswith("table:")]


def _report(ledger, day: str, workers: int) -> dict:  # type: ignore[no-untyped-def,type-arg]
    from projections.reconcile import reconcile_day

    report = reconcile_day(ledger.store, day, workers=workers)
    report.pop("seconds")
    return report


def test_the_pass_made_beside_verification_gives_the_report_of_the_pass_made_after_it(  # type: ignore[no-untyped-def]
        ledger, tmp_path: Path) -> None:
    """Issue 16 point 3: with more than one core the day's pass runs in a process of its
    own while verification runs (``reconcile._Beside``); its report is the one the pass
    made after verification gives, to the byte."""
    demo = CliRunner().invoke(main, ledger.cli_args() + ["demo", "--hands", "60", "-o", str(tmp_path / "o"), "--json"])
    assert demo.exit_code == 0, demo.output
    day = ledger.store.rows_of_kind("round.close.v1")[-1].state.split(b'"at":"')[1][:10].decode()
    beside, after = _report(ledger, day, 2), _report(ledger, day, 1)
    assert beside["rounds_closed"] >= 60 and beside["aml_flags"] and beside["tables"]
    assert json.dumps(beside, sort_keys=True) == json.dumps(after, sort_keys=True)


def test_a_row_verification_rejects_is_left_out_of_the_pass_made_beside_it(ledger, day: str) -> None:  # type: ignore[no-untyped-def]
    """Issue 14 point 3 with issue 16 point 3: the pass made beside verification counted
    every row; when verification rejects one (a deposit raised behind ingest's back) that
    pass is dropped and the day is passed again without the row, so the views' recomputation
    does not hold the raised deposit and the report is the one-core report."""
    row = next(r for r in ledger.store.rows() if r.kind == "cash.deposit.v1")
    col = "rowid" if ledger.store.url.backend == "sqlite" else "notification_id"
    data = row.state.replace(b'"amount":', b'"amount":9', 1)
    assert data != row.state
    execute_sql(ledger.store, f"UPDATE {ledger.store.events_table} SET state=? WHERE {col}=?", (data, row.notification_id))
    beside, after = _report(ledger, day, 2), _report(ledger, day, 1)
    assert beside["verdict"] == "NOT RECONCILED"
    assert any(d["stream"] == row.stream and d["seq"] == row.seq for d in beside["discrepancies"])
    assert not [d for d in beside["discrepancies"] if d["check"] == "projection"]  # the raised deposit counted nowhere
    assert json.dumps(beside, sort_keys=True) == json.dumps(after, sort_keys=True)


def test_events_of_the_day_after_the_largest_accepted_checkpoint_are_named_not_checked(  # type: ignore[no-untyped-def]
        ledger, day: str, tmp_path: Path) -> None:
    """Issue 14 point 5: the day's events that no accepted checkpoint covers could be
    removed unseen; reconcile names how many (counted in the day's pass by leaf,
    ``reconcile.LeafRuns``, against the size verification accepted) and the day is
    INCOMPLETE, on one core and with the pass beside verification alike."""
    from projections.reconcile import reconcile_day

    covered = ledger.store.max_notification_id()
    checkpointed(ledger.cli_args())  # of the first ``covered`` events (its own row comes after them)
    cage = producer_signer(ledger.store, ledger.keys, "cage:sample", "cage")
    b = BatchBuilder.for_store(ledger.store)
    for i in range(3):
        b.add(cage, f"account:late{i}", "cash.deposit.v1",
              {"amount": 100 + i, "currency": "EUR", "method": "card", "reference": f"late{i}"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    after = [r for r in ledger.store.rows() if r.notification_id > covered and not r.stream.startswith(("ledger:", "keyring"))]
    for workers in (1, 2):
        report = reconcile_day(ledger.store, day, roots=ledger.roots, workers=workers)
        assert report["verification"]["accepted_size"] == covered
        assert report["verdict"] == "INCOMPLETE", report["discrepancies"]
        assert [n for n in report["not_checked"] if n.startswith("anchoring:")] == [
            f"anchoring: {len(after)} events of {day} come after the largest accepted checkpoint (size {covered}):"
            " they could be removed unseen; sign a checkpoint ('pitboss checkpoint') before reconciling"]

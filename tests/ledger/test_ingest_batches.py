"""Bulk ingest in consecutive atomic batches, checking overlapped with storing
(SQLite file and PostgreSQL)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cli.main import main
from ledger.ingest import ingest_batches
from ledger.verify import verify_ledger
from tests.conftest import dump_rows
from tests.helpers import ingest, make_producers, night_batch


def _chunks(lines: list[str], n: int) -> list[list[str]]:
    return [lines[i:i + n] for i in range(0, len(lines), n)]


def test_split_load_stores_what_one_batch_would(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=40).lines()
    reports = ingest_batches(ledger.store, _chunks(lines, 7))
    assert [r.status for r in reports] == ["stored"] * len(_chunks(lines, 7))
    assert sum(r.stored for r in reports) == len(lines)
    stored = [r[4] for r in dump_rows(ledger.store)][-len(lines):]
    assert stored == [line.encode() for line in lines]
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean
    again = ingest_batches(ledger.store, _chunks(lines, 7))
    assert {r.status for r in again} == {"duplicate"}


def test_a_refused_batch_stops_the_run_earlier_batches_stay(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=20).lines()
    d = json.loads(lines[17])
    d["sig"] = "00" * 64
    lines[17] = json.dumps(d)
    before = len(dump_rows(ledger.store))
    reports = ingest_batches(ledger.store, _chunks(lines, 5))
    assert [r.status for r in reports] == ["stored", "stored", "stored", "rejected"]
    # named by its line in the whole input (the 18th), not within its batch
    assert reports[-1].rejections[0].line == 18 and reports[-1].rejections[0].check == "signature"
    assert len(dump_rows(ledger.store)) == before + 15
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean


def test_cli_batch_size(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=12).lines()
    f = tmp_path / "day.jsonl"
    f.write_text("\n".join(lines) + "\n")
    res = CliRunner().invoke(main, ledger.cli_args() + ["ingest", "--batch-size", "10", "--json", str(f)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["ok"] and data["stored"] == len(lines) and len(data["batches"]) == 3
    assert ingest(ledger.store, lines).status == "duplicate"


def test_a_batch_committed_before_its_acknowledgement_was_lost_is_a_duplicate(ledger) -> None:  # type: ignore[no-untyped-def]
    """Issue #7 point 2: the connection drops after COMMIT reached the server and
    eventsourcing's PostgreSQL recorder retries the insert (CI saw this as a "conflict"
    that stopped a retried ingest). The batch's places are taken by exactly its events:
    the store says so (AlreadyStoredError) and the batch counts as a duplicate; a batch
    whose places hold other events is still a conflict."""
    import pytest

    from ledger.events import parse_event, parse_json_line
    from ledger.ingest import _ingest, parse_lines
    from ledger.judges import World
    from ledger.keyring import load_keyring
    from ledger.producer import BatchBuilder
    from ledger.store import AlreadyStoredError, ConflictError

    def event_from_line(line: str):  # type: ignore[no-untyped-def]
        return parse_event(parse_json_line(line))

    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=4).lines()
    items = parse_lines(lines)
    ring = load_keyring(ledger.store)
    world = World(ledger.store, ring)
    world.prefetch([ev for _, ev in items])  # checked before the "first attempt" committed
    events = [event_from_line(line) for line in lines]
    ledger.store.append(events)  # that first attempt's commit
    before = dump_rows(ledger.store)
    with pytest.raises(AlreadyStoredError):
        ledger.store.append(events)
    report = _ingest(ledger.store, items, world)
    assert report.status == "duplicate" and report.ok and "already stored" in report.message
    assert dump_rows(ledger.store) == before  # nothing stored twice

    def deposit(amount: int) -> list:  # type: ignore[type-arg]
        b = BatchBuilder.for_store(ledger.store)
        b.add(p.cage, "account:P9", "cash.deposit.v1", {"amount": amount, "currency": "EUR", "method": "card",
                                                         "reference": f"d{amount}"})
        return [event_from_line(line) for line in b.lines()]

    first, rival = deposit(100), deposit(200)  # both built on the same head: the same place
    ledger.store.append(first)
    with pytest.raises(ConflictError) as exc:
        ledger.store.append(rival)
    assert not isinstance(exc.value, AlreadyStoredError)


def test_a_retry_checks_the_batch_against_the_store_not_the_failed_attempt(ledger, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue #7 point 2: an attempt whose append failed had already advanced the session's
    stream heads while checking; if the store could not be re-read before the retry, the
    retry must not judge the batch against those heads (it would call the batch a replay
    of itself and report "duplicate" with nothing stored)."""
    import ledger.ingest as ingest_mod
    from ledger.ingest import IngestSession
    from ledger.store import StoreError

    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=5).lines()
    base = ledger.store.count()
    real_append, real_keyring = ledger.store.append, ingest_mod.load_keyring
    faults = {"append": 1, "keyring": 1}

    def failing_append(events):  # type: ignore[no-untyped-def]
        if faults["append"]:
            faults["append"] -= 1
            raise StoreError("storing the batch failed, nothing was stored: server closed the connection")
        return real_append(events)

    def failing_keyring(store):  # type: ignore[no-untyped-def]
        if faults["keyring"] and not faults["append"]:
            faults["keyring"] -= 1
            raise StoreError("cannot read the key ring: the database is restarting")
        return real_keyring(store)

    session = IngestSession(ledger.store, retries=3, backoff=0.01)
    monkeypatch.setattr(ledger.store, "append", failing_append)
    monkeypatch.setattr(ingest_mod, "load_keyring", failing_keyring)
    report = session.send(lines)
    assert faults == {"append": 0, "keyring": 0} and session.attempts == 3
    assert report.status == "stored", report.message
    assert ledger.store.count() - base == len(lines)
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean

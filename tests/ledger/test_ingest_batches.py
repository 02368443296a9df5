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

    def failing_append(events, before_commit=None):  # type: ignore[no-untyped-def]
        if faults["append"]:
            faults["append"] -= 1
            raise StoreError("storing the batch failed, nothing was stored: server closed the connection")
        return real_append(events, before_commit)

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


# --- signatures read after the judges' pass (ledger.ingest._check_items) ----------------

def _forged(lines: list[str], at: list[int]) -> list[str]:
    out = list(lines)
    for i in at:
        d = json.loads(out[i])
        d["sig"] = d["sig"][:-2] + ("00" if d["sig"][-2:] != "00" else "01")
        out[i] = json.dumps(d)
    return out


def _event_by_event(store, lines: list[str]) -> list[tuple[int, str | None, int | None, str, str]]:  # type: ignore[no-untyped-def]
    """The rejections of judging each event in its turn, reading each verdict as it comes:
    the reference the pass with deferred verdicts must reproduce exactly."""
    from ledger.ingest import _judge_items, parse_presigned
    from ledger.judges import World
    from ledger.keyring import load_keyring

    world = World(store, load_keyring(store))
    items, (presigned, verdict) = parse_presigned(lines, 1, world.ring)
    _, rejections, _ = _judge_items(items, world, presigned, verdict, None)
    return [(r.line, r.stream, r.seq, r.check, r.reason) for r in rejections]


def test_a_bad_signature_found_after_the_pass_gives_the_event_by_event_report(ledger) -> None:  # type: ignore[no-untyped-def]
    """Stage 6's verdicts are read after the judges ran over the batch (ingest docstring).
    A round.open with a bad signature was judged meanwhile as if good, and its close was
    admitted against it; the batch must then be judged again event by event, so that the
    report is the one judging in order gives (the close refused for want of its open), and
    nothing is stored. The same store then takes the good batch whole."""
    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=200).lines()  # three chunks of signatures and more
    opens = [i for i, line in enumerate(lines) if json.loads(line)["kind"] == "round.open.v1"]
    bad = _forged(lines, [opens[70], opens[150] + 1])
    expected = _event_by_event(ledger.store, bad)
    assert [c for *_, c, _ in expected].count("signature") == 2 and len(expected) > 2  # later events refused in turn
    before = len(dump_rows(ledger.store))
    report = ingest(ledger.store, bad)
    assert report.status == "rejected"
    assert [(r.line, r.stream, r.seq, r.check, r.reason) for r in report.rejections] == expected
    assert len(dump_rows(ledger.store)) == before
    assert ingest(ledger.store, lines).status == "stored"
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean


def test_a_session_goes_on_from_the_store_after_a_batch_judged_twice(ledger) -> None:  # type: ignore[no-untyped-def]
    """After a batch judged again for a bad signature, the session's world is the store's:
    the next batches of the run are judged and stored as if the refused one never came."""
    from ledger.ingest import IngestSession

    p = make_producers(ledger)
    first = night_batch(ledger.store, p, rounds=150).lines()
    session = IngestSession(ledger.store)
    assert session.send(first).status == "stored"
    second = night_batch(ledger.store, p, rounds=150).lines()
    report = session.send(_forged(second, [len(second) // 2]))
    assert report.status == "rejected" and report.rejections[0].check == "signature"
    assert session.send(second).status == "stored"
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean


def test_a_judge_that_fails_on_an_event_not_yet_proven_is_not_the_verdict(ledger, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A judge that raises on an event whose signature is still being checked: judged
    again in order, the bad signature is the reason (the judge is never reached); with a
    good signature the judge's failure is the failure, as without deferred verdicts."""
    from ledger.judges import World

    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=150).lines()
    target = json.loads(lines[len(lines) // 2])
    judge = World.judge

    def fragile(self, ev):  # type: ignore[no-untyped-def]
        if (ev.stream, ev.seq) == (target["stream"], target["seq"]):
            raise RuntimeError("a judge's own failure")
        return judge(self, ev)

    monkeypatch.setattr(World, "judge", fragile)
    report = ingest(ledger.store, _forged(lines, [len(lines) // 2]))
    assert report.status == "rejected" and report.rejections[0].check == "signature"
    assert (report.rejections[0].stream, report.rejections[0].seq) == (target["stream"], target["seq"])
    import pytest

    with pytest.raises(RuntimeError, match="a judge's own failure"):
        ingest(ledger.store, lines)


AWKWARD = 'a "quoted", (paren) {brace} [list] \\back\\slash \'single\' NULL ünïcödé ✓ 🂡 \n\t\r end'
"""Characters a composite's or an array's text format quotes or escapes (PostgreSQL's
row and array literals), and non-ASCII: the rows must come back as sent whichever wire
format the recorder uses (``ledger.store.postgres.LedgerPostgresRecorder`` sends them binary).
A key of a rules object is 1-64 ASCII characters: ``AWKWARD_KEY``."""
AWKWARD_KEY = 'k "q", (p) {b} [l] \\s \'s\' NULL'


def test_stored_rows_are_the_sent_bytes_whatever_their_characters(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    b = night_batch(ledger.store, p, rounds=0)
    start = ledger.store.max_notification_id()
    for i in range(300):  # 600 rows: more than one INSERT statement's share (INSERT_CHUNK = 250)
        rid = f"round:bac-1-{start + i:06d}"
        b.add(p.dealer, rid, "round.open.v1",
              {"table": "bac-1", "game": "fan-tan", "rules": {"decks": 8, "note": f"{AWKWARD} {i}", AWKWARD_KEY: i}})
        b.add(p.dealer, rid, "round.close.v1", {"status": "complete"})
    lines = b.lines()
    assert any("\\\\" in line and "\\n" in line and "✓" in line for line in lines)
    report = ingest(ledger.store, lines)
    assert report.status == "stored", (report.message, report.rejections[:2])
    stored = [r[4] for r in dump_rows(ledger.store) if r[1] != "ledger:receipts"][-len(lines):]
    assert stored == [line.encode() for line in lines]
    assert ledger.store.event_at(f"round:bac-1-{start + 7:06d}", 1).payload["rules"]["note"] == f"{AWKWARD} 7"
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean


def test_the_collector_is_off_while_a_batch_is_parsed_judged_and_stored_and_as_it_was_after(ledger, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A batch is held whole from its parse to its commit, so a collection during it walks
    live objects and finds nothing (``ledger.collector.paused``): the cyclic collector is
    off while each batch is parsed, judged and appended, by ``ingest_lines`` or a session,
    stored or refused; on after when it was on before; still off when the caller had
    turned it off."""
    import gc

    from ledger import ingest as ingest_module
    from ledger.ingest import IngestSession, ingest_lines
    from ledger.store import Store

    seen: list[tuple[str, bool]] = []

    def watched(name: str, fn):  # type: ignore[no-untyped-def]
        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            seen.append((name, gc.isenabled()))
            return fn(*args, **kwargs)
        return run

    monkeypatch.setattr(ingest_module, "_parse", watched("parse", ingest_module._parse))
    monkeypatch.setattr(ingest_module, "_judge_items", watched("judge", ingest_module._judge_items))
    monkeypatch.setattr(Store, "append", watched("append", Store.append))
    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=30).lines()
    bad = json.loads(lines[-1])
    bad["sig"] = "00" * 64
    assert gc.isenabled()
    seen.clear()
    assert ingest_lines(ledger.store, lines[:-1] + [json.dumps(bad)]).status == "rejected"
    assert {name for name, _ in seen} >= {"parse", "judge"} and not any(on for _, on in seen)
    assert gc.isenabled()
    session = IngestSession(ledger.store)
    for batch in _chunks(lines, 40):
        seen.clear()
        assert session.send(batch).status == "stored"
        assert {name for name, _ in seen} >= {"parse", "judge", "append"} and not any(on for _, on in seen)
        assert gc.isenabled()
    gc.disable()
    try:
        assert ingest_lines(ledger.store, lines[:5]).status == "duplicate"
        assert not gc.isenabled()
    finally:
        gc.enable()

"""Issue 2 acceptance: each bad input is refused with its own reason, nothing stored.

Every case runs on a SQLite file and on PostgreSQL (``db_url`` fixture) and compares
a dump of every stored column before and after.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC
from typing import Any

import pytest

from ledger.events import sign_event
from ledger.house import revoke_key
from ledger.keys import Signer
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import ingest, make_producers, night_batch


def _days_from_now(days: float) -> str:
    from datetime import datetime, timedelta

    from ledger.timeutil import format_utc

    return format_utc(datetime.now(UTC).replace(microsecond=0) + timedelta(days=days))


def _resign(signer: Signer, d: dict[str, Any]) -> str:
    ev = sign_event(signer, ledger=d["ledger"], stream=d["stream"], seq=d["seq"], kind=d["kind"],
                    payload=d["payload"], prev=d["prev"], at=d["at"])
    return ev.to_json_line()


def _refused(ledger, lines: list[str], check: str, fragment: str, line_no: int | None = None) -> None:  # type: ignore[no-untyped-def]
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, lines)
    after = dump_rows(ledger.store)
    assert report.status == "rejected", report
    assert after == before, "a refused batch changed the store"
    reasons = [(r.check, r.reason, r.line) for r in report.rejections]
    assert any(c == check and fragment in reason and (line_no is None or ln == line_no)
               for c, reason, ln in reasons), reasons


@pytest.fixture
def good(ledger):  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    return p, night_batch(ledger.store, p)


def _mutate(lines: list[str], index: int, fn: Callable[[dict[str, Any]], None]) -> list[str]:
    d = json.loads(lines[index])
    fn(d)
    out = list(lines)
    out[index] = json.dumps(d)
    return out


def test_malformed_json_line(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    lines = b.lines()
    lines[2] = lines[2][:-5]
    _refused(ledger, lines, "json", "malformed JSON", line_no=3)


def test_duplicate_json_keys(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    lines = b.lines()
    lines[1] = lines[1][:-1] + ',"seq":1}'
    _refused(ledger, lines, "json", "duplicate key 'seq'")


def test_unknown_kind(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    lines = _mutate(b.lines(), 1, lambda d: d.update(kind="cash.teleport.v1"))
    _refused(ledger, lines, "schema", "unknown kind 'cash.teleport.v1'")


def test_missing_field(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    lines = _mutate(b.lines(), 1, lambda d: d["payload"].pop("currency"))
    _refused(ledger, lines, "schema", "payload.currency: missing field")


def test_extra_field(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    lines = _mutate(b.lines(), 1, lambda d: d["payload"].update(bonus=5))
    _refused(ledger, lines, "schema", "payload.bonus: unknown field")
    lines = _mutate(b.lines(), 1, lambda d: d.update(note="hi"))
    _refused(ledger, lines, "schema", "note: unknown field")


def test_float_amount_even_when_properly_signed(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    d = json.loads(b.lines()[1])
    d["payload"]["amount"] = 100.5
    lines = b.lines()[:1] + [_resign(p.cage, d)] + b.lines()[2:]
    _refused(ledger, lines, "schema", "payload.amount: Input should be a valid integer, got float 100.5")


def test_negative_and_zero_amount(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    for bad in (-100, 0):
        d = json.loads(b.lines()[1])
        d["payload"]["amount"] = bad
        lines = b.lines()[:1] + [_resign(p.cage, d)] + b.lines()[2:]
        _refused(ledger, lines, "schema", f"payload.amount: Input should be greater than 0, got int {bad}")


def test_bool_is_not_an_amount(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    d = json.loads(b.lines()[1])
    d["payload"]["amount"] = True
    lines = b.lines()[:1] + [_resign(p.cage, d)] + b.lines()[2:]
    _refused(ledger, lines, "schema", "payload.amount: Input should be a valid integer, got bool")


def test_naive_timestamp(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    d = json.loads(b.lines()[1])
    d["at"] = "2026-11-22T10:00:00"
    lines = b.lines()[:1] + [_resign(p.cage, d)] + b.lines()[2:]
    _refused(ledger, lines, "schema", "naive timestamp")


def test_non_utc_offset(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    d = json.loads(b.lines()[1])
    d["at"] = "2026-11-22T10:00:00+09:00"
    lines = b.lines()[:1] + [_resign(p.cage, d)] + b.lines()[2:]
    _refused(ledger, lines, "schema", "is not UTC")


def test_bad_signature(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    lines = _mutate(b.lines(), 1, lambda d: d.update(sig=("00" if d["sig"][:2] != "00" else "11") + d["sig"][2:]))
    _refused(ledger, lines, "signature", "bad signature")


def test_content_changed_after_signing(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    lines = _mutate(b.lines(), 1, lambda d: d["payload"].update(amount=99_999))
    _refused(ledger, lines, "hash", "hash does not match")


def test_unknown_key(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    stranger = Signer.generate("cage:main")
    d = json.loads(b.lines()[1])
    d["key_id"] = stranger.key_id
    lines = b.lines()[:1] + [_resign(stranger, d)] + b.lines()[2:]
    _refused(ledger, lines, "key", f"unknown key {stranger.key_id}")


def test_key_of_another_actor(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    d = json.loads(b.lines()[1])
    impostor = Signer("cage:other", p.cage.key_id, p.cage.private_key)
    lines = b.lines()[:1] + [_resign(impostor, d)] + b.lines()[2:]
    _refused(ledger, lines, "key", "belongs to actor 'cage:main'")


def test_revoked_key(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, _ = good
    revoked_from = _days_from_now(1)
    revoke_key(ledger.store, ledger.keys, p.cage.key_id, revoked_from, "card skimmer found")
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.cage, "account:P9", "cash.deposit.v1",
          {"amount": 500, "currency": "EUR", "method": "cash", "reference": "x"}, at=_days_from_now(2))
    _refused(ledger, b.lines(), "key", f"is revoked from {revoked_from} (card skimmer found)")


def test_events_received_and_signed_before_revocation_stay_valid(ledger, good) -> None:  # type: ignore[no-untyped-def]
    from ledger.verify import verify_ledger

    p, _ = good
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.cage, "account:P9", "cash.deposit.v1", {"amount": 500, "currency": "EUR", "method": "cash", "reference": "x"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    revoke_key(ledger.store, ledger.keys, p.cage.key_id, _days_from_now(1), "retired")
    report = verify_ledger(ledger.store)
    assert report.clean, [str(x) for x in report.problems]
    b = BatchBuilder.for_store(ledger.store)  # after the revocation is recorded: nothing more from the key (ledger.clock)
    b.add(p.cage, "account:P9", "cash.deposit.v1", {"amount": 5, "currency": "EUR", "method": "cash", "reference": "y"})
    _refused(ledger, b.lines(), "key", "the ledger takes nothing more from it")


def test_not_yet_valid_key(ledger) -> None:  # type: ignore[no-untyped-def]
    from ledger.house import create_key

    later = create_key(ledger.store, ledger.keys, "cage:night", "cage", valid_from="2099-01-01T00:00:00Z")
    b = BatchBuilder.for_store(ledger.store)
    b.add(later, "account:P1", "cash.deposit.v1", {"amount": 1, "currency": "EUR", "method": "cash", "reference": "x"})
    _refused(ledger, b.lines(), "key", "is not yet valid")


def test_wrong_role(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, _ = good
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.dealer, "account:P1", "cash.deposit.v1", {"amount": 1, "currency": "EUR", "method": "cash", "reference": "x"})
    _refused(ledger, b.lines(), "role", "role 'dealer' may not sign kind cash.deposit.v1")


def test_broken_prev(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    d = json.loads(b.lines()[3])  # round close, seq 2
    d["prev"] = "ab" * 32
    lines = b.lines()[:3] + [_resign(p.dealer, d)] + b.lines()[4:]
    _refused(ledger, lines, "chain", "broken prev")


def test_gap_in_seq(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    lines = b.lines()
    del lines[2]  # round.open of the first round: its close now has seq 2 on an empty stream
    _refused(ledger, lines, "chain", "expects seq 1, got 2")


def test_repeated_seq(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    assert ingest(ledger.store, b.lines()).status == "stored"
    d = json.loads(b.lines()[1])  # account:P1 seq 1 is stored
    d["payload"]["reference"] = "d1-again"
    _refused(ledger, [_resign(p.cage, d)], "chain", "seq 1 repeats an existing event of account:P1 (next seq is 2)")


def test_replayed_event_in_new_batch(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    assert ingest(ledger.store, b.lines()).status == "stored"
    nb = night_batch(ledger.store, p, rounds=1)
    _refused(ledger, [b.lines()[1]] + nb.lines(), "replay", "replayed event: account:P1 seq 1 is already stored")


def test_resubmitted_batch_is_a_duplicate_not_stored_twice(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    first = ingest(ledger.store, b.lines())
    assert first.status == "stored" and first.stored == len(b.lines())
    before = dump_rows(ledger.store)
    again = ingest(ledger.store, b.lines())
    assert again.status == "duplicate" and again.stored == 0 and again.ok
    assert dump_rows(ledger.store) == before


def test_one_bad_event_refuses_the_whole_batch_and_names_it(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    lines = _mutate(b.lines(), 4, lambda d: d["payload"].update(status="won"))
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, lines)
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    stream = json.loads(lines[4])["stream"]
    assert [(r.line, r.stream, r.seq, r.check) for r in report.rejections] == [
        (5, stream, 1, "schema"), (6, stream, 2, "chain")]
    assert report.rejections[1].reason == "follows the refused event at line 5"


def test_round_for_a_table_that_is_not_open(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, _ = good
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.dealer, "round:x-1", "round.open.v1", {"table": "nowhere", "game": "baccarat", "rules": {}})
    _refused(ledger, b.lines(), "rule", "table nowhere is not open")


def test_float_inside_free_form_rules(ledger, good) -> None:  # type: ignore[no-untyped-def]
    p, b = good
    ingest(ledger.store, b.lines()[:1])
    nb = BatchBuilder.for_store(ledger.store)
    nb.add(p.dealer, "round:x-2", "round.open.v1", {"table": "bac-1", "game": "baccarat", "rules": {"commission": 0.05}})
    _refused(ledger, nb.lines(), "schema", "commission: floats are not allowed")


def test_oversized_line(ledger, good) -> None:  # type: ignore[no-untyped-def]
    _, b = good
    lines = b.lines()
    lines[0] = lines[0][:-1] + ', "pad": "' + "x" * 70_000 + '"}'
    _refused(ledger, lines, "size", "the limit is 65536")


@pytest.mark.parametrize("stream, kind, payload", [
    ("account", "cash.deposit.v1", {"amount": 5, "currency": "EUR", "method": "cash", "reference": "x"}),
    ("seat", "seat.join.v1", {"table": "T1", "blind_level": "1/2"}),
    ("keyring:second", "key.revoke.v1", {"key_id": "0" * 16, "revoked_from": "2026-01-01T00:00:00Z", "reason": "x"}),
    ("ledger:other", "ledger.checkpoint.v1", {"origin": "o", "size": 0, "root": "A" * 43 + "=", "note": "n"}),
])
def test_attack_7_an_event_on_a_stream_without_its_id_or_a_second_key_ring_is_refused(
        ledger, stream: str, kind: str, payload: dict) -> None:  # type: ignore[no-untyped-def,type-arg]
    """Issue 13 attack 7: a bare ``account`` (or ``seat``) stream was accepted and then
    broke every job that splits a stream name (balances, AML, projections, reconcile),
    for good: the ledger is append-only. Every stream is ``type:id``; the key ring and the
    checkpoints are one stream each. Refused at the schema, nothing stored."""
    p = make_producers(ledger)
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.cage, stream, kind, payload)
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    assert report.rejections[0].check == "schema" and stream in report.rejections[0].reason


def _strict(line: str | bytes) -> Any:
    """The standard library's strict parse the ingest path had before its orjson fast path."""
    from ledger.events import _reject_constant, _reject_duplicate_keys
    return json.loads(line, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant)


@pytest.mark.parametrize("line", [
    '{"a":1,"b":2}', '{"a":1,"a":2}', '{"b":{"x":1,"x":1},"a":1}', '{"a":{"x":1,"x":1}}',
    '{"a":18446744073709551616}', '{"a":-9223372036854775809}', '{"a":-0}', '{"a":1.0}', '{"a":1e400}',
    '{"a":NaN}', '{"a":Infinity}', '{"a":"\\ud800"}', '{"a":"\\u00e9"}', '{"a":"é"}', '{"a":"\\/"}',
    '{"b":1,"a":2}', ' {"a":1}', '{"a":1}\n', '{"a":1}\r\n', '[1,2]', '"x"', '{"a":[{"k":1,"k":1}]}',
    b'{"a":"\xff"}', b'{"a":"\xc3\xa9"}', '{"": 1}', '{"a":1,}',
])
def test_the_fast_parse_agrees_with_the_strict_one(line: str | bytes) -> None:
    """``parse_json_line``'s orjson path (a canonical line read back byte for byte) gives
    exactly the strict parse's value, and every line the strict parse refuses (duplicate
    keys at any depth, NaN, Infinity, malformed) is refused, with the strict reason."""
    from ledger.events import EventError, parse_json_line
    try:
        expected = _strict(line)
    except (ValueError, RecursionError) as exc:
        with pytest.raises(EventError) as refused:
            parse_json_line(line)
        assert refused.value.check == "json" and str(exc) in refused.value.reason
        return
    got = parse_json_line(line)
    assert got == expected and type(got) is type(expected)
    assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)  # ints stay ints, -0 stays int


def test_a_canonical_line_is_kept_as_its_own_bytes(good) -> None:  # type: ignore[no-untyped-def]
    """What ingest stores for a canonical line is the line's own bytes (not encoded again),
    and they are the parsed event's canonical encoding: the bytes the store keeps are the
    same either way. A line that is not canonical is encoded from its value."""
    from ledger.events import PackedEvent, parse_event, read_json_line
    _, b = good
    for line in b.lines():
        for form in (line, line + "\n", (line + "\r\n").encode()):
            obj, canonical = read_json_line(form)
            assert canonical == line.encode()
            ev = parse_event(obj)
            assert PackedEvent(ev, canonical).data == ev.encoded() == canonical
        spaced = json.dumps(json.loads(line))  # ", " and ": ": the same event, not its canonical bytes
        obj, canonical = read_json_line(spaced)
        assert canonical is None and PackedEvent(parse_event(obj)).data == line.encode()


def test_the_hash_checked_on_the_packed_bytes_judges_as_the_parsed_events(good) -> None:  # type: ignore[no-untyped-def]
    """Stage 3 on the bytes ingest holds (``PackedEvent.check_hash``: the body is the
    event's canonical bytes with its ``hash`` and ``sig`` members cut out, RFC 8785 encoding
    each member on its own) judges exactly as the parsed event's ``check_hash``: every
    event of a night passes; a payload whose own members are named "hash", "sig",
    "key_id" and "stream" is cut at the envelope's members, not the payload's; a changed
    body or hash is refused by both, a changed signature by neither (it is not hashed);
    bytes of another shape (not canonical) are judged by the parse."""
    from ledger.canonical import GENESIS_PREV, canonical_json
    from ledger.events import EventError, PackedEvent, SignedEvent, parse_event, read_json_line

    _, b = good
    signer = Signer.generate("dealer:x")
    tricky = sign_event(signer, ledger="t.example/ledger", stream="round:T1-1", seq=1, kind="round.open.v1",
                        payload={"table": "T1", "game": "baccarat",
                                 "rules": {"a": "x", "hash": "0" * 64, "key_id": "k", "sig": "1" * 128, "stream": "s"}},
                        prev=GENESIS_PREV, at="2026-01-01T00:00:00Z")
    for line in b.lines() + [tricky.to_json_line()]:
        obj, canonical = read_json_line(line)
        assert canonical is not None
        PackedEvent(parse_event(obj), canonical).check_hash()
        d = json.loads(line)
        changes = [("hash", "f" * 64), ("sig", "e" * 128), ("seq", d["seq"] + 1), ("actor", d["actor"] + "x"),
                   ("payload", dict(d["payload"], extra=1))]
        for name, value in changes:
            changed = dict(d, **{name: value})
            packed = PackedEvent(SignedEvent(**changed), canonical_json(changed))
            outcomes = []
            for check in (packed.check_hash, packed.event().check_hash):
                try:
                    check()
                    outcomes.append("pass")
                except EventError as exc:
                    outcomes.append(exc.check)
            assert outcomes == (["pass", "pass"] if name == "sig" else ["hash", "hash"]), (name, outcomes)
            spaced = PackedEvent(SignedEvent(**changed), json.dumps(changed).encode())  # not canonical: parsed
            if name == "sig":
                spaced.check_hash()
            else:
                with pytest.raises(EventError, match="hash does not match"):
                    spaced.check_hash()


def test_an_event_kept_parsed_goes_to_the_judges_once_then_stays_packed(good, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Ingest keeps a batch's first ``KEPT_PARSED`` events parsed until they are judged
    (``PackedEvent.take``), so the judges do not parse them again; after that, and for the
    events past the bound, the event is parsed from its bytes: the same event either way."""
    from ledger import ingest as ingest_module
    from ledger.events import PackedEvent

    _, b = good
    lines = b.lines()
    assert len(lines) > 3
    monkeypatch.setattr(ingest_module, "KEPT_PARSED", 2)
    items = ingest_module.parse_lines(lines)
    packed = [item for _, item in items]
    assert all(isinstance(p, PackedEvent) for p in packed)
    kept = [p._parsed for p in packed]
    assert all(k is not None for k in kept[:2]) and all(k is None for k in kept[2:])
    first = packed[0]
    assert first.payload is kept[0].payload  # read from the kept event, not parsed again
    assert first.take() is kept[0] and first._parsed is None
    again = first.take()
    assert again is not kept[0] and again == kept[0]
    assert [p.take() for p in packed[2:]] == [p.event() for p in packed[2:]]

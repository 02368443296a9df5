"""Hostile input (issue #7 point 3): property-based fuzzing with hypothesis of the JSONL
ingest (on a SQLite file and on PostgreSQL) and of the PHH importer: malformed JSON,
wrong types, huge numbers, unicode tricks, oversized payloads, duplicated keys, replayed
and reordered events, signatures over other bytes. Zero unhandled exceptions, zero bad
events stored (the store is unchanged after every refused input, and verifies), every
refusal with a reason. 100,000 generated inputs in all (``FUZZ_EXAMPLES``, scaled by
``PITBOSS_FUZZ_SCALE`` for longer local runs), five per hypothesis example;
deterministic (derandomized)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.events import MAX_LINE_BYTES
from ledger.importers.phh import PhhError, hand_events, load_hands
from ledger.ingest import MAX_BATCH_EVENTS, IngestSession, ingest_lines
from ledger.producer import BatchBuilder
from ledger.verify import verify_ledger
from tests.helpers import make_producers

SCALE = float(os.environ.get("PITBOSS_FUZZ_SCALE", "1"))
FUZZ_EXAMPLES = {"jsonl_sqlite": 50_000, "jsonl_postgres": 15_000, "phh_toml": 15_000, "phh_hand": 20_000}
assert sum(FUZZ_EXAMPLES.values()) == 100_000
COUNTED: dict[str, int] = {}


def _settings(name: str) -> settings:
    return settings(max_examples=int(FUZZ_EXAMPLES[name] * SCALE), deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


# --- JSONL: lines built from a genuine signed event and mutated --------------------------

WEIRD_TEXT = st.sampled_from(["", "\u0000", "\u202e", "\ud7ff", "\ufeff", "e\u0301", "A" * 300, "\U0001f0a1",
                              "account:P1", "round:x", "../../etc/passwd", "'; DROP TABLE x; --", "NaN", "1e999"])
JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40), WEIRD_TEXT)
JSON_VALUE = st.one_of(JSON_SCALAR, st.lists(JSON_SCALAR, max_size=3),
                       st.dictionaries(st.text(max_size=8), JSON_SCALAR, max_size=3),
                       st.sampled_from([[[[[[]]]]], {"a": {"b": {"c": {}}}}, [None] * 50, {"": ""}, [2**63] * 3]))
PER_EXAMPLE = 5  # hostile inputs ingested one by one per generated example (hypothesis' own cost is per example)


def _line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


@st.composite
def hostile_lines(draw: st.DrawFn, genuine: list[dict[str, Any]]) -> list[str]:
    """One to three lines of hostile input around genuine signed events."""
    base = dict(draw(st.sampled_from(genuine)))
    how = draw(st.sampled_from(["text", "json", "drop", "retype", "extra", "payload", "dupkey", "sig", "hash",
                                "replay", "reorder", "huge", "oversize", "seq", "stream"]))
    field = draw(st.sampled_from(sorted(base)))
    if how == "text":
        return [draw(st.text(max_size=200))]
    if how == "json":
        return [_line(draw(JSON_VALUE))]
    if how == "drop":
        base.pop(field)
    elif how == "retype":
        base[field] = draw(JSON_VALUE)
    elif how == "extra":
        base[draw(st.text(min_size=1, max_size=12))] = draw(JSON_VALUE)
    elif how == "payload":
        payload = dict(base["payload"])
        key = draw(st.sampled_from(sorted(payload) or ["amount"]))
        payload[key] = draw(JSON_VALUE)
        base["payload"] = payload
    elif how == "dupkey":
        text = _line(base)
        return [text[:-1] + f', "{field}": ' + json.dumps(base[field]) + "}"]
    elif how == "sig":  # a real signature, over other bytes
        other = draw(st.sampled_from(genuine))
        base["sig"] = other["sig"] if other["sig"] != base["sig"] else base["sig"][::-1]
    elif how == "hash":
        base["hash"] = draw(st.sampled_from(["0" * 64, base["hash"][::-1], base["hash"].upper()]))
    elif how == "replay":  # already stored, sent again (alone or before a forgery)
        return [_line(base)] + ([_line({**base, "seq": base["seq"] + 1})] if draw(st.booleans()) else [])
    elif how == "reorder":  # two genuine events of a stream, later one first
        pair = [g for g in genuine if g["stream"] == base["stream"]]
        return [_line(g) for g in reversed(pair[:2])] if len(pair) > 1 else [_line(base)]
    elif how == "huge":
        base[field] = draw(st.sampled_from([2**53, 2**64, -(2**63), 10**400 if False else 2**200, 1e308, -0.0]))
    elif how == "oversize":
        base["payload"] = {**base["payload"], "pad": "x" * draw(st.integers(MAX_LINE_BYTES - 500, MAX_LINE_BYTES + 500))}
    elif how == "seq":
        base["seq"] = draw(st.sampled_from([0, -1, base["seq"] + 1, base["seq"] + 1000, True, "2", 1.0]))
    elif how == "stream":
        base["stream"] = draw(WEIRD_TEXT)
    return [_line(base)]


def _fuzz_ingest(ledger, name: str) -> None:  # type: ignore[no-untyped-def]
    """Genuine events are stored first; the hostile lines are built around them (the
    ``genuine`` list is what is already stored: a replay of it is refused, not stored)."""
    p = make_producers(ledger)
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.floor, "table:F", "table.open.v1", {"game": "fan-tan", "seats": 7, "currency": "EUR"})
    for k in range(3):
        b.add(p.cage, "account:P1", "cash.deposit.v1",
              {"amount": 100 + k, "currency": "EUR", "method": "cash", "reference": f"f{k}"})
    genuine = [json.loads(line) for line in b.lines()]
    assert ingest_lines(ledger.store, b.lines()).status == "stored"
    before = ledger.store.count()
    counted = 0
    session = IngestSession(ledger.store)  # what a long-running ingest service holds between batches

    @settings(_settings(name), max_examples=int(FUZZ_EXAMPLES[name] * SCALE) // PER_EXAMPLE)
    @given(inputs=st.lists(hostile_lines(genuine), min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
    def run(inputs: list[list[str]]) -> None:
        nonlocal counted
        for lines in inputs:
            counted += 1
            report = session.send(lines)  # must not raise
            assert report.status in ("rejected", "duplicate"), (lines, report.status)
            assert report.message  # the batch's reason (an empty batch has only this one)
            assert all(r.reason and r.check for r in report.rejections)
            assert report.status == "duplicate" or report.rejections or not any(line.strip() for line in lines)

    run()
    COUNTED[name] = counted
    assert ledger.store.count() == before  # zero bad events stored
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean


def test_fuzz_jsonl_ingest(ledger) -> None:  # type: ignore[no-untyped-def]
    name = "jsonl_sqlite" if ledger.store.url.backend == "sqlite" else "jsonl_postgres"
    _fuzz_ingest(ledger, name)
    assert COUNTED[name] >= FUZZ_EXAMPLES[name] * SCALE * 0.99


def test_batch_and_line_size_caps_refuse_with_a_reason(ledger) -> None:  # type: ignore[no-untyped-def]
    big = ingest_lines(ledger.store, ["x"] * (MAX_BATCH_EVENTS + 1))
    assert big.status == "rejected" and any(r.check == "size" for r in big.rejections)
    long = ingest_lines(ledger.store, ["x" * (MAX_LINE_BYTES + 1)])
    assert long.status == "rejected" and "limit" in long.rejections[0].reason


# --- PHH: hand-history text and hands ---------------------------------------------------

ACTION = st.one_of(
    st.sampled_from(["d dh p1 AsKs", "d dh p2 7h7d", "d dh p3 ????", "d db 2c3c4c", "d db Jd", "p1 cc", "p2 f",
                     "p1 cbr 300", "p2 cbr 1e9", "p3 sm AsKs", "p1 sd", "p1 sd As", "p2 pb", "p9 cc", "d dh p1 AsAs",
                     "p1 cbr -5", "p1 cbr 0.5", "d dh p1", "", "  ", "p1", "p1 cc 5"]),
    st.text(max_size=20))
HAND = st.fixed_dictionaries({
    "variant": st.sampled_from(["NT", "FT", "PO", "FO/8", "NS", "F7S", "F7S/8", "FR", "F2L3D", "N2L1D", "FB", "XX"]),
    "starting_stacks": st.lists(st.one_of(st.integers(-5, 10**12), st.floats(allow_nan=True), st.text(max_size=4),
                                          st.none()), min_size=0, max_size=6),
    "antes": st.one_of(st.none(), st.lists(st.integers(-5, 10**6), max_size=6)),
    "blinds_or_straddles": st.one_of(st.none(), st.lists(st.integers(-200, 10**6), max_size=6)),
    "min_bet": st.one_of(st.integers(-1, 10**6), st.floats(allow_nan=True), st.none()),
    "small_bet": st.one_of(st.none(), st.integers(-1, 1000)),
    "big_bet": st.one_of(st.none(), st.integers(-1, 1000)),
    "bring_in": st.one_of(st.none(), st.integers(-1, 1000)),
    "players": st.one_of(st.none(), st.lists(st.text(max_size=8), max_size=6)),
    "actions": st.one_of(st.lists(ACTION, max_size=14), st.text(max_size=10), st.none()),
})


def test_fuzz_phh_hands_refuse_with_a_reason() -> None:
    counted = 0

    @settings(_settings("phh_hand"), max_examples=int(FUZZ_EXAMPLES["phh_hand"] * SCALE) // PER_EXAMPLE)
    @given(hands=st.lists(HAND, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
    def run(hands: list[dict[str, Any]]) -> None:
        nonlocal counted
        for hand in hands:
            counted += 1
            hand = {k: v for k, v in hand.items() if v is not None}
            try:
                rules, events, _ = hand_events(hand)
            except PhhError as exc:
                assert str(exc)
                continue
            assert events and rules["variant"] == hand["variant"]  # legal: it would be judged again at ingest

    run()
    COUNTED["phh_hand"] = counted
    assert counted >= FUZZ_EXAMPLES["phh_hand"] * SCALE * 0.99


def test_fuzz_phh_text_refuses_with_a_reason() -> None:
    counted = 0
    pieces = st.sampled_from(['variant = "NT"\n', "starting_stacks = [100, 100]\n", "blinds_or_straddles = [1, 2]\n",
                              "min_bet = 2\n", 'actions = ["d dh p1 AsKs", "d dh p2 7h7d", "p2 f"]\n', "[1]\n",
                              "antes = [0, 0]\n", 'actions = "x"\n', "= = =\n", "starting_stacks = [inf, nan]\n",
                              "min_bet = 1e400\n", 'variant = "NT"\nvariant = "FT"\n', "\u0000\n"])

    texts = st.tuples(st.one_of(st.lists(pieces, max_size=8).map("".join), st.text(max_size=300)), st.booleans())

    @settings(_settings("phh_toml"), max_examples=int(FUZZ_EXAMPLES["phh_toml"] * SCALE) // PER_EXAMPLE)
    @given(docs=st.lists(texts, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
    def run(docs: list[tuple[str, bool]]) -> None:
        nonlocal counted
        for text, multi in docs:
            counted += 1
            try:
                hands = load_hands(text, multi)
            except PhhError as exc:
                assert str(exc)
                continue
            for _, hand in hands:
                try:
                    hand_events(hand)
                except PhhError as exc:
                    assert str(exc)

    run()
    COUNTED["phh_toml"] = counted
    assert counted >= FUZZ_EXAMPLES["phh_toml"] * SCALE * 0.99


@pytest.fixture(autouse=True, scope="module")
def _report_counts() -> Any:
    yield
    if COUNTED:
        print(f"\nfuzz inputs tried: {COUNTED}")

"""The chain rule written once (ledger/chain.py, DESIGN.md "The event": ``prev`` is the
hash of the previous event of the stream, a fixed genesis value for seq 1), event
references (ledger/refs.py), the gaming day and the order of times (ledger/timeutil.py)."""

from __future__ import annotations

import pytest

from ledger.chain import GENESIS_PREV, follows, link, link_problem
from ledger.refs import event_ref, parse_ref
from ledger.timeutil import earlier_utc, gaming_day, parse_utc, parse_utc_trusted

H1, H2 = "a" * 64, "b" * 64


@pytest.mark.parametrize("before, seq, prev, want", [
    (None, 1, GENESIS_PREV, "ok"),
    (None, 1, H1, "prev"),
    (None, 2, H1, "gap"),
    ((1, H1), 2, H1, "ok"),
    ((1, H1), 2, H2, "prev"),
    ((3, H1), 3, H1, "repeat"),
    ((3, H1), 2, H1, "repeat"),
    ((3, H1), 6, H1, "gap"),
    ((3, H1), 4, H1, "ok"),
    (None, 0, GENESIS_PREV, "repeat"),
])
def test_link(before: tuple[int, str] | None, seq: int, prev: str, want: str) -> None:
    assert link(before, seq, prev) == want
    assert follows(before, seq, prev) is (want == "ok")  # verify's question of every row, the same rule


def test_the_verifier_wording_names_what_is_missing_or_out_of_order() -> None:
    assert link_problem((1, H1), 2, H1) is None
    assert link_problem(None, 1, H1) == "prev of seq 1 is not the genesis value"
    assert link_problem((1, H1), 2, H2) == "prev does not match the hash of seq 1"
    assert link_problem((1, H1), 3, H1) == "seq 2 missing: deleted from the stream"
    assert link_problem((1, H1), 5, H1) == "seqs 2..4 missing: deleted from the stream"
    assert link_problem((4, H1), 4, H1) == "seq 4 appears after seq 4: events out of order or repeated"


def test_event_references_and_the_gaming_day() -> None:
    assert event_ref("round:B1-7", 3) == "round:B1-7#3"
    assert parse_ref("round:B1-7#3") == ("round:B1-7", 3)
    assert parse_ref(event_ref("incident:a#b", 12)) == ("incident:a#b", 12)  # the last '#' separates the seq
    assert gaming_day("2026-11-23T23:59:59.999999Z") == "2026-11-23"


@pytest.mark.parametrize("a,b", [
    ("2026-11-26T10:00:05Z", "2026-11-26T10:00:05.500000Z"),  # no fraction: sorts after '.' as text
    ("2026-11-26T10:00:05.5Z", "2026-11-26T10:00:05.600000Z"),
    ("2026-11-26T10:00:05.000001Z", "2026-11-26T10:00:06Z"),
    ("2026-11-26T10:00:05.123456Z", "2026-11-26T10:00:05.123457Z"),
    ("2025-12-31T23:59:59.999999Z", "2026-01-01T00:00:00.000000Z"),
    ("2026-11-26T09:59:59Z", "2026-11-26T10:00:00Z"),
    ("2026-11-26T10:00:05.1Z", "2026-11-26T10:00:05.10001Z"),
])
def test_earlier_utc_orders_ledger_times_as_the_times_they_name(a: str, b: str) -> None:
    """The clock rule "an event does not go back in time" (ledger.clock) compares times as
    written: equal-width texts by their characters, others parsed; either way as instants."""
    assert parse_utc(a) < parse_utc(b)
    assert earlier_utc(a, b) and not earlier_utc(b, a)
    assert not earlier_utc(a, a) and not earlier_utc(b, b)
    assert not earlier_utc("2026-11-26T10:00:05Z", "2026-11-26T10:00:05.000000Z")  # one instant, two writings
    assert not earlier_utc("2026-11-26T10:00:05.000000Z", "2026-11-26T10:00:05Z")
    assert parse_utc_trusted(a) == parse_utc(a) and parse_utc_trusted(b) == parse_utc(b)
    assert parse_utc_trusted(b) == parse_utc(b)  # asked twice in a row: the remembered answer

"""The judges of tables, money streams and rounds' lifecycles (ledger/judges/table.py,
cash.py, round.py): a table opens when closed and closes when open; chips move only at an
open table; an account does not transfer to itself; a round starts with round.open at an
open table of its game and takes nothing after round.close. Through ingest, on SQLite and
PostgreSQL; a refused batch stores nothing."""

from __future__ import annotations

from ledger.producer import BatchBuilder
from tests.helpers import make_producers, refused, stored


def test_table_chips_account_and_round_lifecycles(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.floor, "table:T", "table.open.v1", {"game": "fan-tan", "seats": 7, "currency": "EUR"})
    stored(ledger.store, b)

    def one(signer, stream, kind, payload) -> str:  # type: ignore[no-untyped-def]
        b = BatchBuilder.for_store(ledger.store)
        b.add(signer, stream, kind, payload)
        return refused(ledger.store, b)

    assert one(p.floor, "table:T", "table.open.v1", {"game": "fan-tan", "seats": 7, "currency": "EUR"}) == \
        "table T is already open"
    assert one(p.dealer, "round:R1", "round.close.v1", {"status": "complete"}) == \
        "round R1 must start with round.open.v1, not round.close.v1"
    assert one(p.dealer, "round:R1", "round.open.v1", {"table": "T", "game": "baccarat", "rules": {}}) == \
        "table T deals fan-tan, not baccarat"
    assert one(p.cage, "account:P1", "cash.transfer.v1", {"amount": 5, "currency": "EUR", "beneficiary": "P1",
                                                          "beneficiary_type": "account", "reference": "t"}) == \
        "a transfer from account P1 to itself is not a transfer"
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.dealer, "round:R1", "round.open.v1", {"table": "T", "game": "fan-tan", "rules": {}})
    b.add(p.dealer, "round:R1", "round.close.v1", {"status": "complete"})
    b.add(p.floor, "table:T", "table.close.v1", {"reason": "end of the night"})
    stored(ledger.store, b)
    assert one(p.dealer, "round:R1", "round.close.v1", {"status": "complete"}) == \
        "round R1 is closed; nothing may follow round.close"
    assert one(p.floor, "table:T", "table.close.v1", {"reason": "again"}) == "table T is not open"
    assert one(p.cage, "chips:T", "chips.buy_in.v1", {"player": "P1", "amount": 100}) == \
        "table T is not open: no chips move or are counted there"
    assert one(p.dealer, "round:R2", "round.open.v1", {"table": "T", "game": "fan-tan", "rules": {}}) == \
        "table T is not open"

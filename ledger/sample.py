"""A small, realistic signed batch built through the producer SDK (for the README and
tests): a floor supervisor opens a baccarat table, the cage takes deposits, the dealer
opens and closes rounds, the cage pays a withdrawal."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from ledger.house import create_key
from ledger.ingest import load_keyring
from ledger.keys import KeyDirectory, Signer
from ledger.producer import BatchBuilder
from ledger.store import Store


def producer_signer(store: Store, keys: KeyDirectory, actor: str, role: str) -> Signer:
    """The valid key of ``role`` held in ``keys``, registering a new one if there is none."""
    now = datetime.now(timezone.utc)
    for entry in load_keyring(store).keys.values():
        if entry.actor == actor and entry.role == role and keys.has(entry.key_id) and entry.status_at(now) is None:
            return keys.load(entry.key_id, actor)
    return create_key(store, keys, actor, role)


def write_sample_batch(store: Store, keys: KeyDirectory, output: Path, rounds: int) -> int:
    floor = producer_signer(store, keys, "floor:sample", "floor")
    dealer = producer_signer(store, keys, "dealer:sample", "dealer")
    cage = producer_signer(store, keys, "cage:main", "cage")
    batch = BatchBuilder(store.head)
    table = "sample-bac-1"
    head = store.head(f"table:{table}")
    if head is None or head.kind != "table.open.v1":
        batch.add(floor, f"table:{table}", "table.open.v1", {"game": "baccarat", "seats": 7, "currency": "EUR"})
    for player in ("P001", "P002"):
        batch.add(cage, f"account:{player}", "cash.deposit.v1",
                  {"amount": 50_000, "currency": "EUR", "method": "card", "reference": f"dep-{player}"})
    base = store.max_notification_id()
    for i in range(rounds):
        rid = f"{table}-{base + i + 1:06d}"
        batch.add(dealer, f"round:{rid}", "round.open.v1",
                  {"table": table, "game": "baccarat", "rules": {"decks": 8, "banker_commission_pct": 5}})
        batch.add(dealer, f"round:{rid}", "round.close.v1", {"status": "complete"})
    batch.add(cage, "account:P001", "cash.withdrawal.v1",
              {"amount": 20_000, "currency": "EUR", "method": "bank", "reference": "wd-P001"})
    batch.write_jsonl(output)
    return len(batch.events)


"""A small, realistic signed batch built through the producer SDK (for the README and
tests): a floor supervisor opens a baccarat table, the cage takes deposits, the dealer
deals whole coups from a shuffled 8-deck shoe (bets, cards by the tableau, settlements
as the engine derives them), the cage pays a withdrawal."""

from __future__ import annotations

import random
from datetime import datetime, timezone
from pathlib import Path

from ledger.games.baccarat import coup_events
from ledger.games.cards import deck

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
    shoe = [c for _ in range(8) for c in deck()]
    random.Random(base).shuffle(shoe)  # a sample, not an RNG of record (that is the RNG service's)
    cards = iter(shoe)
    rules = {"decks": 8, "commission_bp": 500, "tie_pays": 8, "commission_rounding": "down"}
    for i in range(rounds):
        rid = f"round:{table}-{base + i + 1:06d}"
        batch.add(dealer, rid, "round.open.v1", {"table": table, "game": "baccarat", "rules": rules})
        bets = [("P001", "banker", 1_000 + 10 * i), ("P002", "player", 500), ("P002", "tie", 100)]
        for kind, payload in coup_events(bets, cards, rules):
            batch.add(dealer, rid, kind, payload)
        batch.add(dealer, rid, "round.close.v1", {"status": "complete"})
    batch.add(cage, "account:P001", "cash.withdrawal.v1",
              {"amount": 20_000, "currency": "EUR", "method": "bank", "reference": "wd-P001"})
    batch.write_jsonl(output)
    return len(batch.events)


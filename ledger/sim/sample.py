"""A small, realistic signed batch built through the producer SDK (for the README and
tests): a floor supervisor opens a live baccarat table, the cage takes deposits and
issues each player chips at the table, the dealer and the pit boss inspect an 8-deck shoe on video, the dealer shuffles, cuts 7
cards from the back and loads it (ledger.judges.equipment), then deals whole coups from it
(bets, cards by the tableau, settlements as the engine derives them), announcing the cut
card's last hand and reshuffling when it comes out; the cage pays a withdrawal."""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.house import create_key
from ledger.keyring import load_keyring
from ledger.keys import KeyDirectory, Signer
from ledger.producer import BatchBuilder
from ledger.store import Store
from ledger.timeutil import format_utc, parse_utc, utc_now

CUT_FROM_BACK = 7  # 000 II 3.3.4


def producer_signer(store: Store, keys: KeyDirectory, actor: str, role: str, scope: list[str] | None = None) -> Signer:
    """The valid, unrevoked key of ``role`` held in ``keys`` for ``actor`` with ``scope``
    (``ledger.scope``; the role's default when None), registering a new one if there is none."""
    now = datetime.now(UTC)
    for entry in load_keyring(store).keys.values():
        if entry.actor == actor and entry.role == role and keys.has(entry.key_id) and entry.status_at(now) is None \
                and entry.revoked_at_seq is None and (scope is None or list(entry.scope) == scope):
            return keys.load(entry.key_id, actor)
    return create_key(store, keys, actor, role, scope=scope)


def write_sample_batch(store: Store, keys: KeyDirectory, output: Path | None, rounds: int) -> tuple[int, str]:
    table = "sample-bac-1"
    floor = producer_signer(store, keys, "floor:sample", "floor")
    dealer = producer_signer(store, keys, "dealer:sample", "dealer", [f"table:{table}", f"shoe:{table}-*"])
    cage = producer_signer(store, keys, "cage:main", "cage")
    batch = BatchBuilder.for_store(store)
    head = store.head(f"table:{table}")
    if head is None or head.kind != "table.open.v1" or head.payload.get("dealing") != "live":
        if head is not None and head.kind == "table.open.v1":
            batch.add(floor, f"table:{table}", "table.close.v1", {"reason": "reopened as a live table"})
        batch.add(floor, f"table:{table}", "table.open.v1",
                  {"game": "baccarat", "seats": 7, "currency": "EUR", "dealing": "live"})
    # each player's chips for the night, issued by the cage: enough to cover every stake (projections.table_chips)
    stakes = {"P001": sum(1_000 + 10 * i for i in range(rounds)), "P002": 600 * rounds}
    for player in ("P001", "P002"):
        batch.add(cage, f"account:{player}", "cash.deposit.v1",
                  {"amount": 50_000 + stakes[player], "currency": "EUR", "method": "card",
                   "reference": f"dep-{player}"})
        if rounds:
            batch.add(cage, f"chips:{table}", "chips.buy_in.v1", {"player": player, "amount": stakes[player]})
    base = store.max_notification_id()
    rng = random.Random(base)  # a sample, not an RNG of record (that is the RNG service's)
    shoe = f"shoe:{table}-{base:06d}"

    def video(what: str) -> dict[str, str]:
        now = utc_now()  # the footage: the 90 seconds the procedure took on camera
        start = format_utc(parse_utc(now) - timedelta(seconds=90))
        return {"camera": "cam-sample-1", "start": start, "end": now,
                "sha256": hashlib.sha256(f"{shoe} {what} {now}".encode()).hexdigest()}

    for signer in (dealer, floor):  # 000 II 3.1.1-3.1.2: dealer and pit boss, on video
        batch.add(signer, shoe, "shoe.inspect.v1", {"table": table, "game": "baccarat", "decks": 8,
                                                   "result": "pass", "video": video("inspect")})

    def prepare() -> list[str]:
        stack = [c for _ in range(8) for c in deck()]
        rng.shuffle(stack)
        batch.add(dealer, shoe, "shoe.shuffle.v1", {"video": video("shuffle")})
        batch.add(dealer, shoe, "shoe.cut.v1", {"cut_card_from_back": CUT_FROM_BACK, "video": video("cut")})
        batch.add(dealer, shoe, "shoe.load.v1", {"video": video("load")})
        return stack

    stack = prepare()
    dealt = 0
    from ledger.sim.demo import round_nets  # demo imports this module

    chips = dict(stakes) if rounds else {}  # each player's chips at the table, followed round by round
    rules = {"decks": 8, "commission_bp": 500, "tie_pays": 8, "commission_rounding": "down"}
    for i in range(rounds):
        rid = f"round:{table}-{base + i + 1:06d}"
        batch.add(dealer, rid, "round.open.v1", {"table": table, "game": "baccarat", "rules": rules, "source": shoe})
        bets = [("P001", "banker", 1_000 + 10 * i), ("P002", "player", 500), ("P002", "tie", 100)]
        cards = iter(stack[dealt:])
        events = coup_events(bets, cards, rules)
        for kind, payload in events:
            batch.add(dealer, rid, kind, payload)
        for player, net in round_nets("baccarat", rules, events).nets.items():
            chips[player] = chips.get(player, 0) + net
        dealt += sum(1 for kind, _ in events if kind == "baccarat.card.v1")
        last_hand = dealt >= len(stack) - CUT_FROM_BACK
        if last_hand:  # 000 II 3.5.4: "last hand before shuffle"
            batch.add(dealer, shoe, "shoe.cut_card.v1", {"round": rid.split(":", 1)[1]})
        batch.add(dealer, rid, "round.close.v1", {"status": "complete"})
        if last_hand:  # 000 II 3.2.2: reshuffle at the end of that hand
            stack, dealt = prepare(), 0
    if chips:  # the floor counts the chips at the end (projections.table_chips), so the day can be reconciled
        batch.add(floor, f"chips:{table}", "chips.count.v1", {"stacks": {p: n for p, n in sorted(chips.items()) if n}})
    batch.add(cage, "account:P001", "cash.withdrawal.v1",
              {"amount": 20_000, "currency": "EUR", "method": "bank", "reference": "wd-P001"})
    text = "".join(line + "\n" for line in batch.lines())
    if output is not None:
        output.write_text(text, encoding="utf-8")
    return len(batch.events), text


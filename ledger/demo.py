"""``pitboss demo``: a casino night, end to end, through the real producer path.

Deterministic for a seed (the games, the players, the planted patterns, the disputed
round; signatures and timestamps are fresh each run): live baccarat and blackjack from
inspected, cut and loaded shoes (with cut-card reshuffles), live roulette and sic bo
after wheel and dice inspections, online baccarat from committed RNG seeds, High Card
Flush, and no-limit hold'em; deposits and withdrawals at the cage; and three planted
AML patterns (structuring, minimal play, chip dumping). Everything is signed and
ingested in atomic batches, then the views are brought up to date, the day is
reconciled, the AML flags listed, and one disputed round's evidence bundle written.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ledger import rng as rngmod
from ledger.checkpoints import create_checkpoint
from ledger.demo_games import (
    blackjack_round,
    hcf_round,
    poker_hand,
    roulette_round,
    sicbo_round,
)
from ledger.evidence import write_bundle
from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.house import PublicDir
from ledger.ingest import ingest_batches
from ledger.keys import KeyDirectory
from ledger.producer import BatchBuilder
from ledger.sample import producer_signer
from ledger.store import Store
from ledger.timeutil import utc_now

BATCH = 2000


def _video(tag: str) -> dict[str, str]:
    now = utc_now()
    return {"camera": "cam-demo", "start": now, "end": now, "sha256": hashlib.sha256(tag.encode()).hexdigest()}


class _Shoe:
    """A live shoe: inspected, shuffled, cut, loaded; reshuffled after the cut card's hand."""

    def __init__(self, b: BatchBuilder, dealer: Any, floor: Any, stream: str, table: str, game: str, decks: int,
                 cut: int, rng: random.Random):
        self.b, self.dealer, self.stream, self.cut, self.rng, self.decks = b, dealer, stream, cut, rng, decks
        for signer in (dealer, floor):
            b.add(signer, stream, "shoe.inspect.v1", {"table": table, "game": game, "decks": decks, "result": "pass",
                                                      "video": _video(f"{stream} inspect")})
        self._prepare()

    def _prepare(self) -> None:
        self.cards = [c for _ in range(self.decks) for c in deck()]
        self.rng.shuffle(self.cards)
        self.dealt = 0
        self.b.add(self.dealer, self.stream, "shoe.shuffle.v1", {"video": _video(f"{self.stream} shuffle")})
        self.b.add(self.dealer, self.stream, "shoe.cut.v1", {"cut_card_from_back": self.cut,
                                                             "video": _video(f"{self.stream} cut")})
        self.b.add(self.dealer, self.stream, "shoe.load.v1", {"video": _video(f"{self.stream} load")})

    def draw(self) -> str:
        card = self.cards[self.dealt]
        self.dealt += 1
        return card

    def after_round(self, rid: str) -> bool:
        """Record the cut card if it came out in round ``rid``; True when the shoe must reshuffle."""
        if self.dealt >= len(self.cards) - self.cut:
            self.b.add(self.dealer, self.stream, "shoe.cut_card.v1", {"round": rid.split(":", 1)[1]})
            return True
        return False


def run_demo(store: Store, keys: KeyDirectory, public: PublicDir, out: Path, seed: int = 7, hands: int = 200,
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    say = progress or (lambda msg: None)
    rng = random.Random(seed)
    base = store.max_notification_id()
    tag = f"d{seed}-{base}"
    who = {role: producer_signer(store, keys, f"{role}:demo", role)
           for role in ("floor", "dealer", "cage", "rng", "game", "importer")}
    b = BatchBuilder(store.head)
    tables = {"BAC": ("baccarat", "live"), "BJ": ("blackjack", "live"), "RL": ("roulette", "live"),
              "SB": ("sicbo", "live"), "HCF": ("high-card-flush", None), "PK": ("poker", None),
              "OBAC": ("baccarat", "rng")}
    for t, (game, dealing) in tables.items():
        payload: dict[str, Any] = {"game": game, "seats": 9, "currency": "EUR"}
        if dealing:
            payload["dealing"] = dealing
        b.add(who["floor"], f"table:{tag}-{t}", "table.open.v1", payload)
    players = [f"P{n:03d}" for n in range(1, 41)]
    deposits = {p: rng.randrange(10_000, 40_000, 1000) for p in players}
    wagered: dict[str, int] = {}
    for p in players:
        b.add(who["cage"], f"account:{p}", "cash.deposit.v1",
              {"amount": deposits[p], "currency": "EUR", "method": "cash", "reference": f"{tag}-in-{p}"})
    bac = _Shoe(b, who["dealer"], who["floor"], f"shoe:{tag}-BAC", f"{tag}-BAC", "baccarat", 8, 7, rng)
    bj = _Shoe(b, who["dealer"], who["floor"], f"shoe:{tag}-BJ", f"{tag}-BJ", "blackjack", 6, 200, rng)
    for kind, stream, extra in (("wheel.inspect.v1", f"wheel:{tag}-RL", {"tampering": "pass", "level": "pass",
                                                                          "spin": "pass", "ball": "pass"}),
                                ("dice.inspect.v1", f"dice:{tag}-SB", {})):
        b.add(who["floor"], stream, kind, {"table": f"{tag}-{stream.split('-')[-1]}", "result": "pass",
                                           "video": _video(stream), **extra})
    say("dealing the night")
    rounds: list[str] = []
    games = ["BAC", "BJ", "RL", "SB", "HCF", "PK", "OBAC"]
    for n in range(hands):
        t = games[n % len(games)]
        rid = f"round:{tag}-{t}-{n:06d}"
        table = f"{tag}-{t}"
        game, dealing = tables[t]
        seated = rng.sample(players, rng.randint(2, 5))
        opening: dict[str, Any] = {"table": table, "game": game, "rules": {}}
        events: list[tuple[str, dict[str, Any]]]
        signer = who["dealer"]
        if t == "BAC":
            opening["source"] = bac.stream
            events = coup_events([(p, rng.choice(["player", "banker", "tie"]), rng.choice([1000, 2000, 5000]))
                                  for p in seated], _Draw(bac))
        elif t == "BJ":
            opening["source"] = bj.stream
            opening["rules"] = {"decks": 6}
            events = blackjack_round(rng, seated, _Draw(bj))
        elif t == "RL":
            opening["source"] = f"wheel:{table}"
            opening["rules"] = {"wheel": "european"}
            events = roulette_round(rng, seated)
        elif t == "SB":
            opening["source"] = f"dice:{table}"
            events = sicbo_round(rng, seated)
        elif t == "HCF":
            events = hcf_round(rng, seated[0], seated[1:], deck())
        elif t == "PK":
            opening["rules"], events = poker_hand(rng, seated if len(seated) > 2 else seated + [players[0]],
                                                  [10_000] * max(3, len(seated)))
            signer = who["game"]
        else:  # online baccarat: the RNG service commits, the game server deals, the seed is revealed
            opening["source"] = "rng"
            signer = who["game"]
            secret = hashlib.sha256(f"{seed}-{rid}".encode()).digest()
            b.add(signer, rid, "round.open.v1", opening)
            b.add(who["rng"], rid, "rng.commit.v1", {"algorithm": rngmod.ALGORITHM,
                                                      "commitment": rngmod.commitment(secret)})
            coup = coup_events([(p, rng.choice(["player", "banker"]), 1000) for p in seated],
                               iter(rngmod.shoe(secret, rid, 8)))
            settle_at = next(i for i, (k, _) in enumerate(coup) if k == "baccarat.settle.v1")
            for kind, payload in coup[:settle_at]:
                b.add(signer, rid, kind, payload)
            b.add(who["rng"], rid, "rng.reveal.v1", {"seed": secret.hex()})
            for kind, payload in coup[settle_at:]:
                b.add(signer, rid, kind, payload)
            b.add(signer, rid, "round.close.v1", {"status": "complete"})
            rounds.append(rid)
            continue
        b.add(signer, rid, "round.open.v1", opening)
        for kind, payload in events:
            b.add(signer, rid, kind, payload)
            if "player" in payload and "amount" in payload:
                wagered[payload["player"]] = wagered.get(payload["player"], 0) + payload["amount"]
        reshuffle = None
        for shoe, code in ((bac, "BAC"), (bj, "BJ")):
            if t == code and shoe.after_round(rid):
                reshuffle = shoe
        b.add(signer, rid, "round.close.v1", {"status": "complete"})
        if reshuffle is not None:
            reshuffle._prepare()
        rounds.append(rid)
    say("planting three AML patterns")
    for k in range(3):  # structuring: just under the reporting threshold, three times in a day
        b.add(who["cage"], "account:S-SPLIT", "cash.deposit.v1", {"amount": 950_000 + 1000 * k, "currency": "EUR",
                                                                  "method": "cash", "reference": f"{tag}-s{k}"})
    b.add(who["cage"], "account:M-QUICK", "cash.deposit.v1", {"amount": 400_000, "currency": "EUR", "method": "cash",
                                                              "reference": f"{tag}-q1"})
    b.add(who["cage"], "account:M-QUICK", "cash.withdrawal.v1", {"amount": 399_000, "currency": "EUR",
                                                                 "method": "bank", "reference": f"{tag}-q2"})
    for k in range(4):  # chip dumping: the same loser folds to the same winner's shove
        rid = f"round:{tag}-PK-dump-{k}"
        rules, events = poker_hand(rng, ["C-DUMP", "C-RECV", "C-THIRD"], [20_000, 20_000, 20_000], dump=(0, 1))
        b.add(who["game"], rid, "round.open.v1", {"table": f"{tag}-PK", "game": "poker", "rules": rules})
        for kind, payload in events:
            b.add(who["game"], rid, kind, payload)
        b.add(who["game"], rid, "round.close.v1", {"status": "complete"})
    for p in players[: len(players) // 2]:  # those who played cash out part of their deposit
        if wagered.get(p, 0) >= deposits[p] // 2:
            b.add(who["cage"], f"account:{p}", "cash.withdrawal.v1", {"amount": deposits[p] // 2, "currency": "EUR",
                                                                      "method": "bank", "reference": f"{tag}-out-{p}"})
    lines = b.lines()
    say(f"signed {len(lines)} events; ingesting in atomic batches of {BATCH}")
    reports = ingest_batches(store, (lines[i:i + BATCH] for i in range(0, len(lines), BATCH)))
    if not all(r.status == "stored" for r in reports):
        bad = next(r for r in reports if r.status != "stored")
        raise RuntimeError(f"demo batch not stored: {bad.message} {[str(r) for r in bad.rejections[:3]]}")
    create_checkpoint(store, keys, public)
    disputed = rounds[rng.randrange(0, len(rounds) // 7) * 7]  # a live baccarat coup
    say(f"writing the evidence bundle of the disputed round {disputed}")
    bundle = out / f"evidence-{disputed.split(':', 1)[1]}"
    write_bundle(store, keys, public, disputed, bundle)
    return {"events": len(lines), "rounds": len(rounds) + 4, "disputed_round": disputed, "evidence": str(bundle),
            "tables": len(tables), "players": len(players) + 5}


class _Draw:
    """Cards from a live shoe, as an iterator for the round producers."""

    def __init__(self, shoe: _Shoe):
        self.shoe = shoe

    def __iter__(self) -> _Draw:
        return self

    def __next__(self) -> str:
        return self.shoe.draw()

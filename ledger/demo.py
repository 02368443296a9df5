"""``pitboss demo``: a casino night, end to end, through the real producer path.

Deterministic for a seed (the games, the players, the planted patterns, the disputed
round; signatures and timestamps are fresh each run): live baccarat and blackjack from
inspected, cut and loaded shoes (with cut-card reshuffles), live roulette and sic bo
after wheel and dice inspections, online baccarat from committed RNG seeds, High Card
Flush, and no-limit hold'em; deposits and withdrawals at the cage; and three planted
AML patterns (structuring, minimal play, chip dumping, a transfer to an outside party,
play from a restricted jurisdiction). Players buy chips at each table before a round
they could not cover; at the end of the night every table's chips are counted, cashed
out and the table closed, so reconciliation checks each table's chips. Everything is
signed and ingested in atomic batches as the night goes (one batch in memory at a
time), then the views are brought up to date, the day
is reconciled, the AML flags listed, and one disputed round's evidence bundle written.
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
from ledger.demo_incidents import incidents, tournament
from ledger.evidence import write_bundle
from ledger.games import ENGINES
from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.house import PublicDir
from ledger.ingest import IngestSession
from ledger.keys import KeyDirectory
from ledger.producer import BatchBuilder
from ledger.sample import producer_signer
from ledger.store import Store
from ledger.timeutil import utc_now
from projections.money import RoundMoney, round_money

BATCH = 2000
BUY_IN_UNIT = 10_000
COUNTRIES = ("MT", "DE", "GB", "FR", "IT", "ES", "NL", "SE")


def round_nets(game: str, rules: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> RoundMoney:
    """What a round does to each player's chips, from the engine (what the table's
    controller computes; the same ``round_money`` the views use)."""
    engine = ENGINES[game]
    st = engine.start(rules)
    for kind, payload in events:
        st = engine.apply(st, kind, payload)
    return round_money(game, engine.outcome(st), "complete")


class _Chips:
    """Each player's chips at each table: a buy-in (in units of 10,000) before any round
    the player could not cover, the round's results after; at the end a count, the
    cash-outs and the table's close. And each player's money at the cage: a buy-in, a
    tournament entry or a withdrawal is never more than the account holds (reconciliation
    checks it, ``projections.cage``); a player who runs short deposits again first."""

    def __init__(self, b: BatchBuilder, signer: Any, cage_signer: Any, tag: str):
        self.b, self.signer, self.cage_signer, self.tag = b, signer, cage_signer, tag
        self.stacks: dict[str, dict[str, int]] = {}
        self.cage: dict[str, int] = {}
        self.topped_up: dict[str, int] = {}  # player -> deposits made because the account ran short

    def deposit(self, player: str, amount: int, reference: str, method: str = "cash") -> None:
        self.b.add(self.cage_signer, f"account:{player}", "cash.deposit.v1",
                   {"amount": amount, "currency": "EUR", "method": method, "reference": reference})
        self.cage[player] = self.cage.get(player, 0) + amount

    def fund(self, player: str, amount: int) -> None:
        """Before ``player`` pays ``amount`` from the account: a deposit if it holds less."""
        short = amount - self.cage.get(player, 0)
        if short > 0:
            n = self.topped_up[player] = self.topped_up.get(player, 0) + 1
            self.deposit(player, max(2 * BUY_IN_UNIT, BUY_IN_UNIT * -(-short // BUY_IN_UNIT)),
                         f"{self.tag}-top-{player}-{n}")

    def pay(self, player: str, amount: int) -> None:
        """Money leaves (``amount`` > 0) or reaches (< 0) the player's account at the cage."""
        self.cage[player] = self.cage.get(player, 0) - amount

    def cover(self, table: str, money: RoundMoney) -> None:
        stacks = self.stacks.setdefault(table, {})
        for player in sorted(money.nets):
            need = max(money.wagered.get(player, 0), -money.nets[player])
            have = stacks.get(player, 0)
            if have < need:
                amount = BUY_IN_UNIT * -(-(need - have) // BUY_IN_UNIT)
                self.fund(player, amount)
                self.b.add(self.signer, f"chips:{table}", "chips.buy_in.v1", {"player": player, "amount": amount})
                self.pay(player, amount)
                stacks[player] = have + amount

    def play(self, table: str, game: str, rules: dict[str, Any], events: list[Any], record: Callable[[], None]
             ) -> None:
        """A complete round at ``table``: the buy-ins it needs, the round (``record``), its results."""
        money = round_nets(game, rules, events)
        self.cover(table, money)
        record()
        self.settle(table, money)

    def settle(self, table: str, money: RoundMoney) -> None:
        stacks = self.stacks[table]
        for player, net in money.nets.items():
            stacks[player] = stacks.get(player, 0) + net

    def close(self, table: str) -> None:
        stacks = {p: n for p, n in sorted(self.stacks.get(table, {}).items()) if n}
        if table in self.stacks:
            self.b.add(self.signer, f"chips:{table}", "chips.count.v1", {"stacks": stacks})
            for player, n in stacks.items():
                self.b.add(self.signer, f"chips:{table}", "chips.cash_out.v1", {"player": player, "amount": n})
                self.pay(player, -n)
        self.b.add(self.signer, f"table:{table}", "table.close.v1", {"reason": "end of the gaming night"})


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
    flow = _Flow(store, b, say)
    tables = {"BAC": ("baccarat", "live"), "BJ": ("blackjack", "live"), "RL": ("roulette", "live"),
              "SB": ("sicbo", "live"), "HCF": ("high-card-flush", None), "PK": ("poker", None),
              "OBAC": ("baccarat", "rng"), "PK2": ("poker", None)}
    for t, (game, dealing) in tables.items():
        payload: dict[str, Any] = {"game": game, "seats": 9, "currency": "EUR"}
        if dealing:
            payload["dealing"] = dealing
        b.add(who["floor"], f"table:{tag}-{t}", "table.open.v1", payload)
    players = [f"P{n:03d}" for n in range(1, 41)]
    deposits = {p: rng.randrange(10_000, 40_000, 1000) for p in players}
    wagered: dict[str, int] = {}
    chips = _Chips(b, who["floor"], who["cage"], tag)
    for p in players:
        b.add(who["cage"], f"account:{p}", "account.location.v1", {"country": rng.choice(COUNTRIES), "source": "kyc"})
        chips.deposit(p, deposits[p], f"{tag}-in-{p}")
    # planted: an account whose holder is resident in Malta but plays from Iran (geolocation)
    b.add(who["cage"], "account:R-ABROAD", "account.location.v1", {"country": "MT", "source": "kyc"})
    chips.deposit("R-ABROAD", 50_000, f"{tag}-r1", method="card")
    b.add(who["game"], "account:R-ABROAD", "account.location.v1", {"country": "IR", "source": "geolocation"})
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
            if (n // 7) % 3 == 0:  # planted: a player connecting from a restricted jurisdiction
                seated = seated + ["R-ABROAD"]
            coup = coup_events([(p, rng.choice(["player", "banker"]), 1000) for p in seated],
                               iter(rngmod.shoe(secret, rid, 8)))
            money = round_nets(game, {}, coup)
            chips.cover(table, money)
            b.add(signer, rid, "round.open.v1", opening)
            b.add(who["rng"], rid, "rng.commit.v1", {"algorithm": rngmod.ALGORITHM,
                                                      "commitment": rngmod.commitment(secret)})
            settle_at = next(i for i, (k, _) in enumerate(coup) if k == "baccarat.settle.v1")
            for kind, payload in coup[:settle_at]:
                b.add(signer, rid, kind, payload)
            b.add(who["rng"], rid, "rng.reveal.v1", {"seed": secret.hex()})
            for kind, payload in coup[settle_at:]:
                b.add(signer, rid, kind, payload)
            b.add(signer, rid, "round.close.v1", {"status": "complete"})
            chips.settle(table, money)
            rounds.append(rid)
            flow.flush()
            continue
        money = round_nets(game, opening["rules"], events)
        chips.cover(table, money)
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
        chips.settle(table, money)
        if reshuffle is not None:
            reshuffle._prepare()
        rounds.append(rid)
        flow.flush()
    say("planting five AML patterns")
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
        money = round_nets("poker", rules, events)
        chips.cover(f"{tag}-PK", money)
        b.add(who["game"], rid, "round.open.v1", {"table": f"{tag}-PK", "game": "poker", "rules": rules})
        for kind, payload in events:
            b.add(who["game"], rid, kind, payload)
        b.add(who["game"], rid, "round.close.v1", {"status": "complete"})
        chips.settle(f"{tag}-PK", money)
    # a transfer to an outside party: money in at the cage, sent on to someone else's bank
    b.add(who["cage"], "account:T-PASS", "cash.deposit.v1", {"amount": 500_000, "currency": "EUR", "method": "cash",
                                                             "reference": f"{tag}-t1"})
    b.add(who["cage"], "account:T-PASS", "cash.transfer.v1",
          {"amount": 480_000, "currency": "EUR", "beneficiary": "bank-NL91ABNA0417164300",
           "beneficiary_type": "external", "reference": f"{tag}-t2"})
    say("a misdeal, a voided coup, a server crash; a bounty tournament")
    rulings = incidents(b, who, tag, rng, players, poker_hand, _Draw(bac), chips)
    tid = tournament(b, who["game"], tag, rng, players, chips)
    say("counting, cashing out and closing every table")
    for t in tables:
        chips.close(f"{tag}-{t}")
    for p in players[: len(players) // 2]:  # those who played, and never ran short, cash out part of their deposit
        amount = min(deposits[p] // 2, chips.cage.get(p, 0))
        if wagered.get(p, 0) >= deposits[p] // 2 and p not in chips.topped_up and amount > 0:
            b.add(who["cage"], f"account:{p}", "cash.withdrawal.v1", {"amount": amount, "currency": "EUR",
                                                                      "method": "bank", "reference": f"{tag}-out-{p}"})
            chips.pay(p, amount)
    flow.flush(force=True)
    create_checkpoint(store, keys, public)
    disputed = rounds[rng.randrange(0, len(rounds) // 7) * 7]  # a live baccarat coup
    say(f"writing the evidence bundle of the disputed round {disputed}")
    bundle = out / f"evidence-{disputed.split(':', 1)[1]}"
    write_bundle(store, keys, public, disputed, bundle)
    return {"events": flow.events, "rounds": flow.rounds, "disputed_round": disputed, "evidence": str(bundle),
            "tables": len(tables), "players": len(players) + 7, "rulings": rulings, "tournament": tid}


class _Flow:
    """Signed events go to the ledger a batch at a time (``IngestSession``), so a night of
    any size is held in memory one batch at a time."""

    def __init__(self, store: Store, b: BatchBuilder, say: Callable[[str], None]):
        self.session, self.b, self.say = IngestSession(store), b, say
        self.events = self.rounds = 0

    def flush(self, force: bool = False) -> None:
        if not self.b.events or (len(self.b.events) < BATCH and not force):
            return
        lines = self.b.lines()
        report = self.session.send(lines)
        if report.status != "stored":
            raise RuntimeError(f"demo batch not stored: {report.message} {[str(r) for r in report.rejections[:3]]}")
        self.events += len(lines)
        self.rounds += sum(1 for ev in self.b.events if ev.kind == "round.open.v1")
        self.b.events.clear()
        if self.events // (50 * BATCH) != (self.events - len(lines)) // (50 * BATCH):
            self.say(f"{self.events} events signed and ingested")


class _Draw:
    """Cards from a live shoe, as an iterator for the round producers."""

    def __init__(self, shoe: _Shoe):
        self.shoe = shoe

    def __iter__(self) -> _Draw:
        return self

    def __next__(self) -> str:
        return self.shoe.draw()

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
from typing import Any

from ledger import rng as rngmod
from ledger.games import ENGINES, DemoTable, Engine, RoundMoney, play_events
from ledger.games.cards import deck
from ledger.house import PublicDir, active_signer
from ledger.ingest import IngestSession
from ledger.keyring import load_keyring
from ledger.keys import KeyDirectory
from ledger.log.checkpoints import create_checkpoint
from ledger.producer import BatchBuilder
from ledger.sim.incidents import incidents, tournament
from ledger.sim.poker_seats import PokerSeats
from ledger.sim.sample import producer_signer
from ledger.store import Store
from ledger.timeutil import utc_now

BATCH = 2000
BUY_IN_UNIT = 10_000
COUNTRIES = ("MT", "DE", "GB", "FR", "IT", "ES", "NL", "SE")


def round_nets(game: str, rules: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> RoundMoney:
    """What a round does to each player's chips, from the engine (what the table's
    controller computes; the same ``Engine.money`` the views use)."""
    engine = ENGINES[game]
    return engine.money(engine.outcome(play_events(engine, rules, events)))


class _Chips:
    """Each player's chips at each table: a buy-in at the cage (in units of 10,000) before any round
    the player could not cover, the round's results after; at the end a count, the
    cash-outs and the table's close. And each player's money at the cage: a buy-in, a
    tournament entry or a withdrawal is never more than the account holds (reconciliation
    checks it, ``projections.cage``); a player who runs short deposits again first."""

    def __init__(self, b: BatchBuilder, signer: Any, cage_signer: Any, tag: str):
        self.b, self.signer, self.cage_signer, self.tag = b, signer, cage_signer, tag
        self.stacks: dict[str, dict[str, int]] = {}
        self.cage: dict[str, int] = {}
        self.topped_up: dict[str, int] = {}  # player -> deposits made because the account ran short
        self.seated: set[tuple[str, str]] = set()

    def seat(self, table: str, players: list[str]) -> None:
        """A poker hand's players take their seats first (``seat.join.v1``; issue 15 point 5):
        the demo's players stay seated for the night."""
        for player in players:
            if (player, table) not in self.seated:
                self.b.add(self.signer, f"seat:{player}", "seat.join.v1", {"table": table, "blind_level": "50/100"})
                self.seated.add((player, table))

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
        for player in sorted(set(money.nets) | set(money.brought)):
            # a seat starts with what the player holds there (a poker starting stack): projections.table_chips
            need = max(money.brought.get(player) or 0, money.wagered.get(player, 0), -money.nets.get(player, 0))
            have = stacks.get(player, 0)
            if have < need:
                self.buy(table, player, BUY_IN_UNIT * -(-(need - have) // BUY_IN_UNIT))

    def buy(self, table: str, player: str, amount: int) -> None:
        """The cage issues ``amount`` in chips to ``player`` at ``table``, from the account."""
        self.fund(player, amount)
        self.b.add(self.cage_signer, f"chips:{table}", "chips.buy_in.v1", {"player": player, "amount": amount})
        self.pay(player, amount)
        stacks = self.stacks.setdefault(table, {})
        stacks[player] = stacks.get(player, 0) + amount

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
                self.b.add(self.cage_signer, f"chips:{table}", "chips.cash_out.v1", {"player": player, "amount": n})
                self.pay(player, -n)
        self.b.add(self.signer, f"table:{table}", "table.close.v1", {"reason": "end of the gaming night"})


def _video(tag: str, seconds: int = 90) -> dict[str, str]:
    """The camera's footage of a procedure: the ``seconds`` before now (an inspection of a
    shoe takes a minute or two on camera), with the digest of the footage file."""
    from datetime import timedelta

    from ledger.timeutil import format_utc, parse_utc

    now = utc_now()
    start = format_utc(parse_utc(now) - timedelta(seconds=seconds))
    return {"camera": "cam-demo", "start": start, "end": now, "sha256": hashlib.sha256(tag.encode()).hexdigest()}


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


def run_demo(store: Store, keys: KeyDirectory, public: PublicDir, seed: int = 7, hands: int = 200,
             progress: Callable[..., None] | None = None) -> dict[str, Any]:
    say = progress or (lambda *args: None)
    rng = random.Random(seed)
    base = store.max_notification_id()
    tag = f"d{seed}-{base}"
    # producers write only at this night's tables, equipment and tournament (ledger.scope)
    night = [f"{kind}:{tag}-*" for kind in ("table", "shoe", "wheel", "dice", "tournament")]
    scopes = {"floor": None, "cage": None, "game": night + ["account:*"]}  # the game server geolocates sessions
    who = {role: producer_signer(store, keys, f"{role}:demo", role, scopes.get(role, night))
           for role in ("floor", "dealer", "cage", "rng", "game", "importer")}
    b = BatchBuilder.for_store(store)
    flow = _Flow(store, b, say, receipts=active_signer(load_keyring(store), keys, "ledger"))
    # every registered game's demo tables (``Engine.demo_tables``), dealt in turn
    tables: dict[str, tuple[Engine, DemoTable]] = {t.code: (engine, t) for engine in ENGINES.values()
                                                   for t in engine.demo_tables}
    for code, (engine, t) in tables.items():
        # the floor configures each table (issue 15 point 1); every round cites it (seq 1)
        payload: dict[str, Any] = {"game": engine.game, "seats": 9, "currency": "EUR", "config": t.config}
        if t.dealing:
            payload["dealing"] = t.dealing
        b.add(who["floor"], f"table:{tag}-{code}", "table.open.v1", payload)
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
    # the configured poker tables: numbered seats, carried stacks, a moving button (ledger.sim.poker_seats)
    seated_at: dict[str, PokerSeats] = {}
    for code, (engine, t) in tables.items():
        book = engine.table_book(9, t.config)
        if book is not None:
            seated_at[code] = PokerSeats(f"{tag}-{code}", t.config, book, chips, b.add, who["floor"])
            seated_at[code].sit(rng.sample(players, 6))
    shoes: dict[str, _Shoe] = {}
    for code, (engine, t) in tables.items():
        table = f"{tag}-{code}"
        if t.dealing != "live":
            continue
        if engine.equipment == "shoe":
            shoes[code] = _Shoe(b, who["dealer"], who["floor"], f"shoe:{table}", table, engine.game, t.decks, t.cut,
                                rng)
        elif engine.equipment == "wheel":
            b.add(who["floor"], f"wheel:{table}", "wheel.inspect.v1",
                  {"table": table, "result": "pass", "video": _video(f"wheel:{table}"), "tampering": "pass",
                   "level": "pass", "spin": "pass", "ball": "pass"})
        elif engine.equipment == "dice":
            b.add(who["floor"], f"dice:{table}", "dice.inspect.v1",
                  {"table": table, "result": "pass", "video": _video(f"dice:{table}")})
    say("dealing the night")
    rounds: list[str] = []
    codes = list(tables)
    config_seq = dict.fromkeys(codes, 1)  # the table event whose configuration each table's rounds cite
    for n in range(hands):
        code = codes[n % len(codes)]
        engine, t = tables[code]
        for c, (_, tc) in tables.items() if n == hands // 2 else ():  # mid-night the floor raises the maximums
            if tc.config.get("limits"):
                raised = {bet: {"min": lim["min"], "max": lim["max"] * 2} for bet, lim in tc.config["limits"].items()}
                b.add(who["floor"], f"table:{tag}-{c}", "table.config.v1",
                      {"config": {**tc.config, "limits": raised}, "reason": "the floor raises the table maximum"})
                config_seq[c] = 2
        rid = f"round:{tag}-{code}-{n:06d}"
        table = f"{tag}-{code}"
        seated = rng.sample(players, rng.randint(*t.players))
        opening: dict[str, Any] = {"table": table, "game": engine.game, "config": config_seq[code]}
        signer = who[t.signer]
        shoe = shoes.get(code)
        secret = b""
        if t.dealing == "rng":  # the RNG service commits, the game server deals, the seed is revealed
            secret = hashlib.sha256(f"{seed}-{rid}".encode()).digest()
            if (n // len(codes)) % 3 == 0:  # planted: a player connecting from a restricted jurisdiction
                seated = seated + ["R-ABROAD"]
            cards: Any = rngmod.draw_source(engine.draws(engine.start({}))[0], secret, rid)
            opening["source"] = "rng"
        elif shoe is not None:
            cards = _Draw(shoe)
            opening["source"] = shoe.stream
        else:
            cards = iter(rng.sample(deck(), 52))
            if t.dealing == "live":
                opening["source"] = f"{engine.equipment}:{table}"
        pk = seated_at.get(code)
        if pk is not None:
            pk.between_hands(rng)
            opening["rules"], events = pk.deal(rng)
            pk.played(rid, opening["rules"], events, complete=True)
        else:
            opening["rules"], events = engine.demo_round(rng, seated, cards)
        money = round_nets(engine.game, opening["rules"], events)
        chips.cover(table, money)
        chips.seat(table, opening["rules"].get("players", []))
        b.add(signer, rid, "round.open.v1", opening)
        if t.dealing == "rng":
            b.add(who["rng"], rid, "rng.commit.v1", {"algorithm": rngmod.ALGORITHM,
                                                      "commitment": rngmod.commitment(secret)})
        st = engine.start(opening["rules"])
        revealed = t.dealing != "rng"
        for kind, payload in events:
            b.add(signer, rid, kind, payload)
            if "player" in payload and "amount" in payload:
                wagered[payload["player"]] = wagered.get(payload["player"], 0) + payload["amount"]
            st = engine.apply(st, kind, payload)
            if not revealed and engine.draws(st)[2]:  # the draws are complete: the seed is revealed
                b.add(who["rng"], rid, "rng.reveal.v1", {"seed": secret.hex()})
                revealed = True
        reshuffle = shoe is not None and shoe.after_round(rid)
        b.add(signer, rid, "round.close.v1", {"status": "complete"})
        chips.settle(table, money)
        if reshuffle and shoe is not None:
            shoe._prepare()
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
    # chip dumping, at a table of its own (PKD): the same loser folds to the same winner's shove
    pk_engine, pk_table = tables["PK"]
    dumps = PokerSeats(f"{tag}-PKD", pk_table.config, pk_engine.table_book(9, pk_table.config), chips, b.add,
                       who["floor"])
    b.add(who["floor"], f"table:{tag}-PKD", "table.open.v1",
          {"game": "poker", "seats": 9, "currency": "EUR", "config": pk_table.config})
    dumps.sit(["C-DUMP", "C-RECV", "C-THIRD"], 20_000)
    for k in range(4):
        rid = f"round:{tag}-PK-dump-{k}"
        rules, events = dumps.deal(rng, dump=("C-DUMP", "C-RECV"))
        dumps.played(rid, rules, events, complete=True)
        money = round_nets("poker", rules, events)
        chips.cover(f"{tag}-PKD", money)
        b.add(who["game"], rid, "round.open.v1", {"table": f"{tag}-PKD", "game": "poker", "rules": rules,
                                                  "config": 1})
        for kind, payload in events:
            b.add(who["game"], rid, kind, payload)
        b.add(who["game"], rid, "round.close.v1", {"status": "complete"})
        chips.settle(f"{tag}-PKD", money)
    # a transfer to an outside party: money in at the cage, sent on to someone else's bank
    b.add(who["cage"], "account:T-PASS", "cash.deposit.v1", {"amount": 500_000, "currency": "EUR", "method": "cash",
                                                             "reference": f"{tag}-t1"})
    b.add(who["cage"], "account:T-PASS", "cash.transfer.v1",
          {"amount": 480_000, "currency": "EUR", "beneficiary": "bank-NL91ABNA0417164300",
           "beneficiary_type": "external", "reference": f"{tag}-t2"})
    say("a misdeal, a voided coup, a server crash; a bounty tournament")
    rulings = incidents(b, who, tag, rng, players, _Draw(shoes["BAC"]), chips, seated_at["PK"], config_seq)
    tid = tournament(b, who["game"], tag, rng, players, chips, cage=who["cage"])
    say("counting, cashing out and closing every table")
    for code in [*tables, "PKD"]:
        chips.close(f"{tag}-{code}")
    for p in players[: len(players) // 2]:  # those who played, and never ran short, cash out part of their deposit
        amount = min(deposits[p] // 2, chips.cage.get(p, 0))
        if wagered.get(p, 0) >= deposits[p] // 2 and p not in chips.topped_up and amount > 0:
            b.add(who["cage"], f"account:{p}", "cash.withdrawal.v1", {"amount": amount, "currency": "EUR",
                                                                      "method": "bank", "reference": f"{tag}-out-{p}"})
            chips.pay(p, amount)
    flow.flush(force=True)
    create_checkpoint(store, keys, public)
    disputed = rounds[rng.randrange(0, len(rounds) // len(codes)) * len(codes)]  # the first table's: a live coup
    return {"events": flow.events, "rounds": flow.rounds, "disputed_round": disputed,
            "tables": len(tables) + 2, "players": len(players) + 7, "rulings": rulings, "tournament": tid}


class _Flow:
    """Signed events go to the ledger a batch at a time (``IngestSession``), so a night of
    any size is held in memory one batch at a time."""

    def __init__(self, store: Store, b: BatchBuilder, say: Callable[..., None], receipts: Any = None):
        self.session, self.b, self.say = IngestSession(store, receipts=receipts), b, say
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
        self.say("dealing the night: events signed and ingested", self.events, None)


class _Draw:
    """Cards from a live shoe, as an iterator for the round producers."""

    def __init__(self, shoe: _Shoe):
        self.shoe = shoe

    def __iter__(self) -> _Draw:
        return self

    def __next__(self) -> str:
        return self.shoe.draw()

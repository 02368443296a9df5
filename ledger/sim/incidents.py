"""The demo's incidents and tournament (issue #6 point 4), through the producer path:
a misdeal re-dealt (TDA 34), a coup voided by a system malfunction (000 II 2.1.8), a
server crash rolling back the poker hands in progress (000 refund policy), and a bounty
tournament with a late registration, a re-entry, a rebuy, an add-on, a staked player, a
chopped pot that splits two bounties, and a three-way deal. Deterministic for the
demo's random source; what the tournament pays is computed with the ledger's own rules
(``ledger.judges.tournament.settle``), as the game server would."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from ledger.games.baccarat import coup_events
from ledger.games.poker import random_hand as poker_hand
from ledger.judges import tournament as tournaments
from ledger.producer import BatchBuilder
from ledger.refs import event_ref
from ledger.timeutil import utc_now


def _add_round(b: BatchBuilder, signer: Any, rid: str, opening: dict[str, Any], events: list[Any]) -> None:
    b.add(signer, rid, "round.open.v1", opening)
    for kind, payload in events:
        b.add(signer, rid, kind, payload)


def _ruling(b: BatchBuilder, floor: Any, rid: str, effect: str, rule: str, acts_on: list[str], reason: str,
            **extra: Any) -> dict[str, str]:
    b.add(floor, rid, "ruling.v1", {"effect": effect, "rule": rule, "acts_on": acts_on, "reason": reason, **extra})
    return {"round": rid, "rule": rule, "effect": effect}


def incidents(b: BatchBuilder, who: dict[str, Any], tag: str, rng: random.Random, players: list[str],
              shoe: Any, chips: Any, pk: Any, config_seq: dict[str, int]) -> list[dict[str, str]]:
    """The night's three incidents at the demo's poker (``PK``) and live baccarat (``BAC``)
    tables, and a second poker table (``PK2``) opened for the crash; returns the rulings
    as {round, rule, effect}. ``chips.play(table, game, rules, events, add)`` records a
    complete round with the buy-ins it needs (``ledger.sim.demo``); ``pk`` deals the poker
    table's next hand (``ledger.sim.poker_seats.PokerSeats``); ``config_seq`` is the table
    event whose configuration each table's rounds cite, by table code."""
    rulings = []
    game, floor = who["game"], who["floor"]
    b.add(floor, f"table:{tag}-PK2", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    # 1. a misdeal found right after the deal, before any action: re-dealt exactly (TDA 34 A/B), with the
    # same button and stacks (the table's book: ``ledger.games.poker_table``)
    rules, events = pk.deal(random.Random(rng.random()))
    posts = sum(1 for kind, _ in events if kind == "poker.post.v1")
    dealt = [e for e in events if e[0] != "poker.action.v1"][: posts + len(rules["players"])]  # posts, hole cards
    rid = f"round:{tag}-PK-misdeal"
    opening = {"table": f"{tag}-PK", "game": "poker", "rules": rules, "config": config_seq["PK"]}
    _add_round(b, game, rid, opening, dealt)
    rulings.append(_ruling(b, floor, rid, "misdeal", "002 TDA 34 A", [event_ref(rid, len(dealt) + 1)],
                           "the first card went to the wrong seat", redeal=f"{tag}-PK-redeal"))
    b.add(game, rid, "round.close.v1", {"status": "void"})
    pk.played(rid, rules, dealt, complete=False)
    again_rules, again = pk.deal(random.Random(rng.random()))
    assert again_rules == rules
    pk.played(f"{tag}-PK-redeal", rules, again, complete=True)
    chips.play(f"{tag}-PK", "poker", rules, again, lambda: _add_round(b, game, f"round:{tag}-PK-redeal", opening,
                                                                       again + [("round.close.v1",
                                                                                 {"status": "complete"})]))
    # 2. a live coup voided: the card reader failed after the third card (000 II 2.1.8)
    rid = f"round:{tag}-BAC-void"
    coup = coup_events([(p, "banker", 1000) for p in rng.sample(players, 3)], shoe)
    cards = [i for i, (k, _) in enumerate(coup) if k == "baccarat.card.v1"]
    _add_round(b, who["dealer"], rid, {"table": f"{tag}-BAC", "game": "baccarat", "rules": {},
                                       "config": config_seq["BAC"],
                                       "source": f"shoe:{tag}-BAC"}, coup[: cards[2] + 1])
    rulings.append(_ruling(b, floor, rid, "void", "000 II 2.1.8", [event_ref(rid, cards[2] + 2)],
                           "the shoe's card reader failed: a system malfunction voids all pays and plays"))
    b.add(who["dealer"], rid, "round.close.v1", {"status": "void"})
    # 3. the game server crashes with two hands in progress: both go back to their starting stacks
    crashed = []
    for n in range(2):
        rid = f"round:{tag}-PK2-crash-{n}"
        rules, events = poker_hand(random.Random(rng.random()), rng.sample(players, 3), [10_000] * 3)
        chips.seat(f"{tag}-PK2", rules["players"])
        first_action = next(i for i, (k, _) in enumerate(events) if k == "poker.action.v1")
        _add_round(b, game, rid, {"table": f"{tag}-PK2", "game": "poker", "rules": rules},
                   events[: first_action + 2])
        crashed.append(rid)
    b.add(floor, f"incident:{tag}-crash", "incident.server_crash.v1",
          {"started": utc_now(), "reason": "game server crashed; hands in progress rolled back"})
    for rid in crashed:
        rulings.append(_ruling(b, floor, rid, "rollback", "000 refund policy", [f"incident:{tag}-crash#1"],
                               "server crash: cash-game hands in progress go back to their starting stacks"))
        b.add(game, rid, "round.close.v1", {"status": "void"})
    chips.close(f"{tag}-PK2")
    return rulings


def tournament(b: BatchBuilder, game: Any, tag: str, rng: random.Random, players: list[str], chips: Any, *,
               cage: Any) -> str:
    """A ten-player bounty tournament to a three-way deal; returns its id. Entries,
    stakes and prizes go through the players' accounts (``chips.fund`` / ``chips.pay``,
    ``ledger.sim.demo``): who pays in has the money at the cage first (000 tournament rules:
    re-entry, rebuys and add-ons need funds in the account)."""
    tid = f"{tag}-TRN"
    stream = f"tournament:{tid}"
    events: list[Any] = []

    def add(kind: str, **payload: Any) -> None:
        full = f"tournament.{kind}.v1"
        before = tournaments.fold(stream, events) if events else None
        after = (tournaments.apply(before, full, payload) if before is not None
                 else tournaments.open_tournament(stream, payload))
        effects = tournaments.cash_effects(before, full, payload, after)
        for (person, _), amount in sorted(effects.items()):
            if amount < 0:
                chips.fund(person, -amount)
        events.append(b.add(cage if kind in ("register", "stake") else game, stream, full, payload))  # entries: cage
        for (person, _), amount in sorted(effects.items()):
            chips.pay(person, -amount)

    seed = hashlib.sha256(f"{tag}-seating-{rng.random()}".encode()).digest()
    add("open", currency="EUR", buy_in=4_600, fee=400, bounty=500, starting_chips=5_000,
        payouts_bp=[5_000, 3_000, 2_000], max_entries=2, rebuys=True,
        seating_commitment=hashlib.sha256(seed).hexdigest())
    field = rng.sample(players, 10)
    for p in field[:9]:
        add("register", player=p, entry="register")
    add("stake", player=field[0], backer=field[9], share_bp=1_500, price=800)
    add("start", seed=seed.hex(), seating=[{"player": p, "table": t, "seat": st}
                                          for p, t, st in tournaments.random_seating(sorted(field[:9]), seed, stream, 9)])
    add("register", player=field[9], entry="late", table=2, seat=1)
    add("move", reason="balance", moves=[{"player": p, "table": 2, "seat": k + 2}
                                         for k, p in enumerate(rng.sample(field[:9], 4))])
    add("register", player=field[1], entry="rebuy")
    add("register", player=field[2], entry="addon")
    active = list(field)
    first = True
    while len(active) > 3:
        state = tournaments.fold(stream, events)
        assert state is not None
        if first:  # a chopped pot knocks two out: their bounties are split (000 bounty policy)
            out, won_by = rng.sample(active[2:], 2), active[:2]
        else:
            out = [rng.choice(active[1:])]
            won_by = [rng.choice([p for p in active if p not in out])]
        add("eliminate", hand=f"{tag}-TRN-h{len(events)}", won_by=won_by,
            busted=[{"player": p, "start_stack": rng.randrange(500, 8_000, 100), "seat_from_button": i + 1}
                    for i, p in enumerate(out)])
        active = [p for p in active if p not in out]
        if first:
            state = tournaments.fold(stream, events)
            assert state is not None
            taken = {(tb, st) for _, tb, st in state.seating}
            table, seat = next((tb, st) for tb in (1, 2) for st in range(1, 10) if (tb, st) not in taken)
            add("register", player=out[0], entry="reentry", table=table, seat=seat)
            active.append(out[0])
            add("registration_closed", reason="scheduled")
            first = False
    state = tournaments.fold(stream, events)
    assert state is not None
    left = sum(tournaments.place_amounts(tournaments.prize_pool(state), state.rules["payouts_bp"], 3))
    a, c = left * 45 // 100, left * 30 // 100
    add("deal", shares={active[0]: a, active[1]: c, active[2]: left - a - c})
    state = tournaments.fold(stream, events)
    assert state is not None
    add("finish", paid=tournaments.settle(state, False, {})["paid"])
    return tid

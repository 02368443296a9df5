"""The house's rules bind every round (issue 15): the table's configuration by the floor,
limits, card accounting per round and per shoe, showdown, rake per hand and the seed rules
that span rounds. Each test is named after its source and sends a legal and an illegal
sequence through ingest, on a SQLite file and on PostgreSQL (the ``ledger`` fixture)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ledger.games import ENGINES
from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.games.high_card_flush import HighCardFlushEngine
from ledger.importers.phh import hand_events
from ledger.judges.round import walk
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import add_round, ingest
from tests.ledger.judges.test_rulings import DAY, PLAYERS, Room

pytestmark = pytest.mark.usefixtures("past_dated")  # nights on fixed dates (tests/conftest.py)

VIDEO = {"camera": "cam-07", "start": f"{DAY}T10:00:00Z", "end": f"{DAY}T10:04:30Z", "sha256": "ab" * 32}


def _ok(room: Room, b: BatchBuilder) -> None:
    room.store(b)


def _no(room: Room, b: BatchBuilder, reason: str) -> None:
    before = dump_rows(room.ledger.store)
    report = ingest(room.ledger.store, b.lines())
    assert report.status == "rejected", "the illegal sequence was stored"
    assert dump_rows(room.ledger.store) == before
    text = " | ".join(r.reason for r in report.rejections)
    assert reason in text, text


POSTED = {"*": {"min": 1, "max": 10_000_000}}
"""The limits a test's house-banked table posts when the test is not about limits (a
configuration of a house-banked game without limits is refused:
``test_a_house_banked_table_posts_its_limits_000_II_2_1_7``)."""


def _table(room: Room, b: BatchBuilder, table: str, game: str, config: dict[str, Any] | None, seats: int = 7,
           signer: Any = None, dealing: str | None = None) -> None:
    payload: dict[str, Any] = {"game": game, "seats": seats, "currency": "EUR"}
    if config is not None:
        payload["config"] = config
        if ENGINES[game].banking == "house" and "limits" not in config:
            payload["config"] = {**config, "limits": POSTED}
    if dealing:
        payload["dealing"] = dealing
    b.add(signer or room.floor, f"table:{table}", "table.open.v1", payload)


def _seat(room: Room, b: BatchBuilder, table: str, players: list[str]) -> None:
    for player in players:
        b.add(room.game, f"seat:{player}", "seat.join.v1", {"table": table, "blind_level": "50/100"})


def _coup(room: Room, b: BatchBuilder, rid: str, table: str, bets: list[tuple[str, str, int]], cards: Any,
          config: int | None = 1, source: str | None = None, rules: dict[str, Any] | None = None) -> None:
    opening: dict[str, Any] = {"table": table, "game": "baccarat", "rules": rules or {}}
    if config is not None:
        opening["config"] = config
    if source:
        opening["source"] = source
    b.add(room.dealer, rid, "round.open.v1", opening)
    for kind, payload in coup_events(bets, cards):
        b.add(room.dealer, rid, kind, payload)
    b.add(room.dealer, rid, "round.close.v1", {"status": "complete"})


# --- 1. the table's configuration, signed by the floor ---------------------------------------

def test_table_configuration_is_the_floors_not_a_producers_issue_15_point_1(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "BJ", "blackjack", {"rules": {"blackjack_pays": [3, 2]}}, signer=room.game)
    _no(room, b, "set by the floor or the house, not by a game key")
    b = room.batch()
    _table(room, b, "BJ", "blackjack", {"rules": {"blackjack_pays": [3, 2]}})
    _ok(room, b)
    b = room.batch()  # and a producer cannot change it afterwards
    b.add(room.game, "table:BJ", "table.config.v1", {"config": {"rules": {"blackjack_pays": [6, 5]}, "limits": POSTED}})
    assert ingest(ledger.store, b.lines()).status == "rejected"


def test_blackjack_pays_at_least_3_to_2_000_III_2_3_a(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "BJ", "blackjack", {"rules": {"blackjack_pays": [6, 5]}})
    _no(room, b, "a blackjack pays at least 3:2, not 6:5 (000 III 2.3(a))")
    b = room.batch()
    _table(room, b, "BJ", "blackjack", {"rules": {"blackjack_pays": [2, 1]}})  # better for the player: allowed
    _ok(room, b)
    b = room.batch()  # the dealer's round cannot set it either (the attack: a dealer-signed 6:5 round)
    b.add(room.dealer, "round:BJ-1", "round.open.v1",
          {"table": "BJ", "game": "blackjack", "rules": {"blackjack_pays": [6, 5]}, "config": 1})
    _no(room, b, "the table's configuration says [2, 1]")


def test_a_round_at_an_unconfigured_table_plays_the_seed_defaults_000_III_2_3_a(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "BJ", "blackjack", None)
    b.add(room.dealer, "round:BJ-1", "round.open.v1", {"table": "BJ", "game": "blackjack",
                                                       "rules": {"blackjack_pays": [6, 5]}})
    _no(room, b, "the game's default [3, 2] applies")
    b = room.batch()
    _table(room, b, "BJ", "blackjack", None)
    b.add(room.dealer, "round:BJ-1", "round.open.v1", {"table": "BJ", "game": "blackjack",
                                                       "rules": {"blackjack_pays": [3, 2]}})
    _ok(room, b)


def test_baccarat_is_dealt_from_8_decks_000_II_1_3_1(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "B6", "baccarat", {"rules": {"decks": 6}})
    _no(room, b, "baccarat is dealt from 8 decks, not 6 (000 II 1.3.1)")
    b = room.batch()
    _table(room, b, "B8", "baccarat", {"rules": {"decks": 8, "commission_bp": 500}})
    _ok(room, b)


def test_stud_has_at_most_7_seats_and_a_40_percent_bring_in_001(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    stud = {"variant": "F7S", "small_bet": 20, "big_bet": 40, "bring_in": 8}
    b = room.batch()
    _table(room, b, "S8", "poker", {"rules": stud}, seats=8)
    _no(room, b, "a seven-card stud table has at most 7 seats, not 8 (001 座席数)")
    b = room.batch()
    _table(room, b, "S7", "poker", {"rules": {**stud, "bring_in": 10}})
    _no(room, b, "the bring-in is 40% of the small bet 20, 8, not 10 (001 ブリングイン)")
    b = room.batch()
    _table(room, b, "S7", "poker", {"rules": stud, "ante": 5})
    _ok(room, b)


def test_the_rake_is_2_percent_nothing_under_500_at_most_500_001_5(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "H", "poker", {"rules": {"variant": "NT", "rake": {"percent_bp": 500, "threshold": 0,
                                                                       "cap": 5000}}}, seats=9)
    _no(room, b, "the rake is at most 2% of the pot")
    b = room.batch()
    _table(room, b, "H", "poker", {"rules": {"variant": "NT", "rake": {"percent_bp": 200, "threshold": 500,
                                                                       "cap": 500}}}, seats=9)
    _ok(room, b)


def test_a_round_cites_the_configuration_in_force_when_it_opened_issue_15_point_1(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "B", "baccarat", {"rules": {"commission_bp": 500}})
    b.add(room.floor, "table:B", "table.config.v1", {"config": {"rules": {"commission_bp": 400}, "limits": POSTED},
                                                     "reason": "a promotion"})
    _coup(room, b, "round:B-1", "B", [("ANN", "banker", 1000)], iter(deck()), config=1)  # stale
    _no(room, b, "configuration in force is seq 2 of table:B")
    b = room.batch()
    _table(room, b, "B", "baccarat", {"rules": {"commission_bp": 500}})
    b.add(room.floor, "table:B", "table.config.v1", {"config": {"rules": {"commission_bp": 400}, "limits": POSTED},
                                                     "reason": "a promotion"})
    _coup(room, b, "round:B-1", "B", [("ANN", "banker", 1000)], iter(deck()), config=2,
          rules={"commission_bp": 400})
    _ok(room, b)
    rs, refused = walk(ledger.store.stream_events("round:B-1"), ledger.store.event_at)  # replay: the cited config
    assert not refused and rs is not None and rs.st.rules.commission_bp == 400


def test_a_round_option_only_where_the_configuration_allows_it_issue_15_point_1(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "B", "baccarat", {"rules": {}})
    _coup(room, b, "round:B-1", "B", [("ANN", "player", 1000)], iter(deck()), rules={"tie_pays": 9})
    _no(room, b, "the game's default 8 applies")
    b = room.batch()
    _table(room, b, "B", "baccarat", {"rules": {}, "round_options": ["tie_pays"]})
    _coup(room, b, "round:B-1", "B", [("ANN", "player", 1000)], iter(deck()), rules={"tie_pays": 9})
    _ok(room, b)


# --- 2. limits ------------------------------------------------------------------------------

def test_every_bet_within_the_table_limits_000_II_2_1_7_III_1_3_a_IV_2_1_4(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    config = {"limits": {"banker": {"min": 500, "max": 500_000}, "*": {"min": 500, "max": 100_000}}}
    b = room.batch()
    _table(room, b, "B", "baccarat", config)
    _coup(room, b, "round:B-1", "B", [("ANN", "banker", 90_000_000_000)], iter(deck()))
    _no(room, b, "a banker bet of 90000000000 is outside the table's limits 500-500000")
    b = room.batch()
    _table(room, b, "B", "baccarat", config)
    _coup(room, b, "round:B-1", "B", [("ANN", "tie", 100)], iter(deck()))
    _no(room, b, "a tie bet of 100 is outside the table's limits 500-100000")
    b = room.batch()
    _table(room, b, "B", "baccarat", config)
    _coup(room, b, "round:B-1", "B", [("ANN", "banker", 500_000), ("BOB", "tie", 500)], iter(deck()))
    _ok(room, b)


def test_a_house_banked_table_posts_its_limits_000_II_2_1_7(ledger) -> None:  # type: ignore[no-untyped-def]
    """000 II 2.1.7 / IV 2.1.4: the game screen shows the minimum and maximum bet, so a
    house-banked table's configuration sets them; a bet of a type with no posted limit
    (and no ``*``) is refused, not taken without one."""
    room = Room(ledger)
    b = room.batch()
    b.add(room.floor, "table:B", "table.open.v1",
          {"game": "baccarat", "seats": 7, "currency": "EUR", "config": {"rules": {"decks": 8}}})
    _no(room, b, "a house-banked table posts its minimum and maximum bets")
    b = room.batch()
    _table(room, b, "B", "baccarat", {"limits": {"banker": {"min": 500, "max": 500_000}}})
    _coup(room, b, "round:B-1", "B", [("ANN", "player", 1_000)], iter(deck()))
    _no(room, b, "the table posts no limits for a player bet")
    b = room.batch()
    _table(room, b, "B", "baccarat", {"limits": {"banker": {"min": 500, "max": 500_000}}})
    _coup(room, b, "round:B-1", "B", [("ANN", "banker", 1_000)], iter(deck()))
    _ok(room, b)


# --- 3. card accounting ---------------------------------------------------------------------

def test_a_single_deck_round_deals_no_card_twice_000_III_1_5_d(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    engine = ENGINES["blackjack"]
    b = room.batch()
    _table(room, b, "BJ", "blackjack", {"rules": {"decks": 1}})
    events = [("blackjack.bet.v1", {"seat": 1, "player": "ANN", "amount": 1000}), ("blackjack.no_more_bets.v1", {}),
              ("blackjack.card.v1", {"seat": 1, "hand": 1, "card": "As"}),
              ("blackjack.card.v1", {"seat": 0, "hand": 1, "card": "As"})]
    add_round(b, room.dealer, "round:BJ-1", "BJ", "blackjack", events, rules={"decks": 1}, close=False, config=1)
    _no(room, b, "As is dealt 2 times in this round, but the 1-deck deck holds 1")
    b = room.batch()
    _table(room, b, "BJ", "blackjack", {"rules": {"decks": 1}})
    events[3] = ("blackjack.card.v1", {"seat": 0, "hand": 1, "card": "Ks"})
    add_round(b, room.dealer, "round:BJ-1", "BJ", "blackjack", events, rules={"decks": 1}, close=False, config=1)
    _ok(room, b)
    assert engine.draws(walk(ledger.store.stream_events("round:BJ-1"), ledger.store.event_at)[0].st)[1] == ["As", "Ks"]


def _live_shoe(room: Room, b: BatchBuilder, shoe: str = "shoe:S1", table: str = "LB", cut: int = 7,
               decks: int = 8) -> None:
    _table(room, b, table, "baccarat", {"rules": {"decks": 8}}, dealing="live")
    for signer in (room.dealer, room.floor):
        b.add(signer, shoe, "shoe.inspect.v1", {"table": table, "game": "baccarat", "decks": decks, "result": "pass",
                                                "video": VIDEO})
    b.add(room.dealer, shoe, "shoe.shuffle.v1", {"video": VIDEO})
    b.add(room.dealer, shoe, "shoe.cut.v1", {"cut_card_from_back": cut, "video": VIDEO})
    b.add(room.dealer, shoe, "shoe.load.v1", {"video": VIDEO})


def test_no_card_more_often_than_the_shoe_holds_across_its_rounds_000_II_1_3_1(ledger) -> None:  # type: ignore[no-untyped-def]
    """Nine A♥ from one 8-deck shoe over three coups: the third coup is refused, stored or not."""
    room = Room(ledger)
    b = room.batch()
    _live_shoe(room, b)
    _coup(room, b, "round:L-1", "LB", [("ANN", "banker", 1000)], iter(["Ah"] * 4 + ["Kc", "Kd"]), source="shoe:S1")
    _coup(room, b, "round:L-2", "LB", [("ANN", "banker", 1000)], iter(["Ah"] * 4 + ["Kc", "Kd"]), source="shoe:S1")
    _ok(room, b)  # eight A♥: as many as the shoe holds
    b = room.batch()  # a later batch: the count is rebuilt from the store
    _coup(room, b, "round:L-3", "LB", [("ANN", "banker", 1000)], iter(["Ah"] + ["Qs"] * 5), source="shoe:S1")
    _no(room, b, "Ah would be dealt 9 times from this 8-deck shoe since it was loaded")
    b = room.batch()
    _coup(room, b, "round:L-3", "LB", [("ANN", "banker", 1000)], iter(["Qs", "Qh", "Qd", "Qc", "Js", "Jh"]),
          source="shoe:S1")
    _ok(room, b)


def test_the_shoe_holds_the_decks_the_table_deals_000_II_1_3_1(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _live_shoe(room, b, decks=6, cut=7)  # a 6-deck baccarat shoe
    _coup(room, b, "round:L-1", "LB", [("ANN", "banker", 1000)], iter(deck()), source="shoe:S1")
    _no(room, b, "shoe:S1 holds 6 decks, but the table's configuration deals baccarat from 8")
    b = room.batch()
    _live_shoe(room, b)
    _coup(room, b, "round:L-1", "LB", [("ANN", "banker", 1000)], iter(deck()), source="shoe:S1")
    _ok(room, b)


def test_the_cut_card_last_hand_is_derived_from_the_cards_dealt_000_II_3_5_4(ledger) -> None:  # type: ignore[no-untyped-def]
    """The cut card 7 from the back of 8 decks: 409 cards in front of it. The round that
    deals the 409th card is the last hand; the dealer's shoe.cut_card must name it."""
    room = Room(ledger)
    stack = [c for _ in range(8) for c in deck()]
    random.Random(15).shuffle(stack)
    cards = iter(stack)
    b = room.batch()
    _live_shoe(room, b)
    _ok(room, b)
    rounds: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = []
    dealt = 0
    while dealt < 409:  # the coups up to and including the one that deals the 409th card
        events = coup_events([("ANN", "player", 1000)], cards)
        dealt += sum(1 for k, _ in events if k == "baccarat.card.v1")
        rounds.append((f"round:L-{len(rounds) + 1}", events))
    opening = {"table": "LB", "game": "baccarat", "rules": {}, "config": 1, "source": "shoe:S1"}
    last, events = rounds[-1]
    b = room.batch()
    for rid, evs in rounds[:-1]:
        b.add(room.dealer, rid, "round.open.v1", opening)
        for kind, payload in evs:
            b.add(room.dealer, rid, kind, payload)
        b.add(room.dealer, rid, "round.close.v1", {"status": "complete"})
    _ok(room, b)
    bets = [e for e in events if e[0] != "baccarat.card.v1" and e[0] != "baccarat.settle.v1"]
    early = room.batch()  # the dealer calls the last hand before the cards in front of the cut card run out
    early.add(room.dealer, last, "round.open.v1", opening)
    for kind, payload in bets:
        early.add(room.dealer, last, kind, payload)
    early.add(room.dealer, "shoe:S1", "shoe.cut_card.v1", {"round": last.split(":", 1)[1]})
    _no(room, early, "it has not come out")
    skipped = room.batch()  # the cut card passes unrecorded and another round is dealt from the shoe
    skipped.add(room.dealer, last, "round.open.v1", opening)
    for kind, payload in events:
        skipped.add(room.dealer, last, kind, payload)
    skipped.add(room.dealer, last, "round.close.v1", {"status": "complete"})
    skipped.add(room.dealer, "round:L-next", "round.open.v1", opening)
    _no(room, skipped, f"came out during {last}")
    b = room.batch()
    b.add(room.dealer, last, "round.open.v1", opening)
    for kind, payload in events:
        b.add(room.dealer, last, kind, payload)
    b.add(room.dealer, "shoe:S1", "shoe.cut_card.v1", {"round": last.split(":", 1)[1]})
    b.add(room.dealer, last, "round.close.v1", {"status": "complete"})
    _ok(room, b)


# --- 5. seats: a player sent away plays no further hand there that day ----------------------

def test_a_player_forced_to_leave_plays_no_further_hand_there_that_day_001_fouls_2_3(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    room.hand(b, "round:H-1", ["p3 f", "p4 f", "p1 f"], close=True)
    b.add(room.floor, "penalty:CAT", "penalty.v1", {"offence": "exposure", "rule": "001 fouls 2",
                                                    "acts_on": ["round:H-1#1"], "reason": "exposed a hand",
                                                    "amount": 1000, "currency": "EUR", "table": "PK"})
    _ok(room, b)
    b = room.batch()
    room.hand(b, "round:H-2", ["p3 f", "p4 f", "p1 f"], close=True)  # CAT is one of the four players
    _no(room, b, "CAT was sent away from table PK")
    b = room.batch()
    room.poker_table(b, "PK3")
    room.hand(b, "round:H-2", ["p3 f", "p4 f", "p1 f"], table="PK3", close=True)  # another table: allowed
    _ok(room, b)
    b = room.batch()  # the penalty and the next hand in one batch: the hand is judged against the batch's penalty
    b.add(room.floor, f"penalty:{PLAYERS[0]}", "penalty.v1",
          {"offence": "interference", "rule": "001 fouls 3", "acts_on": ["round:H-2#1"], "reason": "interfered",
           "amount": 5000, "currency": "EUR", "table": "PK3"})
    room.hand(b, "round:H-3", ["p3 f", "p4 f", "p1 f"], table="PK3", close=True)
    _no(room, b, f"{PLAYERS[0]} was sent away from table PK3")


def _folded_hand(room: Room, b: BatchBuilder, rid: str, table: str) -> None:
    """ANN and BOB heads-up: BOB (the button, small blind) folds."""
    hand = {"variant": "NT", "antes": [0, 0], "blinds_or_straddles": [50, 100], "min_bet": 100,
            "starting_stacks": [10_000, 10_000], "players": ["ANN", "BOB"],
            "actions": ["d dh p1 ????", "d dh p2 ????", "p2 f"]}
    rules, events, _ = hand_events(hand)
    add_round(b, room.game, rid, table, "poker", events, rules=rules)


def test_a_hands_players_hold_seats_at_its_table_000_leaving_table_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "T", "poker", None, seats=9)
    _seat(room, b, "T", ["ANN"])
    _folded_hand(room, b, "round:T-1", "T")  # BOB never sat down
    _no(room, b, "BOB is not seated at table T")
    b = room.batch()
    _table(room, b, "T", "poker", None, seats=9)
    _seat(room, b, "T", ["ANN", "BOB"])
    _folded_hand(room, b, "round:T-1", "T")
    _ok(room, b)
    b = room.batch()  # BOB leaves; his next hand there is refused
    b.add(room.game, "seat:BOB", "seat.leave.v1", {"table": "T", "blind_level": "50/100", "hands_played": 1,
                                                   "others_seated": 1})
    _folded_hand(room, b, "round:T-2", "T")
    _no(room, b, "BOB is not seated at table T")


def test_the_leaving_policy_counts_the_hands_from_the_ledger_000_leaving_table_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    """BOB played 3 hands: a leave that says 12 (no refusal to play) is refused; the
    ledger's 3 makes it a refusal (000: between 1 and 9 hands while others sit)."""
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "T", "poker", None, seats=9)
    _seat(room, b, "T", ["ANN", "BOB"])
    for n in range(3):
        _folded_hand(room, b, f"round:T-{n}", "T")
    _ok(room, b)
    b = room.batch()  # a later batch: the count comes from the store
    b.add(room.game, "seat:BOB", "seat.leave.v1", {"table": "T", "blind_level": "50/100", "hands_played": 12,
                                                   "others_seated": 1})
    _no(room, b, "BOB was dealt 3 hands at T since taking the seat, by the ledger, not 12")
    b = room.batch()
    b.add(room.game, "seat:BOB", "seat.leave.v1", {"table": "T", "blind_level": "50/100", "hands_played": 3,
                                                   "others_seated": 1})
    _ok(room, b)


# --- 6. showdown ----------------------------------------------------------------------------

ALL_IN = ["d dh p1 AcAd", "d dh p2 KcKd", "p2 cbr 1000", "p1 cc"]
RUNOUT = ["d db 2s3h7d", "d db 9c", "d db Jh"]


def _heads_up(room: Room, b: BatchBuilder, rid: str, actions: list[str], extra: list[tuple[str, dict[str, Any]]]
              ) -> None:
    hand = {"variant": "NT", "antes": [0, 0], "blinds_or_straddles": [50, 100], "min_bet": 100,
            "starting_stacks": [1000, 1000], "players": PLAYERS[:2], "actions": actions}
    rules, events, _ = hand_events(hand, complete=False)
    add_round(b, room.game, rid, "PK", "poker", events + extra, rules=rules, close=False)


def test_an_all_in_hand_is_shown_not_mucked_TDA_15_001_9(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    _heads_up(room, b, "round:A-1", ALL_IN, [("poker.show.v1", {"seat": 2, "cards": []})])  # the all-in hand mucked
    _no(room, b, "may not muck: when a player is all-in")
    b = room.batch()
    room.poker_table(b)
    _heads_up(room, b, "round:A-1", ALL_IN + ["p2 sm KcKd", "p1 sm AcAd"] + RUNOUT, [])
    _ok(room, b)


def test_the_showdown_order_last_aggressor_first_TDA_16_001_9(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    river = ["d dh p1 AcKd", "d dh p2 7h7s", "d dh p3 QcJc", "p3 cc", "p1 cc", "p2 cc", "d db 2c8d9s",
             "p1 cc", "p2 cc", "p3 cc", "d db 4h", "p1 cc", "p2 cc", "p3 cc", "d db 5s", "p1 cc", "p2 cbr 200",
             "p3 cc", "p1 cc"]
    hand = {"variant": "NT", "antes": [0] * 3, "blinds_or_straddles": [50, 100, 0], "min_bet": 100,
            "starting_stacks": [10_000] * 3, "players": PLAYERS[:3], "actions": river}
    rules, events, _ = hand_events(hand, complete=False)
    b = room.batch()
    room.poker_table(b)
    add_round(b, room.game, "round:O-1", "PK", "poker", events + [("poker.show.v1", {"seat": 1, "cards": ["Ac", "Kd"]})],
              rules=rules, close=False)
    _no(room, b, "seat 2 shows (or mucks) first, not seat 1")
    b = room.batch()
    room.poker_table(b)
    add_round(b, room.game, "round:O-1", "PK", "poker", events + [("poker.show.v1", {"seat": 2, "cards": ["7h", "7s"]}),
                                                                  ("poker.show.v1", {"seat": 3, "cards": []}),
                                                                  ("poker.show.v1", {"seat": 1, "cards": []})],
              rules=rules, close=False)
    _ok(room, b)


def test_rake_per_hand_across_all_its_pots_001_5(ledger) -> None:  # type: ignore[no-untyped-def]
    """Three-handed, one short stack all-in: a main pot and a side pot. 2% of the whole
    hand's pot, capped at 500 for the hand (not 500 per pot)."""
    room = Room(ledger)
    rake = {"percent_bp": 200, "threshold": 500, "cap": 500}
    b = room.batch()
    _table(room, b, "RK", "poker", {"rules": {"variant": "NT", "min_bet": 100, "rake": rake}, "blinds": [50, 100]},
           seats=9)
    for n, (player, chips) in enumerate(zip(PLAYERS[:3], (20_000, 40_000, 40_000), strict=False), start=1):
        b.add(room.cage, "chips:RK", "chips.buy_in.v1", {"player": player, "amount": chips})
        b.add(room.game, f"seat:{player}", "seat.join.v1", {"table": "RK", "blind_level": "50/100", "seat": n})
    hand = {"variant": "NT", "antes": [0] * 3, "blinds_or_straddles": [50, 100, 0], "min_bet": 100, "rake": rake,
            "starting_stacks": [20_000, 40_000, 40_000], "players": PLAYERS[:3],
            "actions": ["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd", "p3 cbr 40000", "p1 cc", "p2 cc",
                        "p1 sm AcAd", "p2 sm KcKd", "p3 sm QcQd", "d db 2s3h7d", "d db 9c", "d db Jh"]}
    rules, events, st = hand_events(hand)
    assert [p.rake for p in st.pots] == [500, 0]  # per pot it would have been 500 + 500
    _ok(room, b)
    b = room.batch()
    awards = [(k, dict(p)) for k, p in events if k == "poker.award.v1"]
    bad = [(k, ({**p, "rake": 500, "amount": p["amount"]} if k == "poker.award.v1" and p["pot"] == 2 else p))
           for k, p in events]
    assert awards
    add_round(b, room.game, "round:RK-1", "RK", "poker", bad, rules=rules, config=1)
    _no(room, b, "rake")
    b = room.batch()
    add_round(b, room.game, "round:RK-1", "RK", "poker", events, rules=rules, config=1)
    _ok(room, b)


# --- 7. the other findings ------------------------------------------------------------------

def test_a_rollback_only_of_hands_in_progress_at_the_crash_000_refund_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    room.hand(b, "round:H-1", ["p3 cc"])
    b.add(room.floor, "incident:crash-1", "incident.server_crash.v1",
          {"started": f"{DAY}T20:00:00Z", "reason": "game server crashed"})  # before the hand opened (21:00)
    room.ruling(b, "round:H-1", "rollback", "000 refund policy", ["incident:crash-1#1"])
    _no(room, b, "only hands in progress at the crash are rolled back")
    b = room.batch()
    room.poker_table(b)
    room.hand(b, "round:H-1", ["p3 cc"])
    b.add(room.floor, "incident:crash-1", "incident.server_crash.v1",
          {"started": f"{DAY}T21:00:00Z", "reason": "game server crashed"})
    room.ruling(b, "round:H-1", "rollback", "000 refund policy", ["incident:crash-1#1"])
    room.void(b, "round:H-1")
    _ok(room, b)


def test_five_card_draw_post_draw_betting_starts_with_the_first_bettor_004_draw_5(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    pre = ["d dh p1 AcKdQh2s3s", "d dh p2 7h7s7c2d4d", "d dh p3 QcJc9h8h6d", "p1 cc", "p2 cbr 300", "p3 cc",
           "p1 cc", "p1 sd", "p2 sd", "p3 sd"]
    hand = {"variant": "N5D", "antes": [0] * 3, "blinds_or_straddles": [0, 0, 0], "min_bet": 100,
            "starting_stacks": [10_000] * 3, "players": PLAYERS[:3], "actions": pre}
    rules, events, _ = hand_events(hand, complete=False)
    b = room.batch()
    room.poker_table(b)
    add_round(b, room.game, "round:D-1", "PK", "poker", events + [("poker.action.v1", {"seat": 1, "action": "check"})],
              rules=rules, close=False)
    _no(room, b, "seat 1 acted out of turn: seat 2 is to act")  # seat 2 bet first: it opens after the draw
    b = room.batch()
    room.poker_table(b)
    add_round(b, room.game, "round:D-1", "PK", "poker", events + [("poker.action.v1", {"seat": 2, "action": "check"})],
              rules=rules, close=False)
    _ok(room, b)


def _hcf_tie(tie_bonus: str | None) -> list[tuple[str, str, int]]:
    engine = HighCardFlushEngine()
    st = engine.start({} if tie_bonus is None else {"tie_bonus": tie_bonus})
    st = engine.apply(st, "hcf.designate.v1", {"seat": 0, "player": "DP", "bankroll": 1_000_000})
    for wager, amount in (("ante", 100), ("flush", 100), ("straight_flush", 100)):
        st = engine.apply(st, "hcf.bet.v1", {"seat": 1, "player": "ANN", "wager": wager, "amount": amount})
    st = engine.apply(st, "hcf.no_more_bets.v1", {})
    mine = ["As", "Ks", "Qs", "Js", "9h", "7d", "5c"]  # a 4-card straight flush... with the same ranks for both
    theirs = ["Ah", "Kh", "Qh", "Jh", "9s", "7c", "5d"]
    for a, t in zip(mine, theirs, strict=True):
        st = engine.apply(st, "hcf.card.v1", {"seat": 1, "card": a})
        st = engine.apply(st, "hcf.card.v1", {"seat": 0, "card": t})
    st = engine.apply(st, "hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 100})
    return [(r["wager"], r["outcome"], r["paid"]) for r in engine.outcome(st)["settlements"] if r["seat"] == 1]


def test_high_card_flush_exact_tie_pushes_every_bonus_wager_003() -> None:
    rows = _hcf_tie(None)
    assert ("flush", "push", 100) in rows and ("straight_flush", "push", 100) in rows
    paid = _hcf_tie("paytable")  # the house option: the paytables alone
    assert ("flush", "win", 300) in paid

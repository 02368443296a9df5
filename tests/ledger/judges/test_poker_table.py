"""A poker table's state across hands binds every hand (issue 15 point 4;
``ledger.games.poker_table``): seats are numbered, the button and blinds move by the dead
button (TDA 31) and heads-up (TDA 33) rules, missed blinds are computed from the ledger
and posted on return (000 missed blinds), sit-outs and returns are events, and starting
stacks carry from the previous hand plus the chips bought since. Each test sends a legal
and an illegal sequence through ingest, on a SQLite file and on PostgreSQL; each batch is
a new ingest session, so the table's book is rebuilt from the store between batches and
advanced event by event within one."""

from __future__ import annotations

from typing import Any

import pytest

from ledger.importers.phh import hand_events
from ledger.producer import BatchBuilder
from tests.helpers import add_round
from tests.ledger.judges.test_house_rules import _no, _ok, _table
from tests.ledger.judges.test_rulings import Room

pytestmark = pytest.mark.usefixtures("past_dated")  # nights on fixed dates (tests/conftest.py)

CONFIG = {"rules": {"variant": "NT", "min_bet": 100}, "blinds": [50, 100]}
HOLES = ["AcKd", "7h7s", "QcJc", "2d9h", "5s5c"]
SEATS = {"ANN": 1, "BOB": 3, "CAT": 5, "DAN": 7}


def _room(ledger: Any, seats: dict[str, int] = SEATS, buy: int = 10_000) -> Room:
    room = Room(ledger)
    b = room.batch()
    _table(room, b, "PT", "poker", CONFIG, seats=9)
    for player, n in seats.items():
        b.add(room.cage, f"account:{player}", "cash.deposit.v1",
              {"amount": 100_000, "currency": "EUR", "method": "cash", "reference": f"PT-{player}"})
        b.add(room.cage, "chips:PT", "chips.buy_in.v1", {"player": player, "amount": buy})
        b.add(room.game, f"seat:{player}", "seat.join.v1", {"table": "PT", "blind_level": "50/100", "seat": n})
    _ok(room, b)
    return room


def _hand(room: Room, b: BatchBuilder, rid: str, players: list[str], stacks: list[int], blinds: list[int],
          actions: list[str], dead: list[int] | None = None, close: bool = True) -> None:
    n = len(players)
    hand: dict[str, Any] = {"variant": "NT", "antes": [0] * n, "blinds_or_straddles": blinds, "min_bet": 100,
                            "starting_stacks": stacks, "players": players,
                            "actions": [f"d dh p{k + 1} {HOLES[k]}" for k in range(n)] + actions}
    if dead:
        hand["dead_blinds"] = dead
    rules, events, _ = hand_events(hand, complete=close)
    add_round(b, room.game, rid, "PT", "poker", events, rules=rules, close=close, config=1)


def _first(room: Room) -> None:
    """Hand 1, DAN (seat 7) on the button: ANN small blind, BOB big blind; all fold to BOB,
    who wins ANN's small blind (ANN 9,950, BOB 10,050)."""
    b = room.batch()
    _hand(room, b, "round:PT-1", ["ANN", "BOB", "CAT", "DAN"], [10_000] * 4, [50, 100, 0, 0],
          ["p3 f", "p4 f", "p1 f"])
    _ok(room, b)


def test_the_button_and_blinds_move_one_seat_a_hand_TDA_31_dead_button(ledger) -> None:  # type: ignore[no-untyped-def]
    room = _room(ledger)
    _first(room)
    b = room.batch()  # the button did not move
    _hand(room, b, "round:PT-2", ["ANN", "BOB", "CAT", "DAN"], [9_950, 10_050, 10_000, 10_000], [50, 100, 0, 0],
          ["p3 f", "p4 f", "p1 f"])
    _no(room, b, "players is ['ANN', 'BOB', 'CAT', 'DAN'], but the table deals ['BOB', 'CAT', 'DAN', 'ANN']")
    b = room.batch()  # hand 2: ANN (seat 1) on the button, BOB small blind, CAT big blind
    _hand(room, b, "round:PT-2", ["BOB", "CAT", "DAN", "ANN"], [10_050, 10_000, 10_000, 9_950], [50, 100, 0, 0],
          ["p3 f", "p4 f", "p1 f"])
    b.add(room.game, "seat:CAT", "seat.leave.v1",
          {"table": "PT", "blind_level": "50/100", "hands_played": 2, "others_seated": 3})
    _ok(room, b)
    # hand 3: the big blind moves on to DAN (seat 7); the small blind is CAT's empty seat 5 (dead:
    # nobody posts it); BOB (seat 3), who had the small blind, has the button.
    b = room.batch()  # the small blind moved onto DAN and the big onto ANN, as if CAT's seat were not there
    _hand(room, b, "round:PT-3", ["DAN", "ANN", "BOB"], [10_000, 9_950, 10_000], [50, 100, 0], ["p3 f", "p1 f"])
    _no(room, b, "blinds_or_straddles is [50, 100, 0], but the table deals [100, 0, 0] (the big blind moves one"
                 " player a hand: TDA 31 dead button")
    b = room.batch()
    _hand(room, b, "round:PT-3", ["DAN", "ANN", "BOB"], [10_000, 9_950, 10_000], [100, 0, 0], ["p2 f", "p3 f"])
    _ok(room, b)


def test_heads_up_the_button_posts_the_small_blind_and_no_big_blind_twice_TDA_33(ledger) -> None:  # type: ignore[no-untyped-def]
    room = _room(ledger, {"ANN": 1, "BOB": 3, "CAT": 5})
    b = room.batch()  # CAT on the button, ANN small, BOB big; all fold to BOB
    _hand(room, b, "round:PT-1", ["ANN", "BOB", "CAT"], [10_000] * 3, [50, 100, 0], ["p3 f", "p1 f"])
    b.add(room.game, "seat:CAT", "seat.leave.v1",
          {"table": "PT", "blind_level": "50/100", "hands_played": 1, "others_seated": 2})
    _ok(room, b)
    b = room.batch()  # heads-up, BOB would post the big blind a second time in a row
    _hand(room, b, "round:PT-2", ["BOB", "ANN"], [10_050, 9_950], [50, 100], ["p2 f"])
    _no(room, b, "players is ['BOB', 'ANN'], but the table deals ['ANN', 'BOB']")
    b = room.batch()  # ANN has the big blind; BOB is the button and posts the small blind (PHH order: BB, button)
    _hand(room, b, "round:PT-2", ["ANN", "BOB"], [9_950, 10_050], [50, 100], ["p2 f"])
    _hand(room, b, "round:PT-3", ["BOB", "ANN"], [10_000, 10_000], [50, 100], ["p2 f"])  # and back
    _ok(room, b)


def test_missed_blinds_are_computed_and_posted_on_return_000_missed_blind_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    room = _room(ledger)
    _first(room)
    b = room.batch()  # CAT sits out and is not dealt in
    b.add(room.game, "seat:CAT", "seat.sit_out.v1", {"table": "PT"})
    _hand(room, b, "round:PT-2", ["BOB", "CAT", "DAN", "ANN"], [10_050, 10_000, 10_000, 9_950], [50, 100, 0, 0],
          ["p3 f", "p4 f", "p1 f"])
    _no(room, b, "CAT is sitting out (seat.sit_out): not dealt in until seat.return")
    # hand 2: the big blind passes CAT's seat 5 to DAN (seat 7): CAT misses it
    b = room.batch()
    b.add(room.game, "seat:CAT", "seat.sit_out.v1", {"table": "PT"})
    _hand(room, b, "round:PT-2", ["BOB", "DAN", "ANN"], [10_050, 10_000, 9_950], [50, 100, 0], ["p3 f", "p1 f"])
    b.add(room.game, "seat:CAT", "seat.return.v1", {"table": "PT"})
    _ok(room, b)  # DAN 10,050, BOB 10,000
    # hand 3: button BOB (seat 3), small blind DAN (7), big blind ANN (1); CAT (seat 5) returns
    # owing the big blind: a live big blind and a dead small blind
    b = room.batch()
    _hand(room, b, "round:PT-3", ["CAT", "DAN", "ANN", "BOB"], [10_000, 10_050, 9_950, 10_000], [0, 50, 100, 0],
          ["p4 f", "p1 f", "p2 f"])
    _no(room, b, "blinds_or_straddles is [0, 50, 100, 0], but the table deals [-100, 50, 100, 0]")
    b = room.batch()
    _hand(room, b, "round:PT-3", ["CAT", "DAN", "ANN", "BOB"], [10_000, 10_050, 9_950, 10_000], [-100, 50, 100, 0],
          ["p4 f", "p1 f", "p2 f"], dead=[50, 0, 0, 0])
    _ok(room, b)


def test_a_seated_player_not_sitting_out_is_dealt_in_TDA_29(ledger) -> None:  # type: ignore[no-untyped-def]
    room = _room(ledger)
    _first(room)
    b = room.batch()  # CAT left out of hand 2 without sitting out
    _hand(room, b, "round:PT-2", ["BOB", "DAN", "ANN"], [10_050, 10_000, 9_950], [50, 100, 0], ["p3 f", "p1 f"])
    _no(room, b, "CAT is in seat 5, not sitting out, with chips: dealt in")


def test_starting_stacks_carry_from_the_last_hand_plus_chips_bought_since_000_refund_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    room = _room(ledger)
    _first(room)
    b = room.batch()  # ANN buys 5,000 more; the hand gives her 20,000
    b.add(room.cage, "chips:PT", "chips.buy_in.v1", {"player": "ANN", "amount": 5_000})
    _hand(room, b, "round:PT-2", ["BOB", "CAT", "DAN", "ANN"], [10_050, 10_000, 10_000, 20_000], [50, 100, 0, 0],
          ["p3 f", "p4 f", "p1 f"])
    _no(room, b, "starting_stacks is [10050, 10000, 10000, 20000], but the table deals [10050, 10000, 10000, 14950]")
    b = room.batch()  # a hand in progress, rolled back by a server crash: back to its starting stacks
    b.add(room.cage, "chips:PT", "chips.buy_in.v1", {"player": "ANN", "amount": 5_000})
    _hand(room, b, "round:PT-2", ["BOB", "CAT", "DAN", "ANN"], [10_050, 10_000, 10_000, 14_950], [50, 100, 0, 0],
          ["p3 cbr 300"], close=False)
    _ok(room, b)
    b = room.batch()  # no new hand while one is in progress at the table
    _hand(room, b, "round:PT-3", ["BOB", "CAT", "DAN", "ANN"], [10_050, 10_000, 10_000, 14_950], [50, 100, 0, 0],
          ["p3 f", "p4 f", "p1 f"])
    _no(room, b, "the table's hand round:PT-2 is not closed")
    b = room.batch()  # nor are the chips in it cashed out
    b.add(room.cage, "chips:PT", "chips.cash_out.v1", {"player": "DAN", "amount": 10_000})
    _no(room, b, "DAN holds 0 in chips at the table, besides those in the hand in progress (round:PT-2)")
    b = room.batch()  # nor does a player in it leave the table
    b.add(room.game, "seat:DAN", "seat.leave.v1",
          {"table": "PT", "blind_level": "50/100", "hands_played": 2, "others_seated": 3})
    _no(room, b, "DAN is in the hand in progress (round:PT-2): they leave once it is over")
    b = room.batch()
    b.add(room.floor, "incident:crash-1", "incident.server_crash.v1",
          {"started": "2026-11-20T21:00:00Z", "reason": "game server crashed"})
    room.ruling(b, "round:PT-2", "rollback", "000 refund policy", ["incident:crash-1#1"])
    room.void(b, "round:PT-2")
    # the void hand is dealt again: same button, same starting stacks (DAN's 300 came back)
    _hand(room, b, "round:PT-3", ["BOB", "CAT", "DAN", "ANN"], [10_050, 10_000, 10_000, 14_950], [50, 100, 0, 0],
          ["p3 f", "p4 f", "p1 f"])
    b.add(room.cage, "chips:PT", "chips.cash_out.v1", {"player": "ANN", "amount": 14_950})
    _ok(room, b)
    b = room.batch()
    b.add(room.cage, "chips:PT", "chips.cash_out.v1", {"player": "BOB", "amount": 10_001})
    _no(room, b, "BOB holds 10000 in chips at the table: 10001 cannot be cashed out")


def test_a_seat_at_a_configured_poker_table_is_numbered_and_held_by_one_player(ledger) -> None:  # type: ignore[no-untyped-def]
    room = _room(ledger, {"ANN": 1})
    b = room.batch()
    b.add(room.game, "seat:BOB", "seat.join.v1", {"table": "PT", "blind_level": "50/100"})
    _no(room, b, "seat.join names its seat")
    b = room.batch()
    b.add(room.game, "seat:BOB", "seat.join.v1", {"table": "PT", "blind_level": "50/100", "seat": 1})
    _no(room, b, "seat 1 is taken by ANN")
    b = room.batch()
    b.add(room.game, "seat:BOB", "seat.join.v1", {"table": "PT", "blind_level": "50/100", "seat": 10})
    _no(room, b, "the table has seats 1-9, not 10")
    b = room.batch()
    b.add(room.game, "seat:BOB", "seat.join.v1", {"table": "PT", "blind_level": "50/100", "seat": 2})
    _ok(room, b)


def test_a_new_player_posts_a_big_blind_or_waits_for_it_000_initial_fee(ledger) -> None:  # type: ignore[no-untyped-def]
    room = _room(ledger)
    _first(room)
    b = room.batch()  # EVE sits in seat 9, between DAN (7) and ANN (1), and is dealt in without posting
    b.add(room.cage, "chips:PT", "chips.buy_in.v1", {"player": "EVE", "amount": 10_000})
    b.add(room.game, "seat:EVE", "seat.join.v1", {"table": "PT", "blind_level": "50/100", "seat": 9})
    _hand(room, b, "round:PT-2", ["BOB", "CAT", "DAN", "EVE", "ANN"], [10_050, 10_000, 10_000, 10_000, 9_950],
          [50, 100, 0, 0, 0], ["p3 f", "p4 f", "p5 f", "p1 f"])
    _no(room, b, "blinds_or_straddles is [50, 100, 0, 0, 0], but the table deals [50, 100, 0, -100, 0]")
    b = room.batch()  # she posts a live big blind; or (hand 3) waits: both are legal
    b.add(room.cage, "chips:PT", "chips.buy_in.v1", {"player": "EVE", "amount": 10_000})
    b.add(room.game, "seat:EVE", "seat.join.v1", {"table": "PT", "blind_level": "50/100", "seat": 9})
    _hand(room, b, "round:PT-2", ["BOB", "CAT", "DAN", "EVE", "ANN"], [10_050, 10_000, 10_000, 10_000, 9_950],
          [50, 100, 0, -100, 0], ["p3 f", "p4 f", "p5 f", "p1 f"])
    _ok(room, b)


def test_an_imported_hand_is_not_dealt_at_a_table_the_house_deals(ledger) -> None:  # type: ignore[no-untyped-def]
    """An importer's key signs other rooms' histories, which are bound to none of this
    room's tables: it may not put a hand, free of the table's state, at a house table."""
    from ledger.sim.sample import producer_signer

    room = _room(ledger)
    importer = producer_signer(ledger.store, ledger.keys, "importer:pt", "importer", ["table:*"])
    b = room.batch()
    hand = {"variant": "NT", "antes": [0] * 2, "blinds_or_straddles": [50, 100], "min_bet": 100,
            "starting_stacks": [90_000, 10], "players": ["ANN", "BOB"], "actions": ["d dh p1 AcKd", "d dh p2 7h7s"]}
    rules, events, _ = hand_events(hand, complete=False)
    add_round(b, importer, "round:PT-X", "PT", "poker", events, rules=rules, close=False, config=1)
    _no(room, b, "an imported hand history goes to a table its importer opened")
    b = room.batch()
    b.add(importer, "table:IMP", "table.open.v1", {"game": "poker", "seats": 9, "currency": "CHIP"})
    add_round(b, importer, "round:IMP-1", "IMP", "poker", events, rules=rules, close=False)
    _ok(room, b)


def test_a_session_judges_against_what_another_writer_stored_meanwhile(ledger) -> None:  # type: ignore[no-untyped-def]
    """Two ingest sessions on one ledger: the table's book one of them built is not used
    after the other stored a hand there; the hand dealt twice is refused."""
    from ledger.ingest import IngestSession
    from tests.helpers import RECEIPTS

    room = _room(ledger)
    first = IngestSession(ledger.store, receipts=RECEIPTS.get(id(ledger.store)))
    other = IngestSession(ledger.store, receipts=RECEIPTS.get(id(ledger.store)))
    b = room.batch()
    b.add(room.cage, "chips:PT", "chips.buy_in.v1", {"player": "ANN", "amount": 1})  # ``other`` reads the book
    assert other.send(b.lines()).status == "stored"
    b = room.batch()
    _hand(room, b, "round:PT-1", ["ANN", "BOB", "CAT", "DAN"], [10_001, 10_000, 10_000, 10_000], [50, 100, 0, 0],
          ["p3 f", "p4 f", "p1 f"])
    assert first.send(b.lines()).status == "stored"
    b = room.batch()  # the same first hand again, through the session that had not seen it
    _hand(room, b, "round:PT-1b", ["ANN", "BOB", "CAT", "DAN"], [10_001, 10_000, 10_000, 10_000], [50, 100, 0, 0],
          ["p3 f", "p4 f", "p1 f"])
    report = other.send(b.lines())
    assert report.status == "rejected" and "but the table deals ['BOB', 'CAT', 'DAN', 'ANN']" in report.rejections[0].reason

"""Rulings and incidents (issue #6; rules in ledger/rulings.py), on realistic event
sequences, on SQLite and PostgreSQL: each ruling signed by the floor, citing its rule and
the events it acts on, its effect a further event (the round's void close), never an
edit; refusals leave the store as it was."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.games.poker import substantial_action
from ledger.house import create_key
from ledger.importers.phh import hand_events
from ledger.producer import BatchBuilder
from tests.helpers import EVERY_TABLE, add_round, checkpointed, refused, stored

pytestmark = pytest.mark.usefixtures("past_dated")  # nights on fixed dates (tests/conftest.py)

DAY = "2026-11-20"
AT = f"{DAY}T21:00:00Z"
SINCE = "2026-11-01T00:00:00Z"
PLAYERS = ["ANN", "BOB", "CAT", "DAN"]


class Room:
    def __init__(self, ledger: Any) -> None:
        self.ledger = ledger
        self.floor = create_key(ledger.store, ledger.keys, "floor:ruling", "floor", valid_from=SINCE)
        self.dealer = create_key(ledger.store, ledger.keys, "dealer:ruling", "dealer", valid_from=SINCE, scope=EVERY_TABLE)
        self.game = create_key(ledger.store, ledger.keys, "game:ruling", "game", valid_from=SINCE, scope=EVERY_TABLE)
        self.cage = create_key(ledger.store, ledger.keys, "cage:ruling", "cage", valid_from=SINCE)

    def batch(self, at: str = AT) -> BatchBuilder:
        return BatchBuilder.for_store(self.ledger.store, clock=lambda: at)

    def store(self, b: BatchBuilder) -> None:
        stored(self.ledger.store, b)

    def refused(self, b: BatchBuilder) -> str:
        return refused(self.ledger.store, b)

    def poker_table(self, b: BatchBuilder, table: str = "PK", seats: int = 9, config: dict | None = None,  # type: ignore[type-arg]
                    players: list[str] = PLAYERS, buy: int = 1_000_000) -> None:
        """The table, each player in a numbered seat (1, 2, ...), and each player's chips
        there, ``buy`` issued by the cage (projections.table_chips; at a configured table
        the first hand's starting stacks, ``ledger.games.poker_table``)."""
        opening: dict[str, Any] = {"game": "poker", "seats": seats, "currency": "EUR"}
        if config is not None:
            opening["config"] = config
        b.add(self.floor if config else self.game, f"table:{table}", "table.open.v1", opening)
        for n, player in enumerate(players, start=1):
            b.add(self.cage, f"account:{player}", "cash.deposit.v1",
                  {"amount": 1_000_000, "currency": "EUR", "method": "cash", "reference": f"{table}-{player}"})
            b.add(self.cage, f"chips:{table}", "chips.buy_in.v1", {"player": player, "amount": buy})
            b.add(self.game, f"seat:{player}", "seat.join.v1", {"table": table, "blind_level": "50/100", "seat": n})

    def hand(self, b: BatchBuilder, rid: str, actions: list[str], table: str = "PK", close: bool = False,
             stacks: int = 10_000) -> dict[str, Any]:
        """A four-handed no-limit hold'em hand (blinds 50/100) as far as ``actions`` go."""
        hand = {"variant": "NT", "antes": [0] * 4, "blinds_or_straddles": [50, 100, 0, 0], "min_bet": 100,
                "starting_stacks": [stacks] * 4, "players": PLAYERS,
                "actions": ["d dh p1 AcKd", "d dh p2 7h7s", "d dh p3 QcJc", "d dh p4 2d9h"] + actions}
        rules, events, _ = hand_events(hand, complete=close)
        add_round(b, self.game, rid, table, "poker", events, rules=rules, close=close)
        return rules

    def ruling(self, b: BatchBuilder, rid: str, effect: str, rule: str, acts_on: list[str], signer: Any = None,
               **extra: Any) -> None:
        b.add(signer or self.floor, rid, "ruling.v1", {"effect": effect, "rule": rule, "acts_on": acts_on,
                                                       "reason": f"{effect} by the floor", **extra})

    def void(self, b: BatchBuilder, rid: str) -> None:
        b.add(self.game, rid, "round.close.v1", {"status": "void"})


def reconcile(ledger: Any) -> tuple[int, dict[str, Any]]:
    res = CliRunner().invoke(main, checkpointed(ledger.cli_args()) + ["reconcile", "--day", DAY, "--json", "--accept-unchecked"])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def nets(ledger: Any) -> dict[str, int]:
    res = CliRunner().invoke(main, ledger.cli_args() + ["balances", "--json"])
    return {a["player"]: a["game_net"] for a in json.loads(res.stdout)["accounts"]}


# --- void: "a system malfunction voids all pays and plays" ---------------------------

def _baccarat_in_progress(room: Room, b: BatchBuilder) -> None:
    b.add(room.floor, "table:B", "table.open.v1", {"game": "baccarat", "seats": 7, "currency": "EUR"})
    events = coup_events([("ANN", "banker", 1_000), ("BOB", "player", 2_000)], iter(deck() * 8))
    settle_at = next(i for i, (k, _) in enumerate(events) if k == "baccarat.settle.v1")
    add_round(b, room.dealer, "round:B-1", "B", "baccarat", events[:settle_at], close=False)


def test_void_round_000_II_2_1_8_nets_to_zero_and_reconciles(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _baccarat_in_progress(room, b)
    room.ruling(b, "round:B-1", "void", "000 II 2.1.8", ["round:B-1#2"])  # the malfunction at the first bet
    b.add(room.dealer, "round:B-1", "round.close.v1", {"status": "void"})
    room.store(b)
    assert nets(ledger) == {}  # nobody's money moved: no game result for either player
    code, report = reconcile(ledger)
    assert code == 0, report["discrepancies"]
    assert report["rulings"] == [{"round": "round:B-1", "seq": 10, "rule": "000 II 2.1.8", "effect": "void",
                                  "acts_on": ["round:B-1#2"]}]


def test_a_round_closes_void_only_after_a_ruling(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _baccarat_in_progress(room, b)
    room.store(b)
    b = room.batch()
    b.add(room.dealer, "round:B-1", "round.close.v1", {"status": "void"})
    assert "only after a floor ruling" in room.refused(b)


def test_nothing_of_the_game_follows_a_ruling(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _baccarat_in_progress(room, b)
    room.ruling(b, "round:B-1", "void", "000 II 2.1.8", ["round:B-1#2"])
    room.store(b)
    b = room.batch()
    b.add(room.dealer, "round:B-1", "baccarat.settle.v1", {"bet": 1, "outcome": "win", "paid": 2_000,
                                                            "commission": 50})
    assert "ruled void" in room.refused(b)


@pytest.mark.parametrize("case, rule, acts_on, why", [
    ("signed by a dealer key", "000 II 2.1.8", "round:B-1#2", "ruling.v1"),  # only floor keys sign rulings
    ("citing an event that does not exist", "000 II 2.1.8", "round:B-1#99", "round:B-1#99, which is not in the ledger"),
    ("citing no seed rule", "because I said so", "round:B-1#2", "rule"),
])
def test_a_bad_ruling_is_refused_with_its_reason(ledger, case: str, rule: str, acts_on: str, why: str) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    _baccarat_in_progress(room, b)
    room.store(b)
    b = room.batch()
    room.ruling(b, "round:B-1", "void", rule, [acts_on], signer=room.dealer if "dealer" in case else None)
    assert why in room.refused(b)


# --- misdeal and substantial action: TDA 2013 rules 34 and 35 -----------------------

@pytest.mark.parametrize("history, substantial", [
    ([], False),
    ([(2, "fold", None)], False),
    ([(2, "fold", None), (3, "fold", None)], False),  # two folds: no chips in
    ([(2, "call", 100), (3, "fold", None)], False),  # one player's chips
    ([(2, "call", 100), (3, "call", 100)], True),  # A) two actions putting chips in
    ([(2, "raise", 300), (3, "call", 300)], True),
    ([(2, "fold", None), (3, "fold", None), (0, "check", None)], True),  # B) any three actions
])
def test_substantial_action_TDA_35(history: list[Any], substantial: bool) -> None:
    assert substantial_action(history) is substantial


def test_misdeal_before_substantial_action_is_redealt_exactly_TDA_34(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    rules = room.hand(b, "round:H-1", ["p3 f"])  # one fold, then the misdeal is found
    room.ruling(b, "round:H-1", "misdeal", "002 TDA 34 A", ["round:H-1#4"], redeal="H-1r")
    room.void(b, "round:H-1")
    room.hand(b, "round:H-1r", ["p3 f", "p4 f", "p1 f"], close=True)
    room.store(b)
    code, report = reconcile(ledger)
    assert code == 0, report["discrepancies"]
    assert ledger.store.event_at("round:H-1r", 1).payload["rules"] == rules
    assert nets(ledger) == {"ANN": -50, "BOB": 50, "CAT": 0, "DAN": 0}  # only the re-deal counts


def test_misdeal_after_substantial_action_is_refused_TDA_34_C(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    room.hand(b, "round:H-1", ["p3 cc", "p4 cc"])  # two players put chips in: substantial action
    room.store(b)
    b = room.batch()
    room.ruling(b, "round:H-1", "misdeal", "002 TDA 34 A", ["round:H-1#1"], redeal="H-1r")
    assert "no misdeal after substantial action" in room.refused(b)


def test_a_redeal_dealt_differently_fails_reconciliation_TDA_34_B(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    room.hand(b, "round:H-1", [])
    room.ruling(b, "round:H-1", "misdeal", "002 TDA 34 A", ["round:H-1#1"], redeal="H-1r")
    room.void(b, "round:H-1")
    room.hand(b, "round:H-1r", ["p3 f", "p4 f", "p1 f"], close=True, stacks=20_000)  # the stacks went up
    room.store(b)
    code, report = reconcile(ledger)
    assert code == 1
    (d,) = report["discrepancies"]
    assert d["stream"] == "round:H-1r" and "TDA 34 B" in d["reason"]


# --- server crash: 000 refund policy ---------------------------------------------------

def _crash(room: Room, b: BatchBuilder) -> None:
    b.add(room.floor, "incident:crash-1", "incident.server_crash.v1",
          {"started": f"{DAY}T21:00:00Z", "reason": "game server crashed"})


def test_server_crash_rolls_every_hand_in_progress_back_000_refund_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b, "PK")
    room.poker_table(b, "PK2")
    room.hand(b, "round:H-done", ["p3 f", "p4 f", "p1 f"], close=True)  # finished before: stays
    room.hand(b, "round:H-1", ["p3 cbr 500", "p4 cc", "p1 cc"])  # in progress: 1,500 + blinds in the pot
    room.hand(b, "round:H-2", ["p3 cc"], table="PK2")
    _crash(room, b)
    for rid in ("round:H-1", "round:H-2"):
        room.ruling(b, rid, "rollback", "000 refund policy", ["incident:crash-1#1"])
        room.void(b, rid)
    room.store(b)
    assert nets(ledger) == {"ANN": -50, "BOB": 50, "CAT": 0, "DAN": 0}  # the finished hand only
    code, report = reconcile(ledger)
    assert code == 0, report["discrepancies"]
    assert {r["round"] for r in report["rulings"]} == {"round:H-1", "round:H-2"}


def test_a_hand_in_progress_left_out_of_the_rollback_fails_reconciliation(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    room.hand(b, "round:H-1", ["p3 cc"])
    room.hand(b, "round:H-2", ["p3 cc"])
    _crash(room, b)
    room.ruling(b, "round:H-1", "rollback", "000 refund policy", ["incident:crash-1#1"])
    room.void(b, "round:H-1")
    room.store(b)
    code, report = reconcile(ledger)
    assert code == 1
    (d,) = report["discrepancies"]
    assert d["stream"] == "round:H-2" and "not rolled back" in d["reason"]


def test_a_rollback_of_a_finished_hand_is_refused(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    room.hand(b, "round:H-1", ["p3 f", "p4 f", "p1 f"], close=True)
    _crash(room, b)
    room.store(b)
    b = room.batch()
    room.ruling(b, "round:H-1", "rollback", "000 refund policy", ["incident:crash-1#1"])
    assert "a finished hand is not rolled back" in room.refused(b)


def test_a_rollback_cites_the_server_crash(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    room.hand(b, "round:H-1", ["p3 cc"])
    room.store(b)
    b = room.batch()
    room.ruling(b, "round:H-1", "rollback", "000 refund policy", ["round:H-1#1"])
    assert "cites the incident.server_crash.v1" in room.refused(b)


# --- replay and evidence honour rulings -------------------------------------------------

def test_the_evidence_bundle_shows_the_ruling_beside_what_it_changed(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    room.hand(b, "round:H-1", ["p3 cbr 500", "p4 cc"])
    _crash(room, b)
    room.ruling(b, "round:H-1", "rollback", "000 refund policy", ["incident:crash-1#1"])
    room.void(b, "round:H-1")
    room.store(b)
    out = tmp_path / "bundle"
    res = CliRunner().invoke(main, ledger.cli_args() + ["evidence", "round:H-1", "-o", str(out)])
    assert res.exit_code == 0, res.output
    report = (out / "report.md").read_text()
    assert "**Ruling**: rollback under 000 refund policy by " in report and "acting on incident:crash-1#1" in report
    assert "What it changed: the round closed void" in report
    assert any(json.loads(line)["stream"] == "incident:crash-1" for line in (out / "events.jsonl").read_text().splitlines())
    res = CliRunner().invoke(main, ["verify-bundle", str(out), "--json"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ledger.cli_args() + ["replay", "round:H-1", "--json"])
    assert res.exit_code == 0 and "ruling.v1" in res.output


# --- rulings inside a hand: dead hand, out of turn, dealing misses ------------------------

def _three_handed_flop(room: Room, b: BatchBuilder, rid: str = "round:H-1", extra: list[str] | None = None,
                       rules_extra: dict[str, Any] | None = None) -> None:
    """Three-handed hold'em, everyone calls the big blind, the flop is dealt: p1 (small blind) acts first."""
    hand = {"variant": "NT", "antes": [0] * 3, "blinds_or_straddles": [50, 100, 0], "min_bet": 100,
            "starting_stacks": [10_000] * 3, "players": PLAYERS[:3],
            "actions": ["d dh p1 AcKd", "d dh p2 7h7s", "d dh p3 QcJc", "p3 cc", "p1 cc", "p2 cc", "d db 2c8d9s"]
            + (extra or [])}
    rules, events, _ = hand_events(hand, complete=False)
    rules.update(rules_extra or {})
    add_round(b, room.game, rid, "PK", "poker", events, rules=rules, close=False)


def _act(room: Room, b: BatchBuilder, seat: int, action: str, to: int | None = None, rid: str = "round:H-1") -> None:
    b.add(room.game, rid, "poker.action.v1", {"seat": seat, "action": action, **({"to": to} if to else {})})


def test_a_dead_hand_leaves_the_pot_its_chips_stay_TDA_57(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    _three_handed_flop(room, b)
    room.ruling(b, "round:H-1", "dead_hand", "002 TDA 57", ["round:H-1#8"], seat=3)  # p3 picked up an up card
    room.store(b)
    b = room.batch()
    _act(room, b, 1, "bet", 200)
    _act(room, b, 2, "fold")  # p3 is out: the hand is p1's
    room.store(b)
    b = room.batch()
    _act(room, b, 3, "fold")
    assert "no betting now" in room.refused(b)  # the dead seat never acts again


def test_out_of_turn_action_binds_when_the_action_has_not_changed_TDA_38(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    _three_handed_flop(room, b)
    room.ruling(b, "round:H-1", "out_of_turn", "002 TDA 38 A", ["round:H-1#8"], seat=2, action="bet", to=300)
    _act(room, b, 1, "check")  # a check does not change the action to seat 2
    room.store(b)
    b = room.batch()
    _act(room, b, 2, "check")
    assert "binds it" in room.refused(b)
    b = room.batch()
    _act(room, b, 2, "bet", 300)
    room.store(b)


def test_out_of_turn_bet_does_not_bind_once_the_action_changed_TDA_38(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    _three_handed_flop(room, b)
    room.ruling(b, "round:H-1", "out_of_turn", "002 TDA 38 A", ["round:H-1#8"], seat=2, action="bet", to=300)
    _act(room, b, 1, "bet", 200)  # the action changed: seat 2 has every option
    _act(room, b, 2, "fold")
    room.store(b)


def test_a_fold_out_of_turn_always_binds_TDA_38(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    _three_handed_flop(room, b)
    room.ruling(b, "round:H-1", "out_of_turn", "002 TDA 38 A", ["round:H-1#8"], seat=2, action="fold")
    _act(room, b, 1, "bet", 200)
    room.store(b)
    b = room.batch()
    _act(room, b, 2, "call")
    assert "the fold binds" in room.refused(b)


def test_dealing_miss_on_third_street_pays_each_player_a_big_bet_001(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b, seats=7, config=STUD_TABLE, players=PLAYERS[:3], buy=1_000)
    hand = {"variant": "F7S", "antes": [5] * 3, "bring_in": 10, "small_bet": 20, "big_bet": 40,
            "starting_stacks": [1_000] * 3, "players": PLAYERS[:3],
            "actions": ["d dh p1 ????7c", "d dh p2 ????Kd", "d dh p3 ????2h"]}
    rules, events, _ = hand_events(hand, complete=False)
    add_round(b, room.game, "round:S-1", "PK", "poker", events, rules=rules, close=False, config=1)
    room.store(b)
    b = room.batch()
    room.ruling(b, "round:S-1", "dealing_miss", "001 dealing-miss handling 1", ["round:S-1#5"], case="third_street",
                compensation={"ANN": 40, "BOB": 40, "CAT": 99})
    assert "should be {'ANN': 40, 'BOB': 40, 'CAT': 40}" in room.refused(b)
    b = room.batch()
    room.ruling(b, "round:S-1", "dealing_miss", "001 dealing-miss handling 1", ["round:S-1#5"], case="third_street",
                compensation={"ANN": 40, "BOB": 40, "CAT": 40})
    room.void(b, "round:S-1")
    room.store(b)
    res = CliRunner().invoke(main, ledger.cli_args() + ["balances", "--json"])
    assert {a["player"]: a["compensation"] for a in json.loads(res.stdout)["accounts"] if a["compensation"]} == {
        "ANN": 40, "BOB": 40, "CAT": 40}  # the antes come back with the void; the house pays the big bet


def test_dealing_miss_compensation_on_seventh_street_and_exposed_cards_001() -> None:
    from types import SimpleNamespace

    from ledger.games.poker import dealing_miss_compensation

    st = SimpleNamespace(rules=SimpleNamespace(big_bet=40, min_bet=None, players=["A", "B", "C", "D"]), blinds=[0] * 4,
                         paid=[300, 300, 60, 500], in_hand=[True, True, False, False], n=4)
    # 7th street: no game; A and B (still in) get the pot they would have won (1,160), C and D 20% (232) capped at
    # four big bets (160)
    assert dealing_miss_compensation("seventh_street", st, None) == {"A": 1_160, "B": 1_160, "C": 160, "D": 160}
    assert dealing_miss_compensation("exposed_card", st, 2) == {"B": 580}  # half the pot to the player seen


def test_an_exposed_card_ruling_pays_half_the_pot_and_play_goes_on_001(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    _three_handed_flop(room, b)
    room.ruling(b, "round:H-1", "dealing_miss", "001 dealing-miss handling 3", ["round:H-1#8"], case="exposed_card",
                seat=2, compensation={"BOB": 150})
    _act(room, b, 1, "check")
    room.store(b)


# --- policies: the action clock and time bank, casino disconnections --------------------

def test_a_player_out_of_clock_and_time_bank_is_folded_000_time_bank_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    _three_handed_flop(room, b, extra=["p1 cbr 200"], rules_extra={"action_clock_s": 30, "time_banks": [0, 60, 0]})
    room.store(b)
    b = room.batch()
    b.add(room.game, "round:H-1", "poker.timeout.v1", {"seat": 2, "waited_s": 80})
    assert "only after the clock 30 s and its time bank 60 s" in room.refused(b)
    b = room.batch()
    b.add(room.game, "round:H-1", "poker.timeout.v1", {"seat": 2, "waited_s": 95})  # facing a bet: folded
    _act(room, b, 3, "call")
    room.store(b)
    assert _in_hand(ledger) == [True, False, True]


def test_a_timeout_with_nothing_to_call_folds_the_hand_000_time_limit(ledger) -> None:  # type: ignore[no-untyped-def]
    """000 play time limit: "そのハンドが自動的にフォールドされ" — folded even when a check
    was free (issue 15 point 7)."""
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b)
    _three_handed_flop(room, b, rules_extra={"action_clock_s": 30})
    b.add(room.game, "round:H-1", "poker.timeout.v1", {"seat": 1, "waited_s": 31})  # folded for them
    _act(room, b, 2, "check")
    room.store(b)
    assert _in_hand(ledger) == [False, True, True]


def _in_hand(ledger) -> list[bool]:  # type: ignore[no-untyped-def]
    from ledger.judges.round import walk

    rs, refused = walk(ledger.store.stream_events("round:H-1"), ledger.store.event_at)
    assert rs is not None and not refused
    return list(rs.st.in_hand)


def _online_coup(room: Room, b: BatchBuilder) -> list[Any]:
    b.add(room.game, "table:OB", "table.open.v1", {"game": "baccarat", "seats": 7, "currency": "EUR"})
    events = coup_events([("ANN", "banker", 1_000)], iter(deck() * 8))
    add_round(b, room.game, "round:OB-1", "OB", "baccarat", events[:2], close=False)  # the bet, no more bets
    b.add(room.game, "round:OB-1", "round.disconnect.v1", {"player": "ANN"})
    return events


def test_disconnected_bets_are_held_24h_then_cancelled_and_returned_000_casino(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch(f"{DAY}T10:00:00Z")
    events = _online_coup(room, b)
    room.store(b)
    b = room.batch(f"{DAY}T22:00:00Z")  # 12 h later the round could still resume...
    b.add(room.game, "round:OB-1", "round.close.v1", {"status": "void"})
    assert "24 h after a disconnection" in room.refused(b)  # ...so it is not cancelled yet
    b = room.batch("2026-11-21T10:00:01Z")
    kind, payload = events[2]
    b.add(room.game, "round:OB-1", kind, payload)
    assert "expired after 24 h" in room.refused(b)
    b = room.batch("2026-11-21T10:00:01Z")
    b.add(room.game, "round:OB-1", "round.close.v1", {"status": "void"})
    room.store(b)
    assert nets(ledger) == {}  # the bet is returned: nobody's money moved


def test_a_disconnected_round_resumed_within_24h_completes_000_casino(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch(f"{DAY}T10:00:00Z")
    events = _online_coup(room, b)
    for kind, payload in events[2:]:
        b.add(room.game, "round:OB-1", kind, payload)
    b.add(room.game, "round:OB-1", "round.close.v1", {"status": "complete"})
    room.store(b)


# --- 001 flying action (stud) --------------------------------------------------------------

STUD_TABLE = {"rules": {"variant": "F7S", "small_bet": 20, "big_bet": 40, "bring_in": 10, "bring_in_percent": 50},
              "ante": 5}
"""A seven-card stud table (7 seats, 001 座席数) whose floor set the bring-in at 50% of the
small bet, a house option (001's own is 40%)."""

def _stud_third_street(room: Room, b: BatchBuilder) -> None:
    """Three-handed seven-card stud: antes 5, bring-in 10, bets 20/40. CAT (2h up) brings
    in; ANN is to act, BOB after her."""
    hand = {"variant": "F7S", "antes": [5] * 3, "bring_in": 10, "small_bet": 20, "big_bet": 40,
            "starting_stacks": [1_000] * 3, "players": PLAYERS[:3],
            "actions": ["d dh p1 AsKs7c", "d dh p2 QdQh9d", "d dh p3 3c4c2h", "p3 pb"]}
    rules, events, _ = hand_events(hand, complete=False)
    add_round(b, room.game, "round:S-1", "PK", "poker", events, rules=rules, close=False, config=1)


def _flying(room: Room, b: BatchBuilder, action: str, chips: int, to: int | None = None) -> None:
    room.ruling(b, "round:S-1", "flying_action", "001 fouls 1", ["round:S-1#6"], seat=2, action=action, chips=chips,
                **({"to": to} if to else {}))


def _stud(ledger) -> Any:  # type: ignore[no-untyped-def]
    from ledger.judges.round import walk

    rs, refused = walk(ledger.store.stream_events("round:S-1"), ledger.store.event_at)  # its table's configuration
    assert rs is not None and not refused
    return rs.st


def test_a_flying_call_still_valid_stands_as_made_001_alpha(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b, seats=7, config=STUD_TABLE, players=PLAYERS[:3], buy=1_000)
    _stud_third_street(room, b)
    _flying(room, b, "call", 10)  # BOB calls the bring-in before ANN has acted
    _act(room, b, 1, "call", rid="round:S-1")  # ANN calls: the action to BOB has not changed
    room.store(b)
    b = room.batch()
    _act(room, b, 2, "fold", rid="round:S-1")
    assert "stands as made" in room.refused(b)
    b = room.batch()
    _act(room, b, 2, "call", rid="round:S-1")
    room.store(b)


def test_a_flying_call_no_longer_valid_folded_leaves_its_chips_in_the_pot_001_beta(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b, seats=7, config=STUD_TABLE, players=PLAYERS[:3], buy=1_000)
    _stud_third_street(room, b)
    _flying(room, b, "call", 10)
    _act(room, b, 1, "complete", 20, rid="round:S-1")  # ANN completes: the flying call is no longer valid
    _act(room, b, 2, "fold", rid="round:S-1")
    room.store(b)
    assert _stud(ledger).paid[1] == 5 + 10  # the ante and the chips of the flying call


def test_a_flying_check_pays_the_big_bet_then_only_calls_or_folds_001_beta(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b, seats=7, config=STUD_TABLE, players=PLAYERS[:3], buy=1_000)
    _stud_third_street(room, b)
    _flying(room, b, "check", 0)  # there is a bring-in to call: a check is not valid at BOB's turn
    _act(room, b, 1, "call", rid="round:S-1")
    room.store(b)
    b = room.batch()
    _act(room, b, 2, "complete", 20, rid="round:S-1")
    assert "may only call or fold" in room.refused(b)
    b = room.batch()
    _act(room, b, 2, "call", rid="round:S-1")
    room.store(b)
    assert _stud(ledger).paid[1] == 5 + 40 + 10  # ante, the big-bet penalty, the call


def test_a_flying_all_in_is_void_and_folds_half_the_chips_back_001(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b, seats=7, config=STUD_TABLE, players=PLAYERS[:3], buy=1_000)
    _stud_third_street(room, b)
    _flying(room, b, "all_in", 995)
    room.store(b)
    st = _stud(ledger)
    assert not st.in_hand[1] and st.paid[1] == 5 + 498  # 497 of the 995 back


def test_a_third_flying_action_folds_the_hand_001(ledger) -> None:  # type: ignore[no-untyped-def]
    room = Room(ledger)
    b = room.batch()
    room.poker_table(b, seats=7, config=STUD_TABLE, players=PLAYERS[:3], buy=1_000)
    _stud_third_street(room, b)
    for _ in range(2):
        _flying(room, b, "call", 10)
    room.store(b)
    assert _stud(ledger).in_hand[1]
    b = room.batch()
    _flying(room, b, "call", 10)
    room.store(b)
    assert not _stud(ledger).in_hand[1]


def test_a_hand_in_progress_at_a_crash_is_judged_by_instants_not_text_000_refund_policy() -> None:
    """000 refund policy: the hands in progress when the disruption started. "…21:00:00Z"
    sorts after "…21:00:00.5Z" as text; as instants it is before it. Only games whose
    players play each other (poker) are kept by the book (``RulingBook.opened``)."""
    from projections.rulings_check import RulingBook

    book = RulingBook()
    book.opened("round:after", "poker", f"{DAY}T21:00:00.500000Z")  # began after the crash began
    book.opened("round:before", "poker", f"{DAY}T20:59:59.500000Z")
    book.opened("round:done", "poker", f"{DAY}T20:00:00Z")
    book.closed("round:done", f"{DAY}T20:59:59.999999Z")
    book.opened("round:bank", "baccarat", f"{DAY}T20:00:00Z")  # the house banks it: no refund rule here
    book.record("incident:crash-1", 1, "incident.server_crash.v1", {"started": f"{DAY}T21:00:00Z"}, f"{DAY}T21:05:00Z",
                True)
    assert set(book.rounds) == {"round:after", "round:before", "round:done"}
    assert [p["stream"] for p in book.problems(lambda stream: None)] == ["round:before"]


@pytest.mark.parametrize("starts", [None, [f"{DAY}T21:00:00Z", f"{DAY}T23:00:00Z"]], ids=["every-round", "known-crashes"])
def test_the_crash_check_keeps_only_rounds_in_progress_at_a_known_crash_000_refund_policy(starts) -> None:  # type: ignore[no-untyped-def]
    """000 refund policy, checked with the crash incidents known before the pass
    (``RulingBook.starts``: reconciliation reads them first, more than count is harmless):
    a closed round stays in the book only if it was in progress at one of them, so the
    book holds the rounds open at once, not the day's; the problems are the same as
    keeping every round. At the edges: opened at the crash's start is in progress, closed
    at it is not."""
    from projections.rulings_check import RulingBook

    book = RulingBook(starts=starts)
    book.opened("round:at-start", "poker", f"{DAY}T21:00:00Z")  # opened as the crash began: in progress
    book.opened("round:closed-at-start", "poker", f"{DAY}T20:00:00Z")
    book.closed("round:closed-at-start", f"{DAY}T21:00:00Z")  # closed as it began: not in progress
    book.opened("round:across", "poker", f"{DAY}T20:59:00Z")
    book.closed("round:across", f"{DAY}T21:01:00Z")
    book.opened("round:late", "poker", f"{DAY}T22:00:00Z")  # across the second start only: not of the day
    book.closed("round:late", f"{DAY}T23:30:00Z")
    for n in range(50):  # the day's other hands, each closed between the crashes
        book.opened(f"round:between-{n}", "poker", f"{DAY}T21:{10 + n % 40}:00Z")
        book.closed(f"round:between-{n}", f"{DAY}T21:{11 + n % 40}:00Z")
    book.opened("round:open", "poker", f"{DAY}T20:30:00Z")  # never closed
    book.record("incident:crash-1", 1, "incident.server_crash.v1", {"started": f"{DAY}T21:00:00Z"}, f"{DAY}T21:05:00Z",
                True)
    book.record("incident:crash-2", 1, "incident.server_crash.v1", {"started": f"{DAY}T23:00:00Z"}, f"{DAY}T23:05:00Z",
                False)  # received on another day: not checked here
    assert [p["stream"] for p in book.problems(lambda stream: None)] == ["round:across", "round:at-start", "round:open"]
    if starts is not None:
        assert set(book.rounds) == {"round:at-start", "round:across", "round:late", "round:open"}
    else:
        assert len(book.rounds) == 55

"""Poker money and betting rules, each named after its source (issue #3 points 1-2):
002 = TDA 2013 (002_462257511cde0912.txt), 001 = the stud house rules
(001_aa163bb85081239a.txt), 000 = the online house rules, 004 = the home manual."""

from __future__ import annotations

from typing import Any

import pytest

from ledger.games import RuleViolation
from ledger.games.poker import PokerEngine, final_stacks, tda_raise_to
from ledger.games.poker_hands import CARD_ID
from ledger.importers.phh import PhhError, hand_events

ENGINE = PokerEngine()


def play(actions: list[str], **rules: Any) -> Any:
    hand = {"variant": "NT", "antes": [0, 0, 0], "blinds_or_straddles": [50, 100, 0], "min_bet": 100,
            "starting_stacks": [10_000, 10_000, 10_000], "actions": actions}
    hand.update(rules)
    _, events, st = hand_events(hand, complete=False)
    return st, events


DEAL3 = ["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd"]


def test_heads_up_the_button_posts_the_small_blind_and_acts_first_preflop_TDA_33() -> None:
    st, events = play(["d dh p1 AcAd", "d dh p2 KcKd", "p2 cc", "p1 cc", "d db 2h7s9d", "p1 cc", "p2 cc",
                       "d db Jh", "p1 cc", "p2 cc", "d db 3s", "p1 cc", "p2 cc", "p1 sm AcAd", "p2 sm KcKd"],
                      antes=[0, 0], blinds_or_straddles=[50, 100], starting_stacks=[1000, 1000])
    posts = [(p["seat"], p["amount"]) for k, p in events if k == "poker.post.v1"]
    assert posts == [(1, 100), (2, 50)]  # seat 2 (the button) posts the small blind
    assert final_stacks(st) == [1100, 900]
    with pytest.raises(PhhError, match="seat 1 acted out of turn: seat 2 is to act"):
        play(["d dh p1 AcAd", "d dh p2 KcKd", "p1 cc"], antes=[0, 0], blinds_or_straddles=[50, 100],
             starting_stacks=[1000, 1000])


def test_straddle_acts_last_preflop_and_first_to_act_is_after_it() -> None:
    with pytest.raises(PhhError, match="seat 4 is to act"):
        play(["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd", "d dh p4 JcJd", "p1 f"],
             antes=[0] * 4, blinds_or_straddles=[50, 100, 200, 0], starting_stacks=[10_000] * 4)


def test_missed_blinds_dead_small_blind_and_live_big_blind_on_return_000() -> None:
    # seat 3 returns: posts a dead 50 (into the pot) and a live 100 (a negative entry: live, not the blind seat)
    st, events = play(DEAL3 + ["p3 cc", "p1 cc", "p2 cc", "d db 2h7s9d"], blinds_or_straddles=[50, 100, -100],
                      dead_blinds=[0, 0, 50])
    posts = [(p["seat"], p["type"], p["amount"]) for k, p in events if k == "poker.post.v1"]
    assert posts == [(3, "dead_blind", 50), (1, "blind", 50), (2, "blind", 100), (3, "blind", 100)]
    assert st.opener == 0 and sum(st.paid) == 350  # three live 100s and the dead 50


def test_minimum_raise_and_the_50_percent_rule_TDA_41A() -> None:
    with pytest.raises(PhhError, match="limits here are 200 to 10000"):
        play(DEAL3 + ["p3 cbr 150"])
    # facing 400 after a raise of 300: a raise to 560 (half a full raise or more) becomes 700; to 500 is a call
    assert tda_raise_to(400, 300, 100, 560) == ("raise", 700)
    assert tda_raise_to(400, 300, 100, 500) == ("call", 400)
    assert tda_raise_to(400, 300, 100, 900) == ("raise", 900)


def test_all_in_short_of_a_full_raise_does_not_reopen_TDA_41B() -> None:
    stacks = [10_000, 10_000, 450]
    st, _ = play(["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd", "p3 cc", "p1 cc", "p2 cc", "d db 2h7s9d",
                  "p1 cbr 300", "p2 cc", "p3 cbr 350"], starting_stacks=stacks)  # seat 3 all in: +50, short
    with pytest.raises(RuleViolation, match="does not reopen"):
        ENGINE.apply(st, "poker.action.v1", {"seat": 1, "action": "raise", "to": 1000})
    ENGINE.apply(st, "poker.action.v1", {"seat": 1, "action": "call"})


def test_limit_reopens_at_half_a_full_raise_as_house_option_TDA_41B() -> None:
    base = {"variant": "FT", "small_bet": 100, "big_bet": 200, "starting_stacks": [10_000, 10_000, 260]}
    del_min = {"min_bet": None}
    acts = ["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd", "p3 cc", "p1 cc", "p2 cc", "d db 2h7s9d",
            "p1 cbr 100", "p2 cc", "p3 cbr 160"]  # seat 3 all in: +60 of a 100 raise
    hand = {**base, **del_min}
    st, _ = play(acts, **{k: v for k, v in hand.items() if v is not None})
    with pytest.raises(RuleViolation, match="does not reopen"):
        ENGINE.apply(st, "poker.action.v1", {"seat": 1, "action": "raise", "to": 260})
    st, _ = play(acts, **{k: v for k, v in hand.items() if v is not None}, limit_reopen_at_half=True)
    ENGINE.apply(st, "poker.action.v1", {"seat": 1, "action": "raise", "to": 260})


def _showdown_split(odd_chip: str) -> list[int]:
    """Seats 2 and 3 both play the board's straight and split an odd pot of 775; seat 4 is
    the button (the dealer)."""
    acts = ["d dh p1 4h5d", "d dh p2 2c3d", "d dh p3 2d3c", "d dh p4 6h7d", "p3 cc", "p4 cc", "p1 cc", "p2 cc",
            "d db AhKhQd", "p1 cc", "p2 cbr 125", "p3 cc", "p4 cc", "p1 f", "d db Js", "p2 cc", "p3 cc", "p4 f",
            "d db Tc", "p2 cc", "p3 cc", "p2 sm 2c3d", "p3 sm 2d3c"]
    st, _ = play(acts, antes=[0] * 4, blinds_or_straddles=[50, 100, 0, 0], starting_stacks=[10_000] * 4,
                 odd_chip=odd_chip)
    return final_stacks(st)


def test_odd_chip_rules_TDA_19_and_004() -> None:
    lose1, lose4 = 10_000 - 100, 10_000 - 225
    # pot 4 x 100 + 3 x 125 = 775: 388 and 387
    assert _showdown_split("left_of_button") == [lose1, 10_000 - 225 + 388, 10_000 - 225 + 387, lose4]
    assert _showdown_split("farthest_from_dealer") == [lose1, 10_000 - 225 + 387, 10_000 - 225 + 388, lose4]
    # high card by suit: seat 2's 3d beats seat 3's 3c (001 suit order: clubs lowest)
    assert _showdown_split("high_card_by_suit") == [lose1, 10_000 - 225 + 388, 10_000 - 225 + 387, lose4]


def test_side_pots_and_split_pot_004_all_in() -> None:
    st, events = play(["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd", "p3 cbr 10000", "p1 cc", "p2 cc",
                       "p1 sm AcAd", "p2 sm KcKd", "p3 sm QcQd", "d db 2h7s9d", "d db Jh", "d db 3s"],
                      starting_stacks=[1000, 5000, 10_000])
    awards = [p for k, p in events if k == "poker.award.v1"]
    assert [(a["amount"], [w["seat"] for w in a["winners"]]) for a in awards] == [(3000, [1]), (8000, [2])]
    assert final_stacks(st) == [3000, 8000, 5000]


def test_rake_2_percent_none_under_500_capped_at_500_001() -> None:
    rake = {"percent_bp": 200, "threshold": 500, "cap": 500, "from_street": 1}
    flop = ["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd", "p3 cc", "p1 cc", "p2 cc", "d db 2h7s9d",
            "p1 cbr {bet}", "p2 f", "p3 f"]
    _, events = play([a.format(bet=100) for a in flop], rake=rake)
    assert [p["rake"] for k, p in events if k == "poker.award.v1"] == [0]  # pot 300 < 500
    _, events = play([a.format(bet=100) for a in flop], blinds_or_straddles=[100, 200, 0], rake=rake)
    assert [p["rake"] for k, p in events if k == "poker.award.v1"] == [12]  # 2% of 600
    big = ["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd", "p3 cbr 20000", "p1 cc", "p2 f", "d db 2h7s9d", "p1 cc",
           "p3 cc", "d db Jh", "p1 cc", "p3 cc", "d db 3s", "p1 cc", "p3 cc", "p1 sm AcAd", "p3 sm QcQd"]
    _, events = play(big, rake=rake, starting_stacks=[30_000] * 3)
    assert [p["rake"] for k, p in events if k == "poker.award.v1"] == [500]  # 2% of 40,100 is 802: capped


def test_no_flop_no_drop() -> None:
    rake = {"percent_bp": 500, "from_street": 1}
    _, events = play(DEAL3 + ["p3 cbr 3000", "p1 f", "p2 f"], rake=rake)
    assert [p["rake"] for k, p in events if k == "poker.award.v1"] == [0]


# --- seven-card stud (001) -----------------------------------------------------------

STUD = {"variant": "F7S", "antes": [10, 10, 10], "bring_in": 40, "small_bet": 100, "big_bet": 200,
        "starting_stacks": [10_000, 10_000, 10_000]}


def stud(actions: list[str], **rules: Any) -> Any:
    hand = {**STUD, **rules, "actions": actions}
    hand.pop("min_bet", None)
    _, events, st = hand_events(hand, complete=False)
    return st, events


def test_lowest_up_card_brings_in_suits_clubs_lowest_001() -> None:
    deal = ["d dh p1 AsKs2d", "d dh p2 AhKh2c", "d dh p3 AdKdQc"]
    with pytest.raises(PhhError, match="seat 2 is to act"):
        stud(deal + ["p1 pb"])  # 2c is lower than 2d: clubs < diamonds (001 スート)
    st, _ = stud(deal + ["p2 pb"])
    assert st.bets[1] == 40


def test_razz_highest_up_card_brings_in() -> None:
    with pytest.raises(PhhError, match="seat 3 is to act"):
        stud(["d dh p1 As2s3d", "d dh p2 Ah2h4c", "d dh p3 Ad2dKc", "p1 pb"], variant="FR")


def test_highest_board_acts_first_from_4th_street_001() -> None:
    acts = ["d dh p1 AsKs2d", "d dh p2 AhKh9c", "d dh p3 AdKdQc", "p1 pb", "p2 cc", "p3 cc",
            "d dh p1 3d", "d dh p2 9h", "d dh p3 Jc"]
    st, _ = stud(acts)
    assert st.actor == 1  # seat 2 shows a pair of nines


def test_bring_in_or_complete_then_cap_at_4_bets_001() -> None:
    acts = ["d dh p1 AsKs2d", "d dh p2 AhKh9c", "d dh p3 AdKdQc", "p1 pb", "p2 cbr 100", "p3 cbr 200",
            "p1 cbr 300", "p2 cbr 400"]  # complete + 3 raises: 4 small bets
    st, _ = stud(acts)
    with pytest.raises(RuleViolation, match="capped"):
        ENGINE.apply(st, "poker.action.v1", {"seat": 3, "action": "raise", "to": 500})
    with pytest.raises(PhhError, match="posts the bring-in or completes"):
        stud(["d dh p1 AsKs2d", "d dh p2 AhKh9c", "d dh p3 AdKdQc", "p1 f"])


def test_big_bet_on_4th_street_with_an_open_pair_001() -> None:
    acts = ["d dh p1 AsKs2d", "d dh p2 AhKh9c", "d dh p3 AdKdQc", "p1 pb", "p2 cc", "p3 cc",
            "d dh p1 3d", "d dh p2 9h", "d dh p3 Jc"]
    st, _ = stud(acts)
    with pytest.raises(RuleViolation, match="limits here are 100 to 100"):
        ENGINE.apply(st, "poker.action.v1", {"seat": 2, "action": "bet", "to": 200})
    st, _ = stud(acts, open_pair_big_bet=True)
    st = ENGINE.apply(st, "poker.action.v1", {"seat": 2, "action": "bet", "to": 200})
    with pytest.raises(RuleViolation, match="limits here are 400 to 400"):
        ENGINE.apply(st, "poker.action.v1", {"seat": 3, "action": "raise", "to": 300})  # big units from now on
    ENGINE.apply(st, "poker.action.v1", {"seat": 3, "action": "raise", "to": 400})


# --- five-card draw (004) ------------------------------------------------------------

def test_five_card_draw_one_draw_high_hand_004() -> None:
    hand = {"variant": "N5D", "antes": [0, 0, 0], "blinds_or_straddles": [50, 100, 0], "min_bet": 100,
            "starting_stacks": [1000, 1000, 1000],
            "actions": ["d dh p1 AcAd2c3d4h", "d dh p2 KcKdKh5s6s", "d dh p3 QcQdJhJs9s", "p3 cc", "p1 cc",
                        "p2 cc", "p1 sd 2c3d4h", "p2 sd 5s6s", "p3 sd 9s", "d dh p1 AhAs7c", "d dh p2 8c9c",
                        "d dh p3 2s", "p1 cc", "p2 cc", "p3 cc", "p1 sm AcAdAhAs7c", "p2 sm KcKdKh8c9c",
                        "p3 sm QcQdJhJs2s"]}
    _, _, st = hand_events(hand)
    assert final_stacks(st) == [1200, 900, 900]
    # the ids the showdown evaluates follow the hand through the draw (discards out, new cards in)
    assert st.hole_ids == [tuple(CARD_ID[c] for c in h) for h in st.hole]
    assert st.hole[0] == ["Ac", "Ad", "Ah", "As", "7c"] and st.board_ids == ()


def test_showdown_evaluates_the_shown_cards_when_the_dealt_ones_were_not_recorded_000_tied_hands() -> None:
    """Hole cards dealt as unknown ("??") and shown at the showdown: the shown cards, not
    the unknown ones, are what the high hand is evaluated on (their ids follow the show)."""
    st, _ = play(["d dh p1 ????", "d dh p2 ????", "d dh p3 ????", "p3 cc", "p1 cc", "p2 cc", "d db AhKhQh",
                  "p1 cc", "p2 cc", "p3 cc", "d db 2c", "p1 cc", "p2 cc", "p3 cc", "d db 3d",
                  "p1 cc", "p2 cc", "p3 cc", "p1 sm JhTh", "p2 sm AcAd", "p3 sm 7s7c"])
    assert st.hole_ids == [tuple(CARD_ID[c] for c in h) for h in st.hole]
    assert final_stacks(st) == [10_200, 9_900, 9_900]  # the royal flush takes the pot


def test_dead_button_no_small_blind_TDA_31() -> None:
    # the small-blind seat is empty: seat 1 posts the big blind, seat 2 acts first preflop,
    # seat 1 first after the flop
    st, _ = play(["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 QcQd", "p2 cc", "p3 cc", "p1 cc", "d db 2h7s9d"],
                 blinds_or_straddles=[100, 0, 0])
    assert st.actor == 0 and sum(st.paid) == 300


def test_burn_cards_are_recorded_and_count_as_dealt() -> None:
    st, _ = play(DEAL3 + ["p3 cc", "p1 cc", "p2 cc"])
    st = ENGINE.apply(st, "poker.burn.v1", {"card": "2h"})
    with pytest.raises(RuleViolation, match="2h was already dealt"):
        ENGINE.apply(st, "poker.deal.v1", {"seat": 0, "cards": ["2h", "7s", "9d"]})
    with pytest.raises(RuleViolation, match="burned only before a later street"):
        ENGINE.apply(play(DEAL3)[0], "poker.burn.v1", {"card": "3h"})

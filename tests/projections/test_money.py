"""projections/money.py: a closed round's money comes from its engine (Engine.money), so
the views never re-implement a game rule; a void round ("a system malfunction voids all
pays and plays", 000 III 2.1.5) and a game with no engine move no money."""

from __future__ import annotations

from ledger.games import RoundMoney
from projections.money import round_money

BACCARAT = {"winner": "banker", "settlements": [
    {"bet": 1, "player": "P1", "outcome": "win", "paid": 1950, "commission": 50, "staked": 1000},
    {"bet": 2, "player": "P2", "outcome": "lose", "paid": 0, "commission": 0, "staked": 500}]}


def test_a_complete_round_nets_as_its_engine_says() -> None:
    money = round_money("baccarat", BACCARAT, "complete")
    assert money.nets == {"P1": 950, "P2": -500} and money.commission == 50
    assert (money.staked, money.paid, money.house_net) == (1500, 1950, -450)


def test_a_void_round_a_missing_outcome_and_a_game_without_engine_move_no_money() -> None:
    assert round_money("baccarat", BACCARAT, "void") == RoundMoney()
    assert round_money("baccarat", None, "complete") == RoundMoney()
    assert round_money("fan-tan", BACCARAT, "complete") == RoundMoney()


def test_player_banked_high_card_flush_the_designated_player_takes_the_other_side_003() -> None:
    outcome = {"designated": "DP", "qualified": True, "settlements": [
        {"seat": 2, "player": "P2", "wager": "ante", "outcome": "win", "paid": 2000, "staked": 1000},
        {"seat": 3, "player": "P3", "wager": "ante", "outcome": "lose", "paid": 0, "staked": 1000}]}
    money = round_money("high-card-flush", outcome, "complete")
    assert money.nets == {"P2": 1000, "P3": -1000, "DP": 0} and money.house_net == 0


def test_poker_a_pool_the_house_keeps_the_rake_001() -> None:
    outcome = {"pots": [{"pot": 1, "amount": 1000, "rake": 20, "winners": [{"seat": 1, "amount": 980}]}],
               "seats": [{"seat": 1, "player": "A", "net": 480, "put_in": 500},
                         {"seat": 2, "player": "B", "net": -500, "put_in": 500}], "complete": True}
    money = round_money("poker", outcome, "complete")
    assert money.nets == {"A": 480, "B": -500} and money.rake == money.house_net == 20
    assert money.paid == 980 and sum(money.nets.values()) + money.house_net == 0

"""Baccarat engine (000_c28081091adb3e2e.txt live casino II) and its rules at ingest."""

from __future__ import annotations

import random

import pytest

from ledger.games import RuleViolation
from ledger.games.baccarat import (
    BaccaratEngine,
    BaccaratRules,
    banker_draws,
    commission_for,
    coup_events,
    house_edge,
    next_hand,
    points,
)
from ledger.games.cards import baccarat_value, deck
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import ingest, open_table

ENGINE = BaccaratEngine()


def test_house_edge_8_decks_banker_1_0579_player_1_2351_tie_14_3596_000_II_2_2() -> None:
    e = house_edge()
    assert round(float(e["banker"]["edge"]) * 100, 4) == 1.0579
    assert round(float(e["player"]["edge"]) * 100, 4) == 1.2351
    assert round(float(e["tie"]["edge"]) * 100, 4) == 14.3596


def test_card_values_000_II_1_3_2() -> None:
    assert [baccarat_value(c) for c in ("Ah", "2c", "9d", "Ts", "Jh", "Qc", "Kd")] == [1, 2, 9, 0, 0, 0, 0]
    assert points([1, 2, 4]) == 7 and points([1, 2, 9]) == 2  # the seed's own examples a and b


# The third-card table of 000 II 3.5.1, written out again independently: banker total ->
# player third-card values on which the banker draws.
SEED_TABLEAU = {0: set(range(10)), 1: set(range(10)), 2: set(range(10)), 3: set(range(10)) - {8},
                4: {2, 3, 4, 5, 6, 7}, 5: {4, 5, 6, 7}, 6: {6, 7}, 7: set()}


@pytest.mark.parametrize("banker", range(8))
def test_banker_third_card_rule_000_II_3_5_1(banker: int) -> None:
    for third in range(10):
        assert banker_draws(banker, third) == (third in SEED_TABLEAU[banker]), (banker, third)
    assert banker_draws(banker, None) == (banker <= 5)  # the player stood


def test_naturals_stand_and_player_draws_on_0_to_5_000_II_3_5_1() -> None:
    for p1, p2, b1, b2 in [(4, 4, 0, 0), (9, 0, 3, 0), (0, 0, 8, 0), (5, 4, 2, 2)]:
        assert next_hand((p1, p2), (b1, b2)) is None  # a natural 8 or 9 on either side
    assert next_hand((2, 3), (1, 1)) == "player"
    assert next_hand((3, 3), (1, 1)) == "banker"  # player stands on 6, banker draws on 2
    assert next_hand((3, 4), (3, 3)) is None  # both stand on 7 and 6


def test_commission_rounding_is_explicit_house_configuration() -> None:
    down, up = BaccaratRules(commission_rounding="down"), BaccaratRules(commission_rounding="up")
    assert commission_for(1000, down) == commission_for(1000, up) == 50
    assert commission_for(1010, down) == 50 and commission_for(1010, up) == 51


def test_settlements_of_a_banker_win_player_loss_and_tie_bets() -> None:
    # P: 2, 3 -> 5, draws 4 -> 9;  B: K, 6 -> 6; player third 4 -> banker 6 stands
    events = coup_events([("a", "banker", 1000), ("b", "player", 500), ("c", "tie", 100)], iter(["2h", "Kd", "3c", "6s", "4d"]))
    assert [p["hand"] for k, p in events if k == "baccarat.card.v1"] == ["player", "banker", "player", "banker", "player"]
    settles = [(p["outcome"], p["paid"], p["commission"]) for k, p in events if k == "baccarat.settle.v1"]
    assert settles == [("lose", 0, 0), ("win", 1000, 0), ("lose", 0, 0)]
    # a tie: player and banker bets push (000 II 2.1.5), the tie pays 8:1
    events = coup_events([("a", "banker", 1000), ("c", "tie", 100)], iter(["Kh", "Kd", "8c", "8s"]))
    settles = [(p["outcome"], p["paid"], p["commission"]) for k, p in events if k == "baccarat.settle.v1"]
    assert settles == [("push", 1000, 0), ("win", 900, 0)]


def test_thousands_of_random_coups_settle_consistently() -> None:
    rng = random.Random(42)
    shoe: list[str] = []
    for _ in range(2000):
        if len(shoe) < 6:  # a fresh shuffled 8-deck shoe
            shoe = [c for _ in range(8) for c in deck()]
            rng.shuffle(shoe)
        cards = iter(shoe)
        events = coup_events([("a", "banker", 1000), ("b", "player", 1000), ("c", "tie", 1000)], cards)
        shoe = list(cards)
        n_cards = sum(1 for k, _ in events if k == "baccarat.card.v1")
        assert 4 <= n_cards <= 6
        paid = sorted(p["paid"] for k, p in events if k == "baccarat.settle.v1")
        assert paid in ([0, 0, 1950], [0, 0, 2000], [1000, 1000, 9000])


def test_card_to_the_wrong_hand_and_after_the_coup_are_refused_000_II_3_4_3() -> None:
    st = ENGINE.apply(ENGINE.start({}), "baccarat.no_more_bets.v1", {})
    with pytest.raises(RuleViolation, match="goes to the player"):
        ENGINE.apply(st, "baccarat.card.v1", {"hand": "banker", "card": "2h"})
    for hand, card in [("player", "9h"), ("banker", "Kd"), ("player", "Tc"), ("banker", "2s")]:
        st = ENGINE.apply(st, "baccarat.card.v1", {"hand": hand, "card": card})
    with pytest.raises(RuleViolation, match="coup is complete"):
        ENGINE.apply(st, "baccarat.card.v1", {"hand": "player", "card": "3h"})


def test_card_before_no_more_bets_is_refused_000_II_2_1_6() -> None:
    with pytest.raises(RuleViolation, match="before 'no more bets'"):
        ENGINE.apply(ENGINE.start({}), "baccarat.card.v1", {"hand": "player", "card": "2h"})


@pytest.fixture
def bac_table(ledger):  # type: ignore[no-untyped-def]
    return open_table(ledger, "B1", "baccarat", seats=7)


def _coup(ledger, dealer, cards, bets, rid="round:B1-1", tamper=None):  # type: ignore[no-untyped-def]
    b = BatchBuilder.for_store(ledger.store)
    b.add(dealer, rid, "round.open.v1", {"table": "B1", "game": "baccarat", "rules": {}})
    for kind, payload in coup_events(bets, iter(cards)):
        if tamper:
            kind, payload = tamper(kind, dict(payload))
        b.add(dealer, rid, kind, payload)
    b.add(dealer, rid, "round.close.v1", {"status": "complete"})
    return b


def test_a_coup_is_stored_and_replays(ledger, bac_table) -> None:  # type: ignore[no-untyped-def]
    from projections.replay import replay_round

    b = _coup(ledger, bac_table, ["2h", "Kd", "3c", "6s", "4d"], [("a", "banker", 1000), ("b", "player", 500)])
    assert ingest(ledger.store, b.lines()).status == "stored"
    rep = replay_round(ledger.store, "B1-1")
    assert rep.ok and rep.outcome["winner"] == "player"
    assert [s["paid"] for s in rep.outcome["settlements"]] == [0, 1000]


def test_banker_win_paid_without_commission_is_refused_000_II_2_2(ledger, bac_table) -> None:  # type: ignore[no-untyped-def]
    def no_commission(kind, payload):  # type: ignore[no-untyped-def]
        if kind == "baccarat.settle.v1" and payload["outcome"] == "win":
            payload.update(paid=2000, commission=0)
        return kind, payload

    before = dump_rows(ledger.store)
    # P: 2, 3 -> 5 draws K -> 5; B: 9, K -> 9: natural? B 9 is a natural, so 4 cards: banker wins
    b = _coup(ledger, bac_table, ["2h", "9d", "3c", "Ks"], [("a", "banker", 1000)], tamper=no_commission)
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    assert "the engine pays win 1950 commission 50, the event says win 2000 commission 0" in report.rejections[0].reason


def test_cli_house_edge_baccarat() -> None:
    import json

    from click.testing import CliRunner

    from cli.main import main

    res = CliRunner().invoke(main, ["rules", "house-edge", "baccarat", "--json"])
    assert res.exit_code == 0
    bets = json.loads(res.stdout)["bets"]
    assert {k: round(v["edge"], 6) for k, v in bets.items()} == {"banker": 0.010579, "player": 0.012351, "tie": 0.143596}

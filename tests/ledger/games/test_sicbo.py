"""Sic bo engine (004_9f9b7621214e86da.txt ビッグアンドスモール(大小) 賭け方と配当)."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest

from ledger.games import RuleViolation
from ledger.games.sicbo import DEFAULT_PAYS, SicBoEngine, house_edge
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import ingest, open_table

ENGINE = SicBoEngine()
P = Fraction(1, 216)
# Ways three dice make each total 3..18 (the classic table, not computed by the engine).
WAYS = dict(zip(range(3, 19), [1, 3, 6, 10, 15, 21, 25, 27, 27, 25, 21, 15, 10, 6, 3, 1]))


def _edge(win_probability: Fraction, pays: int) -> Fraction:
    return 1 - win_probability * (pays + 1)


def test_house_edge_of_every_bet_from_dice_combinatorics_004_A_to_G() -> None:
    edges = house_edge()
    big = (sum(WAYS[t] for t in range(11, 18)) - 2) * P  # 444 and 555 are in 11-17 and lose (note 2)
    small = (sum(WAYS[t] for t in range(4, 11)) - 2) * P  # 222 and 333 are in 4-10 and lose
    assert edges["big"]["edge"] == edges["small"]["edge"] == _edge(big, 1) == _edge(small, 1) == Fraction(1, 36)
    # single: paid k+1 with probability C(3,k)(1/6)^k(5/6)^(3-k); loses otherwise
    single_back = sum(comb(3, k) * Fraction(1, 6) ** k * Fraction(5, 6) ** (3 - k) * (k + 1) for k in (1, 2, 3))
    assert edges["single"]["edge"] == 1 - single_back == Fraction(17, 216)
    assert edges["combination"]["edge"] == _edge(30 * P, 5)  # 1-2: 6 orders x (3 x 1 + ...) = 30 throws
    assert edges["double"]["edge"] == _edge(16 * P, 8)  # 15 throws with exactly two, 1 with three
    assert edges["any_triple"]["edge"] == _edge(6 * P, 24)
    assert edges["triple"]["edge"] == _edge(1 * P, 150)
    for t in range(4, 18):
        assert edges[f"total_{t}"]["edge"] == _edge(WAYS[t] * P, DEFAULT_PAYS[f"total_{t}"]), t


def test_seed_paytable_defaults_004() -> None:
    assert {k: DEFAULT_PAYS[k] for k in ("big", "small", "single", "combination", "double", "any_triple", "triple")} == {
        "big": 1, "small": 1, "single": 1, "combination": 5, "double": 8, "any_triple": 24, "triple": 150}
    totals = [DEFAULT_PAYS[f"total_{t}"] for t in range(4, 18)]
    assert min(totals) == 6 and max(totals) == 55  # the seed's "6~55倍"
    assert totals == totals[::-1]  # symmetric, as the dice are


def _throw(bets, dice):  # type: ignore[no-untyped-def]
    st = ENGINE.start({})
    for bet, target, amount in bets:
        st = ENGINE.apply(st, "sicbo.bet.v1", {"player": "p", "bet": bet, "target": target, "amount": amount})
    st = ENGINE.apply(st, "sicbo.no_more_bets.v1", {})
    return ENGINE.apply(st, "sicbo.result.v1", {"dice": dice})


def test_big_and_small_lose_on_any_triple_004_note_2() -> None:
    st = _throw([("big", [], 10), ("small", [], 10), ("any_triple", [], 10)], [5, 5, 5])
    assert [ENGINE.outcome(st)["settlements"][i]["paid"] for i in range(3)] == [0, 0, 250]
    st = _throw([("small", [], 10)], [1, 1, 1])
    assert ENGINE.outcome(st)["settlements"][0]["outcome"] == "lose"


def test_single_number_pays_once_per_matching_die_004_B() -> None:
    for dice, paid in [([3, 1, 2], 20), ([3, 3, 2], 30), ([3, 3, 3], 40), ([1, 2, 4], 0)]:
        st = _throw([("single", [3], 10)], dice)
        assert ENGINE.outcome(st)["settlements"][0]["paid"] == paid, dice


@pytest.mark.parametrize("bet,target", [("combination", [2, 2]), ("combination", [3, 1]), ("single", [7]),
                                        ("total", [3]), ("total", [18]), ("big", [1]), ("triple", [])])
def test_bets_without_a_valid_target_are_refused(bet: str, target: list[int]) -> None:
    with pytest.raises(RuleViolation, match="is not a target"):
        ENGINE.apply(ENGINE.start({}), "sicbo.bet.v1", {"player": "p", "bet": bet, "target": target, "amount": 1})


def test_wrong_payout_is_refused_at_ingest_and_nothing_stored(ledger) -> None:  # type: ignore[no-untyped-def]
    dealer = open_table(ledger, "S1", "sicbo")
    before = dump_rows(ledger.store)
    b = BatchBuilder.for_store(ledger.store)
    rid = "round:S1-1"
    b.add(dealer, rid, "round.open.v1", {"table": "S1", "game": "sicbo", "rules": {}})
    b.add(dealer, rid, "sicbo.bet.v1", {"player": "P1", "bet": "total", "target": [10], "amount": 100})
    b.add(dealer, rid, "sicbo.no_more_bets.v1", {})
    b.add(dealer, rid, "sicbo.result.v1", {"dice": [2, 3, 5]})
    b.add(dealer, rid, "sicbo.settle.v1", {"bet": 1, "outcome": "win", "paid": 600})  # 6 to 1 returns 700
    b.add(dealer, rid, "round.close.v1", {"status": "complete"})
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    assert "the engine pays win 700, the event says win 600" in report.rejections[0].reason


def test_cli_house_edge_sicbo() -> None:
    import json

    from click.testing import CliRunner

    from cli.main import main

    res = CliRunner().invoke(main, ["rules", "house-edge", "sicbo", "--json"])
    assert res.exit_code == 0
    bets = json.loads(res.stdout)["bets"]
    assert round(bets["big"]["edge"], 6) == round(1 / 36, 6) and bets["triple"]["pays"] == 150

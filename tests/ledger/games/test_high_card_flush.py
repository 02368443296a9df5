"""High Card Flush (003_10e12fa1eb1379fe.txt) engine and its rules at ingest."""

from __future__ import annotations

import itertools
import random
from math import comb
from typing import Any

import pytest

from ledger.games import RuleViolation
from ledger.games.cards import deck
from ledger.games.high_card_flush import (
    HighCardFlushEngine,
    bonus_distributions,
    deal_order,
    flush_rank,
    house_edge,
    longest_run,
    qualifies,
    settle_order,
    straight_flush_length,
)
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import add_round, ingest, open_table

ENGINE = HighCardFlushEngine()


def script(hands: dict[int, list[str]], dp_seat: int, antes: dict[int, int], bankroll: int = 100_000,
           bonus: dict[int, dict[str, int]] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Events up to the decisions: designate, bets, no more bets, the 7-card deal."""
    ev: list[tuple[str, dict[str, Any]]] = [("hcf.designate.v1", {"seat": dp_seat, "player": "dp", "bankroll": bankroll})]
    for seat, amount in antes.items():
        ev.append(("hcf.bet.v1", {"seat": seat, "player": f"p{seat}", "wager": "ante", "amount": amount}))
        for wager, a in (bonus or {}).get(seat, {}).items():
            ev.append(("hcf.bet.v1", {"seat": seat, "player": f"p{seat}", "wager": wager, "amount": a}))
    ev.append(("hcf.no_more_bets.v1", {}))
    st = run(ev)
    taken = {s: iter(cards) for s, cards in hands.items()}
    for seat in deal_order(st):
        ev.append(("hcf.card.v1", {"seat": seat, "card": next(taken[seat])}))
    return ev


def run(events: list[tuple[str, dict[str, Any]]]) -> Any:
    st = ENGINE.start({})
    for kind, p in events:
        st = ENGINE.apply(st, kind, p)
    return st


def rows(st: Any) -> dict[tuple[int, str], tuple[str, int]]:
    return {(r["seat"], r["wager"]): (r["outcome"], r["paid"]) for r in ENGINE.outcome(st)["settlements"]}


DP_QUAL = ["Ah", "Kh", "2h", "3c", "5d", "7s", "9c"]       # 3-card ace-high flush: qualifies
DP_NOT = ["8h", "6h", "2h", "3c", "5d", "Ts", "Jc"]         # 3-card 8-high: does not
P_FOUR = ["2s", "5s", "8s", "Js", "4d", "4c", "7h"]         # 4-card flush
P_SIX = ["3d", "6d", "8d", "Td", "Qd", "Ad", "6c"]          # 6-card flush


def test_more_suited_cards_win_then_high_cards_003() -> None:
    assert flush_rank(P_FOUR) > flush_rank(DP_QUAL)  # 4 cards beat 3, whatever the ranks
    a = flush_rank(["Ah", "Kh", "2h", "3c", "5d", "7s", "9c"])
    b = flush_rank(["Ac", "Qc", "Jc", "3h", "5d", "7s", "9d"])
    assert a > b  # same count: A-K-2 beats A-Q-J on the second card


def test_designated_player_qualifier_is_a_3_card_9_high_flush_003_4() -> None:
    assert qualifies(flush_rank(["9h", "4h", "2h", "3c", "5d", "7s", "Jc"]))
    assert not qualifies(flush_rank(DP_NOT))
    assert qualifies(flush_rank(["8h", "6h", "2h", "3h", "5d", "Ts", "Jc"]))  # any 4-card flush


def test_unqualified_designated_player_pays_the_ante_and_pushes_the_raise_003_4() -> None:
    st = run(script({1: P_FOUR, 4: DP_NOT}, 4, {1: 100}) + [("hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 100})])
    assert rows(st) == {(1, "ante"): ("win", 200), (1, "raise"): ("push", 100)}


def test_player_beating_a_qualified_hand_wins_ante_and_raise_003_5() -> None:
    st = run(script({1: P_FOUR, 4: DP_QUAL}, 4, {1: 100}) + [("hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 100})])
    assert rows(st) == {(1, "ante"): ("win", 200), (1, "raise"): ("win", 200)}


def test_equal_hands_push_003() -> None:
    same = ["Ac", "Kc", "2c", "3h", "4d", "6s", "8d"]
    st = run(script({1: same, 4: DP_QUAL}, 4, {1: 100}) + [("hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 50})])
    assert rows(st) == {(1, "ante"): ("push", 100), (1, "raise"): ("push", 50)}


def test_fold_forfeits_ante_and_bonus_wagers_003_2() -> None:
    ev = script({1: P_SIX, 4: DP_QUAL}, 4, {1: 100}, bonus={1: {"flush": 10}})
    st = run(ev + [("hcf.decision.v1", {"seat": 1, "action": "fold"})])
    assert rows(st) == {(1, "ante"): ("lose", 0), (1, "flush"): ("lose", 0)}


@pytest.mark.parametrize("hand,cap", [(P_FOUR, 1), (["2s", "5s", "8s", "Js", "Ks", "4c", "6h"], 2), (P_SIX, 3)])
def test_raise_caps_by_flush_size_003_2(hand: list[str], cap: int) -> None:
    ev = script({1: hand, 4: DP_QUAL}, 4, {1: 100})
    run(ev + [("hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 100 * cap})])
    with pytest.raises(RuleViolation, match=f"at most {100 * cap}"):
        run(ev + [("hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 100 * cap + 1})])


def test_bonus_paytables_appendix_a_and_b() -> None:
    ev = script({1: P_SIX, 4: DP_QUAL}, 4, {1: 100}, bonus={1: {"flush": 10, "straight_flush": 10}})
    st = run(ev + [("hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 300})])
    r = rows(st)
    assert r[(1, "flush")] == ("win", 10 * 51)  # 6-card flush 50-1
    assert straight_flush_length(P_SIX) == 1 and r[(1, "straight_flush")] == ("lose", 0)
    sf = ["9s", "Ts", "Js", "Qs", "2d", "4h", "6c"]  # 4-card straight flush 60-1; its flush: 4 cards 2-1
    st = run(script({1: sf, 4: DP_QUAL}, 4, {1: 100}, bonus={1: {"flush": 10, "straight_flush": 10}})
             + [("hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 100})])
    assert rows(st)[(1, "straight_flush")] == ("win", 610) and rows(st)[(1, "flush")] == ("win", 30)
    assert longest_run({12, 0, 1}) == 3  # A-2-3: the ace plays low too


def test_wagers_beyond_the_designated_players_money_are_dead_and_returned_003() -> None:
    # seats 1 and 2 both beat the designated player at seat 4; the money (150) covers the
    # first settled (seat 2, right of the button) and not the second.
    hands = {1: P_FOUR, 2: ["2c", "5c", "8c", "Jc", "3d", "4s", "6h"], 4: DP_QUAL}
    ev = script(hands, 4, {1: 100, 2: 100}, bankroll=150)
    st = run(ev + [("hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 100}),
                   ("hcf.decision.v1", {"seat": 2, "action": "raise", "amount": 50})])
    assert settle_order(st) == [2, 1]
    r = rows(st)
    assert r[(2, "ante")] == ("win", 200) and r[(2, "raise")] == ("win", 100)  # net 150 covered
    assert r[(1, "ante")] == ("returned", 100) and r[(1, "raise")] == ("returned", 100)


def test_deal_order_and_one_deck_003_1() -> None:
    ev = script({1: P_FOUR, 4: DP_QUAL}, 4, {1: 100})
    assert [p["seat"] for k, p in ev if k == "hcf.card.v1"][:4] == [1, 4, 1, 4]  # the button is at seat 4
    pre = [e for e in ev if e[0] != "hcf.card.v1"]
    with pytest.raises(RuleViolation, match="goes to seat 1"):
        run(pre + [("hcf.card.v1", {"seat": 4, "card": "2c"})])
    with pytest.raises(RuleViolation, match="already dealt"):
        run(pre + [("hcf.card.v1", {"seat": 1, "card": "2c"}), ("hcf.card.v1", {"seat": 4, "card": "2c"})])


def test_bonus_counts_match_the_published_7_card_flush_and_straight_flush_counts() -> None:
    flush, sflush = bonus_distributions()
    assert sum(flush.values()) == sum(sflush.values()) == comb(52, 7)
    # flushes (5+ suited, straight flushes included): 4,047,644 + 37,260 + 4,324
    assert sum(c for n, c in flush.items() if n >= 5) == 4_089_228
    assert sum(c for n, c in sflush.items() if n >= 5) == 37_260 + 4_324


def test_bonus_distribution_agrees_with_brute_force_on_a_small_deck() -> None:
    # the same counting, brute force over random hands, agrees with the exact per-suit run histogram
    rng = random.Random(7)
    cards = deck()
    for _ in range(2000):
        hand = rng.sample(cards, 7)
        best = max(
            (len(run_) for s in "cdhs" for run_ in _runs(sorted({"23456789TJQKA".index(c[0]) for c in hand if c[1] == s}))),
            default=0)
        assert straight_flush_length(hand) == best


def _runs(ranks: list[int]) -> list[list[int]]:
    ext = sorted(set(ranks) | ({-1} if 12 in ranks else set()))
    out: list[list[int]] = []
    for _, g in itertools.groupby(enumerate(ext), key=lambda t: t[1] - t[0]):
        out.append([r for _, r in g])
    return out


def test_house_edge_of_the_seed_paytables() -> None:
    e = house_edge()
    flush, sflush = bonus_distributions()
    total = comb(52, 7)
    back = (flush[4] * 3 + flush[5] * 11 + flush[6] * 51 + flush[7] * 201) / total
    assert abs(float(e["flush"]["edge"]) - (1 - back)) < 1e-12
    # the seed's flush paytable (4 cards at 2-1) returns more than it takes: a finding for the operator
    assert float(e["flush"]["edge"]) < 0
    assert 0.07 < float(e["straight_flush"]["edge"]) < 0.08


# --- at ingest -----------------------------------------------------------------------

def _batch(ledger, dealer, events):  # type: ignore[no-untyped-def]
    return add_round(BatchBuilder.for_store(ledger.store), dealer, "round:H-1", "H", "high-card-flush", events)


def test_a_round_is_stored_and_a_wrong_settlement_refused(ledger) -> None:  # type: ignore[no-untyped-def]
    from projections.replay import replay_round

    dealer = open_table(ledger, "H", "high-card-flush", seats=7)
    ev = script({1: P_FOUR, 4: DP_QUAL}, 4, {1: 100}) + [("hcf.decision.v1", {"seat": 1, "action": "raise", "amount": 100})]
    wrong = ev + [("hcf.settle.v1", {"seat": 1, "wager": "ante", "outcome": "win", "paid": 300}),
                  ("hcf.settle.v1", {"seat": 1, "wager": "raise", "outcome": "win", "paid": 200})]
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, _batch(ledger, dealer, wrong).lines())
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    assert "the engine pays win 200, the event says win 300" in report.rejections[0].reason
    good = ev + [("hcf.settle.v1", {"seat": 1, "wager": "ante", "outcome": "win", "paid": 200}),
                 ("hcf.settle.v1", {"seat": 1, "wager": "raise", "outcome": "win", "paid": 200})]
    assert ingest(ledger.store, _batch(ledger, dealer, good).lines()).status == "stored"
    assert replay_round(ledger.store, "H-1").ok

"""Random legal poker hands played through pokerkit and through ledger.games.poker side by
side (the differential test of issue #3; also used by benchmarks/).

Each hand: random player count, stacks, blinds (sometimes antes and straddles), a shuffled
deck. At every decision the same random choice goes to both engines: a legal action, and
now and then an illegal one (an amount just outside the limits, a bet when only a raise
is possible) that both must refuse. At the end both must give the same final stacks.
"""

from __future__ import annotations

import random
from typing import Any

from ledger.games import RuleViolation
from ledger.games.cards import deck
from ledger.games.poker import PokerEngine, award_events, final_stacks, raise_limits

ENGINE = PokerEngine()
PK_VARIANTS = {
    "NT": "NoLimitTexasHoldem", "FT": "FixedLimitTexasHoldem", "PO": "PotLimitOmahaHoldem",
    "FO/8": "FixedLimitOmahaHoldemHighLowSplitEightOrBetter", "NS": "NoLimitShortDeckHoldem",
    "F7S": "FixedLimitSevenCardStud", "F7S/8": "FixedLimitSevenCardStudHighLowSplitEightOrBetter",
    "FR": "FixedLimitRazz", "F2L3D": "FixedLimitDeuceToSevenLowballTripleDraw",
    "N2L1D": "NoLimitDeuceToSevenLowballSingleDraw", "FB": "FixedLimitBadugi",
}
STUD = {"F7S", "F7S/8", "FR"}
PK_POT_LIMIT_DEFECT = {"FO/8"}
"""pokerkit 0.7.7 builds FixedLimitOmahaHoldemHighLowSplitEightOrBetter on PotLimitPokerMixin
(pokerkit/games.py, the class definition), so it accepts bets above the fixed size and
more than four per round. The harness plays FO/8 with fixed-limit amounts only and does not
compare pokerkit's acceptance of other amounts."""
DRAW = {"F2L3D", "N2L1D", "FB"}
FIXED = {"FT", "FO/8", "F7S", "F7S/8", "FR", "F2L3D", "FB"}


def _pk_state(pokerkit: Any, variant: str, antes: list[int], blinds: list[int], stacks: list[int], bet: int) -> Any:
    a = pokerkit.Automation
    autos = (a.ANTE_POSTING, a.BET_COLLECTION, a.BLIND_OR_STRADDLE_POSTING, a.CARD_BURNING, a.HAND_KILLING,
             a.CHIPS_PUSHING, a.CHIPS_PULLING)
    cls = getattr(pokerkit, PK_VARIANTS[variant])
    n = len(stacks)
    if variant in STUD:
        return cls.create_state(autos, False, tuple(antes), bet // 2, bet, 2 * bet, tuple(stacks), n)
    if variant in FIXED:
        return cls.create_state(autos, False, tuple(antes), tuple(blinds), bet, 2 * bet, tuple(stacks), n)
    return cls.create_state(autos, False, tuple(antes), tuple(blinds), bet, tuple(stacks), n)


def play_hand(pokerkit: Any, variant: str, rng: random.Random) -> dict[str, Any]:
    """One random hand through both engines; returns counts; raises AssertionError on any
    disagreement (legality of an action, or final stacks)."""
    n = rng.randint(2, 4 if variant in DRAW else 6)
    bb = rng.choice([2, 10, 100])
    blinds = [bb // 2, bb] + [0] * (n - 2)
    if n >= 4 and rng.random() < 0.1:
        blinds[2] = 2 * bb  # a straddle
    antes = [rng.choice([0, 0, 0, bb // 10 or 1])] * n
    if variant in STUD:
        blinds = [0] * n
        antes = [rng.choice([bb // 10 or 1, bb // 5 or 1])] * n
    stacks = [rng.choice([rng.randint(1, 5 * bb), rng.randint(20 * bb, 200 * bb)]) for _ in range(n)]
    rules: dict[str, Any] = {"variant": variant, "players": [f"p{i + 1}" for i in range(n)], "starting_stacks": stacks,
                             "antes": antes, "blinds_or_straddles": blinds}
    if variant in FIXED:
        rules.update(small_bet=bb, big_bet=2 * bb)
    else:
        rules["min_bet"] = bb
    if variant in STUD:
        rules["bring_in"] = bb // 2
        del rules["blinds_or_straddles"]
    pk = _pk_state(pokerkit, variant, antes, blinds, stacks, bb)
    st = ENGINE.start(rules)
    cards = [c for c in deck() if variant != "NS" or c[0] not in "2345"]
    rng.shuffle(cards)
    checked = {"actions": 0, "refusals": 0}

    def mine(kind: str, payload: dict[str, Any]) -> None:
        nonlocal st
        st = ENGINE.apply(st, kind, payload)

    while st.posts_due:
        seat, typ, amount = st.posts_due[0]
        mine("poker.post.v1", {"seat": seat + 1, "type": typ, "amount": amount})
    while pk.status:
        if pk.can_deal_hole():  # pokerkit deals one card at a time around the table
            dealt: dict[int, list[str]] = {}
            street = pk.street_index
            while pk.can_deal_hole() and pk.street_index == street:
                dealt.setdefault(pk.hole_dealee_index, []).append(card := cards.pop())
                pk.deal_hole(card)
            for i in sorted(dealt):
                mine("poker.deal.v1", {"seat": i + 1, "cards": dealt[i]})
        elif pk.can_stand_pat_or_discard():
            i = pk.stand_patter_or_discarder_index
            hand = list(st.hole[i])
            most = min(len(hand), max(0, len(cards) // max(1, sum(st.in_hand)) - 1))
            discard = rng.sample(hand, rng.randint(0, most))
            pk.stand_pat_or_discard("".join(discard))
            mine("poker.draw.v1", {"seat": i + 1, "discard": discard})
        elif pk.can_deal_board():
            k = pk.board_dealing_counts[0]
            board = [cards.pop() for _ in range(k)]
            pk.deal_board("".join(board))
            mine("poker.deal.v1", {"seat": 0, "cards": board})
        elif pk.can_show_or_muck_hole_cards():
            i = pk.showdown_index
            pk.show_or_muck_hole_cards(True)
            mine("poker.show.v1", {"seat": i + 1, "cards": list(st.hole[i])})
        elif pk.actor_index is not None:
            i = pk.actor_index
            assert st.actor == i, (st.actor, i)
            _betting_step(pk, st, i, rng, checked, mine, variant)
        else:  # pragma: no cover - every pokerkit state above is covered
            raise AssertionError("pokerkit waits for an operation the harness does not know")
    if st.phase == "award":
        for award in award_events(st):
            mine("poker.award.v1", award)
    assert st.phase == "done", st.phase
    assert final_stacks(st) == list(pk.stacks), (final_stacks(st), list(pk.stacks), rules)
    return checked


def _betting_step(pk: Any, st: Any, i: int, rng: random.Random, checked: dict[str, int], mine: Any,
                  variant: str) -> None:
    if pk.can_post_bring_in():
        checked["actions"] += 1
        if rng.random() < 0.7:
            pk.post_bring_in()
            mine("poker.action.v1", {"seat": i + 1, "action": "bring_in"})
        else:
            to = pk.min_completion_betting_or_raising_to_amount
            pk.complete_bet_or_raise_to(to)
            mine("poker.action.v1", {"seat": i + 1, "action": "complete", "to": to})
        return
    low, high = pk.min_completion_betting_or_raising_to_amount, pk.max_completion_betting_or_raising_to_amount
    can_raise = pk.can_complete_bet_or_raise_to()
    if variant in PK_POT_LIMIT_DEFECT:  # pokerkit plays these pot-limit: only our fixed-limit amounts are compared
        limits = raise_limits(st, i)
        can_raise = can_raise and not isinstance(limits, str)
        if can_raise:
            low = high = limits[0]
    to_call = pk.checking_or_calling_amount
    name_raise = "complete" if st.completion else "raise" if max(st.bets) else "bet"
    if rng.random() < 0.15:  # an illegal attempt: both must refuse
        bad = rng.choice(["low", "high", "wrong-name"]) if can_raise else "raise"
        payload: dict[str, Any]
        if variant in PK_POT_LIMIT_DEFECT and bad in ("low", "high"):
            bad = "wrong-name"
        if bad == "low" and low is not None and low > max(pk.bets) + 1 and low < high:
            payload = {"seat": i + 1, "action": name_raise, "to": low - 1}
            pk_ok = pk.can_complete_bet_or_raise_to(low - 1)
        elif bad == "high" and high is not None:
            payload = {"seat": i + 1, "action": name_raise, "to": high + 1}
            pk_ok = pk.can_complete_bet_or_raise_to(high + 1)
        elif bad == "raise" and not can_raise:
            payload = {"seat": i + 1, "action": name_raise, "to": max(st.bets) + 1000}
            pk_ok = False
        else:
            payload = {"seat": i + 1, "action": "check" if to_call else "call"}
            pk_ok = False
        try:
            mine("poker.action.v1", payload)
            mine_ok = True
        except RuleViolation:
            mine_ok = False
        assert mine_ok == pk_ok, (payload, pk_ok)
        checked["refusals"] += not mine_ok
        if mine_ok:  # (never: pk_ok is False) keep the engines in step
            raise AssertionError("an illegal action was accepted")
    choice = rng.random()
    checked["actions"] += 1
    if can_raise and choice < 0.35:
        to = low if rng.random() < 0.5 or low == high else rng.randint(low, high)
        pk.complete_bet_or_raise_to(to)
        mine("poker.action.v1", {"seat": i + 1, "action": name_raise, "to": to})
    elif pk.can_fold() and choice < 0.5 and to_call:
        pk.fold()
        mine("poker.action.v1", {"seat": i + 1, "action": "fold"})
    else:
        pk.check_or_call()
        mine("poker.action.v1", {"seat": i + 1, "action": "call" if to_call else "check"})

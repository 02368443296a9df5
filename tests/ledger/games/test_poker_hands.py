"""High-hand evaluation (ledger/games/poker_hands.py): categories, kickers, and the exact
category counts of all 133,784,560 seven-card hands (issue #3 point 4)."""

from __future__ import annotations

import itertools
import random
from math import comb, prod

import pytest

from ledger.games.cards import deck
from ledger.games.poker_hands import CATEGORIES, best_of, category, high_key, high_rank

RANKS = "23456789TJQKA"

PUBLISHED_7_CARD_COUNTS = {
    "royal flush": 4_324, "straight flush": 37_260, "four of a kind": 224_848, "full house": 3_473_184,
    "flush": 4_047_644, "straight": 6_180_020, "three of a kind": 6_461_620, "two pair": 31_433_400,
    "one pair": 58_627_800, "high card": 23_294_460,
}


def _label(rank: tuple[int, ...]) -> str:
    return "royal flush" if rank == (8, 14) else category(rank)


def test_every_seven_card_hand_class_counts_to_the_published_totals() -> None:
    """All C(52,7) hands, counted exactly by class: a hand's category depends only on its
    ranks and, when five or more share a suit, on that suit's ranks. For every multiset of
    7 ranks the evaluator judges one concrete hand without a flush (weighted by how many
    suit assignments have none) and one per possible flush rank set (weighted by its
    assignments), so every class of the full enumeration is evaluated once."""
    counts = dict.fromkeys(PUBLISHED_7_CARD_COUNTS, 0)
    for multiset in itertools.combinations_with_replacement(range(13), 7):
        c = {r: multiset.count(r) for r in set(multiset)}
        if max(c.values()) > 4:
            continue
        total = prod(comb(4, n) for n in c.values())
        flush_ways = 0
        support = sorted(c)
        for size in range(5, len(support) + 1):
            for fl in itertools.combinations(support, size):
                ways = prod(comb(3, c[r] - 1) if r in fl else comb(3, c[r]) for r in support)
                if ways == 0:
                    continue
                hand = [RANKS[r] + "c" for r in fl]
                for r in support:
                    hand += [RANKS[r] + s for s in "dhs"[: c[r] - (r in fl)]]
                counts[_label(high_rank(hand))] += 4 * ways
                flush_ways += 4 * ways
        if total > flush_ways:  # suits dealt round-robin: never five of one suit
            hand, k = [], 0
            for r in support:
                for _ in range(c[r]):
                    hand.append(RANKS[r] + "cdhs"[k % 4])
                    k += 1
            counts[_label(high_rank(hand))] += total - flush_ways
    assert sum(counts.values()) == comb(52, 7) == 133_784_560
    assert counts == PUBLISHED_7_CARD_COUNTS


@pytest.mark.parametrize("cards,name", [
    (["Ah", "Kh", "Qh", "Jh", "Th", "2c", "3d"], "straight flush"),
    (["5s", "4s", "3s", "2s", "As", "Kd", "Kc"], "straight flush"),
    (["9c", "9d", "9h", "9s", "2c", "3d", "4h"], "four of a kind"),
    (["9c", "9d", "9h", "8s", "8c", "8d", "4h"], "full house"),
    (["2h", "7h", "9h", "Jh", "Kh", "Kd", "Kc"], "flush"),
    (["Ac", "2d", "3h", "4s", "5c", "Kd", "Qc"], "straight"),
    (["Qc", "Qd", "Qh", "2s", "5c", "9d", "Kc"], "three of a kind"),
    (["Qc", "Qd", "5h", "5s", "2c", "2d", "Kc"], "two pair"),
    (["Qc", "Qd", "5h", "7s", "2c", "9d", "Kc"], "one pair"),
    (["Ac", "Jd", "5h", "7s", "2c", "9d", "Kc"], "high card"),
])
def test_categories(cards: list[str], name: str) -> None:
    assert category(high_rank(cards)) == name


def test_kickers_break_ties_and_only_the_best_five_play_000_tied_hands() -> None:
    board = ["Ks", "Kd", "7c", "7h", "2s"]
    assert best_of(["Ac", "3d"], board) > best_of(["Qc", "Jd"], board)  # ace kicker
    assert best_of(["Qc", "3d"], board) == best_of(["Qh", "4d"], board)  # the 3 and 4 do not play
    assert best_of(["5c", "4d"], ["Ah", "2s", "3c", "Kd", "Kh"]) < best_of(["6c", "4h"], ["Ah", "2s", "3c", "5d", "Kh"])
    assert high_rank(["Ac", "2d", "3h", "4s", "5c"]) < high_rank(["2c", "3d", "4h", "5s", "6c"])  # the wheel is lowest


def test_omaha_uses_exactly_two_hole_cards() -> None:
    # four hearts in hand and one on board is no flush in Omaha (2 + 3)
    hole, board = ["Ah", "Kh", "Qh", "Jh"], ["2h", "3c", "7d", "9s", "Ts"]
    assert category(high_rank(hole + ["2h"])) == "flush"  # were any five cards allowed to play
    assert category(best_of(hole, board, use_hole=2)) == "high card"  # and no straight: Q-J-T-9-8 lacks an 8


def test_agrees_with_pokerkit_on_random_hands() -> None:
    """Cross-check: every pair among random 7-card hands orders the same in both."""
    pokerkit = pytest.importorskip("pokerkit")
    rng = random.Random(2026)
    cards = deck()
    hands = [rng.sample(cards, 7) for _ in range(3000)]
    mine = [high_rank(h) for h in hands]
    theirs = [pokerkit.StandardHighHand.from_game("".join(h)) for h in hands]
    for i in range(len(hands) - 1):
        a, b = i, i + 1
        assert (mine[a] > mine[b]) == (theirs[a] > theirs[b]), (hands[a], hands[b])
        assert (mine[a] == mine[b]) == (theirs[a] == theirs[b]), (hands[a], hands[b])
    assert CATEGORIES[0] == "high card"


@pytest.mark.parametrize("ours,theirs,size", [
    ("razz", "RegularLowHand", 7), ("low8", "EightOrBetterLowHand", 7), ("low27", "StandardLowHand", 5),
    ("badugi", "BadugiHand", 4), ("short_deck", "ShortDeckHoldemHand", 7),
])
def test_low_badugi_and_short_deck_rankings_agree_with_pokerkit(ours: str, theirs: str, size: int) -> None:
    """Each ranking the variants need, against pokerkit's on random hands (pairs in order)."""
    pokerkit = pytest.importorskip("pokerkit")
    from ledger.games.poker_hands import badugi_key, deuce_to_seven_key, low8_key, razz_key, short_deck_key

    mine_of = {"razz": razz_key, "low8": low8_key, "low27": deuce_to_seven_key, "badugi": badugi_key,
               "short_deck": short_deck_key}[ours]
    cls = getattr(pokerkit, theirs)
    rng = random.Random(ours)
    cards = [c for c in deck() if ours != "short_deck" or c[0] not in "2345"]
    hands = [rng.sample(cards, size) for _ in range(2000)]
    mine = [mine_of(h) for h in hands]
    theirs_ = [cls.from_game("".join(h)) if ours != "low8" else _maybe(cls, h) for h in hands]
    for a, b in zip(range(len(hands) - 1), range(1, len(hands))):
        if ours == "low8" and (mine[a] is None or mine[b] is None):
            assert (mine[a] is None) == (theirs_[a] is None) and (mine[b] is None) == (theirs_[b] is None)
            continue
        assert (mine[a] > mine[b]) == (theirs_[a] > theirs_[b]), (hands[a], hands[b])
        assert (mine[a] == mine[b]) == (theirs_[a] == theirs_[b]), (hands[a], hands[b])


def _maybe(cls, hand):  # type: ignore[no-untyped-def]
    try:
        return cls.from_game("".join(hand))
    except ValueError:
        return None


def _same_order(keys_a: list, keys_b: list) -> None:  # type: ignore[type-arg]
    order_a = sorted(range(len(keys_a)), key=keys_a.__getitem__)
    assert [keys_b[i] for i in order_a] == sorted(keys_b)  # the same order...
    for i, j in zip(order_a, order_a[1:]):  # ...and the same ties
        assert (keys_a[i] == keys_a[j]) == (keys_b[i] == keys_b[j])


def test_the_fast_evaluator_ranks_every_category_and_tie_as_ours_000_tied_hands() -> None:
    """``high_key`` (phevaluator, the engine's showdown evaluator) against ``high_rank`` (ours,
    the cross-check): on the category examples above, on the ties and kickers, and on 20,000
    random hands of 5, 6 and 7 cards, sorted together: the same order, the same ties."""
    examples = [c for c, _ in [
        (["Ah", "Kh", "Qh", "Jh", "Th", "2c", "3d"], 0), (["5s", "4s", "3s", "2s", "As", "Kd", "Kc"], 0),
        (["9c", "9d", "9h", "9s", "2c", "3d", "4h"], 0), (["9c", "9d", "9h", "8s", "8c", "8d", "4h"], 0),
        (["2h", "7h", "9h", "Jh", "Kh", "Kd", "Kc"], 0), (["Ac", "2d", "3h", "4s", "5c", "Kd", "Qc"], 0),
        (["Qc", "Qd", "Qh", "2s", "5c", "9d", "Kc"], 0), (["Qc", "Qd", "5h", "5s", "2c", "2d", "Kc"], 0),
        (["Qc", "Qd", "5h", "7s", "2c", "9d", "Kc"], 0), (["Ac", "Jd", "5h", "7s", "2c", "9d", "Kc"], 0),
        (["Qc", "3d", "Ks", "Kd", "7c", "7h", "2s"], 0), (["Qh", "4d", "Ks", "Kd", "7c", "7h", "2s"], 0),
        (["Ac", "2d", "3h", "4s", "5c"], 0), (["2c", "3d", "4h", "5s", "6c"], 0)]]
    _same_order([high_rank(h) for h in examples], [high_key(h) for h in examples])
    assert high_key(examples[10]) == high_key(examples[11])  # the 3 and the 4 do not play
    rng = random.Random(16)
    cards = deck()
    for size in (5, 6, 7):
        hands = [rng.sample(cards, size) for _ in range(20_000)]
        _same_order([high_rank(h) for h in hands], [high_key(h) for h in hands])
    with pytest.raises(ValueError):
        high_key(["Ah", "Kh", "Qh", "Jh"])

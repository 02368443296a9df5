"""Poker hand evaluation (pure): the best high hand of 5 to 7 cards, with exact ties.

The ranking is the standard one the seeds use without restating it (004_9f9b7621214e86da.txt
ポーカー "役の強さ"; 000_c28081091adb3e2e.txt on tied hands and kickers; TDA 2013 rule
on showdown): straight flush > four of a kind > full house > flush > straight > three
of a kind > two pair > one pair > high card. Suits never break a tie; an ace plays high
or low in a straight (A-2-3-4-5 is the lowest straight, 10-J-Q-K-A the highest).

``high_rank(cards)`` returns a tuple that compares like the hands: ``(category,
tiebreak ranks...)``, so two hands tie exactly when their tuples are equal and the
kickers that count are only those of the best five cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

RANK_VALUE = {r: v for v, r in enumerate("23456789TJQKA", start=2)}
CATEGORIES = ("high card", "one pair", "two pair", "three of a kind", "straight", "flush", "full house",
              "four of a kind", "straight flush")
HIGH_CARD, ONE_PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)


def straight_top(ranks: set[int]) -> int:
    """The top card of the highest straight in ``ranks`` (5 for A-2-3-4-5), or 0."""
    if 14 in ranks:
        ranks = ranks | {1}
    for top in range(14, 4, -1):
        if top in ranks and top - 1 in ranks and top - 2 in ranks and top - 3 in ranks and top - 4 in ranks:
            return top
    return 0


def high_rank(cards: Sequence[str]) -> tuple[int, ...]:
    """The best 5-card high hand among 5-7 cards, as a comparable tuple."""
    if not 5 <= len(cards) <= 7:
        raise ValueError(f"a high hand is made of 5 to 7 cards, not {len(cards)}")
    ranks = [RANK_VALUE[c[0]] for c in cards]
    by_suit: dict[str, list[int]] = {}
    for c, r in zip(cards, ranks):
        by_suit.setdefault(c[1], []).append(r)
    flush: list[int] | None = None
    for rs in by_suit.values():
        if len(rs) >= 5:
            flush = sorted(rs, reverse=True)
            top = straight_top(set(rs))
            if top:
                return (STRAIGHT_FLUSH, top)
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    first = order[0]
    n1 = counts[first]
    if n1 == 4:
        return (QUADS, first, max(r for r in counts if r != first))
    if n1 == 3:
        pairs = [r for r in order[1:] if counts[r] >= 2]
        if pairs:
            return (FULL_HOUSE, first, max(pairs))
    if flush is not None:
        return (FLUSH, *flush[:5])
    top = straight_top(set(counts))
    if top:
        return (STRAIGHT, top)
    if n1 == 3:
        return (TRIPS, first, *sorted((r for r in counts if r != first), reverse=True)[:2])
    if n1 == 2:
        pairs = sorted((r for r in counts if counts[r] == 2), reverse=True)
        if len(pairs) >= 2:
            p1, p2 = pairs[0], pairs[1]
            return (TWO_PAIR, p1, p2, max(r for r in counts if r not in (p1, p2)))
        return (ONE_PAIR, first, *sorted((r for r in counts if r != first), reverse=True)[:3])
    return (HIGH_CARD, *sorted(counts, reverse=True)[:5])


def category(rank: tuple[int, ...]) -> str:
    return CATEGORIES[rank[0]]


def best_of(hole: Sequence[str], board: Sequence[str], use_hole: int | None = None) -> tuple[int, ...]:
    """The best high hand from hole cards and a board. ``use_hole`` fixes how many hole
    cards must play (Omaha: exactly 2 hole and 3 board cards)."""
    if use_hole is None:
        return high_rank(list(hole) + list(board))
    return max(high_rank(list(h) + list(b))
               for h in combinations(hole, use_hole) for b in combinations(board, 5 - use_hole))

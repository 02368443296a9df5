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
from typing import Any

from phevaluator import _pheval  # C extension: the fast high-hand evaluator (``high_key``)

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


# phevaluator's C evaluator (a perfect-hash table lookup) through its C module's functions
# on integer card ids: the fastest entry point (its public wrappers convert every card on
# each call). The rank it returns is 1 (royal flush) to 7462 (7-5-4-3-2 offsuit) over the
# same standard ranking as ``high_rank``, ties included; ``tests/ledger/games/
# test_poker_hands.py`` cross-checks the two on every category and on random hands.
CARD_ID = {r + s: i * 4 + j for i, r in enumerate("23456789TJQKA") for j, s in enumerate("cdhs")}
"""A card's id in phevaluator's numbering (rank * 4 + suit). The poker engine converts a
card once, when it is dealt, drawn or shown, and keeps the ids beside the cards for
``high_key_ids``."""
EVALUATE_7_IDS = _pheval.evaluate_7cards  # seven card ids -> phevaluator's rank (1 = royal flush)
_PH_EVAL = {5: _pheval.evaluate_5cards, 6: _pheval.evaluate_6cards, 7: EVALUATE_7_IDS}


def high_key_ids(ids: Sequence[int], _seven: Any = EVALUATE_7_IDS) -> int:
    """The best 5-card high hand among 5-7 cards given by ``CARD_ID``, as a key that
    compares like the hands (larger is better, equal exactly on a tie): what the poker
    engine compares at showdown. Same ranking as ``high_rank`` (which also names the hand),
    several times faster. Seven cards (hold'em, stud at showdown) go straight to the C
    function."""
    if len(ids) == 7:
        return -_seven(*ids)  # type: ignore[no-any-return]
    evaluate = _PH_EVAL.get(len(ids))
    if evaluate is None:
        raise ValueError(f"a high hand is made of 5 to 7 cards, not {len(ids)}")
    rank: int = evaluate(*ids)
    return -rank


def high_key(cards: Sequence[str]) -> int:
    """``high_key_ids`` for cards written as text ("Ah", "Td", ...)."""
    return high_key_ids([CARD_ID[c] for c in cards])


def category(rank: tuple[int, ...]) -> str:
    return CATEGORIES[rank[0]]


def best_of(hole: Sequence[str], board: Sequence[str], use_hole: int | None = None) -> tuple[int, ...]:
    """The best high hand from hole cards and a board. ``use_hole`` fixes how many hole
    cards must play (Omaha: exactly 2 hole and 3 board cards)."""
    if use_hole is None:
        return high_rank(list(hole) + list(board))
    return max(high_rank(list(h) + list(b))
               for h in combinations(hole, use_hole) for b in combinations(board, 5 - use_hole))


# --- the other rankings the variants of the PHH corpus need ---------------------------
#
# Every key below compares so that the better hand is the larger key, whatever the game
# (low games negate), so a pot is won by the maximum in every game.

LOW_VALUE = {r: v for v, r in enumerate("A23456789TJQK", start=1)}  # ace low (A-5 lowball, razz, badugi)


def _shape(values: list[int]) -> tuple[int, ...]:
    """(pair structure, ranks by count then rank, high to low) of five values."""
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    order = sorted(counts, key=lambda v: (counts[v], v), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    cat = {(1, 1, 1, 1, 1): 0, (2, 1, 1, 1): 1, (2, 2, 1): 2, (3, 1, 1): 3, (3, 2): 4, (4, 1): 5}[tuple(shape)]
    return (cat, *[v for v in order for _ in range(counts[v])])


def _negate(key: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-x for x in key)


def razz_key(cards: Sequence[str]) -> tuple[int, ...]:
    """Ace-to-five low, best five of the cards (razz, 001 stud family): straights and
    flushes do not count, pairs do; the lowest hand wins."""
    return max(_negate(_shape([LOW_VALUE[c[0]] for c in five])) for five in combinations(cards, 5))


def low8_key(cards: Sequence[str], hole: Sequence[str] | None = None, board: Sequence[str] | None = None,
             ) -> tuple[int, ...] | None:
    """Eight-or-better low: five different ranks, all 8 or lower (ace low), or None.
    With ``hole`` and ``board`` given, exactly two hole and three board cards (Omaha)."""
    if hole is not None and board is not None:
        fives: Any = (h + b for h in combinations(hole, 2) for b in combinations(board, 3))
    else:
        fives = combinations(cards, 5)
    best: tuple[int, ...] | None = None
    for five in fives:
        values = sorted({LOW_VALUE[c[0]] for c in five}, reverse=True)
        if len(values) == 5 and values[0] <= 8:
            key = _negate((0, *values))
            if best is None or key > best:
                best = key
    return best


def _straight_top_ranks(ranks: set[int], wheel: bool) -> int:
    if wheel and 14 in ranks:
        ranks = ranks | {1}
    for top in range(14, 4, -1):
        if all(top - k in ranks for k in range(5)):
            return top
    return 0


def deuce_to_seven_key(cards: Sequence[str]) -> tuple[int, ...]:
    """Deuce-to-seven low of five cards: the worst high hand wins; straights and flushes
    count, the ace is high only (A-2-3-4-5 is no straight)."""
    if len(cards) != 5:
        raise ValueError(f"a deuce-to-seven hand is 5 cards, not {len(cards)}")
    values = [RANK_VALUE[c[0]] for c in cards]
    flush = len({c[1] for c in cards}) == 1
    top = _straight_top_ranks(set(values), wheel=False) if len(set(values)) == 5 else 0
    shape = _shape(values)
    if top and flush:
        key: tuple[int, ...] = (STRAIGHT_FLUSH, top)
    elif shape[0] == 5:
        key = (QUADS, *shape[1:])
    elif shape[0] == 4:
        key = (FULL_HOUSE, *shape[1:])
    elif flush:
        key = (FLUSH, *shape[1:])
    elif top:
        key = (STRAIGHT, top)
    else:
        key = ({0: HIGH_CARD, 1: ONE_PAIR, 2: TWO_PAIR, 3: TRIPS}[shape[0]], *shape[1:])
    return _negate(key)


def badugi_key(cards: Sequence[str]) -> tuple[int, ...]:
    """Badugi (ace-to-five): the most cards of different suits and different ranks play;
    more cards beat fewer, then the lowest highest card, and so on."""
    best: tuple[int, ...] | None = None
    for size in range(min(4, len(cards)), 0, -1):
        for sub in combinations(cards, size):
            if len({c[1] for c in sub}) == size and len({c[0] for c in sub}) == size:
                key = (size, *_negate(tuple(sorted((LOW_VALUE[c[0]] for c in sub), reverse=True))))
                if best is None or key > best:
                    best = key
        if best is not None:
            return best
    raise ValueError("no badugi hand in no cards")


def short_deck_key(cards: Sequence[str]) -> tuple[int, ...]:
    """Short-deck (36 cards, 6 to ace) high hand: a flush beats a full house and
    A-6-7-8-9 is the lowest straight."""
    best: tuple[int, ...] | None = None
    order = (HIGH_CARD, ONE_PAIR, TWO_PAIR, TRIPS, STRAIGHT, FULL_HOUSE, FLUSH, QUADS, STRAIGHT_FLUSH)
    for five in combinations(cards, 5):
        values = [RANK_VALUE[c[0]] for c in five]
        flush = len({c[1] for c in five}) == 1
        vs = set(values)
        top = 0
        if len(vs) == 5:
            if vs == {14, 6, 7, 8, 9}:
                top = 9
            else:
                top = _straight_top_ranks(vs, wheel=False)
        shape = _shape(values)
        rest: tuple[int, ...]
        if top and flush:
            cat, rest = STRAIGHT_FLUSH, (top,)
        elif shape[0] == 5:
            cat, rest = QUADS, shape[1:]
        elif flush:
            cat, rest = FLUSH, shape[1:]
        elif shape[0] == 4:
            cat, rest = FULL_HOUSE, shape[1:]
        elif top:
            cat, rest = STRAIGHT, (top,)
        else:
            cat, rest = {0: HIGH_CARD, 1: ONE_PAIR, 2: TWO_PAIR, 3: TRIPS}[shape[0]], shape[1:]
        key = (order.index(cat), *rest)
        if best is None or key > best:
            best = key
    assert best is not None
    return best


def up_cards_key(cards: Sequence[str], ace_low: bool = False) -> tuple[int, ...]:
    """Strength of 1-4 up cards for who acts first in stud (001 "オープンハンドの中で最強"):
    high card < pair < two pair < trips < quads, then ranks; straights, flushes and suits
    do not count."""
    values = [(LOW_VALUE if ace_low else RANK_VALUE)[c[0]] for c in cards]
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    shape = tuple(sorted(counts.values(), reverse=True))
    cat = {(1,): 0, (1, 1): 0, (1, 1, 1): 0, (1, 1, 1, 1): 0, (2,): 1, (2, 1): 1, (2, 1, 1): 1, (2, 2): 2,
           (3,): 3, (3, 1): 3, (4,): 4}[shape]
    order = sorted(counts, key=lambda v: (counts[v], v), reverse=True)
    return (cat, *[v for v in order for _ in range(counts[v])])

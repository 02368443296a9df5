"""Poker as a pure engine: hold'em, Omaha (hi and hi/lo), short-deck, seven-card stud
(hi and hi/lo), razz, five-card draw, 2-7 single and triple draw, badugi; no-limit,
pot-limit and fixed-limit (``VARIANTS``: the PHH codes, plus N5D/F5D).

Seats are numbered 1..N in the PHH order: seat 1 is the first seat left of the button
(the small blind), seat N the button; heads-up, seat 1 is the big blind and seat 2 the
button, which posts the small blind and acts first before the flop (TDA 2013 rule 33
"ヘッズアップ時のボタン", 002_462257511cde0912.txt; PHH/pokerkit use the same order).

Sources:
- antes, blinds and straddles are posted before the cards, in seat order, each capped
  by the stack (000_c28081091adb3e2e.txt on missed and dead blinds; 002 TDA);
- betting: first to act before the flop is the seat after the last blind or straddle,
  after it seat 1 (the first active seat left of the button). No-limit: a bet or raise is
  at least the minimum bet and at least the previous full raise (TDA 2013 rule 41A; its
  50% rule turns a short raise into a full one before it is recorded: ``tda_raise_to``);
  an all-in for less than a full raise does not reopen the betting for players who have
  already acted (TDA 41B), unless several short all-ins together make a full raise; in
  limit games TDA 41B reopens at half a full raise (house option ``limit_reopen_at_half``;
  pokerkit and the PHH corpus need a full one). Pot-limit: at most the pot after a
  call. Fixed-limit: the small bet before the flop and on the flop, the big bet on the
  turn and river, at most 4 bets and raises per betting round, the blinds not counted
  (the cap as pokerkit counts it, so the corpus and the differential test agree; stud's
  own caps of 001 belong to the stud engine);
- bets beyond what anyone can call are returned; side pots by contribution levels; a
  pot is split between the best hands; the odd chip (TDA 19, house option ``odd_chip``)
  goes to the first winning seat left of the button (board games), to the high card by
  suit (stud, "high_card_by_suit"), or to the winner farthest from the dealer (004's home
  rules, "farthest_from_dealer"); in a hi/lo split it goes to the high half;
- showdown: the last aggressor of the final betting round shows first, else the first
  seat left of the button (002 TDA showdown order), and a hand that is not shown
  (mucked) cannot win (000 on tied hands and kickers).
- rake (house configuration, 001_aa163bb85081239a.txt "レーキ"): ``rake`` =
  {"percent_bp", "threshold", "cap", "from_street"}: e.g. 2% of each pot, nothing on a
  pot under 500, at most 500, and only once the flop is dealt ("no flop, no drop").

The engine is written to agree with pokerkit 0.7.7 (the reference of the PHH corpus) on
every legal action and final stack; ``tests/test_poker_differential.py`` checks it.

Events after ``round.open.v1`` with ``rules`` (see ``PokerRules``):
``poker.post.v1`` {seat, type (ante|blind), amount}; ``poker.deal.v1`` {seat (0 for the
board), cards} (hole cards may be ``"??"`` when unknown, as in hand histories);
``poker.action.v1`` {seat, action (fold|check|call|bet|raise|bring_in|complete), to}:
``to`` is the total bet on this street after a bet, raise or completion;
``poker.draw.v1`` {seat, discard} (``[]`` stands pat); ``poker.burn.v1`` {card} (before a
later street; may be ``"??"``); ``poker.show.v1`` {seat, cards} (``[]`` mucks);
``poker.award.v1`` {pot, amount, rake, winners: [{seat, amount}]} for each pot in order.
"""

from __future__ import annotations

import copy
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from ledger.games import (
    DemoTable,
    EngineDefaults,
    Events,
    Money,
    Play,
    RoundMoney,
    RuleViolation,
    evolve,
    parse_rules,
    register_engine,
    wrap,
)
from ledger.games.cards import show_cards
from ledger.games.poker_hands import (
    CARD_ID,
    EVALUATE_7_IDS,
    badugi_key,
    best_of,
    deuce_to_seven_key,
    high_key_ids,
    low8_key,
    razz_key,
    short_deck_key,
    up_cards_key,
)
from ledger.games.poker_kinds import VARIANTS, PokerRules, Street, Variant
from ledger.games.poker_table import Book

UNKNOWN = "??"
_ID_OR_UNKNOWN = CARD_ID.get  # a card's id, -1 for an unknown card: ``_ID_OR_UNKNOWN(card, -1)``
UNBOUNDED = 10**15  # stands in for a stack the source did not record; never reported


_DRAWS_AFTER = {code: tuple(any(s.draw for s in v.streets[k + 1:]) for k in range(len(v.streets)))
                for code, v in VARIANTS.items()}
"""Per variant and street: whether a later street is a draw."""


@dataclass
class Pot:
    amount: int
    rake: int
    players: tuple[int, ...]  # 0-based seats eligible


@dataclass
class PokerState:
    """Mutable inside ``apply`` only: the engine copies before changing anything."""

    rules: PokerRules
    variant: Variant
    n: int
    stacks: list[int]
    bets: list[int]
    paid: list[int]  # everything put in so far (collected and current bets)
    in_hand: list[bool]
    antes: list[int]
    blinds: list[int]
    hole: list[list[str]]
    up: list[list[bool]]  # parallel to hole: the card is face up (stud)
    burned: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # every known card dealt, burned or shown (one deck)
    discards: set[str] = field(default_factory=set)  # drawn away: dealt again only once the stub is empty
    start_stacks: list[int] = field(default_factory=list)
    board: list[str] = field(default_factory=list)
    # the same cards as phevaluator's ids (``CARD_ID``; -1 for an unknown card), converted
    # once when a card is dealt, drawn or shown: the showdown's high hands are evaluated on
    # them. Tuples: their concatenation goes to the C function as its argument tuple, with
    # no list built and copied on the way (a sixth of the call, measured)
    hole_ids: list[tuple[int, ...]] = field(default_factory=list)
    board_ids: tuple[int, ...] = ()
    phase: str = "antes"  # antes, blinds, hole, board, draw, betting, showdown, award, done
    street: int = -1
    posts_due: deque[tuple[int, str, int]] = field(default_factory=deque)  # (seat, type, amount)
    deal_due: deque[tuple[int, int]] = field(default_factory=deque)  # (seat, count) hole cards owed this street
    draw_due: deque[int] = field(default_factory=deque)  # seats still to stand pat or discard
    actors: deque[int] = field(default_factory=deque)
    opener: int | None = None
    raise_amount: int = 0
    raise_count: int = 0
    big_bets: bool = False  # 001: 4th street went to big bets on an open pair
    bring_in_due: bool = False
    completion: bool = False
    acted: set[int] = field(default_factory=set)
    short_all_ins: list[Any] = field(default_factory=list)
    all_in: bool = False
    showdown_order: deque[int] = field(default_factory=deque)
    aggressor: int | None = None  # the last seat (0-based) to bet or raise in the current betting round
    shown: dict[int, list[str]] = field(default_factory=dict)  # seat -> cards shown ([] = mucked)
    pots: list[Pot] = field(default_factory=list)
    awarded: int = 0
    won: list[int] = field(default_factory=list)
    history: list[tuple[int, str, Any]] = field(default_factory=list)  # (seat, action, amount) for snapshots
    bank_spent: list[int] = field(default_factory=list)  # time bank seconds used this hand, per seat
    binding: tuple[tuple[Any, ...], ...] = ()  # out of turn, binding at the seat's turn: (seat, action, to, street, bet) (TDA 38)
    flying: tuple[tuple[Any, ...], ...] = ()  # 001 flying actions pending: (seat, action, to, chips, street, bet)
    flying_count: tuple[int, ...] = ()  # every flying action so far, by seat (001: the third folds the hand)

    def to_call(self, i: int) -> int:
        return min(self.stacks[i], max(self.bets) - self.bets[i])

    def effective_stack(self, i: int) -> int:
        if not self.in_hand[i]:
            return 0
        totals = sorted(self.bets[j] + self.stacks[j] for j in range(self.n) if self.in_hand[j])
        if len(totals) < 2:
            return 0
        return min(self.stacks[i], max(0, totals[-2] - self.bets[i]))

    @property
    def actor(self) -> int | None:
        return self.actors[0] if self.phase == "betting" and self.actors else None

    @property
    def spec(self) -> Street:
        return self.variant.streets[self.street]

    @property
    def last_street(self) -> bool:
        return self.street == len(self.variant.streets) - 1


def _padded(values: list[int], n: int) -> list[int]:
    """A per-seat list for each of the ``n`` seats, in seat order: 0 where it stops."""
    return values[:n] + [0] * (n - len(values))


def _per_seat(values: list[int] | None, n: int) -> list[int]:
    """A per-seat amount for each of the ``n`` seats (0 where the list stops); heads-up the
    list is read reversed (pokerkit's convention)."""
    if not values:
        return [0] * n
    if n == 2:
        return [values[1] if len(values) > 1 else 0, values[0]]
    return _padded(values, n)


def start_state(rules: PokerRules) -> PokerState:
    n = len(rules.players)
    if len(rules.starting_stacks) != n:
        raise RuleViolation(f"{n} players but {len(rules.starting_stacks)} starting stacks")
    variant = VARIANTS[rules.variant]
    if variant.structure == "fixed-limit" and not (rules.small_bet and rules.big_bet):
        raise RuleViolation("fixed-limit needs small_bet and big_bet")
    if variant.structure != "fixed-limit" and not rules.min_bet:
        raise RuleViolation(f"{variant.structure} needs min_bet")
    stacks = [UNBOUNDED if s is None else s for s in rules.starting_stacks]
    antes = [min(a, s) for a, s in zip(_per_seat(rules.antes, n), stacks)]
    if rules.dead_blinds:
        dead = [min(d, s - a) for d, s, a in zip(_padded(rules.dead_blinds, n), stacks, antes)]  # not reversed
    else:
        dead = [0] * n
    blinds = [min(abs(b), s - a) for b, s, a in zip(_per_seat(rules.blinds_or_straddles, n), stacks, antes)]
    st = PokerState(rules, variant, n, stacks, [0] * n, [0] * n, [True] * n, antes, blinds, [[] for _ in range(n)],
                    [[] for _ in range(n)], start_stacks=list(stacks), won=[0] * n, bank_spent=[0] * n,
                    hole_ids=[()] * n)
    st.posts_due = deque([(i, "ante", antes[i]) for i in range(n) if antes[i]]
                         + [(i, "dead_blind", dead[i]) for i in range(n) if dead[i]])
    st.antes = [a + d for a, d in zip(antes, dead)]  # both are dead money in the first pot
    st.blinds = [min(b, s - a) for b, s, a in zip(blinds, stacks, st.antes)]
    if not st.posts_due:
        _begin_blinds(st)
    return st


def _begin_blinds(st: PokerState) -> None:
    _collect(st, street_none=True)
    st.phase = "blinds"
    st.posts_due = deque([(i, "blind", st.blinds[i]) for i in range(st.n) if st.blinds[i]])
    if not st.posts_due:
        _begin_street(st, 0)


def _begin_street(st: PokerState, street: int) -> None:
    """Deal the street (hole cards, board cards or draws), then bet (or, in an all-in
    runout, show)."""
    st.street = street
    spec = st.spec
    if spec.hole:
        st.phase = "hole"
        st.deal_due = deque((i, len(spec.hole)) for i in range(st.n) if st.in_hand[i])
    elif spec.board:
        st.phase = "board"
    elif spec.draw:
        st.phase = "draw"
        st.draw_due = deque(i for i in range(st.n) if st.in_hand[i])
        st.deal_due = deque()
    else:  # pragma: no cover - every street deals something
        _street_dealt(st)


def _street_dealt(st: PokerState) -> None:
    if st.phase == "draw" and st.draw_due:
        return
    if st.deal_due:
        st.phase = "hole"
        return
    if st.all_in:
        _begin_showdown(st)
    else:
        _begin_betting(st)


def _up_cards(st: PokerState, i: int) -> list[str]:
    return [c for c, u in zip(st.hole[i], st.up[i]) if u and c != UNKNOWN] if st.in_hand[i] else []


def _opener(st: PokerState) -> int:
    n = st.n
    opening = st.spec.opening
    if opening == "position":
        blinds = st.rules.blinds_or_straddles or [0] * n
        signs = [(v > 0) - (v < 0) for v in (list(blinds) + [0] * n)[:n]]
        if n == 2:
            signs = signs[::-1]  # heads-up the blinds are read reversed (seat 2 posts the small blind)
        top = max(range(n), key=lambda i: (st.bets[i] * signs[i], i))
        return (top + 1) % n
    ups = [_up_cards(st, i) for i in range(n)]
    if opening in ("low_card", "high_card"):
        ace_low = opening == "high_card"
        order = "A23456789TJQK" if ace_low else "23456789TJQKA"
        keys = [min(((order.index(c[0]), c[1]) for c in u), default=None) if not ace_low
                else max(((order.index(c[0]), c[1]) for c in u), default=None) for u in ups]
        present = [k for k in keys if k is not None]
        best = min(present) if opening == "low_card" else max(present)
        return keys.index(best)
    entries: list[tuple[int, ...] | None] = [up_cards_key(u, ace_low=opening == "low_hand") if u else None for u in ups]
    shown = [e for e in entries if e is not None]
    strongest = max(shown) if opening == "high_hand" else min(shown)
    return entries.index(strongest)


DRAW_FIRST_BETTOR = frozenset({"N5D", "F5D"})
"""004 ドローポーカー (5): after the draw the betting starts with the player who first bet
or raised the amount the pre-draw betting ended on (its last aggressor), else by position."""


def _begin_betting(st: PokerState) -> None:
    n = st.n
    previous, st.aggressor = st.aggressor, None
    st.opener = _opener(st)
    if st.variant.code in DRAW_FIRST_BETTOR and st.street > 0 and previous is not None and st.in_hand[previous]:
        st.opener = previous
    bets, stacks, in_hand = st.bets, st.stacks, st.in_hand
    totals = sorted([bets[j] + stacks[j] for j in range(n) if in_hand[j]])
    # pokerkit's effective stack > 0: what anyone can lose is capped by the second-largest stack
    if len(totals) > 1:
        second = totals[-2]
        start = st.opener
        st.actors = deque([i for i in (*range(start, n), *range(start)) if in_hand[i] and stacks[i]
                           and min(stacks[i], second - bets[i]) > 0])
    else:
        st.actors = deque()
    st.raise_amount = 0
    st.raise_count = 0
    st.big_bets = False
    st.acted = set()
    st.short_all_ins = []
    st.bring_in_due = st.street == 0 and bool(st.rules.bring_in) and st.variant.stud
    st.completion = st.bring_in_due
    st.phase = "betting"
    if (len(st.actors) == 1 and st.bets[st.actors[0]] >= max(st.bets)) or not st.actors or sum(st.in_hand) <= 1:
        _end_betting(st)


def _after_action(st: PokerState) -> None:
    if not st.actors or sum(st.in_hand) <= 1:
        _end_betting(st)


def _end_betting(st: PokerState) -> None:
    st.actors = deque()
    later_draws = _DRAWS_AFTER[st.variant.code][st.street]
    if sum(st.in_hand) > 1 and not later_draws and sum(1 for i in range(st.n) if st.in_hand[i] and st.stacks[i]) <= 1:
        st.all_in = True
    if not all(st.stacks) and st.last_street:
        st.all_in = True
    _collect(st)
    if sum(st.in_hand) == 1:
        _begin_award(st)
    elif st.last_street or st.all_in:
        _begin_showdown(st)
    else:
        _begin_street(st, st.street + 1)


def _collect(st: PokerState, street_none: bool = False) -> None:
    """Collect the street's bets; an uncalled excess goes back (pokerkit collect_bets)."""
    if not any(st.bets):
        return
    players = list(range(st.n))
    if sum(st.in_hand) == 1:  # the last player's bet is not called: it stays his (back at the end)
        players.remove(st.in_hand.index(True))
    if not street_none or st.rules.ante_trimming:
        cutoff = sorted(st.bets)[-2] if st.n > 1 else 0
        for i in players:
            if st.bets[i] > cutoff:
                over = st.bets[i] - cutoff
                st.stacks[i] += over
                st.paid[i] -= over
                st.bets[i] = cutoff
    for i in players:
        st.bets[i] = 0


def _begin_showdown(st: PokerState) -> None:
    """Hands still in are shown (or mucked). After an all-in the showdown is repeated after
    each street dealt in the runout, for hands not yet face up (pokerkit's runout)."""
    st.phase = "showdown"
    order = deque(range(st.n))
    if st.opener is not None and st.rules.showdown != "button_left":
        order.rotate(-st.opener)
    st.showdown_order = deque(i for i in order if st.in_hand[i] and not _face_up(st, i))
    _showdown_progress(st)


def _face_up(st: PokerState, i: int) -> bool:
    cards = st.shown.get(i)
    return bool(cards) and UNKNOWN not in (cards or [])


def _showdown_progress(st: PokerState) -> None:
    if st.showdown_order:
        return
    if st.last_street or sum(st.in_hand) <= 1:
        _begin_award(st)
    else:
        _begin_street(st, st.street + 1)  # the runout: deal the next street, then show again


def high_hand_key(st: PokerState, i: int, _seven: Any = EVALUATE_7_IDS) -> int | None:
    """Seat i's best high hand from its hole cards and the board (``high_key_ids``), or
    None with fewer than five cards. Seven cards (hold'em, stud at showdown) go straight
    to phevaluator's C function, one Python call less on the common path."""
    ids = st.hole_ids[i] + st.board_ids
    if len(ids) == 7:
        return -_seven(*ids)  # type: ignore[no-any-return]
    return high_key_ids(ids) if len(ids) >= 5 else None


HAND_KEYS: dict[str, Any] = {  # the other rankings, on the cards as text
    "omaha_high": lambda hole, board: best_of(hole, board, 2),
    "short_deck": lambda hole, board: short_deck_key(hole + board),
    "low8": lambda hole, board: low8_key(hole + board),
    "omaha_low8": lambda hole, board: low8_key([], hole, board),
    "razz": lambda hole, board: razz_key(hole),
    "low27": lambda hole, board: deuce_to_seven_key(hole),
    "badugi": lambda hole, board: badugi_key(hole),
}


def hand_key(st: PokerState, i: int, kind: str) -> Any:
    """The comparable value (larger wins) of seat i's shown hand for one hand type, or
    None (not shown, cards not on record, or no qualifying low)."""
    cards = st.shown.get(i)
    if not cards or UNKNOWN in cards or not st.in_hand[i]:
        return None
    if kind == "high":
        return high_hand_key(st, i)
    return HAND_KEYS[kind](list(st.hole[i]), list(st.board))  # a tuple here, an int for "high": compared within a kind


def compute_pots(st: PokerState) -> list[Pot]:
    """Main and side pots as pokerkit forms them (antes as dead money in the first pot
    unless trimmed; consecutive pots with the same players merged), raked by the rules."""
    contributions = [st.paid[i] - st.bets[i] for i in range(st.n)]
    pending = list(st.paid)
    amount = 0
    if not st.rules.ante_trimming:
        for i in range(st.n):
            amount += st.antes[i]
            contributions[i] -= st.antes[i]
            pending[i] -= st.antes[i]
    pots: list[Pot] = []
    previous = 0
    for level in sorted(set(contributions)):
        for i in range(st.n):
            if contributions[i] >= level:
                amount += level - previous
        players = tuple(i for i in range(st.n) if pending[i] >= level and st.in_hand[i])
        while pots and pots[-1].players == players:
            amount += pots.pop().amount
        if amount:
            pots.append(Pot(amount, 0, players))
        amount = 0
        previous = level
    rake = st.rules.rake
    if rake is not None and st.street >= rake.from_street:
        if rake.per == "pot":
            for p in pots:
                if p.amount >= rake.threshold:
                    r = p.amount * rake.percent_bp // 10_000
                    p.rake = min(r, rake.cap) if rake.cap is not None else r
        else:  # 001 ⑤: 2% of the hand's pot, side pots included, nothing under 500, at most 500 a hand
            total = sum(p.amount for p in pots)
            left = 0
            if total >= rake.threshold:
                left = total * rake.percent_bp // 10_000
                left = min(left, rake.cap) if rake.cap is not None else left
            for p in pots:  # taken from the main pot first
                p.rake = min(left, p.amount)
                left -= p.rake
    return pots


def _begin_award(st: PokerState) -> None:
    st.phase = "award"
    if sum(st.in_hand) > 1:  # hands that can win no pot are dead before the chips move
        pots = compute_pots(st)
        alive = [i for i in range(st.n) if st.in_hand[i] and _can_win(st, i, pots)]
        for i in range(st.n):
            st.in_hand[i] = i in alive
    st.pots = compute_pots(st)
    if not st.pots:
        st.phase = "done"


def _can_win(st: PokerState, i: int, pots: list[Pot]) -> bool:
    """Seat i's shown hand is at least as good as every other in some pot it is in, for
    some hand type (pokerkit ``can_win_now``)."""
    for kind in st.variant.hands:
        mine = hand_key(st, i, kind)
        if mine is None:
            continue
        for pot in pots:
            if i not in pot.players:
                continue
            others = [k for k in (hand_key(st, j, kind) for j in pot.players) if k is not None]
            if not others or mine >= max(others):
                return True
    return False


def pot_winners(st: PokerState, pot: Pot) -> dict[int, int]:
    """0-based seat -> amount for one pot. Split pots (hi/lo) go half to each hand type
    that anyone holds, the odd chip to the high half; each half to the best hand(s), the
    odd chip to the first winning seat left of the button (TDA; pokerkit: lowest seat)."""
    amount = pot.amount - pot.rake
    contenders = [i for i in pot.players if st.in_hand[i]]
    if len(contenders) == 1 or sum(st.in_hand) == 1:
        return {contenders[0]: amount} if contenders else {}
    types = [k for k in st.variant.hands if any(hand_key(st, i, k) is not None for i in range(st.n))]
    out: dict[int, int] = {}
    if not types:
        return out
    q, r = divmod(amount, len(types))
    for t, kind in enumerate(types):
        share = q + (r if t == 0 else 0)
        keys = {i: hand_key(st, i, kind) for i in contenders}
        present = [k for k in keys.values() if k is not None]
        best = max(present) if present else None
        winners = sorted(i for i, k in keys.items() if k == best)
        if not winners or share == 0:
            continue
        wq, wr = divmod(share, len(winners))
        first = _odd_chip_seat(st, winners)
        for w in winners:
            out[w] = out.get(w, 0) + wq + (wr if w == first else 0)
    return out


def _odd_chip_seat(st: PokerState, winners: list[int]) -> int:
    """Who takes the odd chip among tied winners (TDA 19; house option ``odd_chip``)."""
    rule = st.rules.odd_chip
    if rule == "high_card_by_suit":
        def top(i: int) -> tuple[int, str]:
            return max(("23456789TJQKA".index(c[0]), c[1]) for c in st.hole[i] if c != UNKNOWN)
        return max(winners, key=top)
    if rule == "farthest_from_dealer":  # 004: seats go clockwise from the dealer's left; the dealer is the button
        return max(winners, key=lambda i: i if i != st.n - 1 else -1)
    return min(winners)  # the first seat left of the button


def _step(st: PokerState) -> int:
    if st.variant.structure != "fixed-limit":
        return st.rules.min_bet  # type: ignore[return-value]  # PokerRules requires min_bet for big-bet games
    big = st.spec.bet == "big" or st.big_bets
    return st.rules.big_bet if big else st.rules.small_bet  # type: ignore[return-value]  # fixed-limit rules carry both


def raise_limits(st: PokerState, i: int, big: bool = False) -> tuple[int, int] | str:
    """(min, max) total a bet, raise or completion may go to for seat ``i`` (0-based)."""
    to_call = st.to_call(i)
    if to_call < st.raise_amount and not (st.rules.limit_reopen_at_half and st.variant.structure == "fixed-limit"):
        return "an all-in for less than a full raise does not reopen the betting (TDA 41B)"
    max_count = 4 if st.variant.structure == "fixed-limit" else None
    if max_count is not None and st.raise_count >= max_count:
        return ("the betting is capped: at most 4 bets and raises in a betting round, the blinds and the"
                " bring-in not counted (001 ベッティング: 'ベット額の上限は4倍'; pokerkit counts the same)")
    needed = st.raise_amount
    if st.rules.limit_reopen_at_half and st.variant.structure == "fixed-limit":
        needed = (st.raise_amount + 1) // 2  # TDA 41B: in limit, half a full raise reopens
    if st.short_all_ins and sum(st.short_all_ins) < needed and i in st.acted:
        return "the player already acted and an all-in short of a full raise does not reopen the betting (TDA 41B)"
    if st.stacks[i] <= max(st.bets) - st.bets[i]:
        return "the player is covered by the bet already: only a call is possible"
    if not any(j != i and st.in_hand[j] and st.stacks[j] + st.bets[j] > max(st.bets) for j in range(st.n)):
        return "every other player has folded or is all-in: there is no one to raise"
    step = st.rules.big_bet if big else _step(st)
    low = max(st.raise_amount, step) + (0 if st.completion else max(st.bets))  # type: ignore[type-var,operator]  # step is set for every betting structure
    top = st.stacks[i] + st.bets[i]
    low = min(top, low)
    if st.variant.structure == "fixed-limit":
        high = low
    elif st.variant.structure == "pot-limit":
        pot_total = sum(st.paid)
        high = min(top, max(low, 2 * max(st.bets) - st.bets[i] + pot_total))
    else:
        high = top
    return low, high


def _open_pair(st: PokerState) -> bool:
    """001 4th street: some player still in shows a pair among the up cards."""
    for i in range(st.n):
        ranks = [c[0] for c in _up_cards(st, i)]
        if len(ranks) != len(set(ranks)):
            return True
    return False


def _act(st: PokerState, seat: int, action: str, to: int | None) -> None:
    i = seat - 1
    if st.phase != "betting":
        raise RuleViolation(f"no betting now (the hand is in its {st.phase} phase)")
    if st.actor != i:
        raise RuleViolation(f"seat {seat} acted out of turn: seat {st.actor + 1} is to act (TDA 38: action out of turn)")  # type: ignore[operator]  # betting: someone is to act
    if to is not None and action in ("fold", "check", "call", "bring_in"):
        raise RuleViolation(f"{action} takes no amount")
    if st.bring_in_due and action not in ("bring_in", "complete"):
        raise RuleViolation(f"seat {seat} brings in: it posts the bring-in or completes (001 BRING IN / COMPLETE)")
    if action == "fold":
        st.actors.popleft()
        st.acted.add(i)
        st.in_hand[i] = False
        st.history.append((seat, "fold", None))
        _after_action(st)
        return
    to_call = st.to_call(i)
    if action == "bring_in":
        if not st.bring_in_due:
            raise RuleViolation("the bring-in is posted only by the first player to act on 3rd street (001)")
        assert st.rules.bring_in is not None  # stud rules carry a bring-in (PokerRules)
        amount = min(st.stacks[i], st.rules.bring_in)
        st.actors.popleft()
        st.acted.add(i)
        st.bets[i] += amount
        st.stacks[i] -= amount
        st.paid[i] += amount
        st.bring_in_due = False
        st.history.append((seat, "bring_in", amount))
        _after_action(st)
        return
    if action in ("check", "call"):
        if (action == "check") != (to_call == 0):
            raise RuleViolation(f"seat {seat} faces {to_call} to call: it may not {action}")
        st.actors.popleft()
        st.acted.add(i)
        st.bets[i] += to_call
        st.stacks[i] -= to_call
        st.paid[i] += to_call
        st.history.append((seat, action, to_call or None))
        _after_action(st)
        return
    if action == "complete" and not st.completion:
        raise RuleViolation("a completion is only to the small bet after a bring-in (001 COMPLETE)")
    if action in ("bet", "raise") and st.completion:
        raise RuleViolation(f"after a bring-in the next step up is a completion, not a {action} (001 COMPLETE)")
    if action == "bet" and max(st.bets):
        raise RuleViolation(f"there is a bet of {max(st.bets)} already: seat {seat} may raise, not bet")
    if action == "raise" and not max(st.bets):
        raise RuleViolation(f"there is no bet to raise: seat {seat} may bet")
    limits = raise_limits(st, i)
    if isinstance(limits, str):
        raise RuleViolation(f"seat {seat} may not {action}: {limits}")
    low, high = limits
    if (to is not None and to != low and st.rules.open_pair_big_bet and st.street == 1 and not st.big_bets
            and st.variant.stud and _open_pair(st)):
        big = raise_limits(st, i, big=True)
        if not isinstance(big, str) and to == big[0]:
            low = high = to
            st.big_bets = True  # 001: the rest of 4th street goes in big bets
    if to is None or not low <= to <= high:
        rule = {"no-limit": "at least the minimum bet and the last full raise (TDA 41A)",
                "pot-limit": "between the minimum raise and the pot", "fixed-limit": "exactly the fixed bet size"}
        raise RuleViolation(f"seat {seat} {action} to {to}: the {st.variant.structure} limits here are {low} to {high},"
                            f" {rule[st.variant.structure]}")
    increment = to - max(st.bets)
    delta = to - st.bets[i]
    st.bets[i] = to
    st.stacks[i] -= delta
    st.paid[i] += delta
    order = deque(range(st.n))
    order.rotate(-i)
    order.popleft()
    st.actors = deque(j for j in order if st.in_hand[j] and st.stacks[j])
    st.opener = i
    st.aggressor = i
    st.completion = False
    st.bring_in_due = False
    if increment >= st.raise_amount:
        st.acted = {i}
    else:
        st.acted.add(i)
    st.raise_amount = max(st.raise_amount, increment)
    st.raise_count += 1
    if st.stacks[i]:
        st.short_all_ins = []
    else:
        st.short_all_ins.append(increment)
    if sum(st.short_all_ins) >= st.raise_amount:
        st.short_all_ins = []
    st.history.append((seat, action, to))
    _after_action(st)


def _deck_problem(st: PokerState, cards: list[str]) -> str | None:
    if (UNKNOWN not in cards and st.variant.deck == "standard" and st.seen.isdisjoint(cards)
            and len(set(cards)) == len(cards) and (not st.discards or st.discards.isdisjoint(cards))):
        return None  # the common case: fresh, distinct, known cards
    known = [c for c in cards if c != UNKNOWN]
    if st.variant.deck == "short" and any(c[0] in "2345" for c in known):
        return f"{next(c for c in known if c[0] in '2345')} is not in the 36-card short deck (six to ace)"
    seen = st.seen
    dup = [c for c in known if c in seen] or [c for c in known if known.count(c) > 1]
    deck_size = 36 if st.variant.deck == "short" else 52
    stub_empty = len(seen) + len(st.discards) >= deck_size
    dup += [c for c in known if c in st.discards and not stub_empty]
    if dup:
        return f"{dup[0]} was already dealt (one deck)"
    return None


def _deal(st: PokerState, seat: int, cards: list[str]) -> None:
    problem = _deck_problem(st, cards)
    if problem:
        raise RuleViolation(problem)
    if seat == 0:
        if UNKNOWN in cards:
            raise RuleViolation("board cards are dealt face up: none may be unknown")
        if st.phase != "board":
            raise RuleViolation(f"no board card is due now (the hand is in its {st.phase} phase)")
        want = st.spec.board
        if len(cards) != want:
            raise RuleViolation(f"this street deals {want} board card(s), not {len(cards)}")
        st.board.extend(cards)
        st.board_ids += tuple([_ID_OR_UNKNOWN(c, -1) for c in cards])
        st.seen.update(cards)
        _street_dealt(st)
        return
    if st.phase != "hole" or not st.deal_due:
        raise RuleViolation(f"no hole cards are dealt now (the hand is in its {st.phase} phase)")
    due_seat, count = st.deal_due[0]
    if due_seat != seat - 1:
        raise RuleViolation(f"the next hole cards go to seat {due_seat + 1}, not seat {seat}")
    if len(cards) != count:
        raise RuleViolation(f"seat {seat} is dealt {count} card(s) now, not {len(cards)}")
    st.deal_due.popleft()
    i = seat - 1
    st.hole[i] = st.hole[i] + list(cards)
    st.hole_ids[i] += tuple([_ID_OR_UNKNOWN(c, -1) for c in cards])
    st.seen.update(cards if UNKNOWN not in cards else [c for c in cards if c != UNKNOWN])
    if st.discards:
        st.discards.difference_update(cards)  # a reshuffled discard is live again
    ups = st.spec.hole or (False,) * count
    st.up[i] = st.up[i] + list(ups)
    if not st.deal_due:
        _street_dealt(st)


def _draw(st: PokerState, seat: int, discard: list[str]) -> None:
    i = seat - 1
    if st.phase != "draw" or not st.draw_due:
        raise RuleViolation(f"no draw now (the hand is in its {st.phase} phase)")
    if st.draw_due[0] != i:
        raise RuleViolation(f"seat {st.draw_due[0] + 1} draws before seat {seat}")
    hand = list(st.hole[i])
    for c in discard:
        if c in hand:
            hand.remove(c)
            st.seen.discard(c)
            st.discards.add(c)
        elif c == UNKNOWN and UNKNOWN in hand:
            hand.remove(UNKNOWN)
        else:
            raise RuleViolation(f"seat {seat} discards {c}, which is not in its hand")
    st.hole[i] = hand
    st.hole_ids[i] = tuple([_ID_OR_UNKNOWN(c, -1) for c in hand])
    st.up[i] = [False] * len(hand)
    st.draw_due.popleft()
    if discard:
        st.deal_due.append((i, len(discard)))
    st.history.append((seat, "draw", len(discard)))
    if not st.draw_due:
        _street_dealt(st)


def _show(st: PokerState, seat: int, cards: list[str]) -> None:
    i = seat - 1
    if st.phase in ("award", "done"):  # a player may show after winning uncontested; it changes nothing
        if cards and sorted(cards) != sorted(st.hole[i]) and UNKNOWN not in st.hole[i]:
            raise RuleViolation(f"seat {seat} shows {cards} but holds {st.hole[i]}")
        st.history.append((seat, "show", None))
        return
    if st.phase != "showdown" or not st.showdown_order:
        raise RuleViolation(f"no showdown now (the hand is in its {st.phase} phase)")
    if i not in st.showdown_order:
        raise RuleViolation(f"seat {seat} has no hand to show or muck")
    if st.rules.showdown != "as_recorded":
        all_in = st.all_in or any(st.in_hand[j] and not st.stacks[j] for j in range(st.n))
        if not cards and all_in:
            raise RuleViolation(f"seat {seat} may not muck: when a player is all-in and the betting is over every"
                                " hand is tabled (TDA 15; 001 ⑨ オールインプレイヤーは強制的にオープン)")
        if not all_in and i != st.showdown_order[0]:
            raise RuleViolation(f"seat {st.showdown_order[0] + 1} shows (or mucks) first, not seat {seat}: " + (
                "the first seat left of the button (001 ⑨, LOJ rule)" if st.rules.showdown == "button_left" else
                "the last aggressor of the final betting round, else the first seat left of the button (TDA 16; 001 ⑨)"))
    if cards:
        held = st.hole[i]
        if len(cards) != len(held):
            raise RuleViolation(f"seat {seat} holds {len(held)} cards, and shows {len(cards)}")
        if all(c == UNKNOWN for c in cards):
            cards = list(held)  # shown, cards not written down: the dealt cards are the record
        else:
            merged = _merge_shown(held, cards)
            if merged is None:
                raise RuleViolation(f"seat {seat} shows {cards} but holds {held}")
            others = {c for j, h in enumerate(st.hole) if j != i for c in h if c != UNKNOWN} | set(st.board)
            if any(c in others for c in merged if c != UNKNOWN):
                raise RuleViolation(f"seat {seat} shows a card dealt elsewhere")
            cards = merged
            st.seen.update(c for c in cards if c != UNKNOWN)
        st.hole[i] = list(cards)
        st.hole_ids[i] = tuple([_ID_OR_UNKNOWN(c, -1) for c in cards])
    else:
        st.in_hand[i] = False  # a mucked hand cannot win (000 tied hands; TDA showdown)
    st.shown[i] = list(cards)
    st.showdown_order.remove(i)
    st.history.append((seat, "show" if cards else "muck", None))
    _showdown_progress(st)


def _merge_shown(held: list[str], shown: list[str]) -> list[str] | None:
    """The hand as shown: known cards must match what was dealt; unknown dealt cards take
    the shown values. None when they contradict."""
    rest = list(shown)
    for c in held:
        if c != UNKNOWN:
            if c not in rest:
                return None
            rest.remove(c)
    out = []
    for c in held:
        if c != UNKNOWN:
            out.append(c)
        else:
            out.append(rest.pop(0))
    return out


def _award(st: PokerState, p: dict[str, Any]) -> None:
    if st.phase != "award":
        raise RuleViolation(f"no pot is awarded now (the hand is in its {st.phase} phase)")
    index = p["pot"]
    if index != st.awarded + 1:
        raise RuleViolation(f"pot {st.awarded + 1} is awarded next, not pot {index}")
    pot = st.pots[st.awarded]
    want = pot_winners(st, pot)
    got = {w["seat"] - 1: w["amount"] for w in p["winners"]}
    if (p["amount"], p["rake"]) != (pot.amount, pot.rake) or got != want:
        show = ", ".join(f"seat {s + 1} {a}" for s, a in sorted(want.items())) or "nobody (no shown hand)"
        raise RuleViolation(f"pot {index} is {pot.amount} with rake {pot.rake} and goes to {show};"
                            f" the award says {p['amount']} rake {p['rake']} to "
                            + ", ".join(f"seat {s + 1} {a}" for s, a in sorted(got.items())))
    for s, a in want.items():
        st.won[s] += a
    st.awarded += 1
    if st.awarded == len(st.pots):
        st.phase = "done"


def final_stacks(st: PokerState) -> list[int]:
    return [st.stacks[i] + st.won[i] + st.bets[i] for i in range(st.n)]


class PokerEngine(EngineDefaults):
    game = "poker"
    kinds = frozenset({"poker.post.v1", "poker.deal.v1", "poker.action.v1", "poker.draw.v1", "poker.burn.v1",
                       "poker.show.v1", "poker.award.v1", "poker.timeout.v1"})
    rules_model = PokerRules
    banking: Final = "pool"
    equipment: Final = None
    house_edges: dict[str, str] = {}  # the players play each other: the house takes rake, it has no edge
    demo_tables = (DemoTable("PK", signer="game", players=(3, 5),
                             config={"rules": {"variant": "NT", "min_bet": 100}, "blinds": [50, 100]}),)

    def money(self, outcome: dict[str, Any]) -> RoundMoney:
        """Each seat's ``net`` (final − starting stack); the house keeps the rake."""
        out = RoundMoney()
        for seat in outcome.get("seats", []):
            out.nets[seat["player"]] = out.nets.get(seat["player"], 0) + seat["net"]
            out.wagered[seat["player"]] = out.wagered.get(seat["player"], 0) + seat.get("put_in", 0)
            out.brought[seat["player"]] = seat.get("starting_stack")
        out.rake = sum(p["rake"] for p in outcome.get("pots", []))
        out.staked = sum(p["amount"] for p in outcome.get("pots", []))
        out.paid = out.staked - out.rake
        out.house_net = out.rake
        return out

    def house_edge(self, name: str) -> dict[str, dict[str, Any]]:
        raise ValueError("poker has no house edge: the players play each other and the house takes rake")

    round_keys = frozenset({"players", "starting_stacks", "antes", "blinds_or_straddles", "dead_blinds", "time_banks"})
    """Who plays a hand, their stacks and who posts what: the hand's own (issue 15 point 1);
    the amounts are checked against the table's ``blinds`` and ``ante``
    (``structure_problem``)."""

    unset_keys = frozenset({"variant", "min_bet", "small_bet", "big_bet", "bring_in", "action_clock_s", "scale"})
    """The game and its stakes: no seed text fixes them; a table's configuration does."""

    def seed_problem(self, rules: dict[str, Any], seats: int) -> str | None:
        """001 (the fixed-limit seven-card stud ring game): 7 seats; the bring-in is 40% of
        the small bet (``bring_in_percent``, default 40); the rake is at most 2% of the pot,
        nothing under 500, at most 500 (001 ⑤ レーキ). The stud rake bound is applied to
        every poker table of the house (000 names no rake of its own: "see the website")."""
        variant = VARIANTS.get(rules.get("variant", ""))
        if variant is not None and variant.stud:
            if seats > 7:
                return f"a seven-card stud table has at most 7 seats, not {seats} (001 座席数)"
            bring_in, small = rules.get("bring_in"), rules.get("small_bet")
            pct = rules.get("bring_in_percent", 40)
            if bring_in is not None and small is not None and bring_in != small * pct // 100:
                return (f"the bring-in is {pct}% of the small bet {small}, {small * pct // 100}, not {bring_in}"
                        " (001 ブリングイン)")
        rake = rules.get("rake")
        if rake is not None and rake.get("percent_bp", 0) > 0:
            if rake["percent_bp"] > 200 or rake.get("threshold", 0) < 500 or rake.get("cap") is None \
                    or rake["cap"] > 500:
                return ("the rake is at most 2% of the pot, nothing on a pot under 500, capped at 500 (001 ⑤"
                        f" レーキ), not {rake}")
        return None

    def structure_problem(self, config: dict[str, Any], rules: dict[str, Any]) -> str | None:
        """A hand's forced bets against the table's: the live blinds are the table's small
        and big blind (seat 1 and 2; heads-up the button's small blind and the big blind),
        a returning player's live blind is the big blind and their dead blind the small
        blind (000 missed blinds); every ante is the table's ante."""
        blinds = config.get("blinds")
        if blinds is not None:
            posted = [b for b in rules.get("blinds_or_straddles") or [] if b != 0]
            live = sorted(b for b in posted if b > 0)
            if live not in (sorted(blinds), [blinds[1]]):  # the big blind alone: a dead small blind (TDA 31)
                return f"the hand's blinds {posted} are not the table's {blinds[0]}/{blinds[1]}"
            if any(b < 0 and -b != blinds[1] for b in posted):
                return f"a returning player's live blind is the big blind {blinds[1]} (000 missed blinds)"
            if any(d not in (0, blinds[0]) for d in rules.get("dead_blinds") or []):
                return f"a dead blind is the small blind {blinds[0]} (000 missed blinds)"
        ante = config.get("ante")
        antes = [a for a in rules.get("antes") or [] if a]
        if any(a != ante for a in antes) or (ante and not antes):
            return f"every ante is the table's {ante or 0}, not {rules.get('antes')}"
        return None

    def demo_round(self, rng: Any, players: list[str], cards: Any) -> tuple[dict[str, Any], Events]:
        return random_hand(rng, players, [10_000] * len(players))

    def table_book(self, seats: int, config: dict[str, Any] | None) -> Book | None:
        """A table the floor configured carries seats and stacks from hand to hand, and,
        with ``blinds``, its button and blinds (``ledger.games.poker_table``, issue 15
        point 4); an unconfigured table (imported hand histories) does not."""
        if config is None:
            return None
        book = Book(seats, None)
        book.configure(config)
        return book

    def final_chips(self, state: PokerState) -> dict[str, int]:
        return dict(zip(state.rules.players, final_stacks(state), strict=True))

    def rule_on(self, state: PokerState, payload: dict[str, Any]) -> tuple[PokerState | None, dict[str, int]]:
        return rule_on(state, payload)

    def start(self, rules: dict[str, Any]) -> PokerState:
        return start_state(parse_rules(PokerRules, rules, "poker"))

    def apply(self, state: PokerState, kind: str, p: dict[str, Any]) -> PokerState:
        """The state after the event, as a new value (``state`` is left as it was)."""
        return self.apply_in_place(_copy(state), kind, p)

    def apply_in_place(self, st: PokerState, kind: str, p: dict[str, Any]) -> PokerState:
        """For callers that replay a hand from its start and drop it on the first refusal
        (import, replay, benchmarks): the same rules without copying the state."""
        if kind == "poker.action.v1" and (st.binding or st.flying):
            st = out_of_turn_due(st, p)
        if kind == "poker.action.v1" and not st.posts_due:  # the most frequent event first
            _act(st, p["seat"], p["action"], p.get("to"))
            return st
        if kind == "poker.post.v1":
            if st.phase not in ("antes", "blinds") or not st.posts_due:
                raise RuleViolation("no forced bet is due now")
            seat, typ, amount = st.posts_due[0]
            got = (p["seat"] - 1, p["type"], p["amount"])
            if got != (seat, typ, amount):
                raise RuleViolation(f"the next forced bet is seat {seat + 1} {typ} {amount}, not seat {p['seat']}"
                                    f" {p['type']} {p['amount']} (antes, then blinds and straddles, in seat order,"
                                    " capped by the stack)")
            st.posts_due.popleft()
            st.bets[seat] += amount
            st.stacks[seat] -= amount
            st.paid[seat] += amount
            if not st.posts_due:
                if st.phase == "antes":
                    _begin_blinds(st)
                else:
                    _begin_street(st, 0)
            return st
        if st.posts_due:
            raise RuleViolation(f"seat {st.posts_due[0][0] + 1} must post its {st.posts_due[0][1]} first")
        if kind == "poker.deal.v1":
            _deal(st, p["seat"], p["cards"])
        elif kind == "poker.action.v1":
            _act(st, p["seat"], p["action"], p.get("to"))
        elif kind == "poker.draw.v1":
            _draw(st, p["seat"], p["discard"])
        elif kind == "poker.burn.v1":
            if st.phase not in ("board", "hole") or st.street < 1:
                raise RuleViolation(f"a card is burned only before a later street is dealt (the hand is in its"
                                    f" {st.phase} phase)")
            problem = _deck_problem(st, [p["card"]])
            if problem:
                raise RuleViolation(problem)
            st.burned.append(p["card"])
            if p["card"] != UNKNOWN:
                st.seen.add(p["card"])
        elif kind == "poker.show.v1":
            _show(st, p["seat"], p["cards"])
        elif kind == "poker.timeout.v1":
            _timeout(st, p["seat"], p["waited_s"])
        elif kind == "poker.award.v1":
            _award(st, p)
        else:
            raise RuleViolation(f"{kind} is not a poker event")
        return st

    def close_problem(self, state: PokerState) -> str | None:
        if state.phase != "done":
            return f"the hand is still in its {state.phase} phase"
        return None

    def draws(self, state: PokerState) -> tuple[tuple[Any, ...], list[Any], bool]:
        cards = [c for h in state.hole for c in h] + list(state.board)
        return ("cards", 1), cards, state.phase in ("award", "done")

    def snapshot(self, st: PokerState) -> dict[str, Any]:
        names = ["3rd", "4th", "5th", "6th", "7th"] if st.variant.stud else (
            ["preflop", "flop", "turn", "river"] if st.variant.streets[1].board else
            ["predraw"] + [f"draw {k}" for k in range(1, len(st.variant.streets))])
        return {
            "phase": st.phase,
            "street": names[st.street] if st.street >= 0 else None,
            "board": list(st.board),
            "seats": [{"seat": i + 1, "player": st.rules.players[i],
                       "stack": None if st.rules.starting_stacks[i] is None
                       else final_stacks(st)[i] if st.phase == "done" else st.stacks[i], "bet": st.bets[i],
                       "in_hand": st.in_hand[i], "all_in": st.in_hand[i] and st.stacks[i] == 0 and st.paid[i] > 0,
                       "cards": list(st.hole[i])} for i in range(st.n)],
            "pot": sum(st.paid) - sum(st.bets),
            "to_act": st.actor + 1 if st.actor is not None else None,
            "last_action": list(st.history[-1]) if st.history else None,
        }

    def describe(self, st: PokerState, money: Money) -> list[str]:
        snap = self.snapshot(st)
        head = [snap["street"] or snap["phase"]]
        if snap["board"]:
            head.append(f"board {show_cards(snap['board'])}")
        head.append(f"pot {money(snap['pot'])}")
        if snap["to_act"]:
            head.append(f"to act: seat {snap['to_act']}")
        items = []
        for s in snap["seats"]:
            stack = "stack ?" if s["stack"] is None else money(s["stack"])
            state = "" if s["in_hand"] else " folded"
            state += " all-in" if s["all_in"] else ""
            bet = f" bet {money(s['bet'])}" if s["bet"] else ""
            cards = f" [{show_cards(s['cards'])}]" if s["cards"] else ""
            items.append(f"s{s['seat']} {s['player']} {stack}{bet}{cards}{state}")
        lines = ["  ".join(head)] + wrap(items, indent="  ")
        return lines

    def result(self, st: PokerState, money: Money) -> str | None:
        """Who won each pot (TDA 15-20: side pots, the odd chip)."""
        if st.phase != "done":
            return None
        parts = []
        out = self.outcome(st)
        for pot in out["pots"]:
            who = ", ".join(f"seat {w['seat']} {st.rules.players[w['seat'] - 1]} wins {money(w['amount'])}"
                            for w in pot["winners"])
            rake = f" (rake {money(pot['rake'])})" if pot["rake"] else ""
            parts.append(f"{'main pot' if pot['pot'] == 1 else 'side pot ' + str(pot['pot'] - 1)}: {who}{rake}")
        return "; ".join(parts) or None

    def outcome(self, st: PokerState) -> dict[str, Any]:
        pots = st.pots if st.phase in ("award", "done") else []
        return {
            "pots": [{"pot": k + 1, "amount": p.amount, "rake": p.rake,
                      "winners": [{"seat": s + 1, "amount": a} for s, a in sorted(pot_winners(st, p).items())]}
                     for k, p in enumerate(pots)],
            "seats": [{"seat": i + 1, "player": st.rules.players[i], "starting_stack": st.rules.starting_stacks[i],
                       "final_stack": None if st.rules.starting_stacks[i] is None else final_stacks(st)[i],
                       "net": final_stacks(st)[i] - st.start_stacks[i], "put_in": st.paid[i] - st.bets[i]}
                      for i in range(st.n)],
            "complete": st.phase == "done",
        }


def _copy(st: PokerState) -> PokerState:
    new = copy.copy(st)
    for name in ("stacks", "bets", "paid", "in_hand", "board", "history", "won", "short_all_ins", "burned",
                 "bank_spent"):
        setattr(new, name, list(getattr(st, name)))
    new.hole = [list(h) for h in st.hole]
    new.hole_ids = list(st.hole_ids)  # tuples: shared, never changed in place
    new.up = [list(u) for u in st.up]
    new.posts_due = deque(st.posts_due)
    new.deal_due = deque(st.deal_due)
    new.draw_due = deque(st.draw_due)
    new.actors = deque(st.actors)
    new.acted = set(st.acted)
    new.showdown_order = deque(st.showdown_order)
    new.shown = dict(st.shown)
    new.pots = list(st.pots)
    new.seen = set(st.seen)
    new.discards = set(st.discards)
    return new


def _timeout(st: PokerState, seat: int, waited_s: int) -> None:
    """000 play time limit and time bank policies: a player who lets the clock and then
    the whole time bank run out has the hand folded for them ("そのハンドが自動的にフォールド
    され"), even when nothing is owed; in a tournament the hand is dead the same way (TDA
    2013 clock rule). ``timeout: "check_or_fold"`` (check when nothing is owed) is a house
    option. The bank is spent for the hand."""
    i = seat - 1
    clock = st.rules.action_clock_s
    if clock is None:
        raise RuleViolation("this game has no action clock (rules action_clock_s)")
    if st.phase != "betting" or st.actor != i:
        raise RuleViolation(f"seat {seat} is not the player to act: its clock is not running")
    banks = st.rules.time_banks or []
    bank = (banks[i] if i < len(banks) else 0) - st.bank_spent[i]
    if waited_s < clock + bank:
        raise RuleViolation(f"seat {seat} waited {waited_s} s: its time runs out only after the clock {clock} s and its"
                            f" time bank {bank} s (000 time bank policy)")
    st.bank_spent[i] += bank
    check = st.rules.timeout == "check_or_fold" and st.to_call(i) == 0
    _act(st, seat, "check" if check else "fold", None)


def dead_money(st: PokerState, seat: int, amount: int) -> PokerState:
    """Chips a ruling puts from the seat's stack into the pot as dead money (in the first
    pot, like antes), e.g. 001's flying-action penalties."""
    st = _copy(st)
    i = seat - 1
    amount = min(amount, st.stacks[i])
    st.stacks[i] -= amount
    st.paid[i] += amount
    st.antes = list(st.antes)
    st.antes[i] += amount
    return st


def kill_hand(st: PokerState, seat: int) -> PokerState:
    """A floor ruling kills seat's hand (dead hand: TDA 2013 rule 57 stud up-card,
    001 forced fold): it is out of the pot from now on, its chips stay in. Only while
    the betting is open, the only moment the ruling can still change who plays on."""
    st = _copy(st)
    i = seat - 1
    if not 0 <= i < st.n or not st.in_hand[i]:
        raise RuleViolation(f"seat {seat} has no live hand to kill")
    if st.phase != "betting":
        raise RuleViolation(f"a hand is killed while the betting is open (the hand is in its {st.phase} phase)")
    if i in st.actors:
        st.actors.remove(i)
    st.in_hand[i] = False
    st.history.append((seat, "dead", None))
    if not st.actors or sum(st.in_hand) <= 1:
        _end_betting(st)
    return st


def tda_raise_to(facing: int, last_full_raise: int, min_bet: int, put_to: int) -> tuple[str, int]:
    """TDA 41A ("50%" rule): a raise to ``put_to`` when facing a bet of ``facing`` whose
    last full raise was ``last_full_raise``: at least half the minimum raise makes a full
    raise (to the minimum), less is a call. Returns (action, to)."""
    step = max(last_full_raise, min_bet)
    if put_to >= facing + step:
        return "raise", put_to
    if put_to - facing >= step / 2:
        return "raise", facing + step
    return "call", facing


def award_events(st: PokerState) -> list[dict[str, Any]]:
    """The award events the engine derives once a hand reaches its award phase."""
    return [{"pot": k + 1, "amount": p.amount, "rake": p.rake,
             "winners": [{"seat": s + 1, "amount": a} for s, a in sorted(pot_winners(st, p).items())]}
            for k, p in enumerate(st.pots)]


register_engine(PokerEngine())


def random_hand(rng: random.Random, players: list[str], stacks: list[int], dump: tuple[int, int] | None = None,
                deck: list[str] | None = None, table: dict[str, Any] | None = None) -> tuple[dict[str, Any], Events]:
    """A no-limit hold'em hand with random legal play. ``dump=(loser, winner)`` seats:
    the loser, dealt two aces, raises and then folds to the winner's shove (a planted
    chip-dumping hand). ``table``: the hand's rules as its table deals it (blinds, dead
    blinds, antes: ``ledger.games.poker_table.Book.next_hand``); else blinds 50/100."""
    rules = {"variant": "NT", "players": players, "starting_stacks": stacks, "antes": [0] * len(players),
             "blinds_or_straddles": [50, 100] + [0] * (len(players) - 2), "min_bet": 100, **(table or {})}
    play = Play(PokerEngine(), rules)
    while play.st.posts_due:
        seat, typ, amount = play.st.posts_due[0]
        play("poker.post.v1", {"seat": seat + 1, "type": typ, "amount": amount})
    order = rng.sample(deck or [r + s for s in "cdhs" for r in "23456789TJQKA"], 52)
    if dump is not None:  # the dumper is dealt two aces: it folds a strong hand (projections.aml_poker)
        aces = [c for c in order if c[0] == "A"][:2]
        rest = [c for c in order if c not in aces]
        order = rest[:2 * dump[0]] + aces + rest[2 * dump[0]:]
    cards = iter(order)
    for seat in range(1, len(players) + 1):
        play("poker.deal.v1", {"seat": seat, "cards": [next(cards), next(cards)]})
    while play.st.phase not in ("award", "done"):
        st = play.st
        if st.phase == "board":
            play("poker.deal.v1", {"seat": 0, "cards": [next(cards) for _ in range(st.spec.board)]})
        elif st.phase == "showdown":
            i = st.showdown_order[0]
            play("poker.show.v1", {"seat": i + 1, "cards": list(st.hole[i])})
        else:
            i = st.actor
            to_call = st.to_call(i)
            limits = raise_limits(st, i)
            if dump is not None:
                loser, winner = dump
                if i == loser and not isinstance(limits, str) and max(st.bets) <= 100:
                    play("poker.action.v1", {"seat": i + 1, "action": "raise" if max(st.bets) else "bet",
                                             "to": min(max(limits[0], st.start_stacks[i] // 4), limits[1])})
                elif i == winner and not isinstance(limits, str):
                    play("poker.action.v1", {"seat": i + 1, "action": "raise" if max(st.bets) else "bet",
                                             "to": limits[1]})
                else:
                    play("poker.action.v1", {"seat": i + 1, "action": "fold" if to_call else "check"})
                continue
            r = rng.random()
            if not isinstance(limits, str) and r < 0.15:
                play("poker.action.v1", {"seat": i + 1, "action": "raise" if max(st.bets) else "bet",
                                         "to": limits[0]})
            elif to_call and r < 0.45:
                play("poker.action.v1", {"seat": i + 1, "action": "fold"})
            else:
                play("poker.action.v1", {"seat": i + 1, "action": "call" if to_call else "check"})
    for award in award_events(play.st):
        play("poker.award.v1", award)
    return rules, play.events


# --- floor rulings on a hand (ledger.judges.ruling) ------------------------------

CHIP_ACTIONS = ("call", "bet", "raise", "complete")
COUNTED_ACTIONS = ("fold", "check") + CHIP_ACTIONS


def substantial_action(history: list[tuple[int, str, Any]]) -> bool:
    """TDA 2013 rule 35: two actions that each put chips in the pot (bet, raise, call) by
    two players, or any three actions (check, bet, raise, call, fold). Posted blinds and
    antes are not actions."""
    acts = [(seat, action) for seat, action, _ in history if action in COUNTED_ACTIONS]
    chip_players = {seat for seat, action in acts if action in CHIP_ACTIONS}
    return len(acts) >= 3 or len(chip_players) >= 2


def rule_on(state: PokerState, payload: dict[str, Any]) -> tuple[PokerState | None, dict[str, int]]:
    """A floor ruling on a poker hand (``ledger.judges.ruling``): (the state after it, or
    None when the hand is over and closes void; the compensation the house pays), or
    RuleViolation. Misdeal (TDA 2013 rules 34-35), rollback (000 refund policy), dead
    hand (TDA 57; 001), out-of-turn action (TDA 38), flying action and dealing misses
    (001)."""
    effect = payload["effect"]
    needs = {"dead_hand": ("seat",), "out_of_turn": ("seat", "action"), "dealing_miss": ("case", "compensation"),
             "misdeal": ("redeal",), "flying_action": ("seat", "action", "chips")}.get(effect, ())
    for name in needs:
        if payload.get(name) is None:
            raise RuleViolation(f"a {effect} ruling names its '{name}'")
    if effect == "misdeal" and substantial_action(state.history):
        raise RuleViolation("no misdeal after substantial action: the hand continues (TDA 2013 rules 34 C, 35)")
    if effect in ("misdeal", "rollback"):
        return None, {}
    if effect == "dead_hand":
        return kill_hand(state, payload["seat"]), {}
    if effect in ("out_of_turn", "flying_action"):
        if effect == "out_of_turn" and payload["action"] == "all_in":
            raise RuleViolation("an out-of-turn action is fold, check, call, bet or raise (TDA 38)")
        i = payload["seat"] - 1
        if state.phase != "betting" or i == state.actor or i not in state.actors:
            raise RuleViolation(f"seat {payload['seat']} is not waiting to act: its action was not out of turn")
        if effect == "out_of_turn":
            return evolve(state, binding=state.binding + ((payload["seat"], payload["action"], payload.get("to"),
                                                            state.street, max(state.bets)),)), {}
        count = state.flying_count + (payload["seat"],)
        st = flying_action_now(state, payload, count.count(payload["seat"]))
        pending = tuple(f for f in st.flying if f[0] != payload["seat"])
        if st.in_hand[payload["seat"] - 1]:
            pending += ((payload["seat"], payload["action"], payload.get("to"), payload["chips"], st.street,
                         max(st.bets)),)
        return evolve(st, flying=pending, flying_count=count), {}
    owed = dealing_miss_compensation(payload["case"], state, payload.get("seat"))
    if owed != payload["compensation"]:
        raise RuleViolation(f"the compensation should be {owed} (001 dealing-miss handling), not"
                            f" {payload['compensation']}")
    return (state if payload["case"] == "exposed_card" else None), owed


FA_LIMIT = 3


def flying_action_now(st: Any, p: dict[str, Any], count: int) -> Any:
    """001 flying action (FA), what happens at once: an all-in FA is void and the hand
    folds, half the chips pushed going back (the other half stays in the pot); a
    player's third FA in a hand folds the hand. Returns the game's state."""
    if p["action"] == "all_in":
        st = dead_money(st, p["seat"], p["chips"] - p["chips"] // 2)
        return kill_hand(st, p["seat"])
    if count >= FA_LIMIT:
        return kill_hand(st, p["seat"])
    return st


def flying_action_due(st: Any, fa: tuple[Any, ...], p: dict[str, Any]) -> Any:
    """001 flying action, when the seat's turn comes (``fa``: seat, action, to, chips,
    street, bet at the FA). Still valid (the action to the seat unchanged, a check still
    free): it stands as made. No longer valid: a call or raise is made again or the hand
    folds, and the chips pushed stay in the pot on a fold; a check pays the big bet /
    big blind into the pot first and then only calls or folds. Returns the state with
    any dead money, or RuleViolation."""
    seat, action, to, chips, street, bet = fa
    free_check = st.to_call(seat - 1) == 0
    valid = st.street == street and max(st.bets) == bet and (action != "check" or free_check)
    raises = ("bet", "raise", "complete")

    def kind(a: str) -> str:
        return "raise" if a in raises else a

    if valid:
        if (kind(p["action"]), p.get("to")) != (kind(action), to):
            raise RuleViolation(f"seat {seat}'s flying {action} is still valid: it stands as made (001 flying action α)")
        return st
    allowed = {"call": ("call", "fold"), "raise": raises + ("fold",), "bet": raises + ("fold",),
               "check": ("call", "fold")}[action]
    if p["action"] not in allowed:
        raise RuleViolation(f"after a flying {action} that is no longer valid seat {seat} may only"
                            f" {' or '.join(sorted(set(allowed)))} (001 flying action β)")
    if action == "check":
        big = st.rules.big_bet or max(st.blinds or [0]) or st.rules.min_bet or 0
        return dead_money(st, seat, big)
    if p["action"] == "fold":
        return dead_money(st, seat, chips)  # the chips of the flying action are not returned
    return st


def dealing_miss_compensation(case: str, st: Any, seat: int | None) -> dict[str, int]:
    """001 "dealing-miss handling": 1. a miss on 3rd street: the hand stops, every player
    in it gets one big bet; 2. on 7th street: no game, each player still in gets the pot
    they would have won, each who folded 20% of the pot, at most four big bets; 3. a
    player's hole cards seen: that player gets half the pot and the hand goes on."""
    big = st.rules.big_bet or max(st.blinds or [0]) or st.rules.min_bet or 0
    pot = sum(st.paid)
    names = st.rules.players
    if case == "third_street":
        return {names[i]: big for i in range(st.n)}
    if case == "seventh_street":
        return {names[i]: pot if st.in_hand[i] else min(pot * 20 // 100, 4 * big) for i in range(st.n)}
    if seat is None:
        raise RuleViolation("an exposed-card ruling names the seat whose cards were seen")
    return {names[seat - 1]: pot // 2}


def check_binding(st: PokerState, p: dict[str, Any]) -> None:
    """TDA 2013 rule 38 A: an action out of turn binds the player if the action to them has
    not changed (checks, calls and folds do not change it); a fold out of turn always does."""
    seat, action, to, street, bet = next(b for b in st.binding if b[0] == p["seat"])
    unchanged = st.street == street and max(st.bets) == bet
    if (action == "fold" or unchanged) and (p["action"], p.get("to")) != (action, to):
        raise RuleViolation(f"seat {seat}'s {action}{f' to {to}' if to else ''} out of turn binds it: the action to"
                            " it has not changed (TDA 2013 rule 38 A)" if action != "fold" else
                            f"seat {seat} folded out of turn: the fold binds (TDA 2013 rule 38 A)")


def out_of_turn_due(st: PokerState, p: dict[str, Any]) -> PokerState:
    """The seat whose turn it is acted out of turn earlier (a ruling): a pending flying
    action is settled (001), an out-of-turn action binds (TDA 2013 rule 38 A)."""
    fa = next((f for f in st.flying if f[0] == p["seat"]), None)
    if fa is not None:
        st = flying_action_due(st, fa, p)
        st.flying = tuple(f for f in st.flying if f[0] != p["seat"])
    if any(b[0] == p["seat"] for b in st.binding):
        check_binding(st, p)
        st.binding = tuple(b for b in st.binding if b[0] != p["seat"])
    return st

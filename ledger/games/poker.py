"""Button poker (hold'em and Omaha; no-limit, pot-limit, fixed-limit) as a pure engine.

Seats are numbered 1..N in the PHH order: seat 1 is the first seat left of the button
(the small blind), seat N the button; heads-up, seat 1 is the big blind and seat 2 the
button, which posts the small blind and acts first before the flop (TDA 2013 rule 34
"heads-up": 002_462257511cde0912.txt ヘッズアップ; PHH/pokerkit use the same order).

Sources:
- antes, blinds and straddles are posted before the cards, in seat order, each capped
  by the stack (000_c28081091adb3e2e.txt on missed and dead blinds; 002 TDA);
- betting: first to act before the flop is the seat after the last blind or straddle,
  after it seat 1 (the first active seat left of the button). No-limit: a bet or raise is
  at least the minimum bet and at least the previous full raise (TDA 2013 rule 40, the
  50% rule is for verbal declarations and does not change the amount that counts); an
  all-in for less than a full raise does not reopen the betting for players who have
  already acted (TDA 41, "全額に満たないオールインはベッティングを再開しない"), unless
  several short all-ins together make a full raise. Pot-limit: at most the pot after a
  call. Fixed-limit: the small bet before the flop and on the flop, the big bet on the
  turn and river, at most 4 bets and raises per betting round, the blinds not counted
  (the cap as pokerkit counts it, so the corpus and the differential test agree; stud's
  own caps of 001 belong to the stud engine);
- bets beyond what anyone can call are returned; side pots by contribution levels; a
  pot is split between the best hands and the odd chip goes to the first winning seat
  left of the button (002 TDA rule on odd chips; the house may configure otherwise);
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
``poker.action.v1`` {seat, action (fold|check|call|bet|raise), to}: ``to`` is the total
bet on this street after a bet or raise; ``poker.show.v1`` {seat, cards} (``[]`` mucks);
``poker.award.v1`` {pot, amount, rake, winners: [{seat, amount}]} for each pot in order.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from ledger.events import describe_validation_error
from ledger.games import RuleViolation, register_engine
from ledger.games.poker_hands import best_of
from ledger.kinds import ROUND_PRODUCERS, Ident, Strict, register_kind

UNKNOWN = "??"
UNBOUNDED = 10**15  # stands in for a stack the source did not record; never reported
CARD_OR_UNKNOWN = r"^([A23456789TJQK][cdhs]|\?\?)$"


@dataclass(frozen=True)
class Variant:
    code: str
    name: str
    structure: str  # "no-limit" | "pot-limit" | "fixed-limit"
    hole: int
    use_hole: int | None
    boards: tuple[int, ...] = (0, 3, 1, 1)  # board cards dealt at the start of each street


VARIANTS = {
    "NT": Variant("NT", "no-limit Texas hold'em", "no-limit", 2, None),
    "FT": Variant("FT", "fixed-limit Texas hold'em", "fixed-limit", 2, None),
    "PO": Variant("PO", "pot-limit Omaha", "pot-limit", 4, 2),
}


class Rake(Strict):
    percent_bp: Annotated[int, Field(ge=0, le=10_000)]
    threshold: Annotated[int, Field(ge=0)] = 0
    cap: Annotated[int, Field(ge=0)] | None = None
    from_street: Annotated[int, Field(ge=0, le=3)] = 1
    """0: any pot; 1: only once the flop is dealt ("no flop, no drop")."""


class PokerRules(Strict):
    variant: Literal["NT", "FT", "PO"]
    players: Annotated[list[Ident], Field(min_length=2, max_length=10)]
    starting_stacks: Annotated[list[Annotated[int, Field(ge=0)] | None], Field(min_length=2, max_length=10)]
    """``null`` for a stack the source did not record ("inf" in PHH): the seat is treated
    as covering every bet, and only its net result is known."""
    antes: list[Annotated[int, Field(ge=0)]] | None = None
    blinds_or_straddles: list[int]
    """Per seat; a negative amount is posted but does not count as the live blind when
    finding the first to act (PHH/pokerkit: a dead blind)."""
    min_bet: Annotated[int, Field(ge=1)] | None = None
    small_bet: Annotated[int, Field(ge=1)] | None = None
    big_bet: Annotated[int, Field(ge=1)] | None = None
    ante_trimming: bool = False
    rake: Rake | None = None
    scale: Annotated[str, Field(max_length=40)] | None = None
    """For imported histories: the decimal unit one integer stands for (e.g. "0.01")."""


class PokerPost(Strict):
    seat: Annotated[int, Field(ge=1, le=10)]
    type: Literal["ante", "blind"]
    amount: Annotated[int, Field(ge=0)]


class PokerDeal(Strict):
    seat: Annotated[int, Field(ge=0, le=10)]
    cards: Annotated[list[Annotated[str, Field(pattern=CARD_OR_UNKNOWN)]], Field(min_length=1, max_length=5)]


class PokerAction(Strict):
    seat: Annotated[int, Field(ge=1, le=10)]
    action: Literal["fold", "check", "call", "bet", "raise"]
    to: Annotated[int, Field(ge=1)] | None = None


class PokerShow(Strict):
    seat: Annotated[int, Field(ge=1, le=10)]
    cards: Annotated[list[Annotated[str, Field(pattern=CARD_OR_UNKNOWN)]], Field(max_length=5)]


class Winner(Strict):
    seat: Annotated[int, Field(ge=1, le=10)]
    amount: Annotated[int, Field(ge=0)]


class PokerAward(Strict):
    pot: Annotated[int, Field(ge=1)]
    amount: Annotated[int, Field(ge=0)]
    rake: Annotated[int, Field(ge=0)]
    winners: Annotated[list[Winner], Field(max_length=10)]
    """Empty only when no contender's cards are on record (a history that says a hand was
    shown without its cards): the pot cannot be attributed and stays unawarded."""


ROLES = ROUND_PRODUCERS
register_kind("poker.post.v1", PokerPost, "round", ROLES)
register_kind("poker.deal.v1", PokerDeal, "round", ROLES)
register_kind("poker.action.v1", PokerAction, "round", ROLES)
register_kind("poker.show.v1", PokerShow, "round", ROLES)
register_kind("poker.award.v1", PokerAward, "round", ROLES)


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
    start_stacks: list[int] = field(default_factory=list)
    board: list[str] = field(default_factory=list)
    phase: str = "antes"  # antes, blinds, hole, betting, board, showdown, award, done
    street: int = -1
    posts_due: deque = field(default_factory=deque)  # (seat, type, amount)
    actors: deque = field(default_factory=deque)
    opener: int | None = None
    raise_amount: int = 0
    raise_count: int = 0
    acted: set = field(default_factory=set)
    short_all_ins: list = field(default_factory=list)
    all_in: bool = False
    showdown_order: deque = field(default_factory=deque)
    shown: dict = field(default_factory=dict)  # seat -> cards shown ([] = mucked)
    pots: list = field(default_factory=list)
    awarded: int = 0
    won: list[int] = field(default_factory=list)
    history: list = field(default_factory=list)  # (seat, action, amount) for snapshots

    # --- derived -------------------------------------------------------------------

    def active(self) -> list[int]:
        return [i for i in range(self.n) if self.in_hand[i]]

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


def _seat_value(values: list[int] | None, n: int, i: int) -> int:
    """A per-seat amount; heads-up the list is read reversed (pokerkit's convention)."""
    if not values:
        return 0
    j = (1 - i) if n == 2 else i
    return values[j] if j < len(values) else 0


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
    antes = [min(_seat_value(rules.antes, n, i), stacks[i]) for i in range(n)]
    blinds = [min(abs(_seat_value(rules.blinds_or_straddles, n, i)), stacks[i] - antes[i]) for i in range(n)]
    st = PokerState(rules, variant, n, stacks, [0] * n, [0] * n, [True] * n, antes, blinds, [[] for _ in range(n)],
                    start_stacks=list(stacks), won=[0] * n)
    st.posts_due = deque([(i, "ante", antes[i]) for i in range(n) if antes[i]])
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
    st.street = street
    if street == 0:
        st.phase = "hole"
        return
    st.phase = "board"


def _hole_due(st: PokerState) -> int | None:
    for i in range(st.n):
        if st.in_hand[i] and len(st.hole[i]) < st.variant.hole:
            return i
    return None


def _begin_betting(st: PokerState) -> None:
    n = st.n
    if st.street == 0:
        blinds = st.rules.blinds_or_straddles
        signs = [(v > 0) - (v < 0) for v in (list(blinds) + [0] * n)[:n]]
        if n == 2:
            signs = signs[::-1]  # heads-up the blinds are read reversed (seat 2 posts the small blind)
        top = max(range(n), key=lambda i: (st.bets[i] * signs[i], i))
        st.opener = (top + 1) % n
    else:
        st.opener = 0
    order = deque(range(n))
    order.rotate(-st.opener)
    st.actors = deque(i for i in order if st.in_hand[i] and st.stacks[i] and st.effective_stack(i))
    st.raise_amount = 0
    st.raise_count = 0
    st.acted = set()
    st.short_all_ins = []
    st.phase = "betting"
    if len(st.actors) == 1 and st.bets[st.actors[0]] >= max(st.bets) or not st.actors or sum(st.in_hand) <= 1:
        _end_betting(st)


def _after_action(st: PokerState) -> None:
    if not st.actors or sum(st.in_hand) <= 1:
        _end_betting(st)


def _end_betting(st: PokerState) -> None:
    st.actors = deque()
    if sum(st.in_hand) > 1 and sum(1 for i in range(st.n) if st.in_hand[i] and st.stacks[i]) <= 1:
        st.all_in = True
    if not all(st.stacks) and st.street == len(st.variant.boards) - 1:
        st.all_in = True
    _collect(st)
    if sum(st.in_hand) == 1:
        _begin_award(st)
    elif st.street == len(st.variant.boards) - 1 or st.all_in:
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
    each board card dealt, for hands not yet shown face up (pokerkit's runout)."""
    st.phase = "showdown"
    order = deque(range(st.n))
    if st.opener is not None:
        order.rotate(-st.opener)
    st.showdown_order = deque(i for i in order if st.in_hand[i] and not _face_up(st, i))
    _maybe_award(st)


def _face_up(st: PokerState, i: int) -> bool:
    cards = st.shown.get(i)
    return bool(cards) and UNKNOWN not in cards


def _board_due(st: PokerState) -> int:
    """Board cards still to come for the streets already reached (or all, once all-in)."""
    last = len(st.variant.boards) - 1 if st.phase == "showdown" else st.street
    return sum(st.variant.boards[: last + 1]) - len(st.board)


def _maybe_award(st: PokerState) -> None:
    if st.phase == "showdown" and not st.showdown_order and _board_due(st) == 0:
        _begin_award(st)


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
        for p in pots:
            if p.amount >= rake.threshold:
                r = p.amount * rake.percent_bp // 10_000
                p.rake = min(r, rake.cap) if rake.cap is not None else r
    return pots


def _begin_award(st: PokerState) -> None:
    st.phase = "award"
    if sum(st.in_hand) > 1:  # hands that win no pot are dead before the chips move (pokerkit hand killing)
        winners = {w for p in compute_pots(st) for w in pot_winners(st, p)}
        for i in range(st.n):
            if st.in_hand[i] and i not in winners:
                st.in_hand[i] = False
    st.pots = compute_pots(st)
    if not st.pots:
        st.phase = "done"


def pot_winners(st: PokerState, pot: Pot) -> dict[int, int]:
    """0-based seat -> amount for one pot: the best shown hand(s); the odd chip to the
    first winning seat left of the button (TDA; pokerkit gives it to the lowest seat)."""
    amount = pot.amount - pot.rake
    contenders = [i for i in pot.players if st.in_hand[i]]
    if len(contenders) == 1 or sum(st.in_hand) == 1:
        return {contenders[0]: amount} if contenders else {}
    ranks = {}
    for i in contenders:
        cards = st.shown.get(i)
        if cards and UNKNOWN not in cards:  # a hand shown but not recorded cannot be ranked
            ranks[i] = best_of(cards, st.board, st.variant.use_hole)
    if not ranks:
        return {}
    best = max(ranks.values())
    winners = sorted(i for i, r in ranks.items() if r == best)
    q, r = divmod(amount, len(winners))
    return {w: q + (r if k == 0 else 0) for k, w in enumerate(winners)}


def _fl_size(st: PokerState) -> int:
    return st.rules.small_bet if st.street < 2 else st.rules.big_bet  # type: ignore[return-value]


def raise_limits(st: PokerState, i: int) -> tuple[int, int] | str:
    """(min, max) total a bet or raise may go to for seat ``i`` (0-based), or why none."""
    to_call = st.to_call(i)
    if to_call < st.raise_amount:
        return "an all-in for less than a full raise does not reopen the betting (TDA 41)"
    max_count = 4 if st.variant.structure == "fixed-limit" else None
    if max_count is not None and st.raise_count >= max_count:
        return ("the betting is capped: at most 4 bets and raises in a betting round, the blinds not counted"
                " (the fixed-limit cap as the PHH corpus and pokerkit count it)")
    if st.short_all_ins and sum(st.short_all_ins) < st.raise_amount and i in st.acted:
        return "the player already acted and an all-in short of a full raise does not reopen the betting (TDA 41)"
    if st.stacks[i] <= max(st.bets) - st.bets[i]:
        return "the player is covered by the bet already: only a call is possible"
    if not any(j != i and st.in_hand[j] and st.stacks[j] + st.bets[j] > max(st.bets) for j in range(st.n)):
        return "every other player has folded or is all-in: there is no one to raise"
    step = _fl_size(st) if st.variant.structure == "fixed-limit" else st.rules.min_bet
    low = max(st.raise_amount, step) + max(st.bets)  # type: ignore[type-var]
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


def _act(st: PokerState, seat: int, action: str, to: int | None) -> None:
    i = seat - 1
    if st.phase != "betting":
        raise RuleViolation(f"no betting now (the hand is in its {st.phase} phase)")
    if st.actor != i:
        raise RuleViolation(f"seat {seat} acted out of turn: seat {st.actor + 1} is to act (TDA 38: action out of turn)")  # type: ignore[operator]
    if action in ("fold", "check", "call") and to is not None:
        raise RuleViolation(f"{action} takes no amount")
    to_call = st.to_call(i)
    if action == "fold":
        st.actors.popleft()
        st.acted.add(i)
        st.in_hand[i] = False
        st.history.append((seat, "fold", None))
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
    limits = raise_limits(st, i)
    if isinstance(limits, str):
        raise RuleViolation(f"seat {seat} may not {action}: {limits}")
    if action == "bet" and max(st.bets):
        raise RuleViolation(f"there is a bet of {max(st.bets)} already: seat {seat} may raise, not bet")
    if action == "raise" and not max(st.bets):
        raise RuleViolation(f"there is no bet to raise: seat {seat} may bet")
    low, high = limits
    if to is None or not low <= to <= high:
        rule = {"no-limit": "at least the minimum bet and the last full raise (TDA 40)",
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


def _deal(st: PokerState, seat: int, cards: list[str]) -> None:
    known = [c for c in cards if c != UNKNOWN]
    seen = {c for h in st.hole for c in h if c != UNKNOWN} | set(st.board)
    dup = [c for c in known if c in seen] or ([c for c in known if known.count(c) > 1])
    if dup:
        raise RuleViolation(f"{dup[0]} was already dealt (one deck)")
    if seat == 0:
        if UNKNOWN in cards:
            raise RuleViolation("board cards are dealt face up: none may be unknown")
        due = _board_due(st) if st.phase in ("board", "showdown") else 0
        if due <= 0:
            raise RuleViolation(f"no board card is due now (the hand is in its {st.phase} phase)")
        want = st.variant.boards[st.street] if st.phase == "board" else _next_board_size(st)
        if len(cards) != want:
            raise RuleViolation(f"this street deals {want} board card(s), not {len(cards)}")
        st.board.extend(cards)
        if st.phase == "board":
            _begin_betting(st)
        else:
            _begin_showdown(st)
        return
    if st.phase != "hole":
        raise RuleViolation(f"no hole cards are dealt now (the hand is in its {st.phase} phase)")
    due_seat = _hole_due(st)
    if due_seat != seat - 1:
        raise RuleViolation(f"the next hole cards go to seat {due_seat + 1}, not seat {seat}")  # type: ignore[operator]
    if len(cards) != st.variant.hole:
        raise RuleViolation(f"{st.variant.name} deals {st.variant.hole} hole cards, not {len(cards)}")
    st.hole[seat - 1] = list(cards)
    if _hole_due(st) is None:
        _begin_betting(st)


def _next_board_size(st: PokerState) -> int:
    dealt = len(st.board)
    total = 0
    for size in st.variant.boards:
        total += size
        if total > dealt:
            return total - dealt
    return 0


def _show(st: PokerState, seat: int, cards: list[str]) -> None:
    i = seat - 1
    voluntary = st.phase in ("award", "done")
    if voluntary:  # a player may show after winning uncontested; it changes nothing
        if cards and sorted(cards) != sorted(st.hole[i]) and UNKNOWN not in st.hole[i]:
            raise RuleViolation(f"seat {seat} shows {cards} but was dealt {st.hole[i]}")
        st.history.append((seat, "show", None))
        return
    if st.phase != "showdown" or not st.showdown_order:
        raise RuleViolation(f"no showdown now (the hand is in its {st.phase} phase)")
    if i not in st.showdown_order:
        raise RuleViolation(f"seat {seat} has no hand to show or muck")
    if cards:
        if len(cards) != st.variant.hole:
            raise RuleViolation(f"a shown hand is its {st.variant.hole} hole cards")
        dealt = st.hole[i]
        if all(c == UNKNOWN for c in cards):
            cards = list(dealt)  # shown, cards not written down: the dealt cards are the record
        elif any(c != UNKNOWN for c in dealt) and sorted(dealt) != sorted(cards):
            raise RuleViolation(f"seat {seat} shows {cards} but was dealt {dealt}")
        others = {c for j, h in enumerate(st.hole) if j != i for c in h if c != UNKNOWN} | set(st.board)
        if any(c in others for c in cards):
            raise RuleViolation(f"seat {seat} shows a card dealt elsewhere")
        st.hole[i] = list(cards)
    else:
        st.in_hand[i] = False  # a mucked hand cannot win (000 tied hands; TDA showdown)
    st.shown[i] = list(cards)
    st.showdown_order.remove(i)
    _maybe_award(st)


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


class PokerEngine:
    game = "poker"
    kinds = frozenset({"poker.post.v1", "poker.deal.v1", "poker.action.v1", "poker.show.v1", "poker.award.v1"})

    def start(self, rules: dict[str, Any]) -> PokerState:
        try:
            r = PokerRules.model_validate(rules)
        except ValidationError as exc:
            raise RuleViolation(f"poker rules: {describe_validation_error(exc)}") from None
        return start_state(r)

    def apply(self, state: PokerState, kind: str, p: dict[str, Any]) -> PokerState:
        st = _copy(state)
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
        elif kind == "poker.show.v1":
            _show(st, p["seat"], p["cards"])
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
        return {
            "phase": st.phase,
            "street": ["preflop", "flop", "turn", "river"][st.street] if st.street >= 0 else None,
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

    def outcome(self, st: PokerState) -> dict[str, Any]:
        pots = st.pots if st.phase in ("award", "done") else []
        return {
            "pots": [{"pot": k + 1, "amount": p.amount, "rake": p.rake,
                      "winners": [{"seat": s + 1, "amount": a} for s, a in sorted(pot_winners(st, p).items())]}
                     for k, p in enumerate(pots)],
            "seats": [{"seat": i + 1, "player": st.rules.players[i], "starting_stack": st.rules.starting_stacks[i],
                       "final_stack": None if st.rules.starting_stacks[i] is None else final_stacks(st)[i],
                       "net": final_stacks(st)[i] - st.start_stacks[i]} for i in range(st.n)],
            "complete": st.phase == "done",
        }


def _copy(st: PokerState) -> PokerState:
    new = copy.copy(st)
    for name in ("stacks", "bets", "paid", "in_hand", "board", "history", "won", "short_all_ins"):
        setattr(new, name, list(getattr(st, name)))
    new.hole = [list(h) for h in st.hole]
    new.posts_due = deque(st.posts_due)
    new.actors = deque(st.actors)
    new.acted = set(st.acted)
    new.showdown_order = deque(st.showdown_order)
    new.shown = dict(st.shown)
    new.pots = list(st.pots)
    return new


def award_events(st: PokerState) -> list[dict[str, Any]]:
    """The award events the engine derives once a hand reaches its award phase."""
    return [{"pot": k + 1, "amount": p.amount, "rake": p.rake,
             "winners": [{"seat": s + 1, "amount": a} for s, a in sorted(pot_winners(st, p).items())]}
            for k, p in enumerate(st.pots)]


register_engine(PokerEngine())

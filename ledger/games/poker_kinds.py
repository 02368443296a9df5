"""Poker's variants and its events' schemas, apart from its engine (``ledger.games.poker``).

``VARIANTS``: the PHH codes (plus N5D/F5D, the ledger's own), each with its streets, its
betting structure and the hands a pot is split between; ``PokerRules``: a hand's rules as
``round.open.v1`` carries them; the ``poker.*.v1`` payloads, registered here. They live in
a module of their own because the engine is compiled (mypyc, ``setup.py``) and pydantic
builds its models from annotations at run time, which a compiled module does not keep;
this module stays plain Python. The sources of each rule are named in ``ledger.games.poker``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from ledger.kinds import ROUND_PRODUCERS, Ident, Strict, register_kind

CARD_OR_UNKNOWN = r"^([A23456789TJQK][cdhs]|\?\?)$"


@dataclass(frozen=True)
class Street:
    hole: tuple[bool, ...] = ()  # cards dealt to each player this street: True face up
    board: int = 0  # board cards dealt this street
    draw: bool = False  # players stand pat or discard and are dealt replacements
    opening: str = "position"  # position | low_card | high_card | high_hand | low_hand
    bet: str = "min"  # min (no-/pot-limit min_bet) | small | big (fixed-limit)


def _holdem(hole: int, fixed: bool) -> tuple[Street, ...]:
    small, big = ("small", "big") if fixed else ("min", "min")
    return (Street(hole=(False,) * hole, bet=small), Street(board=3, bet=small), Street(board=1, bet=big),
            Street(board=1, bet=big))


def _stud(low: bool) -> tuple[Street, ...]:
    later = "low_hand" if low else "high_hand"
    return (Street(hole=(False, False, True), opening="high_card" if low else "low_card", bet="small"),
            Street(hole=(True,), opening=later, bet="small"), Street(hole=(True,), opening=later, bet="big"),
            Street(hole=(True,), opening=later, bet="big"), Street(hole=(False,), opening=later, bet="big"))


def _draw_streets(hole: int, draws: int, fixed: bool) -> tuple[Street, ...]:
    bets = ["small", "small", "big", "big"] if fixed else ["min"] * 4
    return (Street(hole=(False,) * hole, bet=bets[0]),) + tuple(Street(draw=True, bet=bets[k + 1]) for k in range(draws))


@dataclass(frozen=True)
class Variant:
    code: str
    name: str
    structure: str  # "no-limit" | "pot-limit" | "fixed-limit"
    streets: tuple[Street, ...]
    hands: tuple[str, ...] = ("high",)  # the hand types a pot is split between, high first
    deck: str = "standard"  # standard (52) | short (36, six to ace)
    stud: bool = False

    @property
    def hole(self) -> int:
        return len(self.streets[0].hole)


VARIANTS = {
    "NT": Variant("NT", "no-limit Texas hold'em", "no-limit", _holdem(2, False)),
    "FT": Variant("FT", "fixed-limit Texas hold'em", "fixed-limit", _holdem(2, True)),
    "PO": Variant("PO", "pot-limit Omaha", "pot-limit", _holdem(4, False), ("omaha_high",)),
    "FO/8": Variant("FO/8", "fixed-limit Omaha hi/lo eight or better", "fixed-limit", _holdem(4, True),
                    ("omaha_high", "omaha_low8")),
    "NS": Variant("NS", "no-limit short-deck hold'em", "no-limit", _holdem(2, False), ("short_deck",), deck="short"),
    "F7S": Variant("F7S", "fixed-limit seven-card stud", "fixed-limit", _stud(False), stud=True),
    "F7S/8": Variant("F7S/8", "fixed-limit seven-card stud hi/lo eight or better", "fixed-limit", _stud(False),
                     ("high", "low8"), stud=True),
    "FR": Variant("FR", "fixed-limit razz", "fixed-limit", _stud(True), ("razz",), stud=True),
    "F2L3D": Variant("F2L3D", "fixed-limit deuce-to-seven triple draw", "fixed-limit", _draw_streets(5, 3, True), ("low27",)),
    "N2L1D": Variant("N2L1D", "no-limit deuce-to-seven single draw", "no-limit", _draw_streets(5, 1, False), ("low27",)),
    "FB": Variant("FB", "fixed-limit badugi", "fixed-limit", _draw_streets(4, 3, True), ("badugi",)),
    # Five-card draw, high (004 ファイブカードドロー): not a PHH standard code, nor a pokerkit
    # game; these two codes are the ledger's own.
    "N5D": Variant("N5D", "no-limit five-card draw", "no-limit", _draw_streets(5, 1, False)),
    "F5D": Variant("F5D", "fixed-limit five-card draw", "fixed-limit", _draw_streets(5, 1, True)),
}


class Rake(Strict):
    percent_bp: Annotated[int, Field(ge=0, le=10_000)]
    threshold: Annotated[int, Field(ge=0)] = 0
    cap: Annotated[int, Field(ge=0)] | None = None
    from_street: Annotated[int, Field(ge=0, le=3)] = 1
    """0: any pot; 1: only once the flop is dealt ("no flop, no drop")."""
    per: Literal["hand", "pot"] = "hand"
    """001 ⑤ "POTの2%": the hand's whole pot, side pots included, is raked once (threshold
    and cap apply to the hand), taken from the main pot first; "pot" rakes each pot on its
    own (a house option)."""


class PokerRules(Strict):
    variant: Literal[tuple(VARIANTS)]  # type: ignore[valid-type]  # the PHH codes, read by pydantic at run time
    players: Annotated[list[Ident], Field(min_length=2, max_length=10)]
    starting_stacks: Annotated[list[Annotated[int, Field(ge=0)] | None], Field(min_length=2, max_length=10)]
    """``null`` for a stack the source did not record ("inf" in PHH): the seat is treated
    as covering every bet, and only its net result is known."""
    antes: list[Annotated[int, Field(ge=0)]] | None = None
    blinds_or_straddles: list[int] | None = None
    """Per seat; a negative amount is posted but does not count as the live blind when
    finding the first to act (PHH/pokerkit: a dead blind)."""
    bring_in: Annotated[int, Field(ge=1)] | None = None
    min_bet: Annotated[int, Field(ge=1)] | None = None
    small_bet: Annotated[int, Field(ge=1)] | None = None
    big_bet: Annotated[int, Field(ge=1)] | None = None
    ante_trimming: bool = False
    dead_blinds: list[Annotated[int, Field(ge=0)]] | None = None
    """Per seat: a blind posted dead (into the pot, not as a bet), e.g. the small blind a
    returning player owes (000 missed blinds: dead small blind, live big blind; the live
    one is a negative entry of ``blinds_or_straddles``)."""
    odd_chip: Literal["left_of_button", "high_card_by_suit", "farthest_from_dealer"] = "left_of_button"
    limit_reopen_at_half: bool = False
    open_pair_big_bet: bool = False
    """Stud, 001 4th street: with an open pair showing, a bet or raise may be the big bet,
    and once it is, the rest of the street goes in big bets."""
    rake: Rake | None = None
    action_clock_s: Annotated[int, Field(ge=1, le=3600)] | None = None
    """000 play time limit / TDA 2013 clock: seconds a player has to act."""
    time_banks: list[Annotated[int, Field(ge=0, le=36_000)]] | None = None
    """000 time bank policy: per seat, the extra seconds left in the player's bank at the
    start of the hand (the game server carries them from hand to hand)."""
    scale: Annotated[str, Field(max_length=40)] | None = None
    """For imported histories: the decimal unit one integer stands for (e.g. "0.01")."""
    timeout: Literal["fold", "check_or_fold"] = "fold"
    """What the clock running out does (``poker.timeout.v1``): 000 folds the hand."""
    showdown: Literal["tda", "button_left", "as_recorded"] = "tda"
    """"tda" (the default): the showdown order of TDA 16 and of 001 ⑨'s "world rules" (the
    last aggressor of the final betting round first, else the first seat left of the
    button) and all-in hands tabled (TDA 15; 001 ⑨) are enforced; "button_left": 001 ⑨'s
    LOJ rule, the first seat left of the button shows first whoever bet, all-in hands
    tabled too (a house option); "as_recorded": imported hand histories, whose showdown
    happened in another room and is taken as the history records it."""
    bring_in_percent: Annotated[int, Field(ge=1, le=100)] = 40
    """Stud: the bring-in as a percentage of the small bet (001 ブリングイン: 40%)."""


class PokerPost(Strict):
    seat: Annotated[int, Field(ge=1, le=10)]
    type: Literal["ante", "dead_blind", "blind"]
    amount: Annotated[int, Field(ge=0)]


class PokerDeal(Strict):
    seat: Annotated[int, Field(ge=0, le=10)]
    cards: Annotated[list[Annotated[str, Field(pattern=CARD_OR_UNKNOWN)]], Field(min_length=1, max_length=7)]


class PokerAction(Strict):
    seat: Annotated[int, Field(ge=1, le=10)]
    action: Literal["fold", "check", "call", "bet", "raise", "bring_in", "complete"]
    to: Annotated[int, Field(ge=1)] | None = None


class PokerTimeout(Strict):
    """The player to act let the clock and their whole time bank run out."""
    seat: Annotated[int, Field(ge=1, le=10)]
    waited_s: Annotated[int, Field(ge=0, le=100_000)]


class PokerBurn(Strict):
    card: Annotated[str, Field(pattern=CARD_OR_UNKNOWN)]


class PokerDraw(Strict):
    seat: Annotated[int, Field(ge=1, le=10)]
    discard: Annotated[list[Annotated[str, Field(pattern=CARD_OR_UNKNOWN)]], Field(max_length=5)]


class PokerShow(Strict):
    seat: Annotated[int, Field(ge=1, le=10)]
    cards: Annotated[list[Annotated[str, Field(pattern=CARD_OR_UNKNOWN)]], Field(max_length=7)]


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
register_kind("poker.draw.v1", PokerDraw, "round", ROLES)
register_kind("poker.burn.v1", PokerBurn, "round", ROLES)
register_kind("poker.timeout.v1", PokerTimeout, "round", ("game", "table"))
register_kind("poker.show.v1", PokerShow, "round", ROLES)
register_kind("poker.award.v1", PokerAward, "round", ROLES)

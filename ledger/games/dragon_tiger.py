"""Dragon Tiger as a pure engine.

Source: 000_c28081091adb3e2e.txt names Dragon Tiger among its live casino games but gives
no rules for it. This engine follows the commonly published rules of the game (as printed
by casinos and in the usual gaming references, e.g. the Wizard of Odds "Dragon Tiger"
page), cited as such, not as a seed text:

- cards from a shoe of ``decks`` 52-card decks (8 by default), dealt from inspected,
  shuffled, cut and loaded equipment like baccarat (``ledger.judges.equipment``);
- one card to the Dragon, then one card to the Tiger, face up;
- the higher card wins; cards rank by face only, ace low (A = 1, 2-10, J = 11, Q = 12,
  K = 13); suits do not count;
- bets on ``dragon`` or ``tiger`` pay 1:1; a bet on ``tie`` pays ``tie_pays`` to 1
  (8 by default; 11 is also common);
- on a tie, a Dragon or Tiger bet loses (the default), or, as the house option
  ``tie_dragon_tiger: "half"``, loses half its stake. Where half a stake is an odd number
  of minor units, the player keeps the odd unit (the house takes half rounded down), as
  baccarat's default commission rounding favours the player.

The suited-tie and big/small side bets some casinos offer are not modelled.

House options recorded in ``round.open.rules`` (defaults):
``{"decks": 8, "tie_pays": 8, "tie_dragon_tiger": "lose"}``.

Events: ``dragon_tiger.bet.v1`` {player, spot, amount}; ``dragon_tiger.no_more_bets.v1``
{}; ``dragon_tiger.card.v1`` {hand, card}: the Dragon's card first, then the Tiger's;
``dragon_tiger.settle.v1`` {bet, outcome, paid}: ``paid`` is everything handed back,
stake included; ``outcome`` is win, lose or half (a tie's half-loss).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Annotated, Any, Final, Literal

from pydantic import Field

from ledger.games import (
    DemoTable,
    EngineDefaults,
    Events,
    Money,
    Play,
    RuleViolation,
    bets_lines,
    check_settle_target,
    close_betting,
    evolve,
    paid_text,
    parse_rules,
    register_engine,
    unsettled,
)
from ledger.games.cards import CARD_PATTERN, RANKS, show_card
from ledger.kinds import ROUND_PRODUCERS, Amount, EmptyPayload, Ident, Strict, register_kind

HANDS = ("dragon", "tiger")


class DragonTigerRules(Strict):
    decks: Annotated[int, Field(ge=1, le=16)] = 8
    tie_pays: Annotated[int, Field(ge=1, le=100)] = 8
    tie_dragon_tiger: Literal["lose", "half"] = "lose"


class DragonTigerBet(Strict):
    player: Ident
    spot: Literal["dragon", "tiger", "tie"]
    amount: Amount


class DragonTigerCard(Strict):
    hand: Literal["dragon", "tiger"]
    card: Annotated[str, Field(pattern=CARD_PATTERN)]


class DragonTigerSettle(Strict):
    bet: Annotated[int, Field(ge=1)]
    outcome: Literal["win", "lose", "half"]
    paid: Annotated[int, Field(ge=0)]


register_kind("dragon_tiger.bet.v1", DragonTigerBet, "round", ROUND_PRODUCERS)
register_kind("dragon_tiger.no_more_bets.v1", EmptyPayload, "round", ROUND_PRODUCERS)
register_kind("dragon_tiger.card.v1", DragonTigerCard, "round", ROUND_PRODUCERS)
register_kind("dragon_tiger.settle.v1", DragonTigerSettle, "round", ROUND_PRODUCERS)


def rank(card: str) -> int:
    """A card's rank: ace 1 (low) up to king 13; the suit does not count."""
    return RANKS.index(card[0]) + 1


@dataclass(frozen=True)
class Wager:
    player: str
    spot: str
    amount: int


@dataclass(frozen=True)
class DragonTigerState:
    rules: DragonTigerRules
    wagers: tuple[Wager, ...] = ()
    betting_open: bool = True
    cards: tuple[str, ...] = ()  # the Dragon's, then the Tiger's
    settled: frozenset[int] = frozenset()

    @property
    def complete(self) -> bool:
        return len(self.cards) == 2

    def winner(self) -> str:
        dragon, tiger = (rank(c) for c in self.cards)
        return "tie" if dragon == tiger else "dragon" if dragon > tiger else "tiger"


def payout(spot: str, amount: int, winner: str, rules: DragonTigerRules) -> tuple[str, int]:
    """(outcome, paid) of a bet on ``spot`` when ``winner`` won (``paid`` includes the stake)."""
    if winner == "tie":
        if spot == "tie":
            return "win", amount * (rules.tie_pays + 1)
        if rules.tie_dragon_tiger == "half":
            return "half", amount - amount // 2
        return "lose", 0
    return ("win", 2 * amount) if spot == winner else ("lose", 0)


def settlement(state: DragonTigerState, index: int) -> tuple[str, int]:
    w = state.wagers[index - 1]
    return payout(w.spot, w.amount, state.winner(), state.rules)


class DragonTigerEngine(EngineDefaults):
    game = "dragon-tiger"
    kinds = frozenset({"dragon_tiger.bet.v1", "dragon_tiger.no_more_bets.v1", "dragon_tiger.card.v1",
                       "dragon_tiger.settle.v1"})
    rules_model = DragonTigerRules
    banking: Final = "house"
    equipment: Final = "shoe"

    def stakes(self, kind: str, payload: dict[str, Any]) -> tuple[tuple[str, int], ...]:
        return ((payload["spot"], payload["amount"]),) if kind == "dragon_tiger.bet.v1" else ()
    house_edges = {"dragon-tiger": "exact enumeration of the two cards' ranks from a full shoe (8 decks), each pair"
                                   " weighted by its count"}
    demo_tables = (DemoTable("DT", "live", decks=8, cut=52, config={"limits": {"*": {"min": 100, "max": 100_000}}}),)

    def start(self, rules: dict[str, Any]) -> DragonTigerState:
        return DragonTigerState(parse_rules(DragonTigerRules, rules, "dragon-tiger"))

    def apply(self, state: DragonTigerState, kind: str, payload: dict[str, Any]) -> DragonTigerState:
        if kind == "dragon_tiger.bet.v1":
            if not state.betting_open:
                raise RuleViolation("bet after 'no more bets' (Dragon Tiger, as published: bets before the deal)")
            return evolve(state, wagers=state.wagers + (Wager(payload["player"], payload["spot"], payload["amount"]),))
        if kind == "dragon_tiger.no_more_bets.v1":
            return close_betting(state)
        if kind == "dragon_tiger.card.v1":
            if state.betting_open:
                raise RuleViolation("card dealt before 'no more bets' (Dragon Tiger, as published)")
            if state.complete:
                raise RuleViolation("the Dragon and the Tiger have their cards: no further card (Dragon Tiger, as"
                                    " published: one card each)")
            due = HANDS[len(state.cards)]
            if payload["hand"] != due:
                raise RuleViolation(f"this card goes to the {due}, not the {payload['hand']} (Dragon Tiger, as"
                                    " published: the Dragon's card first)")
            return evolve(state, cards=state.cards + (payload["card"],))
        if kind == "dragon_tiger.settle.v1":
            if not state.complete:
                raise RuleViolation("settlement before both cards are dealt")
            index = payload["bet"]
            check_settle_target(index, len(state.wagers), state.settled)
            want = settlement(state, index)
            got = (payload["outcome"], payload["paid"])
            if got != want:
                w = state.wagers[index - 1]
                raise RuleViolation(
                    f"wrong settlement of bet {index} ({w.spot} {w.amount}) when the {state.winner()} won: the engine"
                    f" pays {want[0]} {want[1]}, the event says {got[0]} {got[1]} (Dragon Tiger, as published; tie"
                    f" pays {state.rules.tie_pays}:1, Dragon/Tiger on a tie: {state.rules.tie_dragon_tiger})")
            return evolve(state, settled=state.settled | {index})
        raise RuleViolation(f"{kind} is not a Dragon Tiger event")

    def close_problem(self, state: DragonTigerState) -> str | None:
        if not state.complete:
            return "the Dragon and the Tiger do not both have their card"
        return unsettled(len(state.wagers), state.settled)

    def draws(self, state: DragonTigerState) -> tuple[tuple[Any, ...], list[Any], bool]:
        """Cards in shoe order: the Dragon's, then the Tiger's."""
        return ("cards", state.rules.decks), list(state.cards), state.complete

    def snapshot(self, state: DragonTigerState) -> dict[str, Any]:
        return {
            "betting_open": state.betting_open,
            "bets": [{"bet": i, "player": w.player, "spot": w.spot, "amount": w.amount}
                     for i, w in enumerate(state.wagers, start=1)],
            "dragon": {"card": state.cards[0] if state.cards else None,
                       "rank": rank(state.cards[0]) if state.cards else None},
            "tiger": {"card": state.cards[1] if state.complete else None,
                      "rank": rank(state.cards[1]) if state.complete else None},
            "next": None if state.betting_open or state.complete else HANDS[len(state.cards)],
            "settled": sorted(state.settled),
        }

    def describe(self, state: DragonTigerState, money: Money) -> list[str]:
        snap = self.snapshot(state)
        lines = bets_lines(snap["betting_open"], [f"{b['player']} on {b['spot']} {money(b['amount'])}"
                                                  for b in snap["bets"]])
        if state.cards:
            tiger = show_card(state.cards[1]) if len(state.cards) > 1 else "-"
            lines.append(f"Dragon {show_card(state.cards[0])}   Tiger {tiger}"
                         + (f"   next card: {snap['next']}" if snap["next"] else ""))
        return lines

    def result(self, state: DragonTigerState, money: Money) -> str | None:
        """The higher card wins, ace low; equal ranks tie (dragon-tiger rules, docs/games)."""
        if not state.complete:
            return None
        d, t = (show_card(c) for c in state.cards)
        winner = state.winner()
        head = f"Tie: Dragon {d}, Tiger {t}" if winner == "tie" else (
            f"Dragon {d} beats Tiger {t}" if winner == "dragon" else f"Tiger {t} beats Dragon {d}")
        return head + paid_text(self.outcome(state), money)

    def outcome(self, state: DragonTigerState) -> dict[str, Any]:
        if not state.complete:
            return {"winner": None, "settlements": []}
        rows = []
        for i, w in enumerate(state.wagers, start=1):
            o, paid = settlement(state, i)
            rows.append({"bet": i, "player": w.player, "spot": w.spot, "outcome": o, "paid": paid,
                         "staked": w.amount})
        return {"winner": state.winner(), "settlements": rows}

    def house_edge(self, name: str) -> dict[str, dict[str, Any]]:
        return house_edge()

    def demo_round(self, rng: Any, players: list[str], cards: Any) -> tuple[dict[str, Any], Events]:
        play = Play(self, {})
        for player in players:
            play("dragon_tiger.bet.v1", {"player": player, "spot": rng.choice(["dragon", "tiger", "tiger", "tie"]),
                                         "amount": rng.choice([500, 1000, 2500])})
        play("dragon_tiger.no_more_bets.v1", {})
        for hand in HANDS:
            play("dragon_tiger.card.v1", {"hand": hand, "card": next(cards)})
        return {}, play.settle("dragon_tiger", ("bet", "outcome", "paid"))


def house_edge(rules: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """The exact house edge of each bet: every ordered pair of ranks dealt from a full shoe,
    weighted by its count (4 × decks of each rank; the second card from what the first
    left), each bet settled by ``payout`` at a stake of 2 (so a half-loss is exact); the
    edge is the expected loss per unit staked."""
    r = DragonTigerRules.model_validate(rules or {})
    per_rank, total = 4 * r.decks, 52 * r.decks
    stake = 2
    edges: dict[str, dict[str, Any]] = {}
    for spot in ("dragon", "tiger", "tie"):
        loss = Fraction(0)
        for d in range(13):
            for t in range(13):
                weight = Fraction(per_rank * (per_rank - (d == t)), total * (total - 1))
                winner = "tie" if d == t else "dragon" if d > t else "tiger"
                loss += weight * (stake - payout(spot, stake, winner, r)[1])
        edges[spot] = {"pays": r.tie_pays if spot == "tie" else 1, "edge": loss / stake}
    return edges


register_engine(DragonTigerEngine())

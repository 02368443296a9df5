"""Punto banco baccarat as a pure engine.

Source: 000_c28081091adb3e2e.txt live casino II "バカラの定義とルール":
- 1.3.1 eight 52-card decks; 1.3.2 card values (2-9 face, ten/court 0, ace 1; a
  hand's points are its total modulo 10);
- 2.1.1 bets on player, banker, tie; 2.1.2/2.1.3 player and banker bets neither win
  nor lose when the points are equal; 2.1.5 they are returned after a tie;
- 2.1.6 "no more bets" before the first card leaves the shoe;
- 2.2 player pays 1:1; banker pays 1:1 less a 5% commission on the win; tie pays 8:1;
- 3.4.3 cards 1 and 3 to the player, 2 and 4 to the banker; 3.5.1 the third-card
  tableau (naturals 8/9 stand; player draws on 0-5; banker's draw by its total and the
  player's third card, or on 0-5 when the player stood).

House options recorded in ``round.open.rules`` (defaults from the seed):
``{"decks": 8, "commission_bp": 500, "tie_pays": 8, "commission_rounding": "down"}``.
The seed does not say how a commission of a fraction of a minor unit is rounded, so it
is explicit configuration: "down" (the player keeps the fraction) or "up".

Events: ``baccarat.bet.v1`` {player, spot, amount}; ``baccarat.no_more_bets.v1`` {};
``baccarat.card.v1`` {hand, card}: the engine knows whose card comes next and refuses a
card dealt to the wrong hand or after the coup is complete; ``baccarat.settle.v1``
{bet, outcome, paid, commission}: ``paid`` is everything handed back, stake included.
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
from ledger.games.cards import CARD_PATTERN, baccarat_value, show_cards
from ledger.kinds import (
    ROUND_PRODUCERS,
    Amount,
    EmptyPayload,
    Ident,
    Strict,
    register_kind,
)


class BaccaratRules(Strict):
    decks: Annotated[int, Field(ge=1, le=16)] = 8
    commission_bp: Annotated[int, Field(ge=0, le=10_000)] = 500
    tie_pays: Annotated[int, Field(ge=1, le=100)] = 8
    commission_rounding: Literal["down", "up"] = "down"


class BaccaratBet(Strict):
    player: Ident
    spot: Literal["player", "banker", "tie"]
    amount: Amount


class BaccaratCard(Strict):
    hand: Literal["player", "banker"]
    card: Annotated[str, Field(pattern=CARD_PATTERN)]


class BaccaratSettle(Strict):
    bet: Annotated[int, Field(ge=1)]
    outcome: Literal["win", "lose", "push"]
    paid: Annotated[int, Field(ge=0)]
    commission: Annotated[int, Field(ge=0)]


ROLES = ROUND_PRODUCERS
register_kind("baccarat.bet.v1", BaccaratBet, "round", ROLES)
register_kind("baccarat.no_more_bets.v1", EmptyPayload, "round", ROLES)
register_kind("baccarat.card.v1", BaccaratCard, "round", ROLES)
register_kind("baccarat.settle.v1", BaccaratSettle, "round", ROLES)


def points(values: tuple[int, ...] | list[int]) -> int:
    return sum(values) % 10


def banker_draws(banker: int, player_third: int | None) -> bool:
    """000 II 3.5.1: the banker's third card (called only when neither side has a natural)."""
    if player_third is None:  # the player stood on 6 or 7
        return banker <= 5
    if banker <= 2:
        return True
    if banker == 3:
        return player_third != 8
    if banker == 4:
        return 2 <= player_third <= 7
    if banker == 5:
        return 4 <= player_third <= 7
    if banker == 6:
        return player_third in (6, 7)
    return False


def next_hand(player: tuple[int, ...], banker: tuple[int, ...]) -> str | None:
    """Whose card comes next (000 II 3.4.3 and 3.5.1), or None when the coup is over."""
    dealt = len(player) + len(banker)
    if dealt < 4:
        return "player" if dealt % 2 == 0 else "banker"
    p2, b2 = points(player[:2]), points(banker[:2])
    if p2 >= 8 or b2 >= 8:
        return None
    if len(player) == 2 and p2 <= 5:
        return "player"
    if len(banker) == 2 and banker_draws(b2, player[2] if len(player) == 3 else None):
        return "banker"
    return None


@dataclass(frozen=True)
class Wager:
    player: str
    spot: str
    amount: int


@dataclass(frozen=True)
class BaccaratState:
    rules: BaccaratRules
    wagers: tuple[Wager, ...] = ()
    betting_open: bool = True
    player_cards: tuple[str, ...] = ()
    banker_cards: tuple[str, ...] = ()
    settled: frozenset[int] = frozenset()

    @property
    def values(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return (tuple(baccarat_value(c) for c in self.player_cards), tuple(baccarat_value(c) for c in self.banker_cards))

    @property
    def complete(self) -> bool:
        p, b = self.values
        return len(p) >= 2 and len(b) >= 2 and next_hand(p, b) is None

    def winner(self) -> str:
        p, b = self.values
        pp, bp = points(p), points(b)
        return "tie" if pp == bp else "player" if pp > bp else "banker"


def commission_for(amount: int, rules: BaccaratRules) -> int:
    num = amount * rules.commission_bp
    return num // 10_000 if rules.commission_rounding == "down" else -(-num // 10_000)


def settlement(state: BaccaratState, index: int) -> tuple[str, int, int]:
    """(outcome, paid, commission) for bet ``index`` once the coup is complete (000 II 2.1, 2.2)."""
    w = state.wagers[index - 1]
    won = state.winner()
    if won == "tie":
        if w.spot == "tie":
            return "win", w.amount * (state.rules.tie_pays + 1), 0
        return "push", w.amount, 0
    if w.spot != won:
        return "lose", 0, 0
    if w.spot == "banker":
        c = commission_for(w.amount, state.rules)
        return "win", 2 * w.amount - c, c
    return "win", 2 * w.amount, 0


class BaccaratEngine(EngineDefaults):
    game = "baccarat"
    kinds = frozenset({"baccarat.bet.v1", "baccarat.no_more_bets.v1", "baccarat.card.v1", "baccarat.settle.v1"})
    rules_model = BaccaratRules
    banking: Final = "house"
    equipment: Final = "shoe"

    def seed_problem(self, rules: dict[str, Any], seats: int) -> str | None:
        """000 II 1.3.1: baccarat is played with 8 decks."""
        decks = rules.get("decks", 8)
        return None if decks == 8 else f"baccarat is dealt from 8 decks, not {decks} (000 II 1.3.1)"

    def stakes(self, kind: str, payload: dict[str, Any]) -> tuple[tuple[str, int], ...]:
        return ((payload["spot"], payload["amount"]),) if kind == "baccarat.bet.v1" else ()
    house_edges = {"baccarat": "exact enumeration of every card sequence of a full 8-deck shoe"}
    demo_tables = (DemoTable("BAC", "live", decks=8, cut=7, config={"limits": {"*": {"min": 100, "max": 100_000}}}),
                   DemoTable("OBAC", "rng", signer="game", config={"limits": {"*": {"min": 100, "max": 100_000}}}))

    def cut_problem(self, decks: int, from_back: int) -> str | None:
        if from_back != 7:
            return f"the cut card goes 7 cards from the back in baccarat, not {from_back} (000 II 3.3.4)"
        return None

    def house_edge(self, name: str) -> dict[str, dict[str, Any]]:
        return house_edge()

    def demo_round(self, rng: Any, players: list[str], cards: Any) -> tuple[dict[str, Any], Events]:
        bets = [(p, rng.choice(["player", "banker", "tie"]), rng.choice([1000, 2000, 5000])) for p in players]
        return {}, coup_events(bets, cards)

    def start(self, rules: dict[str, Any]) -> BaccaratState:
        return BaccaratState(parse_rules(BaccaratRules, rules, "baccarat"))

    def apply(self, state: BaccaratState, kind: str, payload: dict[str, Any]) -> BaccaratState:
        if kind == "baccarat.bet.v1":
            if not state.betting_open:
                raise RuleViolation("bet after 'no more bets' (000 II 2.1.6)")
            return evolve(state, wagers=state.wagers + (Wager(payload["player"], payload["spot"], payload["amount"]),))
        if kind == "baccarat.no_more_bets.v1":
            return close_betting(state)
        if kind == "baccarat.card.v1":
            if state.betting_open:
                raise RuleViolation("card drawn before 'no more bets' (000 II 2.1.6)")
            p, b = state.values
            due = next_hand(p, b)
            if due is None:
                raise RuleViolation("the coup is complete: no further card may be drawn (000 II 3.5.1)")
            if payload["hand"] != due:
                raise RuleViolation(f"this card goes to the {due}, not the {payload['hand']} (000 II 3.4.3, 3.5.1)")
            if due == "player":
                return evolve(state, player_cards=state.player_cards + (payload["card"],))
            return evolve(state, banker_cards=state.banker_cards + (payload["card"],))
        if kind == "baccarat.settle.v1":
            if not state.complete:
                raise RuleViolation("settlement before the coup is complete (000 II 2.1.7)")
            index = payload["bet"]
            check_settle_target(index, len(state.wagers), state.settled)
            want = settlement(state, index)
            got = (payload["outcome"], payload["paid"], payload["commission"])
            if got != want:
                w = state.wagers[index - 1]
                raise RuleViolation(
                    f"wrong settlement of bet {index} ({w.spot} {w.amount}) on a {state.winner()} coup:"
                    f" the engine pays {want[0]} {want[1]} commission {want[2]}, the event says"
                    f" {got[0]} {got[1]} commission {got[2]} (000 II 2.1, 2.2)")
            return evolve(state, settled=state.settled | {index})
        raise RuleViolation(f"{kind} is not a baccarat event")

    def close_problem(self, state: BaccaratState) -> str | None:
        if not state.complete:
            return "the coup is not complete"
        return unsettled(len(state.wagers), state.settled)

    def draws(self, state: BaccaratState) -> tuple[tuple[Any, ...], list[Any], bool]:
        """Cards in shoe order: player, banker, player, banker, then the third cards
        (player's before banker's, 000 II 3.4.3 and 3.5.1)."""
        p, b = state.player_cards, state.banker_cards
        order = [hand[i] for i in range(2) for hand in (p, b) if i < len(hand)]
        order += list(p[2:]) + list(b[2:])
        return ("cards", state.rules.decks), order, state.complete

    def snapshot(self, state: BaccaratState) -> dict[str, Any]:
        p, b = state.values
        return {
            "betting_open": state.betting_open,
            "bets": [{"bet": i, "player": w.player, "spot": w.spot, "amount": w.amount}
                     for i, w in enumerate(state.wagers, start=1)],
            "player": {"cards": list(state.player_cards), "points": points(p)},
            "banker": {"cards": list(state.banker_cards), "points": points(b)},
            "next": None if state.betting_open else next_hand(p, b),
            "settled": sorted(state.settled),
        }

    def describe(self, state: BaccaratState, money: Money) -> list[str]:
        snap = self.snapshot(state)
        lines = bets_lines(snap["betting_open"], [f"{b['player']} on {b['spot']} {money(b['amount'])}"
                                                  for b in snap["bets"]])
        if state.player_cards or state.banker_cards:
            p, b = snap["player"], snap["banker"]
            hands = (f"Player {show_cards(p['cards'])} = {p['points']}   Banker {show_cards(b['cards'])} ="
                     f" {b['points']}")
            lines.append(hands + (f"   next card: {snap['next']}" if snap["next"] else ""))
        return lines

    def result(self, state: BaccaratState, money: Money) -> str | None:
        """000 II 1.3: the hand closer to 9 wins; equal points tie."""
        if not state.complete:
            return None
        p, b = (points(v) for v in state.values)
        head = f"Tie at {p}" if p == b else f"Player {p} beats Banker {b}" if p > b else f"Banker {b} beats Player {p}"
        return head + paid_text(self.outcome(state), money)

    def outcome(self, state: BaccaratState) -> dict[str, Any]:
        if not state.complete:
            return {"winner": None, "settlements": []}
        rows = []
        for i, w in enumerate(state.wagers, start=1):
            o, paid, c = settlement(state, i)
            rows.append({"bet": i, "player": w.player, "outcome": o, "paid": paid, "commission": c, "staked": w.amount})
        return {"winner": state.winner(), "settlements": rows}


def coup_events(
    bets: list[tuple[str, str, int]], cards: Any, rules: dict[str, Any] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The events of one whole coup, for producers and tests (pure): the bets, "no more
    bets", each card from ``cards`` (an iterator, in shoe order) to the hand the tableau
    sends it to, and each bet's settlement as the engine derives it."""
    engine = BaccaratEngine()
    state = engine.start(rules or {})
    out: list[tuple[str, dict[str, Any]]] = []

    def emit(kind: str, payload: dict[str, Any]) -> None:
        nonlocal state
        state = engine.apply(state, kind, payload)
        out.append((kind, payload))

    for player, spot, amount in bets:
        emit("baccarat.bet.v1", {"player": player, "spot": spot, "amount": amount})
    emit("baccarat.no_more_bets.v1", {})
    while (due := next_hand(*state.values)) is not None:
        emit("baccarat.card.v1", {"hand": due, "card": next(cards)})
    for i in range(1, len(state.wagers) + 1):
        o, paid, c = settlement(state, i)
        emit("baccarat.settle.v1", {"bet": i, "outcome": o, "paid": paid, "commission": c})
    return out


def coup_probabilities(decks: int = 8) -> dict[str, Fraction]:
    """Exact probabilities of a player win, banker win and tie from a full shoe.

    Every sequence of six cards is weighted by its exact count in a ``decks``-deck shoe
    (cards not used by the coup are summed over, so all sequences share one
    denominator): no sampling, no floating point.
    """
    counts = [16 * decks] + [4 * decks] * 9  # value 0 (ten, J, Q, K), then 1..9
    total = 52 * decks
    wins = {"player": 0, "banker": 0, "tie": 0}

    def tail(used: int) -> int:
        w = 1
        for k in range(used, 6):
            w *= total - k
        return w

    def settle(p: tuple[int, ...], b: tuple[int, ...], weight: int) -> None:
        pp, bp = points(p), points(b)
        wins["tie" if pp == bp else "player" if pp > bp else "banker"] += weight

    def draw(p: tuple[int, ...], b: tuple[int, ...], weight: int) -> None:
        who = next_hand(p, b)
        if who is None:
            settle(p, b, weight * tail(len(p) + len(b)))
            return
        for v in range(10):
            c = counts[v]
            if c == 0:
                continue
            counts[v] -= 1
            w = weight * c
            if who == "player":
                draw(p + (v,), b, w)
            else:
                draw(p, b + (v,), w)
            counts[v] += 1

    draw((), (), 1)
    denominator = tail(0)
    return {k: Fraction(v, denominator) for k, v in wins.items()}


def house_edge(rules: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    r = BaccaratRules.model_validate(rules or {})
    pr = coup_probabilities(r.decks)
    commission = Fraction(r.commission_bp, 10_000)
    return {
        "player": {"pays": 1, "edge": pr["banker"] - pr["player"]},
        "banker": {"pays": float(1 - commission), "edge": pr["player"] - (1 - commission) * pr["banker"]},
        "tie": {"pays": r.tie_pays, "edge": 1 - (r.tie_pays + 1) * pr["tie"]},
    }


register_engine(BaccaratEngine())

"""Blackjack as a pure engine.

Sources: 000_c28081091adb3e2e.txt live casino III "ブラックジャックの定義とルール" and the
house options of 004_9f9b7621214e86da.txt ブラックジャック "様々なルール":

- III 1.2.1 up to 7 seats; III 1.5 values (2-10 face, J/Q/K 10, ace 1 or 11);
- III 2.1.3 "no more bets" before the first card; III 3.4 deal order: one card face up
  to each seat that bet (from the dealer's left, seat 1, clockwise), one up to the
  dealer, a second to each seat, the dealer's second (hole) card face down;
- III 2.1.1/2.2/2.3 win, push, bust; a dealer blackjack beats a player's 21;
  both bust: the player loses; III 2.3.1 / 004 (5)-1 blackjack pays 3:2;
- III 2.5 insurance when the dealer's up card is an ace: half the original bet, paid 2:1;
  004 (4) even money for a player blackjack against an ace;
- III 2.6 double down on the first two cards for at most the original bet, one card
  only; 004 (1) some houses allow it on 9-11, 10-11 or 11 only (option);
- III 2.7 split a pair of equal value once, aces included; split aces may get one card
  each (house discretion, option); 21 on a split hand is not a blackjack;
- 004 (5) surrender (option): half the bet back, on the first two cards;
- III 3.7 the dealer looks at the hole card only when the up card is an ace (option
  "ace_or_ten" peeks on a ten too); a dealer blackjack found at the end takes every bet;
- III 4.4.1 no card is offered on 21; 4.4.2 the dealer draws to 17 and stands on all
  17s (option: hits soft 17, 004 (4)); 4.4.3 the dealer draws nothing when every player
  hand is already decided.

Rounding: 3:2 on an odd bet and half a bet (insurance, surrender) round down to the
minor unit; the seeds say nothing about fractions.

Events: ``blackjack.bet.v1`` {seat, player, amount}; ``blackjack.no_more_bets.v1``;
``blackjack.card.v1`` {seat, hand, card} (seat 0 is the dealer; the engine knows who gets
the next card and refuses any other); ``blackjack.action.v1`` {seat, hand, action,
amount?} with action hit/stand/double/split/surrender/insurance/no_insurance/even_money;
``blackjack.settle.v1`` {seat, hand, wager (main|insurance), outcome, paid} (paid is
everything handed back, stake included).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Final, Literal

from pydantic import Field

from ledger.games import (
    DemoTable,
    EngineDefaults,
    Events,
    Money,
    Play,
    RuleViolation,
    close_betting,
    evolve,
    paid_text,
    parse_rules,
    register_engine,
    wrap,
)
from ledger.games.cards import CARD_PATTERN, show_cards
from ledger.kinds import (
    ROUND_PRODUCERS,
    Amount,
    EmptyPayload,
    Ident,
    Strict,
    register_kind,
)

Seat = Annotated[int, Field(ge=1, le=7)]
DOUBLE_ON = {"any": None, "9-11": (9, 10, 11), "10-11": (10, 11), "11": (11,)}


class BlackjackRules(Strict):
    decks: Annotated[int, Field(ge=1, le=8)] = 8
    dealer_hits_soft_17: bool = False
    blackjack_pays: Annotated[list[Annotated[int, Field(ge=1, le=100)]], Field(min_length=2, max_length=2)] = [3, 2]
    insurance: bool = True
    even_money: bool = True
    double: Literal["any", "9-11", "10-11", "11"] = "any"
    double_after_split: bool = False
    split_aces_one_card: bool = True
    surrender: bool = False
    peek: Literal["ace", "ace_or_ten"] = "ace"


class BlackjackBet(Strict):
    seat: Seat
    player: Ident
    amount: Amount


class BlackjackCard(Strict):
    seat: Annotated[int, Field(ge=0, le=7)]
    hand: Annotated[int, Field(ge=1, le=2)]
    card: Annotated[str, Field(pattern=CARD_PATTERN)]


ACTIONS = ("hit", "stand", "double", "split", "surrender", "insurance", "no_insurance", "even_money")


class BlackjackAction(Strict):
    seat: Seat
    hand: Annotated[int, Field(ge=1, le=2)]
    action: Literal[ACTIONS]  # type: ignore[valid-type]  # a Literal built from ACTIONS, read by pydantic at run time
    amount: Amount | None = None


class BlackjackSettle(Strict):
    seat: Seat
    hand: Annotated[int, Field(ge=1, le=2)]
    wager: Literal["main", "insurance"]
    outcome: Literal["win", "lose", "push", "surrender"]
    paid: Annotated[int, Field(ge=0)]


ROLES = ROUND_PRODUCERS
register_kind("blackjack.bet.v1", BlackjackBet, "round", ROLES)
register_kind("blackjack.no_more_bets.v1", EmptyPayload, "round", ROLES)
register_kind("blackjack.card.v1", BlackjackCard, "round", ROLES)
register_kind("blackjack.action.v1", BlackjackAction, "round", ROLES)
register_kind("blackjack.settle.v1", BlackjackSettle, "round", ROLES)


def card_value(card: str) -> int:
    """III 1.5: 2-10 at face value, J/Q/K 10, ace 1 (counted 11 by ``total``)."""
    r = card[0]
    return 1 if r == "A" else 10 if r in "TJQK" else int(r)


def total(cards: tuple[str, ...] | list[str]) -> tuple[int, bool]:
    """(best total, soft): an ace counts 11 unless that takes the hand over 21 (III 1.5)."""
    hard = sum(card_value(c) for c in cards)
    if any(c[0] == "A" for c in cards) and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


@dataclass(frozen=True)
class Hand:
    cards: tuple[str, ...] = ()
    stake: int = 0
    from_split: bool = False
    doubled: bool = False
    surrendered: bool = False
    stood: bool = False
    wants_card: bool = False

    @property
    def natural(self) -> bool:
        return len(self.cards) == 2 and not self.from_split and total(self.cards)[0] == 21

    @property
    def bust(self) -> bool:
        return total(self.cards)[0] > 21


@dataclass(frozen=True)
class SeatState:
    seat: int
    player: str
    bet: int
    hands: tuple[Hand, ...]
    insurance: int = 0
    insurance_decided: bool = False
    even_money: bool = False


@dataclass(frozen=True)
class BlackjackState:
    rules: BlackjackRules
    seats: tuple[SeatState, ...] = ()
    betting_open: bool = True
    dealer: tuple[str, ...] = ()
    dealt: tuple[str, ...] = ()
    settled: frozenset[tuple[int, int, str]] = frozenset()


def _seat(state: BlackjackState, seat: int) -> SeatState:
    for s in state.seats:
        if s.seat == seat:
            return s
    raise RuleViolation(f"seat {seat} has no bet in this round")


def _with_hand(state: BlackjackState, seat: int, index: int, hand: Hand) -> BlackjackState:
    s = _seat(state, seat)
    hands = s.hands[: index - 1] + (hand,) + s.hands[index:]
    return _with_seat(state, evolve(s, hands=hands))


def _with_seat(state: BlackjackState, new: SeatState) -> BlackjackState:
    return evolve(state, seats=tuple(new if s.seat == new.seat else s for s in state.seats))


def _initial_order(state: BlackjackState) -> list[int]:
    """III 3.4: each seat, the dealer (up card), each seat, the dealer (hole card)."""
    seats = [s.seat for s in state.seats]
    return seats + [0] + seats + [0]


def dealer_natural(state: BlackjackState) -> bool:
    return len(state.dealer) >= 2 and total(state.dealer[:2])[0] == 21


def phase(state: BlackjackState) -> str:
    """betting -> dealing -> insurance -> play -> dealer -> done."""
    if state.betting_open:
        return "betting"
    if len(state.dealt) < len(_initial_order(state)):
        return "dealing"
    up = state.dealer[0]
    if up[0] == "A" and state.rules.insurance and any(not s.insurance_decided for s in state.seats):
        return "insurance"
    if dealer_natural(state) and (up[0] == "A" or (state.rules.peek == "ace_or_ten" and card_value(up) == 10)):
        return "done"  # the peek (III 3.7) found a blackjack: play stops here
    if _current(state) is not None:
        return "play"
    if _dealer_draws(state):
        return "dealer"
    return "done"


def _hand_finished(h: Hand, rules: BlackjackRules) -> bool:
    if h.wants_card or len(h.cards) < 2:
        return False
    if h.stood or h.surrendered or h.bust or h.natural or total(h.cards)[0] == 21:  # III 4.4.1
        return True
    if h.doubled:
        return True  # III 2.6: one card only
    return h.from_split and h.cards[0][0] == "A" and rules.split_aces_one_card  # III 2.7


def _current(state: BlackjackState) -> tuple[int, int] | None:
    """The (seat, hand) now playing, in seat order (III 3.5), or None when all are done."""
    for s in state.seats:
        for i, h in enumerate(s.hands, start=1):
            if not _hand_finished(h, state.rules):
                return s.seat, i
    return None


def _dealer_draws(state: BlackjackState) -> bool:
    if all(h.bust or h.surrendered or h.natural for s in state.seats for h in s.hands):
        return False  # III 4.4.3
    t, soft = total(state.dealer)
    return t < 17 or (t == 17 and soft and state.rules.dealer_hits_soft_17)  # III 4.4.2


def next_card(state: BlackjackState) -> tuple[int, int] | None:
    """Who gets the next card as (seat, hand), seat 0 the dealer; None if no card is due."""
    ph = phase(state)
    if ph == "dealing":
        return _initial_order(state)[len(state.dealt)], 1
    if ph == "play":
        seat, index = _current(state)  # type: ignore[misc]  # a hand is to act: the phase says so
        h = _seat(state, seat).hands[index - 1]
        return (seat, index) if h.wants_card or len(h.cards) < 2 else None
    if ph == "dealer":
        return 0, 1
    return None


def _can_double(h: Hand, rules: BlackjackRules) -> bool:
    if len(h.cards) != 2 or h.doubled or (h.from_split and not rules.double_after_split):
        return False
    allowed = DOUBLE_ON[rules.double]
    return allowed is None or total(h.cards)[0] in allowed


def _apply_action(state: BlackjackState, p: dict[str, Any]) -> BlackjackState:
    action, seat_no, index, amount = p["action"], p["seat"], p["hand"], p.get("amount")
    ph = phase(state)
    s = _seat(state, seat_no)
    rules = state.rules
    if action in ("insurance", "no_insurance", "even_money"):
        if ph != "insurance":
            raise RuleViolation(f"{action} is offered only while the dealer shows an ace, before play (III 2.5.2)")
        pending = next(x for x in state.seats if not x.insurance_decided)
        if pending.seat != seat_no:
            raise RuleViolation(f"seat {pending.seat} decides on insurance before seat {seat_no}")
        if action == "insurance":
            if amount != s.bet // 2 or amount == 0:
                raise RuleViolation(f"insurance is half the original bet, {s.bet // 2}, not {amount} (III 2.5.1)")
            return _with_seat(state, evolve(s, insurance=amount, insurance_decided=True))
        if amount is not None:
            raise RuleViolation(f"{action} takes no amount")
        if action == "even_money":
            if not rules.even_money or not s.hands[0].natural:
                raise RuleViolation("even money is only for a player blackjack against an ace, when offered (004 (4))")
            return _with_seat(state, evolve(s, even_money=True, insurance_decided=True))
        return _with_seat(state, evolve(s, insurance_decided=True))
    if ph != "play" or _current(state) != (seat_no, index):
        who = _current(state) if ph == "play" else None
        raise RuleViolation(
            f"seat {seat_no} hand {index} may not act now: " + (f"seat {who[0]} hand {who[1]} is to act (III 3.5)"
                                                                 if who else f"the round is in its {ph} phase"))
    h = s.hands[index - 1]
    if h.wants_card or len(h.cards) < 2:
        raise RuleViolation(f"seat {seat_no} hand {index} is waiting for a card")
    if action in ("hit", "stand", "split", "surrender") and amount is not None:
        raise RuleViolation(f"{action} takes no amount")
    if action == "hit":
        return _with_hand(state, seat_no, index, evolve(h, wants_card=True))
    if action == "stand":
        return _with_hand(state, seat_no, index, evolve(h, stood=True))
    if action == "double":
        if not _can_double(h, rules):
            raise RuleViolation(f"double down is not allowed on {list(h.cards)} under double={rules.double!r},"
                                f" double_after_split={rules.double_after_split} (III 2.6, 004 (1))")
        if amount is None or amount > h.stake:
            raise RuleViolation(f"a double is at most the original bet {h.stake}, not {amount} (III 2.6)")
        return _with_hand(state, seat_no, index, evolve(h, stake=h.stake + amount, doubled=True, wants_card=True))
    if action == "split":
        if len(s.hands) > 1 or len(h.cards) != 2 or card_value(h.cards[0]) != card_value(h.cards[1]):
            raise RuleViolation("only a first pair of equal value splits, once (III 2.7)")
        one = Hand(cards=(h.cards[0],), stake=h.stake, from_split=True)
        two = Hand(cards=(h.cards[1],), stake=h.stake, from_split=True)
        return _with_seat(state, evolve(s, hands=(one, two)))
    # surrender
    if not rules.surrender or len(h.cards) != 2 or h.from_split:
        raise RuleViolation("surrender is allowed only as a house option, on the first two cards (004 (5))")
    return _with_hand(state, seat_no, index, evolve(h, surrendered=True))


def _apply_card(state: BlackjackState, p: dict[str, Any]) -> BlackjackState:
    if state.betting_open:
        raise RuleViolation("card drawn before 'no more bets' (III 2.1.3)")
    if not state.seats:
        raise RuleViolation("no seat has a bet: no card is dealt")
    due = next_card(state)
    if due is None:
        raise RuleViolation(f"no card is due now (the round is in its {phase(state)} phase)")
    if (p["seat"], p["hand"]) != due:
        to = "the dealer" if due[0] == 0 else f"seat {due[0]} hand {due[1]}"
        got = "the dealer" if p["seat"] == 0 else f"seat {p['seat']} hand {p['hand']}"
        raise RuleViolation(f"this card goes to {to}, not {got}"
                            " (III 3.4, 3.5)")
    card = p["card"]
    state = evolve(state, dealt=state.dealt + (card,))
    if due[0] == 0:
        return evolve(state, dealer=state.dealer + (card,))
    h = _seat(state, due[0]).hands[due[1] - 1]
    return _with_hand(state, due[0], due[1], evolve(h, cards=h.cards + (card,), wants_card=False))


def settlement(state: BlackjackState, seat_no: int, index: int, wager: str) -> tuple[str, int]:
    """(outcome, paid) of one wager once the round is done (III 2.1-2.7, 004 (4)-(5))."""
    s = _seat(state, seat_no)
    if wager == "insurance":
        return ("win", 3 * s.insurance) if dealer_natural(state) else ("lose", 0)
    h = s.hands[index - 1]
    num, den = state.rules.blackjack_pays
    if h.surrendered:
        return "surrender", h.stake // 2
    if s.even_money:
        return "win", 2 * h.stake
    d_nat = dealer_natural(state)
    if h.natural:
        return ("push", h.stake) if d_nat else ("win", h.stake + h.stake * num // den)
    if d_nat or h.bust:
        return "lose", 0
    dt, pt = total(state.dealer)[0], total(h.cards)[0]
    if dt > 21 or pt > dt:
        return "win", 2 * h.stake
    return ("push", h.stake) if pt == dt else ("lose", 0)


def wagers(state: BlackjackState) -> list[tuple[int, int, str]]:
    out = []
    for s in state.seats:
        out += [(s.seat, i, "main") for i in range(1, len(s.hands) + 1)]
        if s.insurance:
            out.append((s.seat, 1, "insurance"))
    return out


class BlackjackEngine(EngineDefaults):
    game = "blackjack"
    kinds = frozenset({"blackjack.bet.v1", "blackjack.no_more_bets.v1", "blackjack.card.v1",
                       "blackjack.action.v1", "blackjack.settle.v1"})
    rules_model = BlackjackRules
    banking: Final = "house"
    equipment: Final = "shoe"
    house_edges = {"blackjack": "infinite deck, exact recursion over totals with the best play per total (method per"
                                " bet)"}
    demo_tables = (DemoTable("BJ", "live", decks=6, cut=200,
                             config={"rules": {"decks": 6}, "limits": {"main": {"min": 100, "max": 100_000}}}),)

    def seed_problem(self, rules: dict[str, Any], seats: int) -> str | None:
        """000 III 2.3(a): a blackjack is paid at least 3:2 (and 000 III 1.2.3(b): the
        table shows the real odds)."""
        num, den = rules.get("blackjack_pays", [3, 2])
        return None if num * 2 >= den * 3 else f"a blackjack pays at least 3:2, not {num}:{den} (000 III 2.3(a))"

    def stakes(self, kind: str, payload: dict[str, Any]) -> tuple[tuple[str, int], ...]:
        return (("main", payload["amount"]),) if kind == "blackjack.bet.v1" else ()

    def cut_problem(self, decks: int, from_back: int) -> str | None:
        if not (3 * 52 < from_back <= 4 * 52):
            return (f"the cut card goes in the 4th deck from the back in blackjack (cards {3 * 52 + 1}-{4 * 52}"
                    f" from the back), not {from_back} (000 III 3.3.1)")
        return None

    def house_edge(self, name: str) -> dict[str, dict[str, Any]]:
        return house_edge()

    def demo_round(self, rng: Any, players: list[str], cards: Any) -> tuple[dict[str, Any], Events]:
        """Every player bets, takes no insurance, doubles on 11 and hits to 17."""
        rules = {"decks": 6}
        play = Play(self, rules)
        for seat, player in enumerate(players, start=1):
            play("blackjack.bet.v1", {"seat": seat, "player": player, "amount": rng.choice([500, 1000, 2500])})
        play("blackjack.no_more_bets.v1", {})
        while (ph := phase(play.st)) != "done":
            due = next_card(play.st)
            if due is not None:
                play("blackjack.card.v1", {"seat": due[0], "hand": due[1], "card": next(cards)})
            elif ph == "insurance":
                seat = next(s.seat for s in play.st.seats if not s.insurance_decided)
                play("blackjack.action.v1", {"seat": seat, "hand": 1, "action": "no_insurance"})
            else:
                current = _current(play.st)
                assert current is not None  # a hand is to act while the round is not done
                seat, hand = current
                h = next(s for s in play.st.seats if s.seat == seat).hands[hand - 1]
                t = total(h.cards)[0]
                if t == 11 and len(h.cards) == 2:
                    play("blackjack.action.v1", {"seat": seat, "hand": hand, "action": "double", "amount": h.stake})
                else:
                    play("blackjack.action.v1", {"seat": seat, "hand": hand, "action": "hit" if t < 17 else "stand"})
        return rules, play.settle("blackjack", ("seat", "hand", "wager", "outcome", "paid"))

    def start(self, rules: dict[str, Any]) -> BlackjackState:
        return BlackjackState(parse_rules(BlackjackRules, rules, "blackjack"))

    def apply(self, state: BlackjackState, kind: str, payload: dict[str, Any]) -> BlackjackState:
        if kind == "blackjack.bet.v1":
            if not state.betting_open:
                raise RuleViolation("bet after 'no more bets' (III 2.1.3)")
            if any(s.seat == payload["seat"] for s in state.seats):
                raise RuleViolation(f"seat {payload['seat']} already has a bet")
            seat = SeatState(payload["seat"], payload["player"], payload["amount"], (Hand(stake=payload["amount"]),))
            return evolve(state, seats=tuple(sorted(state.seats + (seat,), key=lambda s: s.seat)))
        if kind == "blackjack.no_more_bets.v1":
            return close_betting(state)
        if kind == "blackjack.card.v1":
            return _apply_card(state, payload)
        if kind == "blackjack.action.v1":
            return _apply_action(state, payload)
        if kind == "blackjack.settle.v1":
            if phase(state) != "done":
                raise RuleViolation("settlement before the round's result (III 2.1.4)")
            key = (payload["seat"], payload["hand"], payload["wager"])
            if key not in wagers(state):
                raise RuleViolation(f"seat {key[0]} hand {key[1]} has no {key[2]} wager")
            if key in state.settled:
                raise RuleViolation(f"seat {key[0]} hand {key[1]} {key[2]} is already settled")
            want = settlement(state, *key)
            got = (payload["outcome"], payload["paid"])
            if got != want:
                raise RuleViolation(
                    f"wrong settlement of seat {key[0]} hand {key[1]} {key[2]}: the engine pays {want[0]} {want[1]},"
                    f" the event says {got[0]} {got[1]} (III 2.1-2.7)")
            return evolve(state, settled=state.settled | {key})
        raise RuleViolation(f"{kind} is not a blackjack event")

    def close_problem(self, state: BlackjackState) -> str | None:
        ph = phase(state)
        if ph != "done":
            return f"the round is still in its {ph} phase"
        left = [w for w in wagers(state) if w not in state.settled]
        return f"wagers {left} are not settled" if left else None

    def draws(self, state: BlackjackState) -> tuple[tuple[Any, ...], list[Any], bool]:
        return ("cards", state.rules.decks), list(state.dealt), phase(state) == "done"

    def snapshot(self, state: BlackjackState) -> dict[str, Any]:
        due = next_card(state)
        return {
            "phase": phase(state),
            "dealer": {"cards": list(state.dealer), "total": total(state.dealer)[0] if state.dealer else 0},
            "seats": [{"seat": s.seat, "player": s.player, "bet": s.bet, "insurance": s.insurance,
                       "even_money": s.even_money,
                       "hands": [{"cards": list(h.cards), "total": total(h.cards)[0], "stake": h.stake,
                                  "doubled": h.doubled, "surrendered": h.surrendered} for h in s.hands]}
                      for s in state.seats],
            "next_card": None if due is None else {"seat": due[0], "hand": due[1]},
            "to_act": _current(state) if phase(state) == "play" and due is None else None,
            "settled": sorted(list(k) for k in state.settled),
        }

    def describe(self, state: BlackjackState, money: Money) -> list[str]:
        snap = self.snapshot(state)
        lines = []
        if state.dealer:
            lines.append(f"dealer {show_cards(snap['dealer']['cards'])} = {snap['dealer']['total']}")
        for s in snap["seats"]:
            items = [f"seat {s['seat']} {s['player']} bet {money(s['bet'])}"
                     + (f" insurance {money(s['insurance'])}" if s["insurance"] else "")]
            for i, h in enumerate(s["hands"], start=1):
                if h["cards"]:
                    flags = " doubled" if h["doubled"] else " surrendered" if h["surrendered"] else ""
                    items.append(f"hand {i}: {show_cards(h['cards'])} = {h['total']}{flags}")
            lines += wrap(items, indent="  ")
        if snap["to_act"]:
            lines.append(f"to act: seat {snap['to_act'][0]} hand {snap['to_act'][1]}")
        elif snap["next_card"]:
            lines.append(f"next card: seat {snap['next_card']['seat']} hand {snap['next_card']['hand']}"
                         if snap["next_card"]["seat"] else "next card: the dealer")
        return lines

    def result(self, state: BlackjackState, money: Money) -> str | None:
        """000 III: each hand against the dealer's; over 21 loses."""
        if phase(state) != "done":
            return None
        dealer = total(state.dealer)[0]
        head = f"Dealer busts with {dealer}" if dealer > 21 else f"Dealer stands on {dealer}"
        return head + paid_text(self.outcome(state), money)

    def outcome(self, state: BlackjackState) -> dict[str, Any]:
        if phase(state) != "done":
            return {"dealer": None, "settlements": []}
        rows = []
        for seat, index, wager in wagers(state):
            s = _seat(state, seat)
            o, paid = settlement(state, seat, index, wager)
            staked = s.insurance if wager == "insurance" else s.hands[index - 1].stake
            rows.append({"seat": seat, "hand": index, "wager": wager, "player": s.player, "outcome": o,
                         "paid": paid, "staked": staked})
        return {"dealer": {"cards": list(state.dealer), "total": total(state.dealer)[0]}, "settlements": rows}


register_engine(BlackjackEngine())


# --- theoretical return -------------------------------------------------------------
#
# Method: an infinite deck (each value drawn with probability 1/13, tens 4/13), the
# dealer's final-total distribution computed exactly by recursion, and the player's
# best play per hand total (hit, stand, double, split once, surrender as the rules
# allow) found by exact recursion over totals. Precision: exact for an infinite deck;
# a finite shoe of 6-8 decks differs by a few hundredths of a percent.

VALUE_P = {v: (4 / 13 if v == 10 else 1 / 13) for v in range(1, 11)}
OUTCOMES = (17, 18, 19, 20, 21, "bust", "blackjack")


def dealer_distribution(up: int, hits_soft_17: bool = False, peeked: bool = False) -> dict[Any, float]:
    """The dealer's final result for up-card value ``up`` (1 = ace) from an infinite deck.

    ``peeked``: the dealer has looked and has no blackjack (III 3.7), so the hole card is
    drawn from the values that do not make one.
    """
    out: dict[Any, float] = dict.fromkeys(OUTCOMES, 0.0)

    def draw(hard: int, ace: bool, p: float) -> None:
        soft = ace and hard + 10 <= 21
        t = hard + 10 if soft else hard
        if t > 21:
            out["bust"] += p
        elif t > 17 or (t == 17 and not (soft and hits_soft_17)):
            out[t] += p
        else:
            for v, q in VALUE_P.items():
                draw(hard + v, ace or v == 1, p * q)

    hole = dict(VALUE_P)
    if peeked:
        bad = {1: 10, 10: 1}.get(up)
        if bad is not None:
            rest = 1 - hole.pop(bad)
            hole = {v: q / rest for v, q in hole.items()}
    for v, q in hole.items():
        if {up, v} == {1, 10}:
            out["blackjack"] += q
        else:
            draw(up + v, up == 1 or v == 1, q)
    return out


def _stand_ev(t: int, dist: dict[Any, float]) -> float:
    ev = dist["bust"] - dist["blackjack"]
    for d in (17, 18, 19, 20, 21):
        ev += dist[d] * (1 if t > d else 0 if t == d else -1)
    return ev


def house_edge(rules: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    r = BlackjackRules.model_validate(rules or {})
    num, den = r.blackjack_pays
    total_ev = 0.0
    for up, pu in VALUE_P.items():
        peek = up == 1 or (up == 10 and r.peek == "ace_or_ten")
        dist = dealer_distribution(up, r.dealer_hits_soft_17, peeked=peek)
        p_bj = (VALUE_P[10] if up == 1 else VALUE_P[1]) if peek else 0.0
        stand = {t: _stand_ev(t, dist) for t in range(4, 22)}

        @cache
        def best(hard: int, ace: bool, may_double: bool) -> float:
            """Best EV of a hand (hard total, holds an ace) not yet busted."""
            soft = ace and hard + 10 <= 21
            t = hard + 10 if soft else hard
            options = [stand[t] if t >= 4 else stand[4]]
            if t < 21:
                options.append(sum(q * (best(hard + v, ace or v == 1, False) if hard + v <= 21 else -1.0)
                                   for v, q in VALUE_P.items()))
            if may_double:
                options.append(2 * sum(q * (stand[_t(hard + v, ace or v == 1)] if hard + v <= 21 else -1.0)
                                       for v, q in VALUE_P.items()))
            return max(options)

        def can_double(hard: int, ace: bool, after_split: bool) -> bool:
            if after_split and not r.double_after_split:
                return False
            allowed = DOUBLE_ON[r.double]
            return allowed is None or _t(hard, ace) in allowed

        def split_hand(v: int) -> float:
            ev = 0.0
            for w, q in VALUE_P.items():
                hard, ace = v + w, v == 1 or w == 1
                if v == 1 and r.split_aces_one_card:
                    ev += q * stand[_t(hard, ace)]
                else:
                    ev += q * best(hard, ace, can_double(hard, ace, True))
            return ev

        ev_up = 0.0
        for c1, p1 in VALUE_P.items():
            for c2, p2 in VALUE_P.items():
                hard, ace = c1 + c2, c1 == 1 or c2 == 1
                if ace and hard == 11:  # a natural
                    ev = (1 - dist["blackjack"]) * num / den  # dist holds a blackjack only when not peeked
                    ev = (1 - p_bj) * ev  # with a peek: a dealer blackjack pushes it
                else:
                    options = [best(hard, ace, can_double(hard, ace, False))]
                    if c1 == c2:
                        options.append(2 * split_hand(c1))
                    if r.surrender:
                        options.append(-0.5)
                    ev = (1 - p_bj) * max(options) - p_bj
                ev_up += p1 * p2 * ev
        total_ev += pu * ev_up
    p_ten = VALUE_P[10]
    method = ("infinite deck, exact recursion over totals, best play per total (hit, stand, double,"
              " split once, surrender as configured); exact for an infinite deck, within a few"
              " hundredths of a percent of a 6-8 deck shoe")
    return {
        "main": {"pays": 1, "edge": -total_ev, "method": method},
        "insurance": {"pays": 2, "edge": 1 - 3 * p_ten, "method": "infinite deck: the hole card is a ten 4/13"},
    }


def _t(hard: int, ace: bool) -> int:
    return hard + 10 if ace and hard + 10 <= 21 else hard

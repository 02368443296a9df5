"""Producers for the demo: whole rounds of every game, played through the real engines
(pure: a random source in, (kind, payload) events out). Each round's settlements are
the engine's own, so what the demo records is what the rules say.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from ledger.games.blackjack import BlackjackEngine, next_card, phase, total
from ledger.games.blackjack import _current as bj_current
from ledger.games.high_card_flush import HighCardFlushEngine, deal_order, flush_rank
from ledger.games.poker import PokerEngine, award_events, raise_limits
from ledger.games.roulette import RouletteEngine
from ledger.games.sicbo import SicBoEngine

Events = list[tuple[str, dict[str, Any]]]


class _Play:
    def __init__(self, engine: Any, rules: dict[str, Any]):
        self.engine, self.st, self.events = engine, engine.start(rules), []

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        self.st = self.engine.apply(self.st, kind, payload)
        self.events.append((kind, payload))

    def settle(self, prefix: str, fields: tuple[str, ...]) -> Events:
        for row in self.engine.outcome(self.st)["settlements"]:
            self(f"{prefix}.settle.v1", {k: row[k] for k in fields})
        return self.events


def blackjack_round(rng: random.Random, players: list[str], cards: Iterator[str]) -> Events:
    play = _Play(BlackjackEngine(), {"decks": 6})
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
            seat, hand = bj_current(play.st)  # type: ignore[misc]
            h = next(s for s in play.st.seats if s.seat == seat).hands[hand - 1]
            t = total(h.cards)[0]
            if t == 11 and len(h.cards) == 2:
                play("blackjack.action.v1", {"seat": seat, "hand": hand, "action": "double", "amount": h.stake})
            else:
                play("blackjack.action.v1", {"seat": seat, "hand": hand, "action": "hit" if t < 17 else "stand"})
    return play.settle("blackjack", ("seat", "hand", "wager", "outcome", "paid"))


def roulette_round(rng: random.Random, players: list[str]) -> Events:
    play = _Play(RouletteEngine(), {"wheel": "european"})
    for player in players:
        if rng.random() < 0.5:
            play("roulette.bet.v1", {"player": player, "bet": rng.choice(["red", "black", "even", "odd"]),
                                     "pockets": [], "amount": rng.choice([500, 1000, 2000])})
        else:
            play("roulette.bet.v1", {"player": player, "bet": "straight", "pockets": [str(rng.randint(0, 36))],
                                     "amount": 100})
    play("roulette.no_more_bets.v1", {})
    play("roulette.result.v1", {"pocket": str(rng.randint(0, 36)), "revolutions": rng.randint(3, 9)})
    return play.settle("roulette", ("bet", "outcome", "paid"))


def sicbo_round(rng: random.Random, players: list[str]) -> Events:
    play = _Play(SicBoEngine(), {})
    for player in players:
        bet = rng.choice(["big", "small", "total"])
        target = [rng.randint(4, 17)] if bet == "total" else []
        play("sicbo.bet.v1", {"player": player, "bet": bet, "target": target, "amount": rng.choice([500, 1000])})
    play("sicbo.no_more_bets.v1", {})
    play("sicbo.result.v1", {"dice": [rng.randint(1, 6) for _ in range(3)]})
    return play.settle("sicbo", ("bet", "outcome", "paid"))


def hcf_round(rng: random.Random, banker: str, players: list[str], deck: list[str]) -> Events:
    play = _Play(HighCardFlushEngine(), {})
    play("hcf.designate.v1", {"seat": 1, "player": banker, "bankroll": 200_000})
    for seat, player in enumerate(players, start=2):
        play("hcf.bet.v1", {"seat": seat, "player": player, "wager": "ante", "amount": 1000})
        if rng.random() < 0.3:
            play("hcf.bet.v1", {"seat": seat, "player": player, "wager": "flush", "amount": 500})
    play("hcf.no_more_bets.v1", {})
    cards = iter(rng.sample(deck, len(deck)))
    for seat in deal_order(play.st):
        play("hcf.card.v1", {"seat": seat, "card": next(cards)})
    for p in play.st.players:
        n = flush_rank(p.cards)[0]
        if n < 3 and rng.random() < 0.5:
            play("hcf.decision.v1", {"seat": p.seat, "action": "fold"})
        else:
            cap = 3 if n >= 6 else 2 if n == 5 else 1
            play("hcf.decision.v1", {"seat": p.seat, "action": "raise", "amount": cap * 1000})
    return play.settle("hcf", ("seat", "wager", "outcome", "paid"))


def poker_hand(rng: random.Random, players: list[str], stacks: list[int], dump: tuple[int, int] | None = None,
               deck: list[str] | None = None) -> tuple[dict[str, Any], Events]:
    """A no-limit hold'em hand with random legal play. ``dump=(loser, winner)`` seats:
    the loser, dealt two aces, raises and then folds to the winner's shove (a planted
    chip-dumping hand)."""
    rules = {"variant": "NT", "players": players, "starting_stacks": stacks, "antes": [0] * len(players),
             "blinds_or_straddles": [50, 100] + [0] * (len(players) - 2), "min_bet": 100}
    play = _Play(PokerEngine(), rules)
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

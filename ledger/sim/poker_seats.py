"""The demo's poker tables as a card room runs them (issue 15 point 4): players in
numbered seats, stacks carried from hand to hand, rebuys at the cage, players sitting out
and coming back, and each hand dealt as the table's book says (``Book.next_hand``: the
same rules ingest judges it by, ``ledger.games.poker_table``)."""

from __future__ import annotations

import random
from typing import Any

from ledger.games import ENGINES, play_events
from ledger.games.poker import random_hand
from ledger.games.poker_table import Book

REBUY_BELOW = 1_000
BUY_IN = 10_000


class PokerSeats:
    """One configured poker table of the demo and its ``book`` (``Engine.table_book``).
    ``chips`` is the demo's ``_Chips`` (the cage's buy-ins and each player's chips at each
    table); ``add(signer, stream, kind, payload)`` records a seat event."""

    def __init__(self, table: str, config: dict[str, Any], book: Book, chips: Any, add: Any, signer: Any):
        self.table, self.config, self.book, self.chips, self.add, self.signer = table, config, book, chips, add, signer

    def sit(self, players: list[str], buy_in: int = BUY_IN) -> None:
        """``players`` take the free seats in order, each with ``buy_in`` in chips."""
        free = [n for n in range(1, self.book.size + 1) if n not in self.book.seats]
        for player, n in zip(players, free, strict=False):
            self._buy(player, buy_in)
            payload = {"table": self.table, "blind_level": "50/100", "seat": n}
            self.add(self.signer, f"seat:{player}", "seat.join.v1", payload)
            self.chips.seated.add((player, self.table))
            self.book.seat("seat.join.v1", player, payload)

    def _buy(self, player: str, amount: int) -> None:
        self.chips.buy(self.table, player, amount)
        self.book.chips("chips.buy_in.v1", player, amount)

    def _away(self, player: str, kind: str) -> None:
        self.add(self.signer, f"seat:{player}", kind, {"table": self.table})
        self.book.seat(kind, player, {"table": self.table})

    def between_hands(self, rng: random.Random) -> None:
        """Someone may sit out or come back; a short stack rebuys."""
        seats = self.book.seats
        active = [s.player for s in seats.values() if not s.out]
        away = [s.player for s in seats.values() if s.out]
        r = rng.random()
        if away and r < 0.3:
            self._away(rng.choice(away), "seat.return.v1")
        elif len(active) > 3 and r > 0.85:
            self._away(rng.choice(active), "seat.sit_out.v1")
        for s in sorted(seats.values(), key=lambda s: s.player):
            if not s.out and self.book.stacks.get(s.player, 0) < REBUY_BELOW:
                self._buy(s.player, BUY_IN)

    def next_rules(self) -> dict[str, Any]:
        """The next hand's rules: every player present with chips is dealt in; a player who
        owes blinds posts them, or, where the rules make them wait (the small blind,
        heads-up), waits for the big blind."""
        present = {s.player for s in self.book.seats.values() if not s.out and self.book.stacks.get(s.player, 0) > 0}
        button = max(self.book.seats) if self.book.bb is None else None
        try:
            keys, _ = self.book.next_hand(present, button)
        except ValueError:
            owing = {s.player for s in self.book.seats.values() if not s.dealt or s.missed}
            keys, _ = self.book.next_hand(present - owing if self.book.bb is not None else present, button)
        return {**self.config["rules"], **keys}

    def played(self, rid: str, rules: dict[str, Any], events: list[Any], complete: bool) -> None:
        """The hand ``rid`` was recorded: the book follows it (the players' chips follow
        the round's money, as at every table: ``_Chips.settle``)."""
        engine = ENGINES["poker"]
        self.book.open_hand(rid, rules)
        final = engine.final_chips(play_events(engine, rules, events)) if complete else None
        self.book.close_hand(rid, final)

    def deal(self, rng: random.Random, dump: tuple[str, str] | None = None) -> tuple[dict[str, Any], list[Any]]:
        """The next hand with random legal play (``random_hand``); ``dump=(loser, winner)``
        plants a chip-dumping hand between those two players."""
        rules = self.next_rules()
        players = rules["players"]
        seats = (players.index(dump[0]), players.index(dump[1])) if dump else None
        return random_hand(rng, players, rules["starting_stacks"], dump=seats, table=rules)


__all__ = ["PokerSeats"]

"""A poker table's state across hands (issue 15 point 4), as pure rules on a ``Book``.

A hand's ``round.open`` states who is dealt in, in order, their starting stacks and their
forced bets (``PokerRules``). At a table the floor configured with ``blinds`` none of that
is the producer's to choose: the book, kept from the ledger's own events, says what the
next hand must be, and ingest refuses a hand that differs.

- **Seats** are numbered (``seat.join`` names one); a player away from the table says so
  (``seat.sit_out`` / ``seat.return``). A player seated and not sitting out, with chips,
  is dealt in (TDA 2013 rule 29: a player in their seat when the first card is dealt has
  a live hand); a player sitting out is not.
- **Stacks** carry: a player's starting stack is what the previous hand left them plus the
  chips the cage issued since (``chips.buy_in``) minus those redeemed (``chips.cash_out``,
  never more than the chips behind the player and not in a hand). A void hand (a ruling:
  misdeal, malfunction, rollback) leaves every stack as it started (000 refund policy:
  back to the hand-start stacks), and its positions too: the redeal is dealt with the
  same button (TDA 2013 rule 34-35: a misdeal is re-dealt).
- **Button and blinds** move by the dead-button rule (TDA 2013 rule 31, the default
  reading for cash games as for tournaments; the seed texts give no other): the big blind
  moves to the next player dealt in, clockwise; the small blind is the seat that had the
  big blind (dead, nobody posts, when that player is not dealt in); the button is the seat
  that had the small blind (dead, an empty seat or a player not dealt in, when so). Heads-
  up (TDA 33) the button posts the small blind and acts first before the flop; the big
  blind goes to the player who did not have it in the hand before, so nobody posts it
  twice in a row. The first hand at a table (or after it emptied) is dealt from any button
  (the floor draws for it); the hand states it (the last seat of its order, heads-up the
  second).
- **Missed blinds** are computed (000 ミス・ブラインド・ベット・ポリシー): a player seated but
  not dealt in misses the small blind when their seat is the small blind's and the big
  blind when the big blind passes over their seat. Returning, they post what they missed:
  the small blind alone as a dead bet; the big blind (with or without the small) as a
  live big blind plus a dead small blind. Or they wait for the big blind, which settles
  what they owe. A new player posts a live big blind to be dealt in before the big blind
  reaches them (000 現金テーブル掲示料金規定, "イニシャルフィー"; the text says "the lower-limit
  stake or the small blind": the default reading is the big blind, which the lower-limit
  stake of a limit game is), or waits for it. A player who owes is not dealt in in the
  small blind (they wait for the big blind or post after it); heads-up a player who owes
  is dealt in only in the big blind.

A table without ``blinds`` (stud: the bring-in decides who opens) keeps seats and stacks,
not positions. Imported hand histories are not bound (their rooms' tables are not ours).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

MISSED_RULE = "000 missed blinds"
DEAD_BUTTON = "TDA 31 dead button"
HEADS_UP = "TDA 33 heads-up button"


@dataclass
class Seat:
    player: str
    out: bool = False  # sitting out (seat.sit_out, until seat.return)
    dealt: bool = False  # dealt a hand since taking the seat; else a new player, who posts or waits
    missed: frozenset[str] = frozenset()  # "small", "big": the blinds passed while not dealt in


@dataclass
class Book:
    """What the ledger knows of a poker table between hands. Its methods are the rules:
    each event of the table advances it (``seat``, ``chips``, ``open_hand``,
    ``close_hand``); ``hand_problem`` judges a hand's ``round.open`` against it."""

    size: int  # the table's seats, numbered 1..size clockwise
    blinds: tuple[int, int] | None  # the table's small and big blind; None: no positions (stud)
    ante: int = 0
    seats: dict[int, Seat] = field(default_factory=dict)
    stacks: dict[str, int] = field(default_factory=dict)  # chips behind each player, not in a hand
    button: int | None = None  # the previous hand's positions (table seats); None before the first hand
    sb: int | None = None
    bb: int | None = None
    hand: str | None = None  # the hand in progress (its round stream)
    start: dict[str, int] = field(default_factory=dict)  # its starting stacks
    before: Any = None  # (seats, positions) before it, restored when it closes void

    def configure(self, config: dict[str, Any] | None) -> None:
        cfg = config or {}
        blinds = cfg.get("blinds")
        self.blinds = (blinds[0], blinds[1]) if blinds else None
        self.ante = cfg.get("ante") or 0

    def seat_of(self, player: str) -> int | None:
        return next((n for n, s in self.seats.items() if s.player == player), None)

    # --- the table's own events ------------------------------------------------------

    def seat_problem(self, kind: str, player: str, payload: dict[str, Any]) -> str | None:
        """Why a seat event of ``player`` at this table cannot be taken now."""
        if kind == "seat.join.v1":
            n = payload.get("seat")
            if n is None:
                return "a seat at a configured poker table is numbered: seat.join names its seat"
            if n > self.size:
                return f"the table has seats 1-{self.size}, not {n}"
            if n in self.seats:
                return f"seat {n} is taken by {self.seats[n].player}"
            return None
        where = self.seat_of(player)
        if where is None:
            return None  # the seat judge says the player is not seated
        if kind == "seat.leave.v1" and self.hand is not None and player in self.start:
            return f"{player} is in the hand in progress ({self.hand}): they leave once it is over"
        if kind == "seat.sit_out.v1" and self.seats[where].out:
            return f"{player} is already sitting out"
        if kind == "seat.return.v1" and not self.seats[where].out:
            return f"{player} is not sitting out"
        return None

    def seat(self, kind: str, player: str, payload: dict[str, Any]) -> None:
        if kind == "seat.join.v1":
            self.seats[payload["seat"]] = Seat(player)
            return
        where = self.seat_of(player)
        if where is None:
            return
        if kind == "seat.leave.v1":
            del self.seats[where]
            if not self.seats:  # an empty table starts afresh: its next hand's button is drawn again
                self.button = self.sb = self.bb = None
        elif kind in ("seat.sit_out.v1", "seat.return.v1"):
            self.seats[where].out = kind == "seat.sit_out.v1"

    def chips_problem(self, kind: str, player: str, amount: int) -> str | None:
        if kind == "chips.cash_out.v1" and amount > self.stacks.get(player, 0):
            in_hand = f", besides those in the hand in progress ({self.hand})" if player in self.start else ""
            return (f"{player} holds {self.stacks.get(player, 0)} in chips at the table{in_hand}: {amount} cannot be"
                    " cashed out")
        return None

    def chips(self, kind: str, player: str, amount: int) -> None:
        sign = 1 if kind == "chips.buy_in.v1" else -1 if kind == "chips.cash_out.v1" else 0
        self.stacks[player] = self.stacks.get(player, 0) + sign * amount

    # --- hands -----------------------------------------------------------------------

    def _after(self, start: int, seats: list[int]) -> list[int]:
        """``seats`` clockwise, beginning with the first after ``start``."""
        return sorted(seats, key=lambda n: (n - start - 1) % self.size)

    def next_hand(self, dealt: set[str], button: int | None = None) -> tuple[dict[str, Any], tuple[int, int, int]]:
        """The hand the table deals next to the players ``dealt`` (each seated here): its
        ``rules`` keys (players in order, starting stacks, blinds, dead blinds, antes) and
        its positions (button, small blind, big blind as table seats). ``button`` is the
        first hand's (the floor draws for it); later hands' follow from the book. Raises
        ValueError with the reason when these players cannot be dealt this hand."""
        where = {p: self.seat_of(p) for p in dealt}
        taken = sorted(n for n in where.values() if n is not None)
        heads_up = len(taken) == 2
        if self.bb is None:
            if button is None:
                raise ValueError("the first hand's button is not known")
            order = self._after(button, taken)
            if heads_up:
                bb, btn = order[0], order[1]
                sb = btn
            else:
                btn, sb, bb = button, order[0], order[1]
        elif heads_up:
            bb = self._after(self.bb, taken)[0]
            btn = sb = next(n for n in taken if n != bb)
        else:
            bb = self._after(self.bb, taken)[0]
            sb, btn = self.bb, self.sb  # type: ignore[assignment]
            if btn in (sb, bb):  # after heads-up the button was the small blind: it sits right of the new one
                btn = (sb - 2) % self.size + 1
        order = [bb, btn] if heads_up else self._after(btn, taken)
        small, big = self.blinds or (0, 0)
        players, stacks, blinds, dead = [], [], [], []
        for n in order:
            s = self.seats[n]
            owes = self.bb is not None and (not s.dealt or bool(s.missed))
            live = dead_bet = 0
            if self.blinds is not None:
                if n == bb:
                    live = big
                elif n == sb:
                    if owes:
                        raise ValueError(f"{s.player} {'is new' if not s.dealt else 'owes missed blinds'} and is in"
                                         " the small blind: they wait for the big blind or post after it"
                                         f" ({MISSED_RULE})")
                    live = small
                elif owes and heads_up:
                    raise ValueError(f"{s.player} {'is new' if not s.dealt else 'owes missed blinds'}: heads-up they"
                                     f" are dealt in only in the big blind ({HEADS_UP}; {MISSED_RULE})")
                elif not owes:
                    pass
                elif not s.dealt:
                    live = -big  # a new player's initial post: a live big blind (000 イニシャルフィー)
                elif "big" in s.missed:
                    live, dead_bet = -big, small
                elif "small" in s.missed:
                    dead_bet = small
            players.append(s.player)
            stacks.append(self.stacks.get(s.player, 0))
            blinds.append(live)
            dead.append(dead_bet)
        if heads_up:  # PHH and pokerkit read a heads-up hand's blinds reversed: [small, big]
            blinds = blinds[::-1]
        rules = {"players": players, "starting_stacks": stacks, "blinds_or_straddles": blinds,
                 "dead_blinds": dead, "antes": [self.ante] * len(players)}
        return rules, (btn, sb, bb)

    def hand_problem(self, rules: dict[str, Any]) -> str | None:
        """Why a hand's ``round.open`` rules are not the hand this table deals next."""
        if self.hand is not None:
            return f"the table's hand {self.hand} is not closed: its result is the next hand's stacks"
        players = list(rules.get("players") or ())
        for p in players:
            n = self.seat_of(p)
            if n is None:
                return f"{p} holds no numbered seat at the table (seat.join names the seat)"
            if self.seats[n].out:
                return f"{p} is sitting out (seat.sit_out): not dealt in until seat.return"
            if self.stacks.get(p, 0) <= 0:
                return f"{p} has no chips at the table: a hand is dealt to players with chips (chips.buy_in)"
        for n, s in sorted(self.seats.items()):
            must = not s.out and s.dealt and not s.missed and self.stacks.get(s.player, 0) > 0
            if must and s.player not in players:
                return (f"{s.player} is in seat {n}, not sitting out, with chips: dealt in (TDA 29: a player at the"
                        " table when the first card is dealt has a live hand; away, they sit out with"
                        " seat.sit_out)")
        try:
            expected, _ = self.next_hand(set(players), self._drawn_button(players))
        except ValueError as exc:
            return str(exc)
        if self.blinds is None:  # no positions: the order is the round's; stacks and antes are the table's
            order = players
            expected = {**expected, "players": order,
                        "starting_stacks": [self.stacks.get(p, 0) for p in order]}
            keys: tuple[str, ...] = ("starting_stacks", "antes")
        else:
            keys = ("players", "starting_stacks", "blinds_or_straddles", "dead_blinds", "antes")
        n = len(players)
        for key in keys:
            got = rules.get(key)
            got = [0] * n if got is None and key in ("blinds_or_straddles", "dead_blinds", "antes") else got
            if got != expected[key]:
                return f"{key} is {got}, but the table deals {expected[key]} ({self._why(key)})"
        return None

    def _drawn_button(self, players: list[str]) -> int | None:
        """The first hand's button, where the floor drew it, as the hand states it: the seat
        of the last player in its order (heads-up too, PHH's order being big blind, button);
        None once the book has positions of its own."""
        return self.seat_of(players[-1]) if self.bb is None and players else None

    @staticmethod
    def _why(key: str) -> str:
        return {
            "players": f"seat order from the button: {DEAD_BUTTON}, {HEADS_UP}",
            "starting_stacks": "each stack carries from the player's last hand plus the chips bought since",
            "blinds_or_straddles": f"the big blind moves one player a hand: {DEAD_BUTTON}, {HEADS_UP};"
                                   f" {MISSED_RULE}",
            "dead_blinds": MISSED_RULE,
            "antes": "the table's ante, from every player",
        }[key]

    def open_hand(self, stream: str, rules: dict[str, Any]) -> None:
        """A hand accepted by ``hand_problem`` is dealt: its players' chips go into it,
        the positions move and the blinds passed over seats not dealt in are missed."""
        players = list(rules["players"])
        self.before = copy.deepcopy((self.seats, self.button, self.sb, self.bb))
        if self.blinds is not None:
            prev_bb = self.bb
            _, (btn, sb, bb) = self.next_hand(set(players), self._drawn_button(players))
            if prev_bb is not None:
                skipped = {n for n in range(1, self.size + 1) if 0 < (n - prev_bb) % self.size < (bb - prev_bb) % self.size}
                for n, s in self.seats.items():
                    if s.player in players or not s.dealt:
                        continue
                    if n == sb and len(players) > 2:
                        s.missed = s.missed | {"small"}
                    if n in skipped:
                        s.missed = s.missed | {"big"}
            self.button, self.sb, self.bb = btn, sb, bb
        for p in players:
            where = self.seat_of(p)
            assert where is not None
            self.seats[where].dealt = True
            self.seats[where].missed = frozenset()
        self.hand = stream
        self.start = {p: self.stacks.get(p, 0) for p in players}
        for p in players:
            self.stacks[p] -= self.start[p]

    def close_hand(self, stream: str, final: dict[str, int] | None) -> None:
        """The hand in progress is over: each player's chips come back as ``final`` (the
        engine's final stacks), or, for a void hand (None), as they started, with the
        positions and seats as they were before it."""
        if stream != self.hand:
            return
        if final is None:
            seats, self.button, self.sb, self.bb = self.before
            for n, s in seats.items():  # players who joined, left or sat out meanwhile keep that
                if n in self.seats and self.seats[n].player == s.player:
                    self.seats[n].dealt, self.seats[n].missed = s.dealt, s.missed
        for p, chips in (final or self.start).items():
            self.stacks[p] = self.stacks.get(p, 0) + chips
        self.hand, self.start, self.before = None, {}, None


__all__ = ["Book", "Seat"]

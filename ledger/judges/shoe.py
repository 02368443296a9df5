"""Card accounting per shoe, across its rounds (issue 15 point 3; 000 II 1.3.1, III 1.5(d),
II 3.3.4 and 3.5.4).

Every card dealt from a live shoe since it was last loaded is counted over all the rounds
dealt from it: no card is dealt more often than the shoe's decks hold, no more cards than
the shoe holds, and the cut card's "last hand" is derived from the cards dealt, not taken
from the dealer's word: the cut card sits ``cut_card_from_back`` cards from the back, so
it comes out in the round during which the cards in front of it run out (the round that
deals card number ``decks x 52 - cut_card_from_back``; the default reading of 000 II
3.5.4, which does not say whether the card just before it or the one just after it makes
the last hand). ``shoe.cut_card.v1`` must name that round, and no further round is dealt
from the shoe once it has passed without one.

The count (a ``Tally``) is kept by the ingest run (``World.tallies``): built from the store
on first use (the rounds opened after the shoe's last ``shoe.load``, in log order, each
walked through its engine), then advanced by every card ingest accepts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ledger.games import RuleViolation


@dataclass
class Tally:
    decks: int
    cut_from_back: int
    counts: Counter[str] = field(default_factory=Counter)
    dealt: int = 0
    passed_in: str | None = None  # the round during which the cards in front of the cut card ran out

    @property
    def position(self) -> int:
        """How many cards are in front of the cut card."""
        return self.decks * 52 - self.cut_from_back

    def check(self, cards: list[str]) -> None:
        """``cards`` may be dealt next from this shoe, or RuleViolation."""
        seen: Counter[str] = Counter()
        for n, card in enumerate(cards, start=1):
            if card == "??":
                continue
            seen[card] += 1
            if self.counts[card] + seen[card] > self.decks:
                raise RuleViolation(f"{card} would be dealt {self.counts[card] + seen[card]} times from this"
                                    f" {self.decks}-deck shoe since it was loaded: it holds {self.decks}"
                                    " (000 II 1.3.1, III 1.5(d))")
            if self.dealt + n > self.decks * 52:
                raise RuleViolation(f"card {self.dealt + n} dealt from a {self.decks}-deck shoe of"
                                    f" {self.decks * 52} cards")

    def add(self, stream: str, cards: list[str]) -> None:
        for card in cards:
            if card != "??":
                self.counts[card] += 1
            self.dealt += 1
            if self.passed_in is None and self.dealt >= self.position > 0:
                self.passed_in = stream


__all__ = ["Tally"]

"""Playing cards shared by the card games: ``<rank><suit>``, ranks ``A23456789TJQK``,
suits ``c d h s`` (clubs, diamonds, hearts, spades: the stud bring-in order of
001_aa163bb85081239a.txt)."""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "cdhs"
CARD_PATTERN = r"^[A23456789TJQK][cdhs]$"


def deck() -> list[str]:
    return [r + s for s in SUITS for r in RANKS]


def baccarat_value(card: str) -> int:
    """000 II 1.3.2: 2-9 at face value, ten and court cards 0, ace 1."""
    r = card[0]
    return 1 if r == "A" else 0 if r in "TJQK" else int(r)


SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}


def show_card(card: str) -> str:
    """A card as a person reads it: ``Th`` -> ``10♥`` (replays, reports)."""
    rank = "10" if card[0] == "T" else card[0]
    return rank + SUIT_SYMBOLS.get(card[1:], card[1:])


def show_cards(cards: list[str] | tuple[str, ...]) -> str:
    return " ".join(show_card(c) for c in cards) or "-"

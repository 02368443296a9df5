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

"""What a closed round did to everyone's money, from the engine's own outcome (pure).

``round_money(game, outcome, status)`` asks the game's engine (``Engine.money``,
``ledger.games``) how the round's outcome nets: per-player results and the house's
take, so the balance views never re-implement a game rule. A void round ("a system
malfunction voids all pays and plays", 000 III 2.1.5) moves no money; neither does a
round of a game with no engine (the ledger records it but cannot price it).
"""

from __future__ import annotations

from typing import Any

from ledger.events import EventError
from ledger.games import ENGINES, RoundMoney
from ledger.keyring import KeyRing, load_keyring


def round_money(game: str, outcome: dict[str, Any] | None, status: str) -> RoundMoney:
    engine = ENGINES.get(game)
    if status != "complete" or not outcome or engine is None:
        return RoundMoney()
    return engine.money(outcome)


def readable_keyring(store: Any) -> KeyRing:
    """The key ring as stored, or an empty one where it was altered behind ingest's back
    (verify names that; the readers then count no table as imported)."""
    try:
        return load_keyring(store)
    except EventError:
        return KeyRing()


def opened_by_importer(ring: KeyRing, key_id: str) -> bool:
    """Whether a ``table.open`` signed by ``key_id`` opened an imported hand history's
    table: evidence in the hand's own unit, which moves no player's money (issue 13
    point 2)."""
    entry = ring.keys.get(key_id)
    return entry is not None and entry.role == "importer"


__all__ = ["RoundMoney", "opened_by_importer", "readable_keyring", "round_money"]

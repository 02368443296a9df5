"""What a closed round did to everyone's money, from the engine's own outcome (pure).

``round_money(game, outcome, status)`` asks the game's engine (``Engine.money``,
``ledger.games``) how the round's outcome nets: per-player results and the house's
take, so the balance views never re-implement a game rule. A void round ("a system
malfunction voids all pays and plays", 000 III 2.1.5) moves no money; neither does a
round of a game with no engine (the ledger records it but cannot price it).
"""

from __future__ import annotations

from typing import Any

from ledger.games import ENGINES, RoundMoney


def round_money(game: str, outcome: dict[str, Any] | None, status: str) -> RoundMoney:
    engine = ENGINES.get(game)
    if status != "complete" or not outcome or engine is None:
        return RoundMoney()
    return engine.money(outcome)


__all__ = ["RoundMoney", "round_money"]

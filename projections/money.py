"""What a closed round did to everyone's money, from the engine's own outcome (pure).

``round_money(game, outcome, status)`` turns an engine's derived outcome into per-player
net results and the house's take, the same way for every game, so the balance views
never re-implement a game rule:

- house-banked games (baccarat, roulette, sic bo, blackjack): each settlement row has
  ``player``, ``staked`` and ``paid`` (everything handed back); the player's net is
  paid − staked; baccarat's ``commission`` is house revenue; the house's net is the
  negative of the players' sum;
- High Card Flush (player-banked, 003): the designated player takes the other side of
  every wager, so its net is the negative of the players' sum and the house's is 0;
- poker: each seat's ``net`` (final − starting stack); the house keeps the rake.

A void round ("a system malfunction voids all pays and plays", 000 III 2.1.5) moves no
money.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HOUSE_BANKED = ("baccarat", "roulette", "sicbo", "blackjack")


@dataclass
class RoundMoney:
    nets: dict[str, int] = field(default_factory=dict)  # player -> net result
    wagered: dict[str, int] = field(default_factory=dict)  # player -> amount put at risk
    staked: int = 0
    paid: int = 0
    commission: int = 0
    rake: int = 0
    house_net: int = 0  # what the house won from the players (commission and rake included)


def round_money(game: str, outcome: dict[str, Any] | None, status: str) -> RoundMoney:
    out = RoundMoney()
    if status != "complete" or not outcome:
        return out
    if game in HOUSE_BANKED or game == "high-card-flush":
        for row in outcome.get("settlements", []):
            net = row["paid"] - row["staked"]
            out.nets[row["player"]] = out.nets.get(row["player"], 0) + net
            out.wagered[row["player"]] = out.wagered.get(row["player"], 0) + row["staked"]
            out.staked += row["staked"]
            out.paid += row["paid"]
            out.commission += row.get("commission", 0)
        players = sum(out.nets.values())
        if game == "high-card-flush":
            dp = outcome["designated"]
            out.nets[dp] = out.nets.get(dp, 0) - players
        else:
            out.house_net = -players
        return out
    if game == "poker":
        for seat in outcome.get("seats", []):
            out.nets[seat["player"]] = out.nets.get(seat["player"], 0) + seat["net"]
            out.wagered[seat["player"]] = out.wagered.get(seat["player"], 0) + seat.get("put_in", 0)
        out.rake = sum(p["rake"] for p in outcome.get("pots", []))
        out.staked = sum(p["amount"] for p in outcome.get("pots", []))
        out.paid = out.staked - out.rake
        out.house_net = out.rake
        return out
    return out  # a game with no engine: the ledger records it but cannot price it

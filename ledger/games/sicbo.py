"""Sic bo (大小, big and small), three dice, as a pure engine.

Source: 004_9f9b7621214e86da.txt, ビッグアンドスモール(大小) "掛け方と配当". Payouts there
are "to 1" (note 1: 1倍 returns the stake plus as much again; 8倍 returns 100 + 800):

- A big (total 11-17) / small (4-10): 1 to 1; both lose on any triple (note 2);
- B single number: 1 to 1 for each die showing it (2 and 3 to 1 for two and three);
- C ペア (pair), 5 to 1. Read as the two-dice combination: two different chosen faces
  both showing. The specific double is listed separately (E), and 5 to 1 is the
  combination's usual price;
- D total of the three dice: "6~55倍". The seed gives only this range. The defaults
  take its endpoints (totals 9-12 at 6, totals 4 and 17 at 55) and the common Macau
  values between them (5/16: 18, 6/15: 14, 7/14: 12, 8/13: 8). They are configuration,
  recorded in each round, for the operator to confirm or replace;
- E double (ダブル): two dice showing the chosen face, 8 to 1;
- F any triple: 24 to 1; G specific triple: 150 to 1.

Events after ``round.open.v1`` (rules ``{"pays": {...}}``, optional overrides, totals as
``"total_4"``...): ``sicbo.bet.v1`` {player, bet, target, amount}, ``sicbo.no_more_bets.v1``,
``sicbo.result.v1`` {dice}, ``sicbo.settle.v1`` {bet, outcome, paid} (paid = everything
handed back, stake included).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Annotated, Any, Final, Literal

from pydantic import Field

from ledger.games import (
    DemoTable,
    EngineDefaults,
    Events,
    Money,
    Play,
    RuleViolation,
    bets_lines,
    check_settle_target,
    close_betting,
    evolve,
    paid_text,
    parse_rules,
    register_engine,
    unsettled,
)
from ledger.kinds import (
    ROUND_PRODUCERS,
    Amount,
    EmptyPayload,
    Ident,
    Strict,
    register_kind,
)

BETS = ("big", "small", "single", "combination", "double", "total", "any_triple", "triple")
DEFAULT_PAYS: dict[str, int] = {
    "big": 1, "small": 1, "single": 1, "combination": 5, "double": 8, "any_triple": 24, "triple": 150,
    "total_4": 55, "total_5": 18, "total_6": 14, "total_7": 12, "total_8": 8, "total_9": 6, "total_10": 6,
    "total_11": 6, "total_12": 6, "total_13": 8, "total_14": 12, "total_15": 14, "total_16": 18, "total_17": 55,
}
Die = Annotated[int, Field(ge=1, le=6)]


class SicBoRules(Strict):
    pays: dict[str, Annotated[int, Field(ge=1, le=10_000)]] | None = None


class SicBoBet(Strict):
    player: Ident
    bet: Literal[BETS]  # type: ignore[valid-type]  # a Literal built from BETS, read by pydantic at run time
    target: Annotated[list[Annotated[int, Field(ge=1, le=17)]], Field(max_length=2)]
    amount: Amount


class SicBoResult(Strict):
    dice: Annotated[list[Die], Field(min_length=3, max_length=3)]


class SicBoSettle(Strict):
    bet: Annotated[int, Field(ge=1)]
    outcome: Literal["win", "lose"]
    paid: Annotated[int, Field(ge=0)]


ROLES = ROUND_PRODUCERS
register_kind("sicbo.bet.v1", SicBoBet, "round", ROLES)
register_kind("sicbo.no_more_bets.v1", EmptyPayload, "round", ROLES)
register_kind("sicbo.result.v1", SicBoResult, "round", ROLES)
register_kind("sicbo.settle.v1", SicBoSettle, "round", ROLES)


def check_target(bet: str, target: list[int]) -> None:
    """The target each bet names (faces 1-6; a total 4-17)."""
    faces_ok = all(1 <= t <= 6 for t in target)
    if bet in ("big", "small", "any_triple"):
        ok = target == []
    elif bet in ("single", "double", "triple"):
        ok = len(target) == 1 and faces_ok
    elif bet == "combination":
        ok = len(target) == 2 and faces_ok and target[0] < target[1]
    else:  # total
        ok = len(target) == 1 and 4 <= target[0] <= 17
    if not ok:
        raise RuleViolation(f"{target} is not a target of a {bet} bet (004 大小 賭け方と配当)")


def pays_to_one(bet: str, target: list[int], dice: tuple[int, int, int], pays: dict[str, int]) -> int | None:
    """What the bet pays to 1 on these dice, or None if it loses."""
    total, triple = sum(dice), dice[0] == dice[1] == dice[2]
    if bet == "big":
        return pays["big"] if 11 <= total <= 17 and not triple else None
    if bet == "small":
        return pays["small"] if 4 <= total <= 10 and not triple else None
    if bet == "single":
        n = dice.count(target[0])
        return pays["single"] * n if n else None
    if bet == "combination":
        return pays["combination"] if target[0] in dice and target[1] in dice else None
    if bet == "double":
        return pays["double"] if dice.count(target[0]) >= 2 else None
    if bet == "any_triple":
        return pays["any_triple"] if triple else None
    if bet == "triple":
        return pays["triple"] if triple and dice[0] == target[0] else None
    return pays[f"total_{target[0]}"] if total == target[0] else None


@dataclass(frozen=True)
class Wager:
    player: str
    bet: str
    target: tuple[int, ...]
    amount: int


@dataclass(frozen=True)
class SicBoState:
    pays: tuple[tuple[str, int], ...]
    wagers: tuple[Wager, ...] = ()
    betting_open: bool = True
    dice: tuple[int, int, int] | None = None
    settled: frozenset[int] = frozenset()


def settlement(state: SicBoState, index: int) -> tuple[str, int]:
    assert state.dice is not None
    w = state.wagers[index - 1]
    to_one = pays_to_one(w.bet, list(w.target), state.dice, dict(state.pays))
    return ("win", w.amount * (to_one + 1)) if to_one is not None else ("lose", 0)


class SicBoEngine(EngineDefaults):
    game = "sicbo"
    kinds = frozenset({"sicbo.bet.v1", "sicbo.no_more_bets.v1", "sicbo.result.v1", "sicbo.settle.v1"})
    rules_model = SicBoRules
    banking: Final = "house"
    equipment: Final = "dice"

    def stakes(self, kind: str, payload: dict[str, Any]) -> tuple[tuple[str, int], ...]:
        return ((payload["bet"], payload["amount"]),) if kind == "sicbo.bet.v1" else ()
    house_edges = {"sicbo": "exact enumeration of the 216 equally likely throws (004 paytable, totals as configured)"}
    demo_tables = (DemoTable("SB", "live", config={"limits": {"*": {"min": 100, "max": 100_000}}}),)

    def house_edge(self, name: str) -> dict[str, dict[str, Any]]:
        return house_edge()

    def demo_round(self, rng: Any, players: list[str], cards: Any) -> tuple[dict[str, Any], Events]:
        """Big, small or a total for each player, and one throw."""
        play = Play(self, {})
        for player in players:
            bet = rng.choice(["big", "small", "total"])
            target = [rng.randint(4, 17)] if bet == "total" else []
            play("sicbo.bet.v1", {"player": player, "bet": bet, "target": target, "amount": rng.choice([500, 1000])})
        play("sicbo.no_more_bets.v1", {})
        play("sicbo.result.v1", {"dice": [rng.randint(1, 6) for _ in range(3)]})
        return {}, play.settle("sicbo", ("bet", "outcome", "paid"))

    def start(self, rules: dict[str, Any]) -> SicBoState:
        r = parse_rules(SicBoRules, rules, "sic bo")
        pays = dict(DEFAULT_PAYS)
        for key, value in (r.pays or {}).items():
            if key not in pays:
                raise RuleViolation(f"sic bo rules: unknown bet {key!r} in pays")
            pays[key] = value
        return SicBoState(pays=tuple(sorted(pays.items())))

    def apply(self, state: SicBoState, kind: str, payload: dict[str, Any]) -> SicBoState:
        if kind == "sicbo.bet.v1":
            if not state.betting_open:
                raise RuleViolation("bet after 'no more bets'")
            check_target(payload["bet"], payload["target"])
            w = Wager(payload["player"], payload["bet"], tuple(payload["target"]), payload["amount"])
            return evolve(state, wagers=state.wagers + (w,))
        if kind == "sicbo.no_more_bets.v1":
            return close_betting(state)
        if kind == "sicbo.result.v1":
            if state.betting_open:
                raise RuleViolation("dice thrown before 'no more bets' (004 大小 ゲームの進行 (3)-(4))")
            if state.dice is not None:
                raise RuleViolation("the round already has a result")
            d = payload["dice"]
            return evolve(state, dice=(d[0], d[1], d[2]))
        if kind == "sicbo.settle.v1":
            if state.dice is None:
                raise RuleViolation("settlement without a result")
            index = payload["bet"]
            check_settle_target(index, len(state.wagers), state.settled)
            want = settlement(state, index)
            if (payload["outcome"], payload["paid"]) != want:
                w = state.wagers[index - 1]
                raise RuleViolation(
                    f"wrong settlement of bet {index} ({w.bet} {list(w.target)} for {w.amount}) on dice"
                    f" {list(state.dice)}: the engine pays {want[0]} {want[1]}, the event says"
                    f" {payload['outcome']} {payload['paid']} (004 大小 賭け方と配当)")
            return evolve(state, settled=state.settled | {index})
        raise RuleViolation(f"{kind} is not a sic bo event")

    def close_problem(self, state: SicBoState) -> str | None:
        if state.dice is None:
            return "the round has no result"
        return unsettled(len(state.wagers), state.settled)

    def draws(self, state: SicBoState) -> tuple[tuple[Any, ...], list[Any], bool]:
        return ("dice",), list(state.dice or ()), state.dice is not None

    def snapshot(self, state: SicBoState) -> dict[str, Any]:
        return {
            "betting_open": state.betting_open,
            "bets": [{"bet": i, "player": w.player, "type": w.bet, "target": list(w.target), "amount": w.amount}
                     for i, w in enumerate(state.wagers, start=1)],
            "dice": list(state.dice) if state.dice else None,
            "settled": sorted(state.settled),
        }

    def describe(self, state: SicBoState, money: Money) -> list[str]:
        snap = self.snapshot(state)
        items = []
        for b in snap["bets"]:
            target = f" {'-'.join(str(t) for t in b['target'])}" if b["target"] else ""
            items.append(f"{b['player']} {b['type'].replace('_', ' ')}{target} {money(b['amount'])}")
        lines = bets_lines(snap["betting_open"], items)
        return lines

    def result(self, state: SicBoState, money: Money) -> str | None:
        """000 V: three dice decide every bet."""
        if state.dice is None:
            return None
        dice = list(state.dice)
        return (f"The dice show {'-'.join(str(d) for d in dice)}, total {sum(dice)}"
                + (" (a triple)" if len(set(dice)) == 1 else "") + paid_text(self.outcome(state), money))

    def outcome(self, state: SicBoState) -> dict[str, Any]:
        if state.dice is None:
            return {"dice": None, "settlements": []}
        rows = []
        for i, w in enumerate(state.wagers, start=1):
            o, paid = settlement(state, i)
            rows.append({"bet": i, "player": w.player, "outcome": o, "paid": paid, "staked": w.amount})
        return {"dice": list(state.dice), "settlements": rows}


def house_edge(pays: dict[str, int] | None = None) -> dict[str, dict[str, Any]]:
    """Exact house edge of every bet by enumerating the 216 equally likely throws.

    edge = -(expected return per unit staked) = 1 - E[paid back] per unit.
    """
    table = dict(DEFAULT_PAYS)
    table.update(pays or {})
    throws = list(itertools.product(range(1, 7), repeat=3))
    targets: dict[str, list[int]] = {
        "big": [], "small": [], "single": [1], "combination": [1, 2], "double": [1], "any_triple": [], "triple": [1],
    }
    cases = [(bet, bet, targets[bet]) for bet in targets]
    cases += [(f"total_{t}", "total", [t]) for t in range(4, 18)]
    out: dict[str, dict[str, Any]] = {}
    for name, bet, target in cases:
        back = sum((pays_to_one(bet, target, (d[0], d[1], d[2]), table) or -1) + 1 for d in throws)
        pays_name = "single" if bet == "single" else name
        out[name] = {"pays": table[pays_name], "edge": 1 - Fraction(back, len(throws))}
    return out


register_engine(SicBoEngine())

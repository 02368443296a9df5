"""Roulette, European (single zero) and American (0 and 00), as a pure engine.

Sources:
- 000_c28081091adb3e2e.txt, live casino IV "ルーレットの定義とルール": single-zero
  European layout (1.2.1); bets are accepted until the dealer calls "no more bets"
  (2.1.1); each bet is settled strictly by its position on the layout when the ball
  comes to rest (2.1.3); a spin is valid only if the ball makes at least 3 revolutions
  of the track (3.1.1); payouts (2.2): straight 35:1, split 17:1, street 11:1, corner
  8:1 (the corner definition in 1.1 includes 0-1-2-3), six-line 5:1, column and dozen
  2:1, red/black/odd/even/low/high 1:1.
- 004_9f9b7621214e86da.txt, ■ルーレット "賭け方と配当": American wheel with 0 and 00;
  payouts written as total returned (36倍 = 35:1 plus the stake), including the
  five-number bet 0-00-1-2-3 at 7倍 = 6:1; 0-00 may be split; 0 and 00 lose every
  even-money bet.

Events of a round (stream ``round:<id>``), after ``round.open.v1`` whose ``rules`` are
``{"wheel": "european"|"american", "pays": {<bet>: <to 1>, ...}}`` (``pays`` optional;
defaults from the seeds above):

- ``roulette.bet.v1`` {player, bet, pockets, amount}: ``pockets`` names the covered
  numbers for inside bets (straight, split, street, corner, five_number, six_line) and
  is empty for outside bets (dozen_1..3, column_1..3, red, black, odd, even, low, high).
  Bets are numbered 1, 2, 3... in the order they are recorded.
- ``roulette.no_more_bets.v1`` {}.
- ``roulette.result.v1`` {pocket, revolutions}.
- ``roulette.settle.v1`` {bet, outcome, paid}: ``paid`` is everything handed back for
  that wager, stake included (0 for a loss); it must equal what the engine computes.

``round.close`` "complete" needs a result and every bet settled once.
"""

from __future__ import annotations

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

RED = frozenset({1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36})
WHEELS = {
    "european": ("0",) + tuple(str(n) for n in range(1, 37)),
    "american": ("0", "00") + tuple(str(n) for n in range(1, 37)),
}
DEFAULT_PAYS = {
    "straight": 35, "split": 17, "street": 11, "corner": 8, "five_number": 6, "six_line": 5,
    "dozen": 2, "column": 2, "red": 1, "black": 1, "odd": 1, "even": 1, "low": 1, "high": 1,
}
INSIDE = ("straight", "split", "street", "corner", "five_number", "six_line")
OUTSIDE = ("dozen_1", "dozen_2", "dozen_3", "column_1", "column_2", "column_3",
           "red", "black", "odd", "even", "low", "high")
BET_TYPES = INSIDE + OUTSIDE


def pay_key(bet: str) -> str:
    """The paytable entry of a bet type: dozen_2 -> dozen, column_1 -> column."""
    return bet.split("_")[0] if bet.startswith(("dozen_", "column_")) else bet


def _n(p: str) -> int:
    return int(p)


def outside_cover(bet: str) -> frozenset[str]:
    nums = range(1, 37)
    sets = {
        "red": [n for n in nums if n in RED], "black": [n for n in nums if n not in RED],
        "odd": [n for n in nums if n % 2], "even": [n for n in nums if not n % 2],
        "low": list(range(1, 19)), "high": list(range(19, 37)),
    }
    for k in (1, 2, 3):
        sets[f"dozen_{k}"] = list(range(12 * k - 11, 12 * k + 1))
        sets[f"column_{k}"] = [n for n in nums if n % 3 == k % 3]
    return frozenset(str(n) for n in sets[bet])


def inside_combinations(wheel: str) -> dict[str, set[frozenset[str]]]:
    """Every legal placement of each inside bet on the layout (1..36 in rows of three)."""
    def s(*ns: int) -> frozenset[str]:
        return frozenset(str(x) for x in ns)

    combos: dict[str, set[frozenset[str]]] = {b: set() for b in INSIDE}
    combos["straight"] = {frozenset({p}) for p in WHEELS[wheel]}
    for n in range(1, 37):
        if n % 3:
            combos["split"].add(s(n, n + 1))
        if n <= 33:
            combos["split"].add(s(n, n + 3))
        if n % 3 == 1:
            combos["street"].add(s(n, n + 1, n + 2))
            if n <= 31:
                combos["six_line"].add(s(*range(n, n + 6)))
        if n % 3 and n <= 32:
            combos["corner"].add(s(n, n + 1, n + 3, n + 4))
    if wheel == "european":
        combos["split"] |= {s(0, 1), s(0, 2), s(0, 3)}
        combos["street"] |= {s(0, 1, 2), s(0, 2, 3)}
        combos["corner"].add(s(0, 1, 2, 3))  # 000 IV 1.1: the corner 0-1-2-3
    else:
        def zz(*ns: int) -> frozenset[str]:
            return frozenset({"00"} | {str(x) for x in ns})

        combos["split"] |= {s(0, 1), s(0, 2), zz(2), zz(3), zz(0)}  # 004: 0 and 00 may be split
        combos["street"] |= {s(0, 1, 2), zz(2, 3), zz(0, 2)}
        combos["five_number"].add(zz(0, 1, 2, 3))  # 004 E: 0, 00, 1, 2, 3
    return combos


class RouletteRules(Strict):
    wheel: Literal["european", "american"] = "european"
    """000 IV: the house's roulette is European (single zero); American (0 and 00, 004's
    home set) is a house option of the table's configuration."""
    pays: dict[str, Annotated[int, Field(ge=1, le=1000)]] | None = None


class RouletteBet(Strict):
    player: Ident
    bet: Literal[BET_TYPES]  # type: ignore[valid-type]  # a Literal built from BET_TYPES, read by pydantic at run time
    pockets: Annotated[list[Annotated[str, Field(pattern=r"^(0|00|[1-9]|[12][0-9]|3[0-6])$")]], Field(max_length=6)]
    amount: Amount


class RouletteResult(Strict):
    pocket: Annotated[str, Field(pattern=r"^(0|00|[1-9]|[12][0-9]|3[0-6])$")]
    revolutions: Annotated[int, Field(ge=0, le=1000)]


class RouletteSettle(Strict):
    bet: Annotated[int, Field(ge=1)]
    outcome: Literal["win", "lose"]
    paid: Annotated[int, Field(ge=0)]


ROLES = ROUND_PRODUCERS
register_kind("roulette.bet.v1", RouletteBet, "round", ROLES)
register_kind("roulette.no_more_bets.v1", EmptyPayload, "round", ROLES)
register_kind("roulette.result.v1", RouletteResult, "round", ROLES)
register_kind("roulette.settle.v1", RouletteSettle, "round", ROLES)


@dataclass(frozen=True)
class Wager:
    player: str
    bet: str
    covers: frozenset[str]
    amount: int


@dataclass(frozen=True)
class RouletteState:
    wheel: str
    pays: tuple[tuple[str, int], ...]
    wagers: tuple[Wager, ...] = ()
    betting_open: bool = True
    pocket: str | None = None
    settled: frozenset[int] = frozenset()

    def pays_for(self, bet: str) -> int:
        return dict(self.pays)[pay_key(bet)]


def wager_wins(w: Wager, pocket: str) -> bool:
    return pocket in w.covers


def settlement(state: RouletteState, index: int) -> tuple[str, int]:
    """(outcome, paid) the engine derives for bet ``index`` (1-based) after the result."""
    assert state.pocket is not None
    w = state.wagers[index - 1]
    if wager_wins(w, state.pocket):
        return "win", w.amount * (state.pays_for(w.bet) + 1)
    return "lose", 0


class RouletteEngine(EngineDefaults):
    game = "roulette"
    kinds = frozenset({"roulette.bet.v1", "roulette.no_more_bets.v1", "roulette.result.v1", "roulette.settle.v1"})
    rules_model = RouletteRules
    banking: Final = "house"
    equipment: Final = "wheel"

    def stakes(self, kind: str, payload: dict[str, Any]) -> tuple[tuple[str, int], ...]:
        return ((payload["bet"], payload["amount"]),) if kind == "roulette.bet.v1" else ()
    house_edges = {"roulette-european": "exact enumeration of equally likely pockets",
                   "roulette-american": "exact enumeration of equally likely pockets"}
    demo_tables = (DemoTable("RL", "live", config={"limits": {"*": {"min": 100, "max": 100_000}}}),)

    def house_edge(self, name: str) -> dict[str, dict[str, Any]]:
        return house_edge(name.split("-")[1])

    def demo_round(self, rng: Any, players: list[str], cards: Any) -> tuple[dict[str, Any], Events]:
        """Even-money bets and straight-ups on a European wheel, and one spin."""
        rules = {"wheel": "european"}
        play = Play(self, rules)
        for player in players:
            if rng.random() < 0.5:
                play("roulette.bet.v1", {"player": player, "bet": rng.choice(["red", "black", "even", "odd"]),
                                         "pockets": [], "amount": rng.choice([500, 1000, 2000])})
            else:
                play("roulette.bet.v1", {"player": player, "bet": "straight", "pockets": [str(rng.randint(0, 36))],
                                         "amount": 100})
        play("roulette.no_more_bets.v1", {})
        play("roulette.result.v1", {"pocket": str(rng.randint(0, 36)), "revolutions": rng.randint(3, 9)})
        return rules, play.settle("roulette", ("bet", "outcome", "paid"))

    def start(self, rules: dict[str, Any]) -> RouletteState:
        r = parse_rules(RouletteRules, rules, "roulette")
        pays = dict(DEFAULT_PAYS)
        for key, value in (r.pays or {}).items():
            if key not in pays:
                raise RuleViolation(f"roulette rules: unknown bet {key!r} in pays")
            pays[key] = value
        if r.wheel == "european" and (r.pays or {}).get("five_number"):
            raise RuleViolation("roulette rules: the five-number bet exists only on the American wheel (004)")
        return RouletteState(wheel=r.wheel, pays=tuple(sorted(pays.items())))

    def apply(self, state: RouletteState, kind: str, payload: dict[str, Any]) -> RouletteState:
        if kind == "roulette.bet.v1":
            if not state.betting_open:
                raise RuleViolation("bet after 'no more bets' (000 IV 2.1.1)")
            return evolve(state, wagers=state.wagers + (self._wager(state.wheel, payload),))
        if kind == "roulette.no_more_bets.v1":
            return close_betting(state)
        if kind == "roulette.result.v1":
            if state.betting_open:
                raise RuleViolation("result before 'no more bets' (000 IV 2.1.1)")
            if state.pocket is not None:
                raise RuleViolation("the round already has a result")
            if payload["pocket"] not in WHEELS[state.wheel]:
                raise RuleViolation(f"pocket {payload['pocket']} is not on the {state.wheel} wheel")
            if payload["revolutions"] < 3:
                raise RuleViolation(
                    f"invalid spin: the ball made {payload['revolutions']} revolutions, at least 3 are needed (000 IV 3.1.1)")
            return evolve(state, pocket=payload["pocket"])
        if kind == "roulette.settle.v1":
            if state.pocket is None:
                raise RuleViolation("settlement without a result (000 IV 2.1.3)")
            index = payload["bet"]
            check_settle_target(index, len(state.wagers), state.settled)
            outcome, paid = settlement(state, index)
            if (payload["outcome"], payload["paid"]) != (outcome, paid):
                w = state.wagers[index - 1]
                raise RuleViolation(
                    f"wrong settlement of bet {index} ({w.bet} {sorted(w.covers, key=_sort_key)} for {w.amount}) on pocket"
                    f" {state.pocket}: the engine pays {outcome} {paid}, the event says {payload['outcome']}"
                    f" {payload['paid']} (000 IV 2.2, 004 賭け方と配当)")
            return evolve(state, settled=state.settled | {index})
        raise RuleViolation(f"{kind} is not a roulette event")

    def _wager(self, wheel: str, p: dict[str, Any]) -> Wager:
        bet, pockets = p["bet"], p["pockets"]
        if bet in OUTSIDE:
            if pockets:
                raise RuleViolation(f"an outside bet ({bet}) names no pockets")
            return Wager(p["player"], bet, outside_cover(bet), p["amount"])
        cover = frozenset(pockets)
        if len(cover) != len(pockets) or cover not in inside_combinations(wheel)[bet]:
            raise RuleViolation(f"{sorted(pockets, key=_sort_key)} is not a {bet} bet on the {wheel} layout")
        return Wager(p["player"], bet, cover, p["amount"])

    def close_problem(self, state: RouletteState) -> str | None:
        if state.pocket is None:
            return "the round has no result"
        return unsettled(len(state.wagers), state.settled)


    def draws(self, state: RouletteState) -> tuple[tuple[Any, ...], list[Any], bool]:
        return ("pockets", state.wheel), [state.pocket] if state.pocket else [], state.pocket is not None

    def snapshot(self, state: RouletteState) -> dict[str, Any]:
        return {
            "wheel": state.wheel,
            "betting_open": state.betting_open,
            "bets": [{"bet": i, "player": w.player, "type": w.bet, "covers": sorted(w.covers, key=_sort_key),
                      "amount": w.amount} for i, w in enumerate(state.wagers, start=1)],
            "pocket": state.pocket,
            "settled": sorted(state.settled),
        }

    def describe(self, state: RouletteState, money: Money) -> list[str]:
        snap = self.snapshot(state)
        items = []
        for b in snap["bets"]:
            covers = f" {'-'.join(b['covers'])}" if b["covers"] and len(b["covers"]) <= 6 else ""
            items.append(f"{b['player']} {b['type'].replace('_', ' ')}{covers} {money(b['amount'])}")
        lines = bets_lines(snap["betting_open"], items)
        return lines

    def result(self, state: RouletteState, money: Money) -> str | None:
        """000 IV: the ball's pocket decides every bet."""
        if state.pocket is None:
            return None
        pocket = state.pocket
        colour = "green" if pocket in ("0", "00") else "red" if int(pocket) in RED else "black"
        return f"The ball landed on {pocket} ({colour})" + paid_text(self.outcome(state), money)

    def outcome(self, state: RouletteState) -> dict[str, Any]:
        if state.pocket is None:
            return {"pocket": None, "settlements": []}
        rows = []
        for i, w in enumerate(state.wagers, start=1):
            outcome, paid = settlement(state, i)
            rows.append({"bet": i, "player": w.player, "outcome": outcome, "paid": paid, "staked": w.amount})
        return {"pocket": state.pocket, "settlements": rows}


def _sort_key(p: str) -> tuple[int, int]:
    return (0, -1) if p == "00" else (1, int(p))


def house_edge(wheel: str, pays: dict[str, int] | None = None) -> dict[str, dict[str, Any]]:
    """Exact house edge of every bet type, by enumerating the wheel's equally likely pockets.

    edge = -(expected return per unit staked) = 1 - P(win) * (pays + 1).
    """
    table = dict(DEFAULT_PAYS)
    table.update(pays or {})
    pockets = WHEELS[wheel]
    combos = inside_combinations(wheel)
    out: dict[str, dict[str, Any]] = {}
    for bet in BET_TYPES:
        if bet in INSIDE:
            if not combos[bet]:
                continue
            cover = min(combos[bet], key=lambda c: sorted(c))  # every placement covers as many pockets
        else:
            cover = outside_cover(bet)
        wins = sum(1 for p in pockets if p in cover)
        key = pay_key(bet)
        edge = 1 - Fraction(wins, len(pockets)) * (table[key] + 1)
        name = key if bet.startswith(("dozen", "column")) else bet
        out[name] = {"pays": table[key], "edge": edge}
    return out


register_engine(RouletteEngine())

"""Game engines: pure state machines, no I/O (DESIGN.md "Games").

Each engine judges the events of one round of its game::

    state = engine.start(rules)                 # from round.open's house options
    state = engine.apply(state, kind, payload)  # each game event, or RuleViolation
    engine.close_problem(state)                 # None when round.close "complete" may follow
    engine.snapshot(state)                      # the state as JSON-able data (replay steps)
    engine.outcome(state)                       # the result the engine derives (replay)
    engine.describe(state, money)               # the state in short lines a person reads (replay)
    engine.result(state, money)                 # the result in one sentence ("Banker 8 beats Player 3")
    described(engine, state, money)             # the two together: what a replay step shows
    engine.draws(state)                         # (spec, draws so far, complete): ledger.rng

The same code validates at ingest and re-derives at replay, so a replay is a proof, not
a re-telling. States are immutable values: ``apply`` returns a new one.

The engine is the only place a game is known (``docs/architecture.md``). Besides the
rules of a round it declares what the rest of the ledger needs of the game:

- ``rules_model``: its house options (``round.open.rules``) and their validation;
- ``banking`` and ``money(outcome)``: how a closed round's money nets (house-banked,
  player-banked, a pool with rake), as a ``RoundMoney``, for the balance views,
  reconciliation and the demo;
- ``equipment`` and ``cut_problem(decks, from_back)``: the equipment stream a live round
  is dealt from (``shoe``, ``wheel``, ``dice`` or None) and where the game's cut card
  goes (``ledger.judges.equipment``);
- ``house_edges`` and ``house_edge(name)``: the exact house edge of every bet, by name
  (``pitboss rules house-edge NAME``), with the method of computation;
- ``demo_tables`` and ``demo_round(rng, players, cards)``: the tables the demo night
  opens for the game and one whole round of random legal play (``ledger.sim``).

Adding a game is adding one module here (its engine, kinds, rules and house options)
plus its test and its documentation; the registry below is read everywhere else.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from ledger.events import EventError, describe_validation_error
from ledger.kinds import KINDS, Registry, add_roles_index

M = TypeVar("M", bound=BaseModel)


class RuleViolation(EventError):
    """An event the game's rules do not allow now; the reason cites the rule."""

    def __init__(self, reason: str):
        super().__init__("rule", reason)


S = TypeVar("S")


def evolve(state: S, **changes: Any) -> S:
    """``dataclasses.replace`` for the engines' and judges' state dataclasses, which are
    plain (no ``__post_init__``, no ``init=False`` field, no slots): a new instance holding
    the old one's fields with ``changes``, without running ``__init__``. About five times
    faster (0.66 us against 3.5 us measured); every replay copies state on every event. A
    compiled engine's state (``ledger.native``) has no ``__dict__``: ``dataclasses.replace``."""
    known = state.__dataclass_fields__  # type: ignore[attr-defined]  # a dataclass, by contract
    assert changes.keys() <= known.keys(), f"{type(state).__name__} has no field {set(changes) - set(known)}"
    old = getattr(state, "__dict__", None)
    if old is None:  # a compiled class (setup.py: mypyc) keeps its fields natively, not in a __dict__
        return dataclasses.replace(state, **changes)  # type: ignore[type-var]  # a dataclass, by contract
    new = object.__new__(type(state))
    fields = new.__dict__
    fields.update(old)
    fields.update(changes)
    return new


Events = list[tuple[str, dict[str, Any]]]
"""A round's game events as (kind, payload), in order."""

Money = Callable[[int], str]
"""An amount in minor units as a person reads it (``projections.money.show`` for the table's currency)."""


def paid_text(outcome: dict[str, Any], money: Money) -> str:
    """": P027 is paid €97.50 (after €2.50 commission); P007 loses €10.00": each player's
    settlements in an outcome (``settlements`` rows: player, outcome, paid, staked,
    commission), summed per player, for ``Engine.result``. "Paid" includes the stake
    returned with a win."""
    per: dict[str, dict[str, int]] = {}
    for row in outcome.get("settlements", []):
        t = per.setdefault(row["player"], {"lost": 0, "paid": 0, "commission": 0, "back": 0})
        if row["outcome"] == "lose":
            t["lost"] += row["staked"]
        elif row["outcome"] == "push":
            t["back"] += row["paid"]
        else:
            t["paid"] += row["paid"]
            t["commission"] += row.get("commission") or 0
    parts = []
    for who, t in per.items():
        said = []
        if t["paid"]:
            said.append(f"is paid {money(t['paid'])}"
                        + (f" (after {money(t['commission'])} commission)" if t["commission"] else ""))
        if t["back"]:
            said.append(f"gets {money(t['back'])} back (push)")
        if t["lost"]:
            said.append(f"loses {money(t['lost'])}")
        parts.append(f"{who} " + ", ".join(said or ["breaks even"]))
    return (": " + "; ".join(parts)) if parts else ""


def described(engine: Engine, state: Any, money: Money) -> list[str]:
    """The state as a person reads it (``Engine.describe``), then the result once there is
    one (``Engine.result``): what a replay step or a table's round in progress shows."""
    result = engine.result(state, money)
    return engine.describe(state, money) + ([result] if result else [])


def bets_lines(betting_open: bool, items: list[str]) -> list[str]:
    """The bets of a banked game's round, for ``Engine.describe``."""
    if not items:
        return ["no bets yet" if betting_open else "no bets"]
    return wrap(["bets:" if betting_open else "bets (no more bets):"] + items, indent="  ")


def wrap(items: list[str], width: int = 90, indent: str = "") -> list[str]:
    """``items`` joined by two spaces into lines of at most ``width`` columns."""
    lines: list[str] = []
    line = ""
    for item in items:
        if line and len(line) + 2 + len(item) > width:
            lines.append(line)
            line = indent + item
        else:
            line = f"{line}  {item}" if line else item
    return lines + ([line] if line else [])


@dataclass
class RoundMoney:
    """What one closed round did to everyone's money, in the table's minor units."""

    nets: dict[str, int] = field(default_factory=dict)  # player -> net result
    wagered: dict[str, int] = field(default_factory=dict)  # player -> amount put at risk
    brought: dict[str, int | None] = field(default_factory=dict)
    """player -> the chips the seat starts the round with, where the game says (a poker
    seat's starting stack; None: not recorded). Elsewhere what the player wagered. At a
    table with a chip book no seat brings more than the player holds there
    (``projections.table_chips``, issue 13 point 2)."""
    staked: int = 0
    paid: int = 0
    commission: int = 0
    rake: int = 0
    house_net: int = 0  # what the house won from the players (commission and rake included)


def settlement_money(outcome: dict[str, Any]) -> RoundMoney:
    """House-banked games: each settlement row has ``player``, ``staked`` and ``paid``
    (everything handed back); the player's net is paid − staked; a ``commission`` is
    house revenue; the house's net is the negative of the players' sum."""
    out = RoundMoney()
    for row in outcome.get("settlements", []):
        out.nets[row["player"]] = out.nets.get(row["player"], 0) + row["paid"] - row["staked"]
        out.wagered[row["player"]] = out.wagered.get(row["player"], 0) + row["staked"]
        out.staked += row["staked"]
        out.paid += row["paid"]
        out.commission += row.get("commission", 0)
    out.house_net = -sum(out.nets.values())
    return out


@dataclass(frozen=True)
class DemoTable:
    """A table the demo night opens for a game (``ledger.sim.demo``)."""

    code: str  # the table's suffix in the demo, e.g. "BAC"
    dealing: Literal["live", "rng"] | None = None
    decks: int = 0  # a live shoe's decks
    cut: int = 0  # a live shoe's cut card, cards from the back
    signer: str = "dealer"  # the role that records the rounds
    players: tuple[int, int] = (2, 5)  # how many players a round seats, at least and at most
    config: dict[str, Any] = field(default_factory=dict)
    """The table's configuration the demo's floor signs (``ledger.kinds.TableConfig``)."""


class Engine(Protocol):
    @property
    def game(self) -> str: ...

    @property
    def kinds(self) -> frozenset[str]: ...

    @property
    def rules_model(self) -> type[BaseModel]:
        """The house options (``round.open.rules``) and their validation: a strict pydantic
        model; ``start`` refuses anything it does not accept (``parse_rules``)."""

    @property
    def banking(self) -> Literal["house", "player", "pool"]: ...

    @property
    def equipment(self) -> Literal["shoe", "wheel", "dice"] | None: ...

    @property
    def house_edges(self) -> dict[str, str]:
        """Each name for ``pitboss rules house-edge`` -> its method of computation."""

    @property
    def demo_tables(self) -> tuple[DemoTable, ...]: ...

    def start(self, rules: dict[str, Any]) -> Any: ...

    def apply(self, state: Any, kind: str, payload: dict[str, Any]) -> Any: ...

    def close_problem(self, state: Any) -> str | None: ...

    def draws(self, state: Any) -> tuple[tuple[Any, ...], list[Any], bool]: ...

    def snapshot(self, state: Any) -> dict[str, Any]: ...

    def outcome(self, state: Any) -> dict[str, Any]: ...

    def describe(self, state: Any, money: Money) -> list[str]:
        """The state as a person reads it, for a replay's step: short lines (at most 90
        columns each: cards as cards, totals, bets, pot, street, who acts); amounts through
        ``money`` (the table's currency in major units)."""

    def result(self, state: Any, money: Money) -> str | None:
        """The round's result in one plain sentence ("Banker 8 beats Player 3"), or None
        while there is none yet."""

    def money(self, outcome: dict[str, Any]) -> RoundMoney: ...

    def cut_problem(self, decks: int, from_back: int) -> str | None: ...

    def house_edge(self, name: str) -> dict[str, dict[str, Any]]: ...

    def demo_round(self, rng: random.Random, players: list[str], cards: Iterator[str]) -> tuple[dict[str, Any],
                                                                                                  Events]: ...

    def rule_on(self, state: Any, payload: dict[str, Any]) -> tuple[Any, dict[str, int]]: ...

    @property
    def round_keys(self) -> frozenset[str]:
        """House-option keys a round states itself (who plays, their stacks), never set
        by the table's configuration (``ledger.kinds.TableConfig``)."""

    @property
    def unset_keys(self) -> frozenset[str]:
        """House-option keys with no default in the seed texts (poker's variant and stakes):
        a round names them at a table whose configuration is absent; a configured table
        sets them."""

    def seed_problem(self, rules: dict[str, Any], seats: int) -> str | None:
        """Why these house options (a table's configuration, or a round's rules as played)
        break a bound the seed texts state (blackjack pays at least 3:2, baccarat is dealt
        from 8 decks...), or None. Imported histories are not held to the house's bounds."""

    def structure_problem(self, config: dict[str, Any], rules: dict[str, Any]) -> str | None:
        """Why a round's own keys (``round_keys``) disagree with the table's configuration
        (a poker hand's blinds against the table's ``blinds``), or None."""

    def stakes(self, kind: str, payload: dict[str, Any]) -> tuple[tuple[str, int], ...]:
        """The bets ``kind`` puts at risk, as (bet type, amount), for the table's limits."""

    def table_book(self, seats: int, config: dict[str, Any] | None) -> Any:
        """A new book of what a table of the game carries from round to round (a poker
        table's seats, stacks, button and blinds: ``ledger.games.poker_table.Book``), or
        None where each round stands alone. The judges advance it with the table's events
        and ask it whether a round's ``round.open`` is the round the table deals next."""

    def final_chips(self, state: Any) -> dict[str, int]:
        """What each player has in front of them when the round is over (a poker hand's
        final stacks), for the table's book."""


def parse_rules(model: type[M], rules: dict[str, Any], game: str) -> M:
    """A round's house options (``round.open.rules``) as the game's rules model, or a
    RuleViolation naming what is wrong."""
    try:
        return model.model_validate(rules)
    except ValidationError as exc:
        raise RuleViolation(f"{game} rules: {describe_validation_error(exc)}") from None


def close_betting(state: S) -> S:
    """The state after "no more bets" (a frozen dataclass with ``betting_open``)."""
    if not state.betting_open:  # type: ignore[attr-defined]  # a game state with betting_open, by contract
        raise RuleViolation("'no more bets' was already called")
    return evolve(state, betting_open=False)


def check_settle_target(index: int, wagers: int, settled: frozenset[int]) -> None:
    """A settlement names a recorded bet (1-based) that is not settled yet."""
    if index > wagers:
        raise RuleViolation(f"settlement of bet {index}, but the round has {wagers} bets")
    if index in settled:
        raise RuleViolation(f"bet {index} is already settled")


def unsettled(wagers: int, settled: frozenset[int]) -> str | None:
    """Why a round with these bets cannot close complete yet, if it cannot."""
    left = [i for i in range(1, wagers + 1) if i not in settled]
    return f"bets {left} are not settled" if left else None


class EngineDefaults:
    """The defaults of an engine: no cut-card position of its own (beyond the stack),
    house-banked money, and no floor rulings of its own (a void applies to every game)."""

    def cut_problem(self, decks: int, from_back: int) -> str | None:
        return None

    def money(self, outcome: dict[str, Any]) -> RoundMoney:
        """House-banked by default (``settlement_money``); player-banked and pool games
        override it."""
        return settlement_money(outcome)

    def rule_on(self, state: Any, payload: dict[str, Any]) -> tuple[Any, dict[str, int]]:
        raise RuleViolation(f"a {payload['effect']} ruling does not apply to a {getattr(self, 'game', '?')} round")

    round_keys: frozenset[str] = frozenset()
    unset_keys: frozenset[str] = frozenset()

    def seed_problem(self, rules: dict[str, Any], seats: int) -> str | None:
        return None

    def structure_problem(self, config: dict[str, Any], rules: dict[str, Any]) -> str | None:
        return None

    def stakes(self, kind: str, payload: dict[str, Any]) -> tuple[tuple[str, int], ...]:
        return ()

    def table_book(self, seats: int, config: dict[str, Any] | None) -> Any:
        return None

    def final_chips(self, state: Any) -> dict[str, int]:
        return {}


class Play:
    """A round played through its engine as it is produced: each event is applied (so an
    illegal one raises at once) and kept (the demo's and the tests' producers)."""

    def __init__(self, engine: Engine, rules: dict[str, Any]):
        self.engine: Engine = engine
        self.st: Any = engine.start(rules)
        self.events: Events = []

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        self.st = self.engine.apply(self.st, kind, payload)
        self.events.append((kind, payload))

    def settle(self, prefix: str, fields: tuple[str, ...]) -> Events:
        """Each settlement as the engine derives it, recorded; the round's events."""
        for row in self.engine.outcome(self.st)["settlements"]:
            self(f"{prefix}.settle.v1", {k: row[k] for k in fields})
        return self.events


def play_events(engine: Engine, rules: dict[str, Any], events: Events) -> Any:
    """The engine's state after ``events`` from the start (producers and the demo)."""
    st = engine.start(rules)
    for kind, payload in events:
        st = engine.apply(st, kind, payload)
    return st


def _load_games(name: str | None) -> None:
    """Import the game module that registers ``name``, or every game module (for None, or
    a name found nowhere). A game's module is named after its game (``dragon-tiger`` in
    ``dragon_tiger``) and its kinds' family usually after it too (``baccarat.bet.v1``);
    for a kind whose family names no module (``hcf.*``, in ``high_card_flush``) the index
    (``ledger.games._index``) names it, read only then; with no index it imports every
    game, once. Which module is imported first is a matter of speed only."""
    module = None if name is None else name.split(".", 1)[0].replace("-", "_")
    if name is not None and module not in _modules():
        module = _declared_module(name)
    if module in _modules():
        importlib.import_module(f"{__name__}.{module}")
        return
    for info in sorted(_modules()):
        importlib.import_module(f"{__name__}.{info}")


def _declared_module(kind: str) -> str | None:
    from ledger.games import _index  # on first use: ``python -m ledger.games._index`` runs it as a script

    return _index.module_of(kind)


def _declared_roles(kind: str) -> frozenset[str] | None:
    from ledger.games import _index

    return _index.roles_of(kind)


@functools.cache
def _modules() -> frozenset[str]:
    """The game modules of this package (a listing of its directory, nothing imported)."""
    return frozenset(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


ENGINES: Registry[Engine] = Registry("an engine for")
"""Every game's engine by its name, each game's module imported on first use (``Registry``):
a command that judges baccarat and cash does not build the models of six other games."""
ENGINES.add_source(_load_games)
KINDS.add_source(_load_games)  # a game's kinds register when its module is imported
add_roles_index(_declared_roles)  # a game kind's roles without its module (a key ring's check)


def register_engine(engine: Engine) -> None:
    ENGINES.register(engine.game, engine)


def house_edge_names() -> dict[str, tuple[Engine, str]]:
    """Every ``pitboss rules house-edge`` name: (its engine, its method)."""
    return {name: (engine, method) for engine in ENGINES.values() for name, method in engine.house_edges.items()}



__all__ = ["ENGINES", "DemoTable", "Engine", "Events", "EngineDefaults", "Play", "RoundMoney", "RuleViolation",
           "check_settle_target", "close_betting", "evolve", "house_edge_names", "parse_rules", "play_events",
           "register_engine", "settlement_money", "unsettled"]

"""Game engines: pure state machines, no I/O (DESIGN.md "Games").

Each engine judges the events of one round of its game::

    state = engine.start(rules)                 # from round.open's house options
    state = engine.apply(state, kind, payload)  # each game event, or RuleViolation
    engine.close_problem(state)                 # None when round.close "complete" may follow
    engine.snapshot(state)                      # the state as JSON-able data (replay steps)
    engine.outcome(state)                       # the result the engine derives (replay)
    engine.draws(state)                         # (spec, draws so far, complete): ledger.rng

The same code validates at ingest and re-derives at replay, so a replay is a proof, not
a re-telling. States are immutable values: ``apply`` returns a new one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from ledger.events import EventError, describe_validation_error

M = TypeVar("M", bound=BaseModel)


class RuleViolation(EventError):
    """An event the game's rules do not allow now; the reason cites the rule."""

    def __init__(self, reason: str):
        super().__init__("rule", reason)


class Engine(Protocol):
    game: str
    kinds: frozenset[str]

    def start(self, rules: dict[str, Any]) -> Any: ...

    def apply(self, state: Any, kind: str, payload: dict[str, Any]) -> Any: ...

    def close_problem(self, state: Any) -> str | None: ...

    def draws(self, state: Any) -> tuple[tuple[Any, ...], list[Any], bool]: ...

    def snapshot(self, state: Any) -> dict[str, Any]: ...

    def outcome(self, state: Any) -> dict[str, Any]: ...


def parse_rules(model: type[M], rules: dict[str, Any], game: str) -> M:
    """A round's house options (``round.open.rules``) as the game's rules model, or a
    RuleViolation naming what is wrong."""
    try:
        return model.model_validate(rules)
    except ValidationError as exc:
        raise RuleViolation(f"{game} rules: {describe_validation_error(exc)}") from None


def close_betting(state: Any) -> Any:
    """The state after "no more bets" (a frozen dataclass with ``betting_open``)."""
    if not state.betting_open:
        raise RuleViolation("'no more bets' was already called")
    return replace(state, betting_open=False)


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


ENGINES: dict[str, Engine] = {}


def register_engine(engine: Engine) -> None:
    if engine.game in ENGINES:
        raise ValueError(f"an engine for {engine.game} is already registered")
    ENGINES[engine.game] = engine


from ledger.games import baccarat as _baccarat
from ledger.games import blackjack as _blackjack
from ledger.games import high_card_flush as _high_card_flush
from ledger.games import poker as _poker
from ledger.games import roulette as _roulette
from ledger.games import sicbo as _sicbo

__all__ = ["ENGINES", "Engine", "RuleViolation", "_baccarat", "_blackjack", "_high_card_flush", "_poker", "_roulette", "_sicbo", "check_settle_target",
           "close_betting", "parse_rules", "register_engine", "unsettled"]

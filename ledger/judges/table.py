"""The judge of ``table:<id>`` streams: ``table.open`` when the table is closed (or new),
``table.config`` and ``table.close`` only when it is open.

A table's configuration (``ledger.kinds.TableConfig``: the game's house options, the
options a round may set itself, the limits per bet type, a poker table's blinds and
ante) is the floor's or the house's: it is set by a ``table.open`` or a ``table.config``
signed by a key of the ``floor`` or ``house`` role (or, for an imported hand history's
table, the importer's), validated against the game's rules model and against the bounds
the seed texts state (``Engine.seed_problem``: blackjack pays at least 3:2, baccarat from
8 decks, stud at most 7 seats, the stud rake...). Every round cites the configuration in
force when it opened (``ledger.judges.round.check_config``). The state is a
``TableState``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from ledger.events import EventError, SignedEvent, describe_validation_error
from ledger.judges import BaseJudge, World, register_judge

CONFIG_ROLES = frozenset({"floor", "house", "importer"})


def is_open(head: SignedEvent | None) -> bool:
    """Whether a table whose stream's last event is ``head`` is open."""
    return head is not None and head.kind in ("table.open.v1", "table.config.v1")


@dataclass(frozen=True)
class TableState:
    opening: SignedEvent  # the table's latest table.open
    open: bool = True
    config: dict[str, Any] | None = None  # the configuration in force (None: the game's defaults)
    config_seq: int | None = None  # the seq of the event that set it


def config_problem(game: str, config: dict[str, Any], seats: int) -> str | None:
    """Why a table configuration cannot be accepted for ``game`` at a table of ``seats``."""
    from ledger.games import ENGINES

    engine = ENGINES.get(game)
    if engine is None:
        return None if not config.get("rules") else f"{game} has no engine: its tables have no house options"
    rules = config.get("rules", {})
    if engine.banking == "house" and not config.get("limits"):
        return ("a house-banked table posts its minimum and maximum bets (000 II 2.1.7, III 1.3(a), IV 2.1.4: the"
                " game screen shows them): the configuration sets limits")
    theirs = sorted(set(rules) & engine.round_keys)
    if theirs:
        return f"{', '.join(theirs)} {'is' if len(theirs) == 1 else 'are'} stated by each round, not configured"
    unknown = sorted(set(config.get("round_options", ())) - set(engine.rules_model.model_fields))
    if unknown:
        return f"round_options names {', '.join(unknown)}, not house options of {game}"
    try:
        engine.rules_model.model_validate(rules)
    except ValidationError as exc:
        errors = [e for e in exc.errors() if e["type"] != "missing"]  # a round states what is missing
        if errors:
            return f"{game} rules: {describe_validation_error(exc)}"
    return engine.seed_problem(rules, seats)


class TableJudge(BaseJudge):
    stream_types = ("table",)
    keeps_state = True

    def step(self, state: TableState | None, ev: SignedEvent, world: World) -> TableState:
        p = ev.payload
        if ev.kind == "table.open.v1":
            config = p.get("config")
            return TableState(ev, True, config, ev.seq if config is not None else None)
        assert state is not None
        if ev.kind == "table.config.v1":
            return replace(state, config=p["config"], config_seq=ev.seq)
        return replace(state, open=False, config=None, config_seq=None)

    def settle(self, before: TableState | None, after: TableState, ev: SignedEvent, world: World) -> None:
        """A table opened in this run starts an empty book (its events are all in the run);
        a configuration change sets the book's blinds and ante; a closed table has none."""
        ident = ev.stream.partition(":")[2]
        if ev.kind == "table.open.v1":
            world.books[ident] = world.new_book(after)
        elif ev.kind == "table.config.v1":
            book = world.books.get(ident)  # a book not read yet is built with the latest configuration
            if book is not None:
                book.configure(after.config)
        else:
            world.books[ident] = None

    def admit(self, state: TableState | None, ev: SignedEvent, world: World) -> None:
        ident = ev.stream.partition(":")[2]
        is_open_now = state is not None and state.open
        if ev.kind == "table.open.v1" and is_open_now:
            raise EventError("rule", f"table {ident} is already open")
        if ev.kind in ("table.close.v1", "table.config.v1") and not is_open_now:
            raise EventError("rule", f"table {ident} is not open")
        config = ev.payload.get("config")
        if config is None:
            return
        role = world.role_of(ev)
        if role not in CONFIG_ROLES:
            raise EventError("rule", f"a table's configuration is set by the floor or the house, not by a {role} key"
                                     " (issue 15: house options are never the round producer's)")
        opening = ev if ev.kind == "table.open.v1" else state.opening if state is not None else ev
        problem = config_problem(opening.payload["game"], config, opening.payload["seats"])
        if problem:
            raise EventError("rule", f"table {ident} configuration: {problem}")


register_judge(TableJudge())

"""The table-leaving policy (000 "leaving table policy") as signed events on
``seat:<player>``: ``seat.join.v1`` / ``seat.leave.v1``, judged by pure functions.

Leaving a cash table after playing at least one hand and fewer than ten, while others are
seated, is a refusal to play; refusals at the same blind level within 12 h block new
seats at that level: the 2nd for 5 minutes, the 3rd 15, the 4th 30, the 5th and later 60,
from the refusal. A join inside a block is refused, naming when it ends. A player fined
for exposing hand information or interfering (001 fouls, ``ledger.judges.penalty``) is
forced to leave the table and does not sit there again that gaming day.

The judge of ``seat:<player>`` keeps the player's seat events.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any

from pydantic import Field

from ledger.events import SignedEvent
from ledger.games import RuleViolation
from ledger.judges import BaseJudge, World, register_judge
from ledger.judges.penalty import sent_away_by
from ledger.kinds import Count, Ident, Strict, register_kind
from ledger.refs import event_ref
from ledger.timeutil import format_utc, parse_utc

BLOCK_MINUTES = {2: 5, 3: 15, 4: 30}  # 000 leaving table policy; 5th and later: 60
WINDOW = timedelta(hours=12)


class SeatJoin(Strict):
    table: Ident
    blind_level: Ident
    seat: Annotated[int, Field(ge=1, le=10)] | None = None
    """The seat taken (1 to the table's seats, clockwise); required at a poker table the
    floor configured, whose button and blinds move from seat to seat
    (``ledger.games.poker_table``)."""


class SeatAway(Strict):
    """``seat.sit_out.v1`` / ``seat.return.v1``: the player keeps the seat but is not dealt
    in until returning (000 missed blinds: the blinds that pass meanwhile are owed)."""

    table: Ident


class SeatLeave(Strict):
    table: Ident
    blind_level: Ident
    hands_played: Count
    others_seated: Count


register_kind("seat.join.v1", SeatJoin, "seat", ("game", "floor"))
register_kind("seat.leave.v1", SeatLeave, "seat", ("game", "floor"))
register_kind("seat.sit_out.v1", SeatAway, "seat", ("game", "floor"))
register_kind("seat.return.v1", SeatAway, "seat", ("game", "floor"))


@dataclass(frozen=True)
class SeatState:
    """What the judge keeps of a player's seat stream: the tables the player sits at, and
    each refusal to play (000) as (time, blind level). Advanced event by event, so N seat
    events cost O(N) (issue 13 point 8), not a re-read of the stream for each."""

    seated: frozenset[str] = frozenset()
    refused: tuple[tuple[str, str], ...] = ()


def is_refusal(ev: Any) -> bool:
    """000 leaving table policy: leaving a cash table after at least one hand and fewer
    than ten, while others are seated, is a refusal to play."""
    p = ev.payload
    return bool(ev.kind == "seat.leave.v1" and 1 <= p["hands_played"] < 10 and p["others_seated"] > 0)


def refusals(state: SeatState, blind_level: str, before: str) -> list[str]:
    """The times of the refusals to play (000) at ``blind_level`` in the 12 h before ``before``."""
    t = parse_utc(before)
    return [at for at, level in state.refused
            if level == blind_level and timedelta(0) <= t - parse_utc(at) <= WINDOW]


def judge_seat(state: SeatState, ev: Any, penalties: list[Any] | None = None) -> None:
    """A join or leave against the player's seat state (000 leaving table policy) and
    penalties (001: a player fined for exposing hand information or interfering is forced
    to leave the table, and does not sit there again that gaming day)."""
    table = ev.payload["table"]
    if ev.kind != "seat.join.v1":
        if table not in state.seated:
            raise RuleViolation(f"the player is not seated at {table}")
        return
    if table in state.seated:
        raise RuleViolation(f"the player is already seated at {table}")
    pen = sent_away_by(penalties, table, ev.at)
    if pen is not None:
        raise RuleViolation(f"forced to leave {table} by the {pen.payload['offence']} penalty"
                            f" {event_ref(pen.stream, pen.seq)} (001 fouls): no seat there again this gaming day")
    times = refusals(state, ev.payload["blind_level"], ev.at)
    if len(times) >= 2:
        minutes = BLOCK_MINUTES.get(len(times), 60)
        until = parse_utc(max(times)) + timedelta(minutes=minutes)
        if parse_utc(ev.at) < until:
            raise RuleViolation(f"blocked at blind level {ev.payload['blind_level']} until {format_utc(until)}:"
                                f" refusal {len(times)} to play within 12 h, a {minutes}-minute block (000 leaving"
                                " table policy)")


def seat_step(state: SeatState, ev: Any) -> SeatState:
    table = ev.payload["table"]
    if ev.kind in ("seat.sit_out.v1", "seat.return.v1"):
        return state
    if ev.kind == "seat.join.v1":
        return SeatState(state.seated | {table}, state.refused)
    refused = state.refused + ((ev.at, ev.payload["blind_level"]),) if is_refusal(ev) else state.refused
    return SeatState(state.seated - {table}, refused)


class SeatJudge(BaseJudge):
    stream_types = ("seat",)
    keeps_state = True

    def step(self, state: SeatState | None, ev: SignedEvent, world: World) -> SeatState:
        return seat_step(state or SeatState(), ev)

    def admit(self, state: SeatState | None, ev: SignedEvent, world: World) -> None:
        player = ev.stream.split(":", 1)[1]
        judge_seat(state or SeatState(), ev, list(world.state(f"penalty:{player}") or ()))
        book = world.table_book(ev.payload["table"])
        problem = book.seat_problem(ev.kind, player, ev.payload) if book is not None else None
        if problem:
            raise RuleViolation(f"table {ev.payload['table']}: {problem}")
        if ev.kind == "seat.leave.v1":
            counted = world.hands_at(player, ev.payload["table"])
            if ev.payload["hands_played"] != counted:
                raise RuleViolation(f"{player} was dealt {counted} hands at {ev.payload['table']} since taking the seat,"
                                    f" by the ledger, not {ev.payload['hands_played']} (000 leaving table policy counts"
                                    " the hands played)")

    def settle(self, before: SeatState | None, after: SeatState, ev: SignedEvent, world: World) -> None:
        player = ev.stream.split(":", 1)[1]
        world.advance_book(ev.payload["table"], ev)
        if ev.kind in ("seat.sit_out.v1", "seat.return.v1"):
            return
        if ev.kind == "seat.join.v1":
            world.hands[(player, ev.payload["table"])] = 0
        else:
            world.hands.pop((player, ev.payload["table"]), None)


register_judge(SeatJudge())

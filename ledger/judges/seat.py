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

from datetime import timedelta
from typing import Any

from ledger.events import SignedEvent
from ledger.games import RuleViolation
from ledger.judges import BaseJudge, World, register_judge
from ledger.judges.penalty import FINES
from ledger.kinds import Count, Ident, Strict, register_kind
from ledger.refs import event_ref
from ledger.timeutil import format_utc, gaming_day, parse_utc

BLOCK_MINUTES = {2: 5, 3: 15, 4: 30}  # 000 leaving table policy; 5th and later: 60
WINDOW = timedelta(hours=12)


class SeatJoin(Strict):
    table: Ident
    blind_level: Ident


class SeatLeave(Strict):
    table: Ident
    blind_level: Ident
    hands_played: Count
    others_seated: Count


register_kind("seat.join.v1", SeatJoin, "seat", ("game", "floor"))
register_kind("seat.leave.v1", SeatLeave, "seat", ("game", "floor"))


def refusals(seat_events: list[Any], blind_level: str, before: str) -> list[str]:
    """The times of the refusals to play (000) at ``blind_level`` in the 12 h before ``before``."""
    t = parse_utc(before)
    return [ev.at for ev in seat_events
            if ev.kind == "seat.leave.v1" and ev.payload["blind_level"] == blind_level
            and 1 <= ev.payload["hands_played"] < 10 and ev.payload["others_seated"] > 0
            and timedelta(0) <= t - parse_utc(ev.at) <= WINDOW]


def judge_seat(seat_events: list[Any], ev: Any, penalties: list[Any] | None = None) -> None:
    """A join or leave against the player's earlier seat events (000 leaving table policy)
    and penalties (001: a player fined for exposing hand information or interfering is
    forced to leave the table, and does not sit there again that gaming day)."""
    seated: set[str] = set()
    for e in seat_events:
        (seated.add if e.kind == "seat.join.v1" else seated.discard)(e.payload["table"])
    table = ev.payload["table"]
    if ev.kind == "seat.leave.v1":
        if table not in seated:
            raise RuleViolation(f"the player is not seated at {table}")
        return
    if table in seated:
        raise RuleViolation(f"the player is already seated at {table}")
    for pen in penalties or []:
        if (pen.kind == "penalty.v1" and pen.payload["offence"] in FINES and pen.payload.get("table") == table
                and gaming_day(pen.at) == gaming_day(ev.at) and pen.at <= ev.at):
            raise RuleViolation(f"forced to leave {table} by the {pen.payload['offence']} penalty {event_ref(pen.stream, pen.seq)}"
                                " (001 fouls): no seat there again this gaming day")
    times = refusals(seat_events, ev.payload["blind_level"], ev.at)
    if len(times) >= 2:
        minutes = BLOCK_MINUTES.get(len(times), 60)
        until = parse_utc(max(times)) + timedelta(minutes=minutes)
        if parse_utc(ev.at) < until:
            raise RuleViolation(f"blocked at blind level {ev.payload['blind_level']} until {format_utc(until)}:"
                                f" refusal {len(times)} to play within 12 h, a {minutes}-minute block (000 leaving"
                                " table policy)")


class SeatJudge(BaseJudge):
    stream_types = ("seat",)

    def step(self, state: tuple[SignedEvent, ...] | None, ev: SignedEvent, world: World) -> tuple[SignedEvent, ...]:
        return (state or ()) + (ev,)

    def admit(self, state: tuple[SignedEvent, ...] | None, ev: SignedEvent, world: World) -> None:
        player = ev.stream.split(":", 1)[1]
        judge_seat(list(state or ()), ev, list(world.state(f"penalty:{player}") or ()))


register_judge(SeatJudge())

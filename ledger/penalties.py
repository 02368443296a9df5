"""Penalties and the table-leaving policy as signed events (issue #6), judged by pure
functions.

``penalty.v1`` on ``penalty:<player>``, signed by floor / pit-boss keys only, citing its
rule and the events it acts on (which must exist), one of:

- ``warning`` (TDA 2013 rule 58 B: a verbal warning);
- ``missed_hands`` (TDA 58 B): the player sits out one hand for every player at the table
  (the offender included) for each round of the penalty (1 to 4 rounds), or a one-hand
  penalty: ``hands`` must be ``players_at_table`` x ``rounds`` (or 1 when ``rounds`` is 0);
- ``exposure`` (001 "exposing hand information": forced fold, forced leave, a 1,000-point
  fine that does not go to the pot) and ``interference`` (001 "interfering with others'
  actions": the same with a 5,000-point fine): ``amount`` must be that fine; the forced
  fold is the round's ``dead_hand`` ruling (``ledger.rulings``); the forced leave: the
  penalty names the ``table``, and a ``seat.join`` there the same gaming day is refused;
- ``disqualification`` (TDA 58 D): the player's chips leave the tournament, recorded on
  the tournament by ``tournament.disqualify.v1`` citing this penalty.

The table-leaving policy (000 "leaving table policy"), on ``seat:<player>``:
``seat.join.v1`` / ``seat.leave.v1``. Leaving a cash table after playing at least one
hand and fewer than ten, while others are seated, is a refusal to play; refusals at the
same blind level within 12 h block new seats at that level: the 2nd for 5 minutes, the
3rd 15, the 4th 30, the 5th and later 60, from the refusal. A join inside a block is
refused, naming when it ends.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from ledger.games import RuleViolation
from ledger.kinds import Amount, Count, Currency, Ident, Strict, Text, register_kind
from ledger.rulings import EventRef, RuleRef
from ledger.timeutil import format_utc, parse_utc

FINES = {"exposure": 1_000, "interference": 5_000}  # 001 ② / ③, in the game's points
BLOCK_MINUTES = {2: 5, 3: 15, 4: 30}  # 000 leaving table policy; 5th and later: 60
WINDOW = timedelta(hours=12)


class Penalty(Strict):
    offence: Literal["warning", "missed_hands", "exposure", "interference", "disqualification"]
    rule: RuleRef
    acts_on: Annotated[list[EventRef], Field(min_length=1, max_length=100)]
    reason: Text
    players_at_table: Annotated[int, Field(ge=2, le=10)] | None = None
    rounds: Annotated[int, Field(ge=0, le=4)] | None = None
    hands: Annotated[int, Field(ge=1, le=40)] | None = None
    amount: Amount | None = None
    currency: Currency | None = None
    tournament: Ident | None = None
    table: Ident | None = None
    """Exposure and interference: the table the player is sent away from (001: forced leave)."""


class SeatJoin(Strict):
    table: Ident
    blind_level: Ident


class SeatLeave(Strict):
    table: Ident
    blind_level: Ident
    hands_played: Count
    others_seated: Count


register_kind("penalty.v1", Penalty, "penalty", ("floor",))
register_kind("seat.join.v1", SeatJoin, "seat", ("game", "floor"))
register_kind("seat.leave.v1", SeatLeave, "seat", ("game", "floor"))


def judge_penalty(p: dict[str, Any]) -> None:
    offence = p["offence"]
    if offence == "missed_hands":
        n, rounds, hands = p.get("players_at_table"), p.get("rounds"), p.get("hands")
        if n is None or rounds is None or hands is None:
            raise RuleViolation("a missed-hand penalty names players_at_table, rounds and hands (TDA 58 B)")
        want = n * rounds if rounds else 1
        if hands != want:
            raise RuleViolation(f"{rounds} round(s) at a table of {n} is {want} missed hands, not {hands}"
                                " (TDA 2013 rule 58 B)")
    elif offence in FINES:
        if p.get("amount") != FINES[offence] or p.get("currency") is None:
            raise RuleViolation(f"the {offence} fine is {FINES[offence]} points, in the game's currency (001)")
        if p.get("table") is None:
            raise RuleViolation(f"an {offence} penalty names the table the player is forced to leave (001)")
    elif offence == "disqualification":
        if p.get("tournament") is None:
            raise RuleViolation("a disqualification names the tournament whose chips it removes (TDA 58 D)")
    for name in ("amount", "currency") if offence not in FINES else ():
        if p.get(name) is not None:
            raise RuleViolation(f"only a fine has an {name}")


def refusals(seat_events: list[Any], blind_level: str, before: str) -> list[str]:
    """The times of the refusals to play (000) at ``blind_level`` in the 12 h before ``before``."""
    t = parse_utc(before)
    return [ev.at for ev in seat_events
            if ev.kind == "seat.leave.v1" and ev.payload["blind_level"] == blind_level
            and 1 <= ev.payload["hands_played"] < 10 and ev.payload["others_seated"] > 0
            and timedelta(0) <= t - parse_utc(ev.at) <= WINDOW]


def judge_seat(seat_events: list[Any], ev: Any, penalties: list[Any] = ()) -> None:  # type: ignore[assignment]
    """A join or leave against the player's earlier seat events (000 leaving table policy)
    and penalties (001: a player fined for exposing hand information or interfering is
    forced to leave the table, and does not sit there again that gaming day)."""
    seated = set()
    for e in seat_events:
        (seated.add if e.kind == "seat.join.v1" else seated.discard)(e.payload["table"])
    table = ev.payload["table"]
    if ev.kind == "seat.leave.v1":
        if table not in seated:
            raise RuleViolation(f"the player is not seated at {table}")
        return
    if table in seated:
        raise RuleViolation(f"the player is already seated at {table}")
    for pen in penalties:
        if (pen.kind == "penalty.v1" and pen.payload["offence"] in FINES and pen.payload.get("table") == table
                and pen.at[:10] == ev.at[:10] and pen.at <= ev.at):
            raise RuleViolation(f"forced to leave {table} by the {pen.payload['offence']} penalty {pen.stream}#{pen.seq}"
                                " (001 fouls): no seat there again this gaming day")
    times = refusals(seat_events, ev.payload["blind_level"], ev.at)
    if len(times) >= 2:
        minutes = BLOCK_MINUTES.get(len(times), 60)
        until = parse_utc(max(times)) + timedelta(minutes=minutes)
        if parse_utc(ev.at) < until:
            raise RuleViolation(f"blocked at blind level {ev.payload['blind_level']} until {format_utc(until)}:"
                                f" refusal {len(times)} to play within 12 h, a {minutes}-minute block (000 leaving"
                                " table policy)")

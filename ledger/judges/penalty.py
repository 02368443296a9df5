"""Penalties as signed events (issue #6), judged by pure functions.

``penalty.v1`` on ``penalty:<player>``, signed by floor / pit-boss keys only, citing its
rule and the events it acts on (which must exist), one of:

- ``warning`` (TDA 2013 rule 58 B: a verbal warning);
- ``missed_hands`` (TDA 58 B): the player sits out one hand for every player at the table
  (the offender included) for each round of the penalty (1 to 4 rounds), or a one-hand
  penalty: ``hands`` must be ``players_at_table`` x ``rounds`` (or 1 when ``rounds`` is 0);
- ``exposure`` (001 "exposing hand information": forced fold, forced leave, a 1,000-point
  fine that does not go to the pot) and ``interference`` (001 "interfering with others'
  actions": the same with a 5,000-point fine): ``amount`` must be that fine; the forced
  fold is the round's ``dead_hand`` ruling (``ledger.judges.ruling``); the forced leave: the
  penalty names the ``table``, and a ``seat.join`` there the same gaming day is refused;
- ``disqualification`` (TDA 58 D): the player's chips leave the tournament, recorded on
  the tournament by ``tournament.disqualify.v1`` citing this penalty.

The judge of ``penalty:<player>`` streams keeps the player's penalties (the seat judge,
``ledger.judges.seat``, reads them for the forced leave).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ledger.events import SignedEvent
from ledger.games import RuleViolation
from ledger.judges import BaseJudge, World, register_judge
from ledger.judges.ruling import EventRef, RuleRef, cited_events
from ledger.kinds import Amount, Currency, Ident, Strict, Text, register_kind
from ledger.timeutil import gaming_day

FINES = {"exposure": 1_000, "interference": 5_000}  # 001 ② / ③, in the game's points


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


register_kind("penalty.v1", Penalty, "penalty", ("floor",))


def sent_away_by(penalties: Any, table: str, at: str) -> Any:
    """The exposure or interference penalty (001 反則行為 ②③) that sent the player away from
    ``table`` earlier in the gaming day of ``at``, or None: the player takes no seat and
    plays no hand there again that day."""
    for pen in penalties or ():
        if (pen.kind == "penalty.v1" and pen.payload["offence"] in FINES and pen.payload.get("table") == table
                and gaming_day(pen.at) == gaming_day(at) and pen.at <= at):
            return pen
    return None


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


class PenaltyJudge(BaseJudge):
    stream_types = ("penalty",)
    keeps_state = True

    def step(self, state: tuple[SignedEvent, ...] | None, ev: SignedEvent, world: World) -> tuple[SignedEvent, ...]:
        return (state or ()) + (ev,)

    def admit(self, state: tuple[SignedEvent, ...] | None, ev: SignedEvent, world: World) -> None:
        if ev.kind == "penalty.v1":
            judge_penalty(ev.payload)
            cited_events(ev, world)


register_judge(PenaltyJudge())

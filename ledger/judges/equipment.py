"""Live-dealer procedures: shoes, wheels and dice as streams of signed events (pure).

A table opened with ``"dealing": "live"`` deals every round of a game that uses
equipment from a named equipment stream (``round.open.v1`` ``source``), and the ledger
refuses the round unless that equipment is ready:

``shoe:<id>`` (baccarat, blackjack, High Card Flush), events in this order:

- ``shoe.inspect.v1`` {table, game, decks, result, video, note}: the cards are sorted,
  spread and checked, on video, by the dealer and by the pit boss (000 II 3.1.1-3.1.2,
  III 3.1.1-3.1.2). Both a dealer-signed and a floor-signed passing inspection are
  needed since the last defect; a "defective" result needs a replacement first.
- ``shoe.deck_replaced.v1`` {deck, reason, video}: the pit boss replaces a defective
  deck (000 II 3.1.3), which must then be inspected again (000 II 3.1.4).
- ``shoe.shuffle.v1`` {video}: after the inspection (000 II 3.2.1), or to reshuffle
  after the cut card's last hand (000 II 3.2.2).
- ``shoe.cut.v1`` {cut_card_from_back, video}: the cut card is placed 7 cards from the
  back in baccarat (000 II 3.3.4) and in the 4th deck from the back in blackjack
  (000 III 3.3.1: more than 3 and at most 4 decks of cards behind it).
- ``shoe.load.v1`` {video}: the cut stack goes into the shoe; play may begin
  (000 II 3.3.5).
- ``shoe.cut_card.v1`` {round}: the cut card came out during ``round`` (an open round
  dealt from this shoe): "last hand before shuffle" (000 II 3.5.4). No later round may
  be dealt from the shoe until it is shuffled, cut and loaded again (000 II 3.2.2).

``wheel:<id>`` (roulette): ``wheel.inspect.v1`` {table, tampering, level, spin, ball,
result, video, note} signed by the pit boss: the wheel, its level, its spin and the ball
each checked (000 IV 3.2.1-3.2.4),
recorded after the table's current ``table.open`` ("before the wheel is opened").

``dice:<id>`` (sic bo): ``dice.inspect.v1`` {table, result, video, note} by the dealer or
the pit boss, after the table's current ``table.open``. The seeds have no dice
inspection rule; this is issue #4 point 3's "dice inspection".

Every inspection, replacement, shuffle, cut and load carries a video reference: camera,
time range and the SHA-256 of the footage segment, so a dispute can fetch and check the
exact footage.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from ledger.events import EventError, SignedEvent
from ledger.judges import BaseJudge, register_judge
from ledger.judges.shoe import Tally
from ledger.kinds import Ident, Strict, Text, UtcTime, register_kind
from ledger.timeutil import parse_utc


class Video(Strict):
    camera: Ident
    start: UtcTime
    end: UtcTime
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]

    @model_validator(mode="after")
    def _ordered(self) -> Video:
        if parse_utc(self.end) < parse_utc(self.start):
            raise ValueError("video end is before its start")
        return self


def _shoe_game(game: str) -> str:
    """A game whose engine deals from a shoe (``Engine.equipment``)."""
    from ledger.games import ENGINES

    engine = ENGINES.get(game)
    if engine is None or engine.equipment != "shoe":
        shoe_games = sorted(g for g, e in ENGINES.items() if e.equipment == "shoe")
        raise ValueError(f"{game!r} is not a game dealt from a shoe ({', '.join(shoe_games)})")
    return game


class ShoeInspect(Strict):
    table: Ident
    game: Annotated[Ident, AfterValidator(_shoe_game)]
    decks: Annotated[int, Field(ge=1, le=16)]
    result: Literal["pass", "defective"]
    video: Video
    note: Text = ""


class DeckReplaced(Strict):
    deck: Annotated[int, Field(ge=1, le=16)]
    reason: Text
    video: Video


class Filmed(Strict):
    video: Video


class ShoeCut(Strict):
    cut_card_from_back: Annotated[int, Field(ge=1, le=832)]
    video: Video


class CutCardOut(Strict):
    round: Ident


class DeviceInspect(Strict):
    table: Ident
    result: Literal["pass", "defective"]
    video: Video
    note: Text = ""


class WheelInspect(DeviceInspect):
    """000 IV 3.2: the wheel for tampering (3.2.1), its level (3.2.2), its spin (3.2.3) and
    the ball's smoothness and roundness (3.2.4), each recorded; ``result`` is "pass"
    only when all four pass."""

    tampering: Literal["pass", "defective"]
    level: Literal["pass", "defective"]
    spin: Literal["pass", "defective"]
    ball: Literal["pass", "defective"]

    @model_validator(mode="after")
    def _consistent(self) -> WheelInspect:
        parts = (self.tampering, self.level, self.spin, self.ball)
        if (self.result == "pass") != all(p == "pass" for p in parts):
            raise ValueError("result is 'pass' exactly when tampering, level, spin and ball all pass")
        return self


register_kind("shoe.inspect.v1", ShoeInspect, "shoe", ("dealer", "floor"))
register_kind("shoe.deck_replaced.v1", DeckReplaced, "shoe", ("floor",))
register_kind("shoe.shuffle.v1", Filmed, "shoe", ("dealer",))
register_kind("shoe.cut.v1", ShoeCut, "shoe", ("dealer",))
register_kind("shoe.load.v1", Filmed, "shoe", ("dealer",))
register_kind("shoe.cut_card.v1", CutCardOut, "shoe", ("dealer", "table"))
register_kind("wheel.inspect.v1", WheelInspect, "wheel", ("floor",))
register_kind("dice.inspect.v1", DeviceInspect, "dice", ("dealer", "floor"))

EQUIPMENT_TYPES = frozenset({"shoe", "wheel", "dice"})


def equipment_for(game: str) -> str | None:
    """The equipment stream type a live round of ``game`` is dealt from (its engine's
    ``equipment``), or None."""
    from ledger.games import ENGINES

    engine = ENGINES.get(game)
    return engine.equipment if engine is not None else None


@dataclass(frozen=True)
class Equipment:
    stream: str
    table: str | None = None
    game: str | None = None
    decks: int = 0
    inspected_by: frozenset[str] = frozenset()  # roles with a passing inspection since the last defect
    defective: bool = False
    stage: str = "new"  # shoe: new | shuffled | cut | loaded | last-hand
    last_round: str | None = None
    cut_from_back: int = 0  # where the shoe's cut card was placed, cards from the back
    inspected_at: str | None = None  # wheel, dice: time of the last passing inspection


def _rule(reason: str) -> EventError:
    return EventError("rule", reason)


def cut_problem(game: str, decks: int, from_back: int) -> str | None:
    """Where the cut card may go: the game's own rule (``Engine.cut_problem``), and inside
    the stack."""
    from ledger.games import ENGINES

    engine = ENGINES.get(game)
    problem = engine.cut_problem(decks, from_back) if engine is not None else None
    if problem:
        return problem
    if from_back >= decks * 52:
        return f"the cut card {from_back} cards from the back is outside a {decks}-deck stack"
    return None


def apply(eq: Equipment, ev: SignedEvent, role: str) -> Equipment:
    """The equipment after ``ev`` (signed by a key of ``role``), or EventError("rule")."""
    p = ev.payload
    kind = ev.kind
    if kind in ("shoe.inspect.v1", "wheel.inspect.v1", "dice.inspect.v1"):
        if eq.table is not None and p["table"] != eq.table:
            raise _rule(f"{eq.stream} belongs to table {eq.table}, not {p['table']}")
        if kind == "shoe.inspect.v1":
            if eq.game is not None and (p["game"], p["decks"]) != (eq.game, eq.decks):
                raise _rule(f"{eq.stream} holds {eq.decks} decks of {eq.game}, not {p['decks']} of {p['game']}")
            if eq.stage == "loaded":
                raise _rule(f"{eq.stream} is loaded: its cards are inspected before loading or after"
                            " the last hand (000 II 1.3.3)")
            eq = replace(eq, game=p["game"], decks=p["decks"])
        eq = replace(eq, table=p["table"])
        if p["result"] == "defective":
            return replace(eq, defective=True, inspected_by=frozenset(), inspected_at=None, stage="new")
        if eq.defective:
            raise _rule(f"{eq.stream} was found defective: the pit boss replaces the deck before it is"
                        " inspected again (000 II 3.1.3)")
        return replace(eq, inspected_by=eq.inspected_by | {role}, inspected_at=ev.at)
    if eq.table is None:
        raise _rule(f"{eq.stream} must start with its inspection, not {kind}")
    if kind == "shoe.deck_replaced.v1":
        if eq.stage == "loaded":
            raise _rule(f"{eq.stream} is loaded; decks are replaced before loading")
        if p["deck"] > eq.decks:
            raise _rule(f"{eq.stream} has {eq.decks} decks, no deck {p['deck']}")
        # 000 II 3.1.4: cards brought back to the table are inspected again
        return replace(eq, defective=False, inspected_by=frozenset(), stage="new")
    if kind == "shoe.shuffle.v1":
        if eq.stage == "last-hand":
            return replace(eq, stage="shuffled")  # 000 II 3.2.2: the reshuffle
        if eq.stage != "new" or not {"dealer", "floor"} <= eq.inspected_by:
            raise _rule(f"{eq.stream}: the cards are shuffled after a passing inspection by the dealer and"
                        " the pit boss (000 II 3.1.1-3.2.1)" if eq.stage == "new"
                        else f"{eq.stream} is {eq.stage}: it is shuffled again only after the cut card's"
                             " last hand (000 II 3.2.2)")
        return replace(eq, stage="shuffled")
    if kind == "shoe.cut.v1":
        if eq.stage != "shuffled":
            raise _rule(f"{eq.stream} is cut after it is shuffled (000 II 3.3.1), it is {eq.stage}")
        problem = cut_problem(eq.game or "", eq.decks, p["cut_card_from_back"])
        if problem:
            raise _rule(problem)
        return replace(eq, stage="cut", cut_from_back=p["cut_card_from_back"])
    if kind == "shoe.load.v1":
        if eq.stage != "cut":
            raise _rule(f"{eq.stream} is loaded after the cut (000 II 3.3.5), it is {eq.stage}")
        return replace(eq, stage="loaded", last_round=None)
    if kind == "shoe.cut_card.v1":
        if eq.stage != "loaded":
            raise _rule(f"{eq.stream} is not in play ({eq.stage}): no cut card can come out")
        return replace(eq, stage="last-hand", last_round=p["round"])
    raise _rule(f"{kind} is not an equipment event")  # pragma: no cover - kinds bind stream types


def ready_problem(eq: Equipment | None, stream: str, table: str, game: str, table_opened_at: str) -> str | None:
    """Why a round of ``game`` at ``table`` may not be dealt from ``stream`` now, or None."""
    want = equipment_for(game)
    stype = stream.split(":", 1)[0]
    if want is None:
        return f"{game} uses no equipment stream"
    if stype != want:
        return f"a {game} round is dealt from a {want}, not from {stream}"
    if eq is None or eq.table is None:
        return f"{stream} has no recorded inspection"
    if eq.table != table:
        return f"{stream} belongs to table {eq.table}, not {table}"
    if stype == "shoe":
        if eq.game != game:
            return f"{stream} holds {eq.game} cards, not {game}"
        if eq.stage == "last-hand":
            return (f"{stream} is past its cut card: round {eq.last_round} was the last hand before the shuffle"
                    " (000 II 3.5.4, 3.2.2)")
        if eq.stage != "loaded":
            if not {"dealer", "floor"} <= eq.inspected_by:
                return f"{stream} has no passing inspection by the dealer and the pit boss (000 II 3.1.1-3.1.2)"
            return f"{stream} is not loaded (it is {eq.stage}): shuffle, cut and load come first (000 II 3.2-3.3)"
        return None
    if eq.defective or eq.inspected_at is None:
        return f"{stream} has no passing inspection" + (" (000 IV 3.2)" if stype == "wheel" else "")
    if parse_utc(eq.inspected_at) < parse_utc(table_opened_at):
        return (f"{stream} was last inspected at {eq.inspected_at}, before table {table} opened at"
                f" {table_opened_at}" + (": the wheel is inspected before it is opened (000 IV 3.2.1)"
                                         if stype == "wheel" else ""))
    return None


class EquipmentJudge(BaseJudge):
    """``shoe:<id>``, ``wheel:<id>``, ``dice:<id>``: each event by ``apply`` (signed by a
    key of the role it needs); the cut card comes out during an open round dealt from the
    shoe (000 II 3.5.4)."""

    stream_types = tuple(sorted(EQUIPMENT_TYPES))
    keeps_state = True

    def step(self, state: Equipment | None, ev: SignedEvent, world: Any) -> Equipment:
        return apply(state or Equipment(ev.stream), ev, world.role_of(ev))

    def admit(self, state: Equipment | None, ev: SignedEvent, world: Any) -> None:
        if ev.kind == "shoe.cut_card.v1":
            rstream = f"round:{ev.payload['round']}"
            opening, head = world.event_at(rstream, 1), world.head(rstream)
            if opening is None or opening.payload.get("source") != ev.stream:
                raise _rule(f"{rstream} is not a round dealt from {ev.stream}")
            if head is not None and head.kind == "round.close.v1":
                raise _rule(f"{rstream} is closed: the cut card comes out during a round (000 II 3.5.4)")
            tally = world.shoe_tally(ev.stream)
            if tally is not None and tally.passed_in != rstream:
                raise _rule(f"the cut card, {tally.position} cards in, came out during {tally.passed_in}, not"
                            f" {rstream} (000 II 3.5.4, derived from the cards dealt)" if tally.passed_in else
                            f"the cut card is {tally.position} cards in and {tally.dealt} have been dealt from"
                            f" {ev.stream}: it has not come out (000 II 3.5.4, derived from the cards dealt)")

    def settle(self, before: Equipment | None, after: Equipment, ev: SignedEvent, world: Any) -> None:
        if ev.kind in ("shoe.shuffle.v1", "shoe.cut.v1"):
            world.tallies.pop(ev.stream, None)
        elif ev.kind == "shoe.load.v1":  # a new stack: counted afresh from here
            world.tallies[ev.stream] = Tally(after.decks, after.cut_from_back)


register_judge(EquipmentJudge())

"""Rulings and incidents as signed events (issue #6): the floor decides, the ledger
records the decision and its effect as further events, never as edits.

Kinds (signed by floor / pit-boss keys only; ``ledger.kinds`` roles):

- ``ruling.v1`` on the round it rules on (``round:<id>``): the ``effect``, the ``rule``
  it applies (a seed file's number and its section or TDA rule, e.g. ``"002 TDA 34"``,
  ``"000 II 2.1.8"``), the events it acts on (``stream#seq``, each must exist), a reason.
  Effects, each with its source:

  - ``void``: "a system malfunction voids all pays and plays" (000 II 2.1.8 baccarat,
    III 2.1.5 blackjack, IV 2.1.6 roulette): the round closes ``void``, nobody's money
    moves;
  - ``misdeal``: poker only, and only before substantial action (TDA 2013 rule 34 C;
    substantial action is rule 35: two actions that put chips in the pot, or any three
    actions); the round closes ``void`` and is re-dealt exactly as it was (rule 34 B:
    same button, players and blinds), in the round named by ``redeal``, which
    reconciliation compares;
  - ``rollback``: a server crash (000 refund policy, cash games): every hand in progress
    goes back to its starting stacks, i.e. closes ``void``; the ruling cites the
    ``incident.server_crash.v1`` event. A finished hand is not rolled back.

  - ``dead_hand`` (poker, while the betting is open): the seat's hand is killed, its
    chips stay in the pot (TDA 2013 rule 57; 001 "exposing hand information": forced
    fold);
  - ``out_of_turn`` (TDA 2013 rule 38 A): the seat acted out of turn; when its turn
    comes, that action binds it if the action to it has not changed (checks, calls and
    folds do not change it), and a fold out of turn always binds;
  - ``flying_action`` (001 "fouls" ①): a stud player acted out of turn, pushing
    ``chips``; an all-in one is void (the hand folds, half the chips back), a third one
    in a hand folds the hand; otherwise, at the seat's turn, a still-valid one stands, and
    one no longer valid is made again or folded (the chips stay in the pot on a fold),
    a flying check first paying the big bet into the pot (``flying_action_due``);
  - ``dealing_miss`` (001 "dealing-miss handling"): ``third_street`` and
    ``seventh_street`` end the hand (void) with the house's compensation;
    ``exposed_card`` pays the seat whose cards were seen half the pot and play goes on.
    The compensation is computed here and must match the ruling's.

- ``incident.server_crash.v1`` on ``incident:<id>``: when the disruption started.

Once a round is ruled void (void, misdeal, rollback, a dealing miss that ends the hand),
nothing of the game may follow, only its ``void`` close; and a round closes ``void``
only after such a ruling (or, for an online casino round, 24 h after the player's
disconnection: ``ledger.judges.round``). Pure: ``ledger.judges.round`` calls
``rule_on`` while walking a round; ingest checks the cited events exist.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from ledger.games import RuleViolation
from ledger.judges import BaseJudge, register_judge
from ledger.kinds import Count, Ident, Strict, Text, UtcTime, register_kind
from ledger.timeutil import parse_utc

SEED_FILES = ("000", "001", "002", "003", "004")
RuleRef = Annotated[str, Field(pattern=r"^00[0-4] [^\n]{1,120}$")]
"""A seed file's number and where in it: ``"002 TDA 34"``, ``"000 refund policy"``."""
EventRef = Annotated[str, Field(pattern=r"^[a-z]+:[A-Za-z0-9._~@/+-]{1,160}#[1-9][0-9]{0,11}$")]
"""``stream#seq`` of a stored event."""

VOIDING = ("void", "misdeal", "rollback")
EFFECTS = VOIDING + ("dead_hand", "out_of_turn", "dealing_miss", "flying_action")


class Ruling(Strict):
    effect: Literal["void", "misdeal", "rollback", "dead_hand", "out_of_turn", "dealing_miss", "flying_action"]
    rule: RuleRef
    acts_on: Annotated[list[EventRef], Field(min_length=1, max_length=100)]
    reason: Text
    redeal: Ident | None = None
    """Misdeal: the round id of the re-deal (TDA 34 B)."""
    seat: Annotated[int, Field(ge=1, le=10)] | None = None
    """Dead hand, out-of-turn action, exposed cards: the seat concerned."""
    action: Literal["fold", "check", "call", "bet", "raise", "all_in"] | None = None
    to: Annotated[int, Field(ge=1)] | None = None
    """Out of turn / flying action: the action the seat took out of turn (TDA 38; 001)."""
    chips: Count | None = None
    """Flying action: the chips the seat pushed out (001)."""
    case: Literal["third_street", "seventh_street", "exposed_card"] | None = None
    """Dealing miss (001 "dealing-miss handling" 1, 2, 3)."""
    compensation: Annotated[dict[Ident, Count], Field(max_length=10)] | None = None
    """Dealing miss: what the house pays each player, as 001 sets it (checked)."""


class ServerCrash(Strict):
    started: UtcTime
    """When the disruption began: the hands in progress then are rolled back (000 refund policy)."""
    reason: Text


class Disconnect(Strict):
    """000 casino disconnections: the player dropped out of an online casino round; the
    round may resume, but its pending bets are held only 24 h."""
    player: Ident


HOLD = timedelta(hours=24)


class KeyCompromiseRuling(Strict):
    """Issue #7 key-compromise drill: after ``pitboss keys revoke KEY --from T`` every
    event the key signed at or after T is untrusted, and reconciliation of those days
    fails until this ruling addresses each of them: ``confirmed`` when other evidence
    (video, counts, the other signer) shows the event is what happened. An event that
    did not happen is voided the ordinary way (a void ruling on its round, in progress)."""
    key_id: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
    acts_on: Annotated[list[EventRef], Field(min_length=1, max_length=10_000)]
    decision: Literal["confirmed"]
    basis: Text
    """The evidence relied on (video references, counts, a second signer)."""
    reason: Text


register_kind("ruling.v1", Ruling, "round", ("floor",))
register_kind("ruling.key_compromise.v1", KeyCompromiseRuling, "ruling", ("floor", "house"))
register_kind("round.disconnect.v1", Disconnect, "round", ("game",))
register_kind("incident.server_crash.v1", ServerCrash, "incident", ("floor",))


def rule_on(engine: Any, game: str, state: Any, payload: dict[str, Any]) -> tuple[Any, dict[str, int]]:
    """A ruling on a round in ``state`` (its engine state): (the game's state after it, or
    None when the round is over and closes void; the compensation the house pays), or
    RuleViolation. A ``void`` applies to every game (000 II 2.1.8, III 2.1.5, IV 2.1.6);
    every other effect is the game's own (``Engine.rule_on``: poker's misdeal, rollback,
    dead hand, out-of-turn and flying actions, dealing misses)."""
    effect = payload["effect"]
    if payload.get("redeal") is not None and effect != "misdeal":
        raise RuleViolation("only a misdeal is re-dealt")
    if effect == "void":
        return None, {}
    if engine is None:
        raise RuleViolation(f"a {effect} ruling does not apply to a {game} round (no engine)")
    ruled: tuple[Any, dict[str, int]] = engine.rule_on(state, payload)
    return ruled


def cited_events(ev: Any, world: Any) -> list[Any]:
    """The events a ruling or penalty acts on (``acts_on``), each of which must be in the
    ledger; a rollback cites the server crash it follows (000 refund policy)."""
    cited = []
    for ref in ev.payload["acts_on"]:
        found = world.cited(ref)
        if found is None:
            raise RuleViolation(f"the ruling acts on {ref}, which is not in the ledger")
        cited.append(found)
    if ev.payload.get("effect") == "rollback":
        crashes = [c for c in cited if c.kind == "incident.server_crash.v1"]
        if not crashes:
            raise RuleViolation("a rollback cites the incident.server_crash.v1 event it follows (000 refund policy)")
        opening = world.event_at(ev.stream, 1)
        started = min(parse_utc(c.payload["started"]) for c in crashes)
        if opening is not None and parse_utc(opening.at) > started:
            raise RuleViolation(f"{ev.stream} opened at {opening.at}, after the crash began at"
                                f" {min(c.payload['started'] for c in crashes)}: only hands in progress at the crash"
                                " are rolled back (000 refund policy)")
    return cited


class KeyCompromiseJudge(BaseJudge):
    """``ruling:<id>``: a key-compromise ruling confirms events the revoked key signed,
    each of which must be an event of that key from the time it is untrusted. No key
    absolves itself (issue 13 point 4): the ruling is signed by a floor or house key other
    than the one it rules on, and valid when the ledger receives it (not revoked or
    rotated out by then, whatever the ruling's own ``at`` says)."""

    stream_types = ("ruling",)

    def admit(self, state: None, ev: Any, world: Any) -> None:
        if ev.kind != "ruling.key_compromise.v1":
            return
        if ev.key_id == ev.payload["key_id"]:
            raise RuleViolation(f"key {ev.key_id} rules on its own compromise: a ruling about a key is signed by"
                                " another floor or house key")
        signer = world.ring.keys[ev.key_id]
        invalid = signer.status_at(datetime.now(UTC))
        if invalid:
            raise RuleViolation(f"the ruling's own key is not valid when the ledger receives it: {invalid}")
        entry = world.ring.keys.get(ev.payload["key_id"])
        for ref in ev.payload["acts_on"]:
            cited = world.cited(ref)
            if cited is None or cited.key_id != ev.payload["key_id"]:
                raise RuleViolation(f"{ref} is not an event signed by key {ev.payload['key_id']}")
            if entry is None or not entry.status_at(parse_utc(cited.at)):
                raise RuleViolation(f"{ref} is not untrusted: key {ev.payload['key_id']} was not revoked at its"
                                    " time")


register_judge(KeyCompromiseJudge())

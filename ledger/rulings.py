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
disconnection: ``ledger.rounds``). Pure: ``ledger.rounds`` calls
``rule_on`` while walking a round; ingest checks the cited events exist.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from ledger.games import RuleViolation
from ledger.kinds import Count, Ident, Strict, Text, UtcTime, register_kind

SEED_FILES = ("000", "001", "002", "003", "004")
RuleRef = Annotated[str, Field(pattern=r"^00[0-4] [^\n]{1,120}$")]
"""A seed file's number and where in it: ``"002 TDA 34"``, ``"000 refund policy"``."""
EventRef = Annotated[str, Field(pattern=r"^[a-z]+:[A-Za-z0-9._~@/+-]{1,160}#[1-9][0-9]{0,11}$")]
"""``stream#seq`` of a stored event."""

VOIDING = ("void", "misdeal", "rollback")
EFFECTS = VOIDING + ("dead_hand", "out_of_turn", "dealing_miss", "flying_action")
CHIP_ACTIONS = ("call", "bet", "raise", "complete")
COUNTED_ACTIONS = ("fold", "check") + CHIP_ACTIONS


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


def substantial_action(history: list[tuple[int, str, Any]]) -> bool:
    """TDA 2013 rule 35: two actions that each put chips in the pot (bet, raise, call) by
    two players, or any three actions (check, bet, raise, call, fold). Posted blinds and
    antes are not actions."""
    acts = [(seat, action) for seat, action, _ in history if action in COUNTED_ACTIONS]
    chip_players = {seat for seat, action in acts if action in CHIP_ACTIONS}
    return len(acts) >= 3 or len(chip_players) >= 2


def rule_on(game: str, state: Any, payload: dict[str, Any]) -> tuple[Any, dict[str, int]]:
    """A ruling on a round in ``state`` (its engine state): (the game's state after it,
    or None when the round is over and closes void; the compensation the house pays),
    or RuleViolation."""
    effect = payload["effect"]
    if effect in ("misdeal", "rollback", "dead_hand", "out_of_turn", "dealing_miss", "flying_action") and game != "poker":
        raise RuleViolation(f"a {effect} ruling applies to poker hands, not a {game} round")
    needs = {"dead_hand": ("seat",), "out_of_turn": ("seat", "action"), "dealing_miss": ("case", "compensation"),
             "misdeal": ("redeal",), "flying_action": ("seat", "action", "chips")}.get(effect, ())
    for name in needs:
        if payload.get(name) is None:
            raise RuleViolation(f"a {effect} ruling names its '{name}'")
    if payload.get("redeal") is not None and effect != "misdeal":
        raise RuleViolation("only a misdeal is re-dealt")
    if effect == "misdeal" and substantial_action(state.history):
        raise RuleViolation("no misdeal after substantial action: the hand continues (TDA 2013 rules 34 C, 35)")
    if effect in VOIDING:
        return None, {}
    if effect == "dead_hand":
        from ledger.games.poker import kill_hand

        return kill_hand(state, payload["seat"]), {}
    if effect in ("out_of_turn", "flying_action"):
        if effect == "out_of_turn" and payload["action"] == "all_in":
            raise RuleViolation("an out-of-turn action is fold, check, call, bet or raise (TDA 38)")
        i = payload["seat"] - 1
        if state.phase != "betting" or i == state.actor or i not in state.actors:
            raise RuleViolation(f"seat {payload['seat']} is not waiting to act: its action was not out of turn")
        return state, {}
    owed = dealing_miss_compensation(payload["case"], state, payload.get("seat"))
    if owed != payload["compensation"]:
        raise RuleViolation(f"the compensation should be {owed} (001 dealing-miss handling), not"
                            f" {payload['compensation']}")
    return (state if payload["case"] == "exposed_card" else None), owed


FA_LIMIT = 3


def flying_action_now(st: Any, p: dict[str, Any], count: int) -> Any:
    """001 flying action (FA), what happens at once: an all-in FA is void and the hand
    folds, half the chips pushed going back (the other half stays in the pot); a
    player's third FA in a hand folds the hand. Returns the game's state."""
    from ledger.games.poker import dead_money, kill_hand

    if p["action"] == "all_in":
        st = dead_money(st, p["seat"], p["chips"] - p["chips"] // 2)
        return kill_hand(st, p["seat"])
    if count >= FA_LIMIT:
        return kill_hand(st, p["seat"])
    return st


def flying_action_due(st: Any, fa: tuple[Any, ...], p: dict[str, Any]) -> Any:
    """001 flying action, when the seat's turn comes (``fa``: seat, action, to, chips,
    street, bet at the FA). Still valid (the action to the seat unchanged, a check still
    free): it stands as made. No longer valid: a call or raise is made again or the hand
    folds, and the chips pushed stay in the pot on a fold; a check pays the big bet /
    big blind into the pot first and then only calls or folds. Returns the state with
    any dead money, or RuleViolation."""
    from ledger.games.poker import dead_money

    seat, action, to, chips, street, bet = fa
    free_check = st.to_call(seat - 1) == 0
    valid = st.street == street and max(st.bets) == bet and (action != "check" or free_check)
    raises = ("bet", "raise", "complete")

    def kind(a: str) -> str:
        return "raise" if a in raises else a

    if valid:
        if (kind(p["action"]), p.get("to")) != (kind(action), to):
            raise RuleViolation(f"seat {seat}'s flying {action} is still valid: it stands as made (001 flying action α)")
        return st
    allowed = {"call": ("call", "fold"), "raise": raises + ("fold",), "bet": raises + ("fold",),
               "check": ("call", "fold")}[action]
    if p["action"] not in allowed:
        raise RuleViolation(f"after a flying {action} that is no longer valid seat {seat} may only"
                            f" {' or '.join(sorted(set(allowed)))} (001 flying action β)")
    if action == "check":
        big = st.rules.big_bet or max(st.blinds or [0]) or st.rules.min_bet or 0
        return dead_money(st, seat, big)
    if p["action"] == "fold":
        return dead_money(st, seat, chips)  # the chips of the flying action are not returned
    return st


def dealing_miss_compensation(case: str, st: Any, seat: int | None) -> dict[str, int]:
    """001 "dealing-miss handling": 1. a miss on 3rd street: the hand stops, every player
    in it gets one big bet; 2. on 7th street: no game, each player still in gets the pot
    they would have won, each who folded 20% of the pot, at most four big bets; 3. a
    player's hole cards seen: that player gets half the pot and the hand goes on."""
    big = st.rules.big_bet or max(st.blinds or [0]) or st.rules.min_bet or 0
    pot = sum(st.paid)
    names = st.rules.players
    if case == "third_street":
        return {names[i]: big for i in range(st.n)}
    if case == "seventh_street":
        return {names[i]: pot if st.in_hand[i] else min(pot * 20 // 100, 4 * big) for i in range(st.n)}
    if seat is None:
        raise RuleViolation("an exposed-card ruling names the seat whose cards were seen")
    return {names[seat - 1]: pot // 2}

"""One round's events judged in order (pure): the game's engine plus the RNG protocol.

Ingest and replay walk a round through the same two functions, so what was accepted
is exactly what a replay re-derives:

    rs = open_round(ev)          # round.open.v1
    rs = step(rs, ev)            # every later event of the round, or EventError

A round whose ``round.open`` names ``"source": "rng"`` follows ``ledger.rng``: the RNG
service's commitment first, the game's draws, then the reveal, checked against every
draw; it closes "complete" only after the reveal. Other rounds never carry RNG events.

A floor ruling (``ledger.rulings``: void, misdeal, rollback) ends the game: only the
round's "void" close may follow it, and a round closes "void" only after one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from ledger.events import EventError, SignedEvent
from ledger.games import ENGINES, Engine, RuleViolation
from ledger.rng import first_difference
from ledger.rulings import HOLD, flying_action_due, flying_action_now, rule_on
from ledger.timeutil import parse_utc


@dataclass(frozen=True)
class RoundState:
    stream: str
    game: str
    engine: Engine | None
    st: Any
    rng: bool = False
    commitment: str | None = None
    seed: str | None = None
    game_events: int = 0
    ruling: str | None = None  # the effect of the floor's ruling that ended this round, once ruled
    binding: tuple[tuple[int, str, int | None, int, int], ...] = ()  # out of turn: (seat, action, to, street, bet)
    compensation: tuple[tuple[str, int], ...] = ()  # what the house pays, by ruling (001 dealing misses)
    disconnected: str | None = None  # when a player dropped out of an online casino round (000)
    flying: tuple[tuple[Any, ...], ...] = ()  # 001 flying actions pending: (seat, action, to, chips, street, bet)
    flying_count: tuple[int, ...] = ()  # every flying action so far, by seat


def open_round(ev: SignedEvent) -> RoundState:
    game = ev.payload["game"]
    engine = ENGINES.get(game)
    st = engine.start(ev.payload["rules"]) if engine else None
    rng = ev.payload.get("source") == "rng"
    if rng and engine is None:
        raise RuleViolation(f"{game} has no engine, so its draws cannot be derived from an RNG seed")
    return RoundState(ev.stream, game, engine, st, rng=rng)


def step(rs: RoundState, ev: SignedEvent) -> RoundState:
    kind, p = ev.kind, ev.payload
    expired = rs.disconnected is not None and parse_utc(ev.at) - parse_utc(rs.disconnected) >= HOLD
    if kind == "round.close.v1":
        if p["status"] == "void" and rs.ruling is None and not expired:
            raise RuleViolation("a round closes void only after a floor ruling on it (ruling.v1), or 24 h after a"
                                " disconnection (000 casino disconnections)")
        if p["status"] == "complete" and rs.ruling is not None:
            raise RuleViolation(f"the round was ruled {rs.ruling}: it closes void")
        if p["status"] == "complete":
            problem = rs.engine.close_problem(rs.st) if rs.engine is not None else None
            if problem is None and rs.rng and rs.seed is None:
                problem = "the RNG seed is not revealed (rng.reveal.v1)"
            if problem:
                raise RuleViolation(f"the round cannot close complete: {problem}")
        return rs
    if rs.ruling is not None:
        raise RuleViolation(f"the round was ruled {rs.ruling}: nothing of the game follows, only its void close")
    if expired:
        raise RuleViolation(f"the bets held since the disconnection at {rs.disconnected} expired after 24 h: the"
                            " round is cancelled and the bets returned (000 casino disconnections)")
    if kind == "round.disconnect.v1":
        return rs if rs.disconnected else replace(rs, disconnected=ev.at)
    if kind == "ruling.v1":
        st, owed = rule_on(rs.game, rs.st, p)
        rs = replace(rs, compensation=rs.compensation + tuple(sorted(owed.items())))
        if st is None:
            return replace(rs, ruling=p["effect"])
        if p["effect"] == "out_of_turn":
            rs = replace(rs, binding=rs.binding + ((p["seat"], p["action"], p.get("to"), st.street, max(st.bets)),))
        if p["effect"] == "flying_action":
            count = rs.flying_count + (p["seat"],)
            st = flying_action_now(st, p, count.count(p["seat"]))
            pending = tuple(f for f in rs.flying if f[0] != p["seat"])
            if st.in_hand[p["seat"] - 1]:
                pending += ((p["seat"], p["action"], p.get("to"), p["chips"], st.street, max(st.bets)),)
            rs = replace(rs, flying=pending, flying_count=count)
        return replace(rs, st=st)
    if kind == "poker.action.v1" and any(f[0] == p["seat"] for f in rs.flying):
        fa = next(f for f in rs.flying if f[0] == p["seat"])
        rs = replace(rs, st=flying_action_due(rs.st, fa, p), flying=tuple(f for f in rs.flying if f[0] != p["seat"]))
    if kind == "poker.action.v1" and any(b[0] == p["seat"] for b in rs.binding):
        check_binding(rs, p)
        rs = replace(rs, binding=tuple(b for b in rs.binding if b[0] != p["seat"]))
    if kind == "rng.commit.v1":
        if not rs.rng:
            raise RuleViolation("rng.commit.v1 in a round not dealt by RNG (round.open source is not 'rng')")
        if rs.commitment is not None or rs.game_events:
            raise RuleViolation("the RNG commits once, before anything of the game (ledger.rng)")
        return replace(rs, commitment=p["commitment"])
    if kind == "rng.reveal.v1":
        if not rs.rng or rs.commitment is None:
            raise RuleViolation("rng.reveal.v1 without an RNG commitment in this round")
        if rs.seed is not None:
            raise RuleViolation("the seed is already revealed")
        assert rs.engine is not None
        spec, draws, complete = rs.engine.draws(rs.st)
        if not complete:
            raise RuleViolation("the seed is revealed only after the round's draws are complete")
        seed = bytes.fromhex(p["seed"])
        if hashlib.sha256(seed).hexdigest() != rs.commitment:
            raise RuleViolation(f"the revealed seed does not hash to the commitment {rs.commitment}")
        problem = first_difference(spec, seed, rs.stream, draws)
        if problem:
            raise RuleViolation(problem)
        return replace(rs, seed=p["seed"])
    if rs.engine is None or kind not in rs.engine.kinds:
        raise RuleViolation(f"{kind} is not an event of a {rs.game} round")
    if rs.rng and rs.commitment is None:
        raise RuleViolation("in a round dealt by RNG nothing of the game comes before the RNG's commitment")
    return replace(rs, st=rs.engine.apply(rs.st, kind, p), game_events=rs.game_events + 1)


def check_binding(rs: RoundState, p: dict[str, Any]) -> None:
    """TDA 2013 rule 38 A: an action out of turn binds the player if the action to them has
    not changed (checks, calls and folds do not change it); a fold out of turn always does."""
    seat, action, to, street, bet = next(b for b in rs.binding if b[0] == p["seat"])
    unchanged = rs.st.street == street and max(rs.st.bets) == bet
    if (action == "fold" or unchanged) and (p["action"], p.get("to")) != (action, to):
        raise RuleViolation(f"seat {seat}'s {action}{f' to {to}' if to else ''} out of turn binds it: the action to"
                            " it has not changed (TDA 2013 rule 38 A)" if action != "fold" else
                            f"seat {seat} folded out of turn: the fold binds (TDA 2013 rule 38 A)")


def walk(events: list[SignedEvent]) -> tuple[RoundState | None, list[tuple[int, EventError]]]:
    """A stored round's events, round.open first, walked in order: the state after the
    last event the rules accept, and every (seq, refusal) on the way. For readers of
    stored rounds (evidence, reconciliation, views); ingest refuses at the first."""
    rs: RoundState | None = None
    refused: list[tuple[int, EventError]] = []
    for ev in events:
        try:
            if ev.kind == "round.open.v1":
                rs = open_round(ev)
            elif rs is not None:
                rs = step(rs, ev)
        except EventError as exc:
            refused.append((ev.seq, exc))
    return rs, refused


def derived_draws(rs: RoundState) -> dict[str, Any] | None:
    """For replay: the RNG draws recomputed from the revealed seed beside the recorded ones."""
    if not rs.rng or rs.engine is None:
        return None
    spec, draws, complete = rs.engine.draws(rs.st)
    out: dict[str, Any] = {"commitment": rs.commitment, "seed": rs.seed, "recorded": draws, "complete": complete}
    if rs.seed is not None:
        from ledger.rng import derive

        out["derived"] = derive(spec, bytes.fromhex(rs.seed), rs.stream, len(draws))
    return out


__all__ = ["EventError", "RoundState", "derived_draws", "open_round", "step", "walk"]

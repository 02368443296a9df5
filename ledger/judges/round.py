"""One round's events judged in order (pure): the game's engine plus the RNG protocol.

Ingest and replay walk a round through the same two functions, so what was accepted
is exactly what a replay re-derives:

    rs = open_round(ev)          # round.open.v1
    rs = step(rs, ev)            # every later event of the round, or EventError

A round whose ``round.open`` names ``"source": "rng"`` follows ``ledger.rng``: the RNG
service's commitment first, the game's draws, then the reveal, checked against every
draw; it closes "complete" only after the reveal. Other rounds never carry RNG events.

A floor ruling (``ledger.judges.ruling``: void, misdeal, rollback) ends the game: only the
round's "void" close may follow it, and a round closes "void" only after one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from ledger.events import EventError, SignedEvent
from ledger.games import ENGINES, Engine, RuleViolation
from ledger.judges import BaseJudge, World, register_judge
from ledger.judges.equipment import equipment_for, ready_problem
from ledger.judges.ruling import HOLD, cited_events, rule_on
from ledger.judges.table import is_open
from ledger.rng import first_difference
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
    compensation: tuple[tuple[str, int], ...] = ()  # what the house pays, by ruling (001 dealing misses)
    disconnected: str | None = None  # when a player dropped out of an online casino round (000)
    closed: str | None = None  # the status it closed with, once closed
    table: str = ""  # the table its round.open names (where the round is, for key scopes: ledger.scope)


def open_round(ev: SignedEvent) -> RoundState:
    game = ev.payload["game"]
    engine = ENGINES.get(game)
    st = engine.start(ev.payload["rules"]) if engine else None
    rng = ev.payload.get("source") == "rng"
    if rng and engine is None:
        raise RuleViolation(f"{game} has no engine, so its draws cannot be derived from an RNG seed")
    return RoundState(ev.stream, game, engine, st, rng=rng, table=ev.payload["table"])


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
        return replace(rs, closed=p["status"])
    if rs.ruling is not None:
        raise RuleViolation(f"the round was ruled {rs.ruling}: nothing of the game follows, only its void close")
    if expired:
        raise RuleViolation(f"the bets held since the disconnection at {rs.disconnected} expired after 24 h: the"
                            " round is cancelled and the bets returned (000 casino disconnections)")
    if kind == "round.disconnect.v1":
        return rs if rs.disconnected else replace(rs, disconnected=ev.at)
    if kind == "ruling.v1":
        st, owed = rule_on(rs.engine, rs.game, rs.st, p)
        rs = replace(rs, compensation=rs.compensation + tuple(sorted(owed.items())))
        if st is None:
            return replace(rs, ruling=p["effect"])
        return replace(rs, st=st)
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


class RoundJudge(BaseJudge):
    """``round:<id>``: seq 1 is ``round.open``, for a table that is open and deals that
    game, dealt as the table declares (``check_source``); then every event is judged by
    ``step`` (the game's engine, the RNG protocol, rulings); nothing follows
    ``round.close``, and a finished hand is not ruled on (000 refund policy)."""

    stream_types = ("round",)
    keeps_state = True

    def step(self, state: RoundState | None, ev: SignedEvent, world: World) -> RoundState:
        if ev.kind == "round.open.v1":
            return open_round(ev)
        if state is None:  # its round.open is in this batch and was refused
            raise RuleViolation(f"{ev.stream} has no accepted round.open")
        return step(state, ev)

    def admit(self, state: RoundState | None, ev: SignedEvent, world: World) -> None:
        ident = ev.stream.partition(":")[2]
        if ev.seq == 1 and ev.kind != "round.open.v1":
            raise EventError("rule", f"round {ident} must start with round.open.v1, not {ev.kind}")
        if state is not None and state.closed is not None:
            if ev.kind == "ruling.v1":
                raise EventError("rule", f"round {ident} is finished: a ruling voids or rolls back rounds in progress"
                                         " only (a finished hand is not rolled back: 000 refund policy)")
            raise EventError("rule", f"round {ident} is closed; nothing may follow round.close")
        if ev.kind == "round.open.v1":
            if ev.seq != 1:
                raise EventError("rule", f"round {ident} is already open")
            table = ev.payload["table"]
            table_head = world.head(f"table:{table}")
            if not is_open(table_head):
                raise EventError("rule", f"table {table} is not open")
            assert table_head is not None
            if table_head.payload["game"] != ev.payload["game"]:
                raise EventError("rule", f"table {table} deals {table_head.payload['game']}, not {ev.payload['game']}")
            check_source(ev, table_head, world)
        if ev.kind == "ruling.v1":
            cited_events(ev, world)


def check_source(ev: SignedEvent, table_open: SignedEvent, world: World) -> None:
    """round.open names how it is dealt, as its table declares (``ledger.judges.equipment``,
    ``ledger.rng``)."""
    table, game = ev.payload["table"], ev.payload["game"]
    dealing, source = table_open.payload.get("dealing"), ev.payload.get("source")
    if dealing is None:
        if source is not None:
            raise RuleViolation(f"table {table} declares no dealing procedure, so a round names no source")
    elif dealing == "rng":
        if source != "rng":
            raise RuleViolation(f"table {table} deals by RNG: its rounds name source 'rng'")
    elif equipment_for(game) is not None:
        if source is None or source == "rng":
            raise RuleViolation(f"table {table} is live: a {game} round names the {equipment_for(game)} it is dealt"
                                " from")
        problem = ready_problem(world.state(source), source, table, game, table_open.at)
        if problem:
            raise RuleViolation(problem)
    elif source is not None:
        raise RuleViolation(f"{game} uses no equipment stream; the round names no source")


register_judge(RoundJudge())

__all__ = ["EventError", "RoundJudge", "RoundState", "derived_draws", "open_round", "step", "walk"]

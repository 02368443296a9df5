"""One round's events judged in order (pure): the game's engine plus the RNG protocol.

Ingest and replay walk a round through the same two functions, so what was accepted
is exactly what a replay re-derives:

    rs = open_round(ev)          # round.open.v1
    rs = step(rs, ev)            # every later event of the round, or EventError

A round whose ``round.open`` names ``"source": "rng"`` follows ``ledger.rng``: the RNG
service's commitment first, the game's draws, then the reveal, checked against every
draw; it closes "complete" only after the reveal. Other rounds never carry RNG events.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from ledger.events import EventError, SignedEvent
from ledger.games import ENGINES, Engine, RuleViolation
from ledger.rng import first_difference


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
    if kind == "round.close.v1":
        if p["status"] == "complete":
            problem = rs.engine.close_problem(rs.st) if rs.engine is not None else None
            if problem is None and rs.rng and rs.seed is None:
                problem = "the RNG seed is not revealed (rng.reveal.v1)"
            if problem:
                raise RuleViolation(f"the round cannot close complete: {problem}")
        return rs
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


__all__ = ["EventError", "RoundState", "derived_draws", "open_round", "step", "walk"]

"""Replay one round from the ledger, step by step, re-deriving its outcome.

For regulators (DESIGN.md "Who uses it"): every event of the round is re-checked
(hash, signature, key and role as at its time) and walked through the game's engine,
the same code that judged it at ingest (``ledger.judges.round``: the engine and, for rounds
dealt by RNG, the commitment, the reveal and every draw recomputed from the seed). The engine's derived outcome is set beside
what was recorded; any event the engine does not accept (a settlement that differs
from the engine's, say, after a rules change) is a difference, named with its seq.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from ledger.chain import link
from ledger.events import EventError, check_payload
from ledger.games import ENGINES, described
from ledger.judges.round import RoundState, config_of, derived_draws, open_round, played_rules
from ledger.judges.round import step as step_round
from ledger.keyring import load_keyring
from ledger.store import Store
from projections.money import show, table_currency


class ReplayError(Exception):
    """The round cannot be replayed (unknown, or not a round)."""


@dataclass
class Step:
    seq: int
    at: str
    actor: str
    kind: str
    payload: dict[str, Any]
    state: dict[str, Any] | None = None
    problem: str | None = None
    text: list[str] = field(default_factory=list)
    """The state after the step as a person reads it (``Engine.describe``), money in the
    table's currency."""


@dataclass
class Replay:
    round: str
    game: str
    table: str
    rules: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    status: str | None = None
    differences: list[dict[str, Any]] = field(default_factory=list)
    engine: bool = True
    rng: dict[str, Any] | None = None
    currency: str = "?"
    result: str | None = None
    """The result in one sentence (``Engine.result``)."""

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        # seat by seat, in seat order, with the final stack (poker; issue #3 point 5)
        d["seats"] = (self.outcome or {}).get("seats", [])
        return d


def replay_round(store: Store, round_id: str) -> Replay:
    stream = round_id if round_id.startswith("round:") else f"round:{round_id}"
    events = store.stream_events(stream)
    if not events:
        raise ReplayError(f"no round {stream} in the ledger")
    opening = events[0]
    if opening.kind != "round.open.v1":
        raise ReplayError(f"{stream} does not start with round.open.v1")
    try:
        check_payload(opening.kind, opening.payload)  # a row never through ingest may carry anything
    except EventError as exc:
        raise ReplayError(f"{stream} seq 1: {exc.check}: {exc.reason}") from None
    ring = load_keyring(store)
    p = opening.payload
    engine = ENGINES.get(p["game"])
    try:
        config = config_of(opening, store.event_at)
    except EventError as exc:
        raise ReplayError(f"{stream}: {exc.reason}") from None
    rules = played_rules(config, p["rules"])  # the table's configuration in force when the round opened
    rep = Replay(stream, p["game"], p["table"], rules, engine=engine is not None,
                 currency=table_currency(store.stream_events(f"table:{p['table']}"), p["table"], opening.at))

    def money(amount: int) -> str:
        return show(amount, rep.currency)

    rs: RoundState | None = None
    prev = None
    for ev in events:
        step = Step(ev.seq, ev.at, ev.actor, ev.kind, ev.payload)
        rep.steps.append(step)
        try:
            ev.check_hash()
            if link((prev.seq, prev.hash) if prev else None, ev.seq, ev.prev) != "ok":
                raise EventError("chain", "the round's chain is broken here")
            ev.check_signature(ring.authorize(ev).public_key)
        except EventError as exc:
            step.problem = f"{exc.check}: {exc.reason}"
            rep.differences.append({"seq": ev.seq, "kind": ev.kind, "reason": step.problem})
        prev = ev
        if ev.kind == "round.close.v1":
            rep.status = ev.payload["status"]
        if engine is None or (rs is None and ev.kind != "round.open.v1"):
            continue  # no engine, or its opening was refused (a difference above)
        try:
            check_payload(ev.kind, ev.payload)  # as ingest checks it (``ledger.judges.round.walk``)
            if ev.kind == "round.open.v1":
                rs = open_round(ev, config)
            elif rs is not None:
                rs = step_round(rs, ev)
        except EventError as exc:
            step.problem = f"{exc.check}: {exc.reason}"
            rep.differences.append({"seq": ev.seq, "kind": ev.kind, "reason": exc.reason})
        step.state = engine.snapshot(rs.st) if rs is not None else None
        step.text = described(engine, rs.st, money) if rs is not None else []
    if engine is not None and rs is not None:
        rep.outcome = engine.outcome(rs.st)
        rep.rng = derived_draws(rs)
        rep.result = engine.result(rs.st, money)
    return rep


MONEY_KEYS = frozenset({"amount", "paid", "commission", "to", "stake", "rake", "insurance", "prize_pool"})


def event_summary(kind: str, payload: dict[str, Any], currency: str) -> str:
    """One event as a line a person reads: its kind without the version, its payload as
    key=value, amounts in the table's currency, cards as cards (replay, reports)."""
    from ledger.games.cards import show_card

    def value(key: str, v: Any) -> str:
        if key in MONEY_KEYS and isinstance(v, int) and not isinstance(v, bool):
            return show(v, currency)
        if key in ("card", "cards", "discard") and v:
            cards = [v] if isinstance(v, str) else v
            if all(isinstance(x, str) and len(x) == 2 for x in cards):
                return " ".join(show_card(x) for x in cards)
        if isinstance(v, (dict, list)):
            return json.dumps(v, sort_keys=True, separators=(",", ":"))
        return str(v)

    name = kind.rsplit(".v", 1)[0]
    return f"{name:<22} " + " ".join(f"{k}={value(k, v)}" for k, v in sorted(payload.items()))


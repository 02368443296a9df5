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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ledger.events import EventError, SignedEvent, check_payload
from ledger.games import ENGINES, Engine, RuleViolation, evolve
from ledger.judges import BaseJudge, World, players_named, register_judge
from ledger.judges.equipment import equipment_for, ready_problem
from ledger.judges.penalty import sent_away_by
from ledger.judges.ruling import HOLD, cited_events, rule_on
from ledger.judges.table import TableState
from ledger.refs import event_ref
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
    limits: tuple[tuple[str, int, int], ...] = ()  # the table's (bet type, min, max), from its configuration
    source: str | None = None  # what its round.open says it is dealt from ("rng", a shoe, wheel or dice stream)
    fresh: tuple[str, ...] = ()  # the cards its last game event dealt (``check_cards``), for the shoe's count


CONFIG_KINDS = ("table.open.v1", "table.config.v1")
LIMITS_RULE = "000 II 2.1.7, III 1.3(a), IV 2.1.4-5: every bet within the table's minimum and maximum"


def config_of(open_ev: SignedEvent, event_at: Callable[[str, int], Any]) -> dict[str, Any] | None:
    """The table configuration a round is played by: the one its ``round.open`` cites
    (``config``: the seq of the table's ``table.open`` or ``table.config``), read with
    ``event_at(stream, seq)``; None when it cites none (the game's defaults)."""
    seq = open_ev.payload.get("config")
    if seq is None:
        return None
    stream = f"table:{open_ev.payload['table']}"
    ev = event_at(stream, seq)
    if ev is None or ev.kind not in CONFIG_KINDS or ev.payload.get("config") is None:
        raise RuleViolation(f"round.open cites {stream} seq {seq}, which is not a table configuration")
    config: dict[str, Any] = ev.payload["config"]
    return config


def played_rules(config: dict[str, Any] | None, rules: dict[str, Any]) -> dict[str, Any]:
    """The house options a round is played by: the table's configuration, with the keys
    the round states itself (checked at ingest by ``bind_rules``)."""
    return {**(config or {}).get("rules", {}), **rules}


def bind_rules(engine: Engine, config: dict[str, Any] | None, rules: dict[str, Any]) -> None:
    """A round's ``rules`` against its table's configuration (issue 15 point 1): a house
    option is the floor's, set on the table (``table.open`` / ``table.config``), never the
    round producer's. A round may state an option only if the game makes it the round's
    (``Engine.round_keys``: who plays, their stacks), the configuration lets rounds set it
    (``round_options``), or it restates the configuration's value, or (where the
    configuration sets nothing) the game's default, which is the seed's rule. At a table
    with no configuration, an option the game has no default for (poker's variant and
    stakes: ``Engine.unset_keys``) is the round's to name; a configured table sets them."""
    cfg = config or {}
    fixed = cfg.get("rules", {})
    free = engine.round_keys | set(cfg.get("round_options", ())) | (engine.unset_keys if config is None else set())
    fields = engine.rules_model.model_fields
    for key, value in rules.items():
        if key in free:
            continue
        if key in fixed:
            if value != fixed[key]:
                raise RuleViolation(f"the round sets {key} = {value!r}, but the table's configuration says"
                                    f" {fixed[key]!r}: house options are set by the floor on the table")
            continue
        info = fields.get(key)
        if info is None or info.is_required():
            continue  # an unknown key is the rules model's to refuse; a required one has no default
        default = info.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            default = default.model_dump()
        if value != default:
            raise RuleViolation(f"the round sets {key} = {value!r}; the table's configuration does not set it, so"
                                f" the game's default {default!r} applies (house options are set by the floor on"
                                " the table: table.open or table.config)")


def open_round(ev: SignedEvent, config: dict[str, Any] | None = None) -> RoundState:
    """A round's state at its ``round.open``, played by ``config`` (``config_of``)."""
    game = ev.payload["game"]
    engine = ENGINES.get(game)
    st = engine.start(played_rules(config, ev.payload["rules"])) if engine else None
    rng = ev.payload.get("source") == "rng"
    if rng and engine is None:
        raise RuleViolation(f"{game} has no engine, so its draws cannot be derived from an RNG seed")
    limits = tuple((t, v["min"], v["max"]) for t, v in sorted((config or {}).get("limits", {}).items()))
    return RoundState(ev.stream, game, engine, st, rng=rng, table=ev.payload["table"], limits=limits,
                      source=ev.payload.get("source"))


def check_limits(rs: RoundState, kind: str, p: dict[str, Any]) -> None:
    """Every bet within the table's minimum and maximum for its type (``LIMITS_RULE``)."""
    assert rs.engine is not None
    for bet_type, amount in rs.engine.stakes(kind, p):
        limit = next((lim for lim in rs.limits if lim[0] == bet_type), None) or next(
            (lim for lim in rs.limits if lim[0] == "*"), None)
        if limit is None:
            raise RuleViolation(f"the table posts no limits for a {bet_type} bet (nor for every other type, '*'):"
                                f" it takes none ({LIMITS_RULE})")
        if not limit[1] <= amount <= limit[2]:
            raise RuleViolation(f"a {bet_type} bet of {amount} is outside the table's limits {limit[1]}-{limit[2]}"
                                f" ({LIMITS_RULE})")


def check_cards(rs: RoundState, st: Any) -> tuple[str, ...]:
    """The cards the event that led from ``rs`` to ``st`` dealt, once no card is dealt more
    often than the decks the round is dealt from hold (000 II 1.3.1, III 1.5(d): 8 decks
    of 52; one deck for poker and High Card Flush)."""
    assert rs.engine is not None
    spec, cards, _ = rs.engine.draws(st)
    if not spec or spec[0] != "cards":
        return ()
    _, before, _ = rs.engine.draws(rs.st)
    decks = spec[1]
    fresh = tuple(cards[len(before):])
    for card in fresh:
        if card != "??" and cards.count(card) > decks:
            raise RuleViolation(f"{card} is dealt {cards.count(card)} times in this round, but the {decks}-deck"
                                f" {'shoe' if decks > 1 else 'deck'} holds {decks} (000 II 1.3.1, III 1.5(d))")
    return fresh


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
        return evolve(rs, closed=p["status"])
    if rs.ruling is not None:
        raise RuleViolation(f"the round was ruled {rs.ruling}: nothing of the game follows, only its void close")
    if expired:
        raise RuleViolation(f"the bets held since the disconnection at {rs.disconnected} expired after 24 h: the"
                            " round is cancelled and the bets returned (000 casino disconnections)")
    if kind == "round.disconnect.v1":
        return rs if rs.disconnected else evolve(rs, disconnected=ev.at)
    if kind == "ruling.v1":
        st, owed = rule_on(rs.engine, rs.game, rs.st, p)
        rs = evolve(rs, compensation=rs.compensation + tuple(sorted(owed.items())))
        if st is None:
            return evolve(rs, ruling=p["effect"])
        return evolve(rs, st=st)
    if kind == "rng.commit.v1":
        if not rs.rng:
            raise RuleViolation("rng.commit.v1 in a round not dealt by RNG (round.open source is not 'rng')")
        if rs.commitment is not None or rs.game_events:
            raise RuleViolation("the RNG commits once, before anything of the game (ledger.rng)")
        return evolve(rs, commitment=p["commitment"])
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
        return evolve(rs, seed=p["seed"])
    if rs.engine is None or kind not in rs.engine.kinds:
        raise RuleViolation(f"{kind} is not an event of a {rs.game} round")
    if rs.rng and rs.commitment is None:
        raise RuleViolation("in a round dealt by RNG nothing of the game comes before the RNG's commitment")
    if rs.limits:
        check_limits(rs, kind, p)
    st = rs.engine.apply(rs.st, kind, p)
    fresh = check_cards(rs, st) if "card" in p or "cards" in p else ()
    return evolve(rs, st=st, game_events=rs.game_events + 1, fresh=fresh)


def walk(events: list[SignedEvent], event_at: Callable[[str, int], Any] | None = None, checked: bool = False
         ) -> tuple[RoundState | None, list[tuple[int, EventError]]]:
    """A stored round's events, round.open first, walked in order: the state after the
    last event the rules accept, and every (seq, refusal) on the way. For readers of
    stored rounds (evidence, reconciliation, views); ingest refuses at the first.
    ``event_at(stream, seq)`` reads the table configuration the round cites (``config_of``);
    a round that cites one cannot be walked without it. Each event's payload is checked
    against its kind's schema first, as ingest checks it: a row written behind ingest's
    back, signed by a key allowed to write it, is refused with its field named rather than
    fed to the engine (issue 14: a stolen key). ``checked``: the caller has checked every
    one of ``events`` so already (``check_payload``: reconciliation's day pass, a rebuild's
    ``ledger.verify.RowJudge``), and it is not checked twice."""
    rs: RoundState | None = None
    refused: list[tuple[int, EventError]] = []
    for ev in events:
        try:
            if not checked:
                check_payload(ev.kind, ev.payload)  # a stored row may never have met ingest
            if ev.kind == "round.open.v1":
                rs = open_round(ev, config_of(ev, event_at or _no_table))
            elif rs is not None:
                rs = step(rs, ev)
        except EventError as exc:
            refused.append((ev.seq, exc))
    return rs, refused


def dealt_cards(events: list[SignedEvent], event_at: Callable[[str, int], Any]) -> list[str]:
    """The cards a stored round dealt, in order (its engine's draws), for a shoe's count."""
    rs, _ = walk(events, event_at)
    if rs is None or rs.engine is None:
        return []
    spec, cards, _ = rs.engine.draws(rs.st)
    return list(cards) if spec and spec[0] == "cards" else []


def _no_table(stream: str, seq: int) -> None:
    return None


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
            return open_round(ev, config_of(ev, world.event_at))
        if state is None:  # its round.open is in this batch and was refused
            raise RuleViolation(f"{ev.stream} has no accepted round.open")
        return step(state, ev)

    def settle(self, before: RoundState | None, after: RoundState, ev: SignedEvent, world: World) -> None:
        if ev.kind == "round.open.v1":  # each player named was dealt a hand here (000 leaving table policy)
            for player in ev.payload["rules"].get("players") or ():
                world.hands[(player, ev.payload["table"])] = world.hands_at(player, ev.payload["table"]) + 1
            world.advance_book(after.table, ev)
        elif ev.kind == "round.close.v1" and after.engine is not None:
            engine = after.engine
            world.advance_book(after.table, ev, lambda: engine.final_chips(after.st))
        self._count_cards(before, after, ev, world)

    def _count_cards(self, before: RoundState | None, after: RoundState, ev: SignedEvent, world: World) -> None:
        """A card dealt from a live shoe counts in the shoe's tally across its rounds
        (``ledger.judges.shoe``); the round opened from it must not follow an unrecorded cut card."""
        source = after.source
        if source is None or not source.startswith("shoe:"):
            return
        tally = world.shoe_tally(source)
        if tally is None:
            return
        if ev.kind == "round.open.v1":
            eq = world.state(source)
            if tally.passed_in is not None and eq is not None and eq.stage == "loaded":
                raise RuleViolation(f"the cut card of {source} came out during {tally.passed_in} (the cards in front of"
                                    f" it, {tally.position}, are dealt) and no shoe.cut_card.v1 records it: no"
                                    " further round is dealt from the shoe (000 II 3.5.4, 3.2.2)")
            return
        if before is None or ev.kind not in (after.engine.kinds if after.engine else ()):
            return
        new = list(after.fresh)  # what the step just dealt (``check_cards``): the draws are not derived again
        tally.check(new)
        tally.add(ev.stream, new)

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
            ts: TableState | None = world.state(f"table:{table}")
            if ts is None or not ts.open:
                raise EventError("rule", f"table {table} is not open")
            opening = ts.opening
            if opening.payload["game"] != ev.payload["game"]:
                raise EventError("rule", f"table {table} deals {opening.payload['game']}, not {ev.payload['game']}")
            imported = world.role_of(ev) == "importer"
            if imported and world.role_of(opening) != "importer":
                raise EventError("rule", f"table {table} is the house's (opened by a {world.role_of(opening)} key): an"
                                         " imported hand history goes to a table its importer opened, not into the"
                                         " rounds of a table the house deals")
            check_config(ev, ts, imported)
            check_source(ev, opening, world)
            if not imported:
                check_seated(ev, world)
                book = world.table_book(table)
                problem = book.hand_problem(ev.payload["rules"]) if book is not None else None
                if problem:
                    raise RuleViolation(f"table {table}: {problem}")
        if ev.kind == "ruling.v1":
            cited_events(ev, world)
        players = players_named(ev.kind, ev.payload)
        if players:
            table = ev.payload["table"] if ev.kind == "round.open.v1" else (state.table if state else "")
            check_not_sent_away(players, table, ev.at, world)


def check_seated(ev: SignedEvent, world: World) -> None:
    """A hand's players (``rules.players``: poker) hold a seat at its table, taken by a
    ``seat.join`` and not yet left (issue 15 point 5; 000 leaving table policy). A hand
    imported from another room's history is not bound to this room's seats."""
    table = ev.payload["table"]
    players = ev.payload["rules"].get("players") or ()
    ts = world.state(f"table:{table}")
    if ts is not None and len(players) > ts.opening.payload["seats"]:
        raise RuleViolation(f"{len(players)} players at table {table} of {ts.opening.payload['seats']} seats")
    for player in players:
        seat = world.state(f"seat:{player}")
        if seat is None or table not in seat.seated:
            raise RuleViolation(f"{player} is not seated at table {table}: a seat is taken by seat.join.v1 before the"
                                " player is dealt in (000 leaving table policy)")


def check_not_sent_away(players: Any, table: str, at: str, world: World) -> None:
    """001 反則行為 ②③ (exposing hand information, interfering): the fined player is forced
    to leave the table and plays no further hand there that gaming day (the penalty names
    the table: ``ledger.judges.penalty``)."""
    for player in players:
        pen = sent_away_by(world.state(f"penalty:{player}"), table, at)
        if pen is not None:
            raise RuleViolation(f"{player} was sent away from table {table} by the {pen.payload['offence']}"
                                f" penalty {event_ref(pen.stream, pen.seq)} (001 反則行為): no further hand"
                                " there this gaming day")


def check_config(ev: SignedEvent, ts: TableState, imported: bool) -> None:
    """round.open cites the table's configuration in force (``TableState.config_seq``) and
    its rules agree with it (``bind_rules``) and with the seed's bounds (the engine's
    ``seed_problem``). A round the importer signs replays another room's hand history,
    whose rules are the history's own: it is bound only to the configuration it cites."""
    table = ev.payload["table"]
    cited = ev.payload.get("config")
    if cited != ts.config_seq:
        raise RuleViolation(f"table {table}'s configuration in force is seq {ts.config_seq} of table:{table}: the"
                            f" round cites {cited}" if ts.config_seq is not None else
                            f"table {table} has no configuration event: the round cites none (it cites seq {cited})")
    engine = ENGINES.get(ev.payload["game"])
    if engine is None or imported:
        return
    rules = ev.payload["rules"]
    bind_rules(engine, ts.config, rules)
    played = played_rules(ts.config, rules)
    problem = engine.seed_problem(played, ts.opening.payload["seats"])
    if problem is None and ts.config is not None:
        problem = engine.structure_problem(ts.config, played)
    if problem:
        raise RuleViolation(problem)


def played_decks(ev: SignedEvent, world: World) -> int | None:
    """How many decks a round's rules, as played at its table, deal from (its engine's
    draw spec), or None for a game not dealt from cards."""
    engine = ENGINES.get(ev.payload["game"])
    if engine is None:
        return None
    ts = world.state(f"table:{ev.payload['table']}")
    spec = engine.draws(engine.start(played_rules(ts.config if ts else None, ev.payload["rules"])))[0]
    return int(spec[1]) if spec and spec[0] == "cards" else None


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
        eq = world.state(source)
        problem = ready_problem(eq, source, table, game, table_open.at)
        if problem:
            raise RuleViolation(problem)
        decks = played_decks(ev, world)
        if source.startswith("shoe:") and decks is not None and eq.decks != decks:
            raise RuleViolation(f"{source} holds {eq.decks} decks, but the table's configuration deals {game} from"
                                f" {decks} (000 II 1.3.1, III 1.5: the deck count is the table's)")
    elif source is not None:
        raise RuleViolation(f"{game} uses no equipment stream; the round names no source")


register_judge(RoundJudge())

__all__ = ["EventError", "RoundJudge", "RoundState", "derived_draws", "open_round", "step", "walk"]

"""Ingest: check a batch of signed events completely, then append it atomically.

Checks, per event and in this order (the first failure is the event's reason):
JSON (well formed, no duplicate keys, size cap) -> schema (envelope, kind, strict
payload, stream type) -> hash (recomputed from the canonical body) -> chain (seq is
the next of its stream, ``prev`` is the hash of the previous event) -> key (known,
belongs to the actor, valid at ``at``: not before ``valid_from``, not rotated out, not
revoked) -> role (the key's role may sign the kind) -> signature -> stream rules
(``ledger.streams``, ``ledger.keyring``) -> procedures (``ledger.equipment``: a live
round is dealt only from inspected, shuffled, cut and loaded equipment, never after the
cut card's last hand) -> game rules (``ledger.rounds``: the round's engine in
``ledger.games`` judges every game event and every settlement, rounds dealt by RNG
follow commit / reveal with every draw re-derived, and a round closes "complete" only
when all of that is finished).

Any refused event refuses the whole batch and nothing is stored. A batch whose every
event is already stored, byte for byte, is a duplicate: reported, not stored again.
An event that repeats a stored one inside a batch with new events is refused as a
replay. The store's primary key settles races: of two writers appending the same
(stream, seq), one commits and the other gets ``ConflictError`` with nothing stored.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from eventsourcing.persistence import PersistenceError

from ledger import penalties, tournaments
from ledger.canonical import GENESIS_PREV
from ledger.equipment import (
    EQUIPMENT_TYPES,
    equipment_for,
    Equipment,
    fold,
    ready_problem,
)
from ledger.equipment import apply as apply_equipment
from ledger.events import EventError, SignedEvent, parse_event, parse_json_line
from ledger.games import RuleViolation
from ledger.keyring import KeyRing
from ledger.kinds import KEYRING_STREAM, stream_type_of
from ledger.rounds import RoundState, open_round, step
from ledger.store import AlreadyStoredError, ConflictError, Store, StoreError
from ledger.streams import check_lifecycle
from ledger.timeutil import parse_utc

MAX_BATCH_EVENTS = 200_000


@dataclass
class Rejection:
    line: int
    stream: str | None
    seq: int | None
    check: str
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}"
        if self.stream is not None:
            where += f" ({self.stream} seq {self.seq})"
        return f"{where}: {self.check}: {self.reason}"


@dataclass
class IngestReport:
    status: str  # "stored" | "duplicate" | "rejected" | "conflict" | "failed"
    events: int
    stored: int = 0
    first_notification: int | None = None
    last_notification: int | None = None
    rejections: list[Rejection] = field(default_factory=list)
    message: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status in ("stored", "duplicate")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d


def load_keyring(store: Store) -> KeyRing:
    ring = KeyRing()
    for ev in store.stream_events(KEYRING_STREAM):
        ring.authorize(ev)
        ring.apply(ev)
    return ring


class _BatchState:
    """Stream heads and events as they would be after the accepted part of the batch."""

    def __init__(self, store: Store, ring: KeyRing):
        self.store = store
        self.ring = ring
        self.heads: dict[str, SignedEvent | None] = {}
        self.pending: dict[tuple[str, int], SignedEvent] = {}
        # round stream -> its state as of the accepted events (ledger.rounds)
        self.rounds: dict[str, RoundState] = {}
        # equipment stream -> its state as of the accepted events (ledger.equipment)
        self.equipment: dict[str, Equipment] = {}
        # tournament stream -> its state as of the accepted events (ledger.tournaments)
        self.tournaments: dict[str, tournaments.Tournament | None] = {}

    def prefetch(self, events: list[SignedEvent]) -> None:
        """Read the heads of every stream the batch touches (and tables its rounds name)."""
        wanted = {ev.stream for ev in events}
        wanted |= {f"table:{ev.payload['table']}" for ev in events if ev.kind == "round.open.v1"}
        wanted |= {f"table:{ev.stream[6:]}" for ev in events if ev.stream.startswith("chips:")}
        wanted -= self.heads.keys()
        found = self.store.heads(sorted(wanted))
        for stream in wanted:
            self.heads[stream] = found.get(stream)

    def head(self, stream: str) -> SignedEvent | None:
        if stream not in self.heads:
            self.heads[stream] = self.store.head(stream)
        return self.heads[stream]

    def event_at(self, stream: str, seq: int) -> SignedEvent | None:
        return self.pending.get((stream, seq)) or self.store.event_at(stream, seq)

    def forget_stored(self) -> None:
        """After a batch is stored: its events are in the store, and a closed round takes
        no more events (its head and state would only be read again to refuse one)."""
        self.pending.clear()
        closed = [s for s, h in self.heads.items() if h is not None and h.kind == "round.close.v1"]
        for stream in closed:
            del self.heads[stream]
            self.rounds.pop(stream, None)

    def advance(self, ev: SignedEvent) -> None:
        self.heads[ev.stream] = ev
        self.pending[(ev.stream, ev.seq)] = ev

    def role_of(self, ev: SignedEvent) -> str:
        return self.ring.keys[ev.key_id].role

    def round(self, stream: str) -> RoundState:
        if stream not in self.rounds:
            stored = self.store.stream_events(stream)
            if not stored:  # its round.open is in this batch and was refused
                raise RuleViolation(f"{stream} has no accepted round.open")
            rs = open_round(stored[0])
            for ev in stored[1:]:
                if ev.kind != "round.close.v1":
                    rs = step(rs, ev)
            self.rounds[stream] = rs
        return self.rounds[stream]

    def judge_round(self, ev: SignedEvent) -> RoundState:
        """The round's state after ``ev``, or EventError; the caller commits it."""
        if ev.kind == "round.open.v1":
            self.check_source(ev)
            return open_round(ev)
        if ev.kind == "ruling.v1":
            self.check_cited(ev)
        return step(self.round(ev.stream), ev)

    def so_far(self, stream: str) -> list[SignedEvent]:
        """A stream's stored events and those accepted earlier in this run."""
        stored = self.store.stream_events(stream)
        head = self.head(stream)
        return stored + [self.pending[(stream, n)] for n in range(len(stored) + 1, (head.seq if head else 0) + 1)
                         if (stream, n) in self.pending]

    def judge_other(self, ev: SignedEvent) -> None:
        """Penalties and seats (ledger.penalties)."""
        if ev.kind == "penalty.v1":
            penalties.judge_penalty(ev.payload)
            self.check_cited(ev)
        elif ev.kind in ("seat.join.v1", "seat.leave.v1"):
            player = ev.stream.split(":", 1)[1]
            penalties.judge_seat(self.so_far(ev.stream)[:ev.seq - 1], ev, self.so_far(f"penalty:{player}"))
        elif ev.kind == "ruling.key_compromise.v1":
            entry = self.ring.keys.get(ev.payload["key_id"])
            for ref in ev.payload["acts_on"]:
                stream, _, seq = ref.rpartition("#")
                cited = self.event_at(stream, int(seq))
                if cited is None or cited.key_id != ev.payload["key_id"]:
                    raise RuleViolation(f"{ref} is not an event signed by key {ev.payload['key_id']}")
                if entry is None or not entry.status_at(parse_utc(cited.at)):
                    raise RuleViolation(f"{ref} is not untrusted: key {ev.payload['key_id']} was not revoked at its"
                                        " time")

    def check_cited(self, ev: SignedEvent) -> None:
        """A ruling or penalty acts on events that exist; a rollback cites the server crash (ledger.rulings)."""
        cited = []
        for ref in ev.payload["acts_on"]:
            stream, _, seq = ref.rpartition("#")
            found = self.event_at(stream, int(seq))
            if found is None:
                raise RuleViolation(f"the ruling acts on {ref}, which is not in the ledger")
            cited.append(found)
        if ev.payload.get("effect") == "rollback" and not any(c.kind == "incident.server_crash.v1" for c in cited):
            raise RuleViolation("a rollback cites the incident.server_crash.v1 event it follows (000 refund policy)")

    def check_source(self, ev: SignedEvent) -> None:
        """round.open names how it is dealt, as its table declares (ledger.equipment)."""
        table, game = ev.payload["table"], ev.payload["game"]
        table_open = self.head(f"table:{table}")
        assert table_open is not None  # check_lifecycle saw it open
        dealing, source = table_open.payload.get("dealing"), ev.payload.get("source")
        if dealing is None:
            if source is not None:
                raise RuleViolation(f"table {table} declares no dealing procedure, so a round names no source")
        elif dealing == "rng":
            if source != "rng":
                raise RuleViolation(f"table {table} deals by RNG: its rounds name source 'rng'")
        elif equipment_for(game) is not None:
            if source is None or source == "rng":
                raise RuleViolation(f"table {table} is live: a {game} round names the "
                                    f"{equipment_for(game)} it is dealt from")
            problem = ready_problem(self.equipment_state(source), source, table, game, table_open.at)
            if problem:
                raise RuleViolation(problem)
        elif source is not None:
            raise RuleViolation(f"{game} uses no equipment stream; the round names no source")

    def equipment_state(self, stream: str) -> Equipment | None:
        if stream not in self.equipment:
            stored = self.store.stream_events(stream)
            if not stored:
                return None
            self.equipment[stream] = fold(stream, stored, self.role_of)
        return self.equipment[stream]

    def tournament(self, stream: str) -> tournaments.Tournament | None:
        if stream not in self.tournaments:
            self.tournaments[stream] = tournaments.fold(stream, self.store.stream_events(stream), self.tournament)
        return self.tournaments[stream]

    def judge_tournament(self, ev: SignedEvent) -> tournaments.Tournament:
        t = self.tournament(ev.stream)
        if ev.kind == "tournament.open.v1":
            if t is not None:
                raise RuleViolation(f"{ev.stream} is already open")
            target_id = ev.payload.get("seats_in")
            if target_id is not None:
                target = self.tournament(f"tournament:{target_id}")
                if target is None or target.rules["buy_in"] != ev.payload.get("seat_value"):
                    raise RuleViolation(f"a satellite's seat_value is the buy-in less the fee of tournament:{target_id},"
                                        " which must be open (000 seat award policy)")
            return tournaments.open_tournament(ev.stream, ev.payload)
        if t is None:
            raise RuleViolation(f"{ev.stream} must start with tournament.open.v1")
        if ev.kind == "tournament.disqualify.v1":
            stream, _, seq = ev.payload["penalty"].rpartition("#")
            penalty = self.event_at(stream, int(seq))
            if (penalty is None or penalty.kind != "penalty.v1" or penalty.payload["offence"] != "disqualification"
                    or stream != f"penalty:{ev.payload['player']}"
                    or f"tournament:{penalty.payload.get('tournament')}" != ev.stream):
                raise RuleViolation(f"{ev.payload['penalty']} is not a disqualification of {ev.payload['player']} from"
                                    f" {ev.stream} (TDA 2013 rule 58 D)")
        return tournaments.apply(t, ev.kind, ev.payload, self.tournament)

    def judge_equipment(self, ev: SignedEvent) -> Equipment:
        eq = self.equipment_state(ev.stream) or Equipment(ev.stream)
        if ev.kind == "shoe.cut_card.v1":
            rstream = f"round:{ev.payload['round']}"
            opening, head = self.event_at(rstream, 1), self.head(rstream)
            if opening is None or opening.payload.get("source") != ev.stream:
                raise RuleViolation(f"{rstream} is not a round dealt from {ev.stream}")
            if head is not None and head.kind == "round.close.v1":
                raise RuleViolation(f"{rstream} is closed: the cut card comes out during a round (000 II 3.5.4)")
        return apply_equipment(eq, ev, self.role_of(ev))


def _where(obj: Any) -> tuple[str | None, int | None]:
    """The stream and seq a refused line claims, when it claims them plainly."""
    if not isinstance(obj, dict):
        return None, None
    stream, seq = obj.get("stream"), obj.get("seq")
    return (
        stream if isinstance(stream, str) else None,
        seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
    )


def parse_lines(lines: Iterable[str | bytes]) -> list[tuple[int, SignedEvent | Rejection]]:
    out: list[tuple[int, SignedEvent | Rejection]] = []
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if len(out) >= MAX_BATCH_EVENTS:
            out.append((no, Rejection(no, None, None, "size", f"batch has more than {MAX_BATCH_EVENTS} events")))
            break
        obj: Any = None
        try:
            obj = parse_json_line(line)
            out.append((no, parse_event(obj)))
        except EventError as exc:
            stream, seq = _where(obj)
            out.append((no, Rejection(no, stream, seq, exc.check, exc.reason)))
    return out


def check_batch(
    store: Store, items: list[tuple[int, SignedEvent | Rejection]]
) -> tuple[list[SignedEvent], list[Rejection], int]:
    """Check parsed items against the store. Returns (events, rejections, replays)."""
    ring = load_keyring(store)
    return _check_items(items, ring, _BatchState(store, ring))


def _check_items(
    items: list[tuple[int, SignedEvent | Rejection]], ring: KeyRing, state: _BatchState
) -> tuple[list[SignedEvent], list[Rejection], int]:
    """Check items against ``state`` (the store plus what earlier accepted batches of
    the run add); ``ring`` and ``state`` advance with every accepted event."""
    state.prefetch([item for _, item in items if not isinstance(item, Rejection)])
    events: list[SignedEvent] = []
    rejections: list[Rejection] = []
    replays = 0
    refused: dict[tuple[str, int], int] = {}  # (stream, seq) -> line, for refused events
    for no, item in items:
        if isinstance(item, Rejection):
            rejections.append(item)
            if item.stream is not None and item.seq is not None:
                refused[(item.stream, item.seq)] = item.line
            continue
        ev = item
        try:
            ev.check_hash()
            head = state.head(ev.stream)
            expected = head.seq + 1 if head else 1
            if ev.seq < expected:
                stored = state.event_at(ev.stream, ev.seq)
                if stored is not None and stored.hash == ev.hash:
                    replays += 1
                    raise EventError("replay", f"replayed event: {ev.stream} seq {ev.seq} is already stored with this hash")
                raise EventError("chain", f"seq {ev.seq} repeats an existing event of {ev.stream} (next seq is {expected})")
            if ev.seq > expected and all((ev.stream, s) in refused for s in range(expected, ev.seq)):
                raise EventError("chain", f"follows the refused event at line {refused[(ev.stream, ev.seq - 1)]}")
            if ev.seq > expected:
                raise EventError("chain", f"gap in seq: {ev.stream} expects seq {expected}, got {ev.seq}")
            want_prev = head.hash if head else GENESIS_PREV
            if ev.prev != want_prev:
                raise EventError("chain", f"broken prev: does not match the hash of {ev.stream} seq {ev.seq - 1}")
            state.advance(ev)  # the chain holds: judge later events on their own merits
            entry = ring.authorize(ev)
            ev.check_signature(entry.verifier)
            if ev.stream == KEYRING_STREAM:
                ring.apply(ev)
            else:
                check_lifecycle(ev, head, state.head)
                stype = stream_type_of(ev.stream)
                if stype == "round":
                    state.rounds[ev.stream] = state.judge_round(ev)
                elif stype in EQUIPMENT_TYPES:
                    state.equipment[ev.stream] = state.judge_equipment(ev)
                elif stype == "tournament":
                    state.tournaments[ev.stream] = state.judge_tournament(ev)
                elif stype in ("penalty", "seat", "ruling"):
                    state.judge_other(ev)
        except EventError as exc:
            rejections.append(Rejection(no, ev.stream, ev.seq, exc.check, exc.reason))
            if exc.check in ("schema", "hash", "chain"):
                refused[(ev.stream, ev.seq)] = no
            continue
        events.append(ev)
    return events, rejections, replays


def ingest_events(store: Store, items: list[tuple[int, SignedEvent | Rejection]]) -> IngestReport:
    ring = load_keyring(store)
    return _ingest(store, items, ring, _BatchState(store, ring))


def _ingest(
    store: Store, items: list[tuple[int, SignedEvent | Rejection]], ring: KeyRing, state: _BatchState
) -> IngestReport:
    """Check one batch against ``state`` and append it whole, or report why not."""
    started = time.perf_counter()
    n = len(items)
    if n == 0:
        return IngestReport("rejected", 0, message="the batch is empty", rejections=[])
    events, rejections, replays = _check_items(items, ring, state)
    report = IngestReport("rejected", n)
    if replays == n:
        report.status = "duplicate"
        report.message = f"all {n} events are already stored; nothing stored again"
    elif rejections:
        report.rejections = rejections
        report.message = f"{len(rejections)} of {n} events refused; nothing stored"
    else:
        try:
            ids = store.append(events)
        except AlreadyStoredError as exc:
            report.status = "duplicate"
            report.message = str(exc)
        except ConflictError as exc:
            report.status = "conflict"
            report.message = str(exc)
        else:
            report.status = "stored"
            report.stored = len(events)
            if ids:
                report.first_notification, report.last_notification = ids[0], ids[-1]
            report.message = f"stored {len(events)} events"
    report.seconds = time.perf_counter() - started
    return report


class IngestSession:
    """Consecutive atomic batches against one store, each checked against the store plus
    the batches stored before it in the session (one key ring and set of stream heads
    carried through). What a stored batch added is then read from the store, not kept:
    a long run (a day's import, the 100,000-round demo) holds one batch at a time. After
    a batch that is not stored the session starts afresh from the store."""

    def __init__(self, store: Store, retries: int = 0, backoff: float = 0.5):
        self.store = store
        self.retries, self.backoff = retries, backoff
        self.attempts = 0  # every try, retries included (for reports)
        self._fresh()

    def _fresh(self) -> None:
        self.ring = load_keyring(self.store)
        self.state = _BatchState(self.store, self.ring)
        self._stale = False

    def send(self, lines: list[str] | list[bytes]) -> IngestReport:
        """One batch, stored whole or not at all. A database failure (connection dropped,
        server restarting) is retried ``retries`` times, waiting ``backoff`` seconds and
        doubling: safe, because a batch that was in fact committed before the failure comes
        back as a replay ("duplicate") rather than being stored twice. Each retry checks the
        batch against the store as re-read, never against what the failed attempt's checks
        assumed. (eventsourcing's PostgreSQL recorder also retries an insert whose connection
        dropped; when the first insert had committed, the store reports AlreadyStoredError
        and the batch is a "duplicate" too.)"""
        items = parse_lines(lines)
        for attempt in range(self.retries + 1):
            self.attempts += 1
            try:
                if self._stale:  # checking a failed attempt advanced heads and key ring: re-read
                    self._fresh()
                report = _ingest(self.store, items, self.ring, self.state)
            except (StoreError, PersistenceError) as exc:  # the database failed (a conflict is reported by _ingest)
                self._stale = True
                text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                if not isinstance(exc, StoreError):
                    text = f"the database failed, nothing of this batch was stored: {text}"
                report = IngestReport("failed", len(items), message=text)
            if report.status != "failed" or attempt == self.retries:
                break
            time.sleep(self.backoff * 2 ** attempt)
        if report.ok:
            self.state.forget_stored()
        elif report.status == "failed" or any(
                not isinstance(it, Rejection) and it.stream == KEYRING_STREAM for _, it in items):
            self._stale = True  # re-read the store (and key ring) before the next batch
        else:
            self.state = _BatchState(self.store, self.ring)
        return report


def ingest_batches(store: Store, batches: Iterable[list[str] | list[bytes]], retries: int = 0,
                   backoff: float = 0.5) -> list[IngestReport]:
    """Ingest consecutive batches, each atomic; stop at the first one not stored.

    For files too large to be one transaction (a day's export, an import): an
    ``IngestSession``. The batches before a refused, conflicting or failed one stay
    stored; later ones are not attempted. (Overlapping a batch's commit with the next
    one's checks in a thread was measured slower here: both compete for the GIL.)
    """
    reports: list[IngestReport] = []
    session = IngestSession(store, retries, backoff)
    for lines in batches:
        report = session.send(lines)
        reports.append(report)
        if not report.ok:
            break
    return reports


def ingest_lines(store: Store, lines: Iterable[str | bytes]) -> IngestReport:
    return ingest_events(store, parse_lines(lines))


def ingest_signed(store: Store, events: Iterable[SignedEvent]) -> IngestReport:
    """Ingest events built in-process (they go through the same checks as JSONL)."""
    lines = [ev.to_json_line() for ev in events]
    return ingest_lines(store, lines)

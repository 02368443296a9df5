"""Ingest: check a batch of signed events completely, then append it atomically.

A pipeline of judges, per event and in this order (the first failure is the event's
reason, named by its stage):

1. parse: JSON, well formed, no duplicate keys, size cap (``parse_lines``);
2. schema: envelope, kind, strict payload, stream type (``ledger.events.parse_event``);
3. hash: recomputed from the canonical body;
4. chain: seq is the next of its stream, ``prev`` the hash of the one before
   (``ledger.chain``);
5. key and role: the key is known, belongs to the actor, is valid at ``at`` (not before
   ``valid_from``, not rotated out, not revoked), and its role may sign the kind
   (``ledger.keyring``);
   scope: the key may write where the event is written (``ledger.scope``);
   time: ``at`` against the ledger's clock, never back within a stream, nothing more
   from a key once its revocation is recorded (``ledger.clock``);
6. signature (started on all cores while the batch is still being parsed,
   ``parse_presigned``, or for a batch parsed already before its first event is judged,
   ``_signatures``; the verdicts are read after the pass, and any bad one has the batch
   judged again event by event: ``_check_items``);
7. the judge of the stream's type (``ledger.judges``): the key ring, a table's
   lifecycle, a round (its game's engine, the RNG protocol, rulings), live equipment,
   seats, money, tournaments, penalties, key-compromise rulings.

Any refused event refuses the whole batch and nothing is stored. A batch whose every
event is already stored, byte for byte, is a duplicate: reported, not stored again.
An event that repeats a stored one inside a batch with new events is refused as a
replay. The store's primary key settles races: of two writers appending the same
(stream, seq), one commits and the other gets ``ConflictError`` with nothing stored.
"""

from __future__ import annotations

import itertools
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, overload

from eventsourcing.persistence import PersistenceError

from ledger.canonical import GENESIS_PREV
from ledger.chain import link
from ledger.clock import Clock, check_time
from ledger.collector import paused
from ledger.events import EventError, PackedEvent, SignedEvent, parse_event, read_json_line, sign_event
from ledger.judges import World
from ledger.keyring import KeyRing, load_keyring
from ledger.keys import SignatureFeed, Signer, verify_signatures
from ledger.kinds import KEYRING_STREAM, RECEIPT_STREAM
from ledger.producer import ledger_origin
from ledger.store import AlreadyStoredError, ConflictError, Store, StoreError
from ledger.timeutil import format_utc, parse_utc

MAX_BATCH_EVENTS = 200_000
PREFETCH = 500
"""Events whose streams' heads are read together (one query)."""
KEPT_PARSED = 4096
KEPT_PARSED_BYTES = 512 * 1024
"""A batch's first events, up to ``KEPT_PARSED`` of them in its first ``KEPT_PARSED_BYTES``
bytes, held parsed as well as packed from the parse to their judging
(``PackedEvent.take``), so the judges do not parse them again: all of a 1,000-event batch
of the benchmark's workloads (516 to 523 KB); the rest are parsed again from their bytes.
Parsed objects cost three to three and a half times their line's bytes beside the bytes
(1.7 MB of peak memory, 1.9 MB by tracemalloc, for the first 512 KiB of
``benchmarks/ingest_memory.py``'s deposits), so a large batch lets them go
(``KEPT_PARSED_BATCH_BYTES``). A MiB until issue 13 point 8's bound was measured again."""
KEPT_PARSED_BATCH_BYTES = 2 * 1024 * 1024
"""A batch that grows past this many bytes keeps none of its events parsed: those kept
are let go as its parse passes the mark, and the judges parse every event of it again.
Kept, they cost 0.16 of a 10 MB batch's size on SQLite on the 2-core EPYC of 2026-12-06
(its peak 1.89 times the batch's size with them, 1.73 without; 1.84 and 1.79 on
PostgreSQL: issue 13 point 8's bound is 2) and save the judges a parse of about one event
in twenty there; in a batch of up to 2 MiB (4 times what is kept) they save a quarter or
more of the judges' parses."""
READ_AHEAD_EVENTS = 5_000
"""``ingest_batches`` reads and parses the next batch while one of at most this many events
is stored: the overlap saves the same time at every batch's end, worth it in small batches
(about 7% of the time with 1,000-event batches on the 2-core machines here) and not in
large ones, where a second batch held parsed would only cost memory (about twice its
bytes: ``benchmarks/ingest_memory.py``)."""
MAX_BATCH_BYTES = 128 * 1024 * 1024
"""A batch is at most 200,000 events and 128 MiB of JSONL (and a line at most 64 KiB,
``ledger.events.MAX_LINE_BYTES``): a batch is checked whole in memory before it is stored
in one transaction, so its size is bounded in bytes as well as in lines. A larger file
goes in as consecutive batches (``pitboss ingest --batch-size``)."""


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
    received: str | None = None  # the ledger's receipt for the batch (ledger.receipt.v1), when one was written

    @property
    def ok(self) -> bool:
        return self.status in ("stored", "duplicate")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d


def _where(obj: Any) -> tuple[str | None, int | None]:
    """The stream and seq a refused line claims, when it claims them plainly."""
    if not isinstance(obj, dict):
        return None, None
    stream, seq = obj.get("stream"), obj.get("seq")
    return (
        stream if isinstance(stream, str) else None,
        seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
    )


Item = tuple[int, "PackedEvent | Rejection"]
"""A batch's line, parsed: its number and the event (packed) or why it was refused."""


class Items:
    """A batch's lines, parsed, in order: read as a sequence of ``Item`` (line number,
    event or rejection), held as a list of the events and an array of their line
    numbers, 8 bytes a line, where a list of tuples held a tuple and an integer object for
    each, about 90 bytes (an eighth of a deposit's line: issue 13 point 8,
    ``benchmarks/ingest_memory.py``)."""

    __slots__ = ("lines", "events")

    def __init__(self) -> None:
        self.lines = array("q")
        self.events: list[PackedEvent | Rejection] = []

    def append(self, line: int, item: PackedEvent | Rejection) -> None:
        self.lines.append(line)
        self.events.append(item)

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[Item]:
        return zip(self.lines, self.events)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        if isinstance(index, slice):
            return list(zip(self.lines[index], self.events[index]))
        return self.lines[index], self.events[index]


class Ahead:
    """Which of a batch's events have their signature checked ahead (stage 6 on all cores),
    and by which key: item index -> (public key, job number), held as two arrays, about 16
    bytes an event, where a dict of tuples took about 190 (an eighth of a deposit's line:
    issue 13 point 8, ``benchmarks/ingest_memory.py``). Indexes are added in order.
    ``collect``: takes in the verdicts already back and lets go of their jobs
    (``ledger.keys.SignatureFeed.collect``), called as the judges go."""

    __slots__ = ("keys", "jobs", "collect")

    def __init__(self, collect: Callable[[], None] | None = None) -> None:
        self.keys: list[bytes | None] = []
        self.jobs = array("q")
        self.collect: Callable[[], None] = collect or (lambda: None)

    def add(self, index: int, public_key: bytes, job: int) -> None:
        short = index - len(self.keys)
        if short < 0:
            raise ValueError(f"item {index} added after item {len(self.keys) - 1}")
        if short:
            self.keys.extend([None] * short)
            self.jobs.extend([-1] * short)
        self.keys.append(public_key)
        self.jobs.append(job)

    def get(self, index: int) -> tuple[bytes, int] | None:
        """(public key, job number) of item ``index``, or None: not checked ahead."""
        key = self.keys[index] if index < len(self.keys) else None
        return None if key is None else (key, self.jobs[index])


Presigned = tuple[Ahead, Callable[[int], bool]]
"""Signatures checked ahead, and ``verdict(job number)``."""


def parse_lines(lines: Iterable[str | bytes], first_line: int = 1) -> Items:
    """Parse a batch's lines as they come (an iterable read lazily: a file is never held
    whole as text), each line dropped once parsed. Past ``MAX_BATCH_EVENTS`` events or
    ``MAX_BATCH_BYTES`` bytes the batch is refused ("size") and the rest is not read."""
    return _parse(lines, first_line, None)


def parse_presigned(lines: Iterable[str | bytes], first_line: int, ring: KeyRing) -> tuple[Items, Presigned]:
    """``parse_lines``, with stage 6 started as the lines are parsed: each event whose key
    is in ``ring`` has its signature checked on the other cores while the rest of the
    batch is parsed (``ledger.keys.SignatureFeed``), by that key (a key id names one
    public key). An event whose key is not in the ring yet is checked in its turn, and a
    verdict is only used for the key the event is then authorised by (``_check_items``),
    so a ring that moved meanwhile costs a re-check, never a wrong verdict."""
    feed = SignatureFeed()
    where = Ahead(feed.collect)

    def presign(index: int, ev: SignedEvent) -> None:
        job = ring.job_for(ev.key_id, ev.sig, ev.hash)
        if job is not None:
            where.add(index, job[0], feed.add(job))

    items = _parse(lines, first_line, presign)
    return items, (where, feed.finish())


def _parse(lines: Iterable[str | bytes], first_line: int,
           parsed: Callable[[int, SignedEvent], None] | None) -> Items:
    out = Items()
    size = 0
    kept = True  # events are kept parsed: the batch is within KEPT_PARSED_BATCH_BYTES so far
    for no, line in enumerate(lines, start=first_line):
        size += len(line)
        if kept and size > KEPT_PARSED_BATCH_BYTES:
            kept = False
            for item in out.events:
                if isinstance(item, PackedEvent):
                    item.let_go()
        if not line.strip():
            continue
        if len(out) >= MAX_BATCH_EVENTS or size > MAX_BATCH_BYTES:
            limit = (f"more than {MAX_BATCH_EVENTS} events" if len(out) >= MAX_BATCH_EVENTS
                     else f"more than {MAX_BATCH_BYTES} bytes")
            out.append(no, Rejection(no, None, None, "size", f"batch has {limit}: split it (--batch-size)"))
            break
        obj: Any = None
        try:
            obj, canonical = read_json_line(line)
            ev = parse_event(obj)
            try:  # held as its canonical bytes until checked and stored; the first KEPT_PARSED parsed as well
                out.append(no, PackedEvent(ev, canonical, kept and len(out) < KEPT_PARSED and size <= KEPT_PARSED_BYTES))
            except ValueError as exc:  # no canonical form (a lone surrogate): the hash check's reason
                raise EventError("schema", str(exc)) from None
            if parsed is not None:
                parsed(len(out) - 1, ev)
        except EventError as exc:
            stream, seq = _where(obj)
            out.append(no, Rejection(no, stream, seq, exc.check, exc.reason))
    return out


def check_batch(store: Store, items: Items) -> tuple[list[PackedEvent], list[Rejection], int]:
    """Check parsed items against the store. Returns (events, rejections, replays)."""
    return _check_items(items, World(store, load_keyring(store)))


def check_chain(ev: SignedEvent, world: World, refused: dict[tuple[str, int], int]) -> None:
    """Stage 4: ``ev`` follows its stream's head (``ledger.chain.link``), or EventError:
    a replay of a stored event, a repeat, a gap (after a refused line, or not), a broken
    ``prev``."""
    head = world.head(ev.stream)
    expected = head.seq + 1 if head else 1
    result = link((head.seq, head.hash) if head else None, ev.seq, ev.prev)
    if result == "repeat":
        stored = world.event_at(ev.stream, ev.seq)
        if stored is not None and stored.hash == ev.hash:
            raise EventError("replay", f"replayed event: {ev.stream} seq {ev.seq} is already stored with this hash")
        raise EventError("chain", f"seq {ev.seq} repeats an existing event of {ev.stream} (next seq is {expected})")
    if result == "gap":
        if all((ev.stream, s) in refused for s in range(expected, ev.seq)):
            raise EventError("chain", f"follows the refused event at line {refused[(ev.stream, ev.seq - 1)]}")
        raise EventError("chain", f"gap in seq: {ev.stream} expects seq {expected}, got {ev.seq}")
    if result == "prev":
        raise EventError("chain", f"broken prev: does not match the hash of {ev.stream} seq {ev.seq - 1}")


def _signatures(items: Items, world: World) -> Presigned:
    """Stage 6 started early for the whole batch, on all cores (``ledger.keys.verify_signatures``):
    each event whose key is in the key ring as the batch begins, by that key (a key id names
    one public key: ``ledger.keyring``). Returns item index -> (public key, job number), and
    the verdicts. An event whose key the batch itself registers is checked in its turn."""
    jobs: list[tuple[bytes, bytes, bytes]] = []
    where = Ahead()
    for i, (_, item) in enumerate(items):
        job = None if isinstance(item, Rejection) else world.ring.signature_job(item.data)
        if job is not None:
            where.add(i, job[0], len(jobs))
            jobs.append(job)
    return where, verify_signatures(jobs)


Outcome = tuple[list[PackedEvent], list[Rejection], int]
"""A batch's events to store, its rejections and how many of them are replays."""


class _Unproven(Exception):
    """A verdict read after the judges' pass is bad: the batch is judged again in order."""


def _check_items(items: Items, world: World, signed: Presigned | None = None) -> Outcome:
    """Check items against ``world`` (the store plus what earlier accepted batches of the
    run add); the world and its key ring advance with every accepted event. ``signed``:
    the signatures ``parse_presigned`` started, else they start here."""
    outcome, proven, again = _judge_ahead(items, world, signed)
    return outcome if proven() else again()


def _judge_ahead(items: Items, world: World, signed: Presigned | None
                 ) -> tuple[Outcome, Callable[[], bool], Callable[[], Outcome]]:
    """The judges' pass over the batch with stage 6's verdicts for the signatures checked
    ahead not awaited event by event, so the judges run while the other cores are still
    checking signatures; then ``proven()``, whether every verdict the pass took as good
    is good (it waits for them), and ``again()``, the batch judged event by event, each
    verdict read in its turn, on a world read afresh from the store, into ``world``.

    The pass's outcome stands only when ``proven()``: it is then the outcome of judging
    event by event, which reads those same good verdicts at the same points. Otherwise
    the outcome is ``again()``'s. A judge that fails on an event whose signature was not
    yet known has the batch judged again at once (its signature may be why)."""
    presigned, verdict = signed if signed is not None else _signatures(items, world)
    deferred = array("q")  # 8 bytes a job number, where a list held an integer object for each

    def again() -> Outcome:
        world.restart()
        return _judge_items(items, world, presigned, verdict, None)

    try:
        outcome = _judge_items(items, world, presigned, verdict, deferred)
    except Exception:
        if not deferred:
            raise  # nothing was taken on trust: the failure is the event-by-event one
        outcome = again()
        del deferred[:]  # judged in order: nothing left on trust

    return outcome, lambda: all(verdict(j) for j in deferred), again


def _judge_items(items: Items, world: World, presigned: Ahead,
                 verdict: Callable[[int], bool], deferred: array[int] | None
                 ) -> tuple[list[PackedEvent], list[Rejection], int]:
    """Stages 3 to 7 for each item in order (``_check_items``). ``deferred``: where the job
    numbers of the verdicts taken as good go, to be read after the pass; None: each
    verdict is read in its turn."""
    events: list[PackedEvent] = []
    rejections: list[Rejection] = []
    replays = 0
    refused: dict[tuple[str, int], int] = {}  # (stream, seq) -> line, for refused events
    for i, (no, item) in enumerate(items):
        if i % PREFETCH == 0:  # the heads the next events need, a few queries at a time (not all held at once)
            world.prefetch([it for it in items.events[i:i + PREFETCH] if not isinstance(it, Rejection)])
            presigned.collect()  # the jobs of the signatures checked meanwhile, let go
        if isinstance(item, Rejection):  # stages 1-2: parse, schema
            rejections.append(item)
            if item.stream is not None and item.seq is not None:
                refused[(item.stream, item.seq)] = item.line
            continue
        ev = item.take()  # the event kept parsed, or parsed again from its bytes; held packed after
        try:
            item.check_hash()  # 3
            before = world.head(ev.stream)
            check_chain(ev, world, refused)  # 4
            world.accept(item)  # the chain holds: judge later events on their own merits
            entry = world.ring.authorize(ev)  # 5
            world.check_scope(ev, entry)
            check_time(ev, entry, before, world.clock)
            pre = presigned.get(i)
            if pre is None or pre[0] != entry.public_key:
                ev.check_signature(entry.public_key)  # 6, here: its key was not in the ring as the batch began
            elif deferred is not None:
                deferred.append(pre[1])  # 6, read after the pass
            else:
                ev.check_signature(entry.public_key, verdict(pre[1]))  # 6
            world.judge(ev)  # 7
        except EventError as exc:
            replays += exc.check == "replay"
            rejections.append(Rejection(no, ev.stream, ev.seq, exc.check, exc.reason))
            if exc.check in ("schema", "hash", "chain"):
                refused[(ev.stream, ev.seq)] = no
            continue
        events.append(item)
    return events, rejections, replays


def ingest_events(store: Store, items: Items, clock: Clock | None = None) -> IngestReport:
    return _ingest(store, items, World(store, load_keyring(store), clock))


def _ingest(store: Store, items: Items, world: World, signed: Presigned | None = None,
            ahead: Callable[[], None] | None = None) -> IngestReport:
    """Check one batch against ``world`` and append it whole, or report why not. The rows
    go to the database while the last signatures are still being checked: the transaction
    commits only once every verdict is in and good (``Store.append``'s ``before_commit``;
    PostgreSQL's writers' lock is held meanwhile), else it rolls back and the batch is
    judged again event by event for its report (``_judge_ahead``). ``ahead``: called when
    the judges' pass refused nothing, before the transaction opens (``ingest_batches``
    reads and parses the next batch there, while the checkers finish this one's
    signatures)."""
    started = time.perf_counter()
    n = len(items)
    if n == 0:
        return IngestReport("rejected", 0, message="the batch is empty", rejections=[])
    (events, rejections, replays), proven, again = _judge_ahead(items, world, signed)
    if rejections and not proven():  # the report is the in-order one
        events, rejections, replays = again()
    elif not rejections:
        if ahead is not None:  # the next batch's time, not this one's
            t = time.perf_counter()
            ahead()
            started += time.perf_counter() - t

        def signatures_hold() -> None:
            if not proven():
                raise _Unproven

        try:
            return _append(store, events, n, started, signatures_hold)
        except _Unproven:  # rolled back: nothing stored
            events, rejections, replays = again()
            if not rejections:  # judged in order, every verdict read: the batch stands
                return _append(store, events, n, started, None)
    report = IngestReport("rejected", n, rejections=rejections)
    if replays == n:
        report.status = "duplicate"
        report.message = f"all {n} events are already stored; nothing stored again"
        report.rejections = []
    else:
        report.message = f"{len(rejections)} of {n} events refused; nothing stored"
    report.seconds = time.perf_counter() - started
    return report


def _append(store: Store, events: list[PackedEvent], n: int, started: float,
            before_commit: Callable[[], None] | None) -> IngestReport:
    """Append a batch whose every event passed; the report of what happened to it."""
    report = IngestReport("rejected", n)
    try:
        ids = store.append(events, before_commit)
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
    a long run (a day's import, the 100,000-round demo) holds one batch at a time (in
    ``ingest_batches``, the next one too while a small one is stored). After
    a batch that is not stored the session starts afresh from the store."""

    def __init__(self, store: Store, retries: int = 0, backoff: float = 0.5, clock: Clock | None = None,
                 receipts: Signer | None = None):
        self.store = store
        self.retries, self.backoff = retries, backoff
        self.clock = clock or Clock()
        self.receipts = receipts
        """The ledger's log key: after each stored batch the session writes a receipt
        (``write_receipt``), the ledger's clock committed in the log."""
        self.attempts = 0  # every try, retries included (for reports)
        self._fresh()

    def _fresh(self) -> None:
        self.ring = load_keyring(self.store)
        self.world = World(self.store, self.ring, self.clock)
        self._stale = False
        self._seen = self.store.max_notification_id()

    def _others_wrote(self) -> bool:
        """Whether another writer stored events since this session last read or wrote the
        store. The world keeps state that spans streams (a shoe's card count, a poker
        table's book, the hands a player was dealt): judged against it, a batch must see
        every event stored before it, not only those of the streams it touches."""
        return self.store.max_notification_id() != self._seen

    def _ring_moved(self) -> bool:
        """Whether the key ring changed since the session read it (a key revoked, registered
        or rescoped by another writer): each batch is judged by the ring as it is now."""
        head = self.store.head(KEYRING_STREAM)
        return head is not None and head.seq != self.ring.events

    def send(self, lines: Iterable[str | bytes], first_line: int = 1) -> IngestReport:
        """One batch, stored whole or not at all. A database failure (connection dropped,
        server restarting) is retried ``retries`` times, waiting ``backoff`` seconds and
        doubling: safe, because a batch that was in fact committed before the failure comes
        back as a replay ("duplicate") rather than being stored twice. Each retry checks the
        batch against the store as re-read, never against what the failed attempt's checks
        assumed. (eventsourcing's PostgreSQL recorder also retries an insert whose connection
        dropped; when the first insert had committed, the store reports AlreadyStoredError
        and the batch is a "duplicate" too.)"""
        with paused():  # the batch is held whole from parse to commit: collections would find nothing
            return self.send_parsed(self.parse(lines, first_line))  # (its frame, and the batch, gone before the collector is back)

    def parse(self, lines: Iterable[str | bytes], first_line: int = 1) -> tuple[Items, Presigned]:
        """Stages 1 and 2 of a batch, its signatures started by the session's key ring
        (``parse_presigned``): nothing in it depends on the store, so a batch may be parsed
        before the one ahead of it is stored (``ingest_batches``)."""
        return parse_presigned(lines, first_line, self.ring)

    def send_parsed(self, parsed: tuple[Items, Presigned], ahead: Callable[[], None] | None = None) -> IngestReport:
        """``send`` for a batch parsed already (``parse``); ``ahead`` as in ``_ingest``: it
        may be called on each try, so it does its work once."""
        items, signed = parsed
        for attempt in range(self.retries + 1):
            self.attempts += 1
            try:
                if self._stale or self._ring_moved() or self._others_wrote():  # re-read heads, key ring, state
                    self._fresh()
                report = _ingest(self.store, items, self.world, signed, ahead)
            except (StoreError, PersistenceError) as exc:  # the database failed (a conflict is reported by _ingest)
                self._stale = True
                text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                if not isinstance(exc, StoreError):
                    text = f"the database failed, nothing of this batch was stored: {text}"
                report = IngestReport("failed", len(items), message=text)
            if report.status != "failed" or attempt == self.retries:
                break
            time.sleep(self.backoff * 2 ** attempt)
        if report.status == "stored" and self.receipts is not None:
            report.received = write_receipt(self.store, self.receipts, self.clock)
        if report.ok:
            self.world.forget_stored()
            self._seen = self.store.max_notification_id()
        elif report.status == "failed" or any(
                not isinstance(it, Rejection) and it.stream == KEYRING_STREAM for _, it in items):
            self._stale = True  # re-read the store (and key ring) before the next batch
        else:
            self.world = World(self.store, self.ring, self.clock)
        return report


def file_batches(lines: Iterable[bytes], batch_size: int | None) -> Iterator[Iterator[bytes]]:
    """A file's lines as consecutive batches of ``batch_size`` lines (None: one batch),
    each read lazily as it is ingested: the file is never held in memory whole."""
    it = iter(lines)
    while True:
        try:
            first = next(it)
        except StopIteration:
            return
        if batch_size is None:
            yield itertools.chain((first,), it)
            return
        yield itertools.chain((first,), itertools.islice(it, batch_size - 1))


def write_receipt(store: Store, log: Signer, clock: Clock, attempts: int = 20) -> str | None:
    """Append a ``ledger.receipt.v1`` signed by the ledger's log key: every event before it
    in the log was received by the ledger's clock at or before its ``received``. Written
    after the batch's own transaction (so concurrent writers never conflict on a batch
    because of it); on a race for the receipt stream's next seq it re-reads and tries
    again. None if it could not be written: the next receipt then covers the batch."""
    for _ in range(attempts):
        head = store.head(RECEIPT_STREAM)
        now = format_utc(max(clock.now(), parse_utc(head.at)) if head is not None else clock.now())
        ev = sign_event(log, ledger=ledger_origin(store), stream=RECEIPT_STREAM, seq=head.seq + 1 if head else 1,
                        kind="ledger.receipt.v1", payload={"received": now},
                        prev=head.hash if head else GENESIS_PREV, at=now)
        try:
            store.append([ev])
        except (ConflictError, AlreadyStoredError):
            continue
        except (StoreError, PersistenceError):
            return None
        return now
    return None


def ingest_batches(store: Store, batches: Iterable[Iterable[str | bytes]], retries: int = 0,
                   backoff: float = 0.5, clock: Clock | None = None, receipts: Signer | None = None
                   ) -> list[IngestReport]:
    """Ingest consecutive batches, each atomic; stop at the first one not stored.

    For files too large to be one transaction (a day's export, an import): an
    ``IngestSession``. The batches before a refused, conflicting or failed one stay
    stored; later ones are not attempted.

    After a batch of at most ``READ_AHEAD_EVENTS`` events has passed the judges, and
    before its transaction opens, the next batch is read and parsed, its signatures handed
    to the checkers (``_NextBatch``): the checkers then do not wait for the next batch
    while this one is stored, and the writers' lock is held no longer. Every check of a
    batch against the store is still made when its turn comes, against the store as it is
    then, so each outcome is the one-by-one run's (the parse depends on nothing stored; a
    signature checked ahead counts only for the key the event is authorised by when
    judged). A failure reading the next batch is raised in that batch's turn, after the
    batch before it is stored. (Overlapping a batch's commit with the next one's checks in
    a thread was measured slower here: both compete for the GIL.) At most two batches are
    held at once, the first of them small.
    """
    reports: list[IngestReport] = []
    session = IngestSession(store, retries, backoff, clock, receipts)
    source = _NextBatch(iter(batches), session)
    while True:
        with paused():  # the batch is held whole from parse to commit (``IngestSession.send``)
            parsed = source.take()
            if parsed is None:
                break
            report = session.send_parsed(parsed, source.read if len(parsed[0]) <= READ_AHEAD_EVENTS else None)
            del parsed
        reports.append(report)
        if not report.ok:
            break
    return reports


class _NextBatch:
    """A run's batches, each read and parsed at most once, the next one possibly early
    (``read``), with line numbers running on across batches."""

    def __init__(self, batches: Iterator[Iterable[str | bytes]], session: IngestSession):
        self.batches, self.session = batches, session
        self.first_line = 1
        self.parsed: tuple[Items, Presigned] | None = None
        self.failed: Exception | None = None
        self.ended = False

    def read(self) -> None:
        """Read and parse the next batch if it is not held already; a failure reading it
        (the file, the pipe) is kept for its turn (``take``)."""
        if self.parsed is not None or self.failed is not None or self.ended:
            return
        try:
            lines = next(self.batches, None)
            if lines is None:
                self.ended = True
                return
            counted = _Counted(lines)
            self.parsed = self.session.parse(counted, self.first_line)
        except Exception as exc:
            self.failed = exc
            return
        self.first_line += counted.n

    def take(self) -> tuple[Items, Presigned] | None:
        """The next batch, parsed; None after the last."""
        self.read()
        if self.failed is not None:
            failed, self.failed = self.failed, None
            raise failed
        parsed, self.parsed = self.parsed, None
        return parsed


class _Counted:
    """Lines passed through, counted (for line numbers that run on across batches)."""

    def __init__(self, lines: Iterable[str | bytes]):
        self.lines, self.n = lines, 0

    def __iter__(self) -> Iterator[str | bytes]:
        for line in self.lines:
            self.n += 1
            yield line


def ingest_lines(store: Store, lines: Iterable[str | bytes], clock: Clock | None = None) -> IngestReport:
    """One batch, stored whole or not at all (``IngestSession.send`` for consecutive ones)."""
    with paused():  # the batch is held whole from parse to commit: collections would find nothing
        return _ingest_one(store, lines, clock)  # (its frame, and the batch, gone before the collector is back)


def _ingest_one(store: Store, lines: Iterable[str | bytes], clock: Clock | None) -> IngestReport:
    world = World(store, load_keyring(store), clock)
    items, signed = parse_presigned(lines, 1, world.ring)
    return _ingest(store, items, world, signed)


def ingest_signed(store: Store, events: Iterable[SignedEvent], clock: Clock | None = None) -> IngestReport:
    """Ingest events built in-process (they go through the same checks as JSONL)."""
    lines = [ev.to_json_line() for ev in events]
    return ingest_lines(store, lines, clock)

"""Verify a whole ledger from its stored rows: nothing is trusted that is not re-proved.

For every stored event, in notification order:
- row: the bytes parse, and the row's (stream, seq, kind) are the event's own
  (catches rows swapped or moved by SQL);
- schema (``deep=True``, ``pitboss verify --deep``): the event passes the same strict
  schema as at ingest. Off by default: the signature already proves the stored bytes
  are what a key-holder asserted, and rule-level rechecking is reconciliation's job;
- hash: recomputed from the canonical body;
- signature: Ed25519 by the key it names;
- key and role: the key ring (rebuilt from its own stream) allows that key, for that
  actor, kind and time (revocations apply to every event at or after their time, and to
  every row stored after the revocation was recorded, whatever its time: ingest takes
  nothing more from a revoked key, ``ledger.clock``);
- scope: the key may write where the event is (``ledger.scope``), by the scope in force
  at the event's time; a round event is at the table its round.open names;
- chain: seq follows 1, 2, 3... within the stream and ``prev`` is the previous hash;
- tree: the RFC 9162 root after each checkpointed size equals that checkpoint's root,
  for checkpoints stored in the ledger and published as files; a checkpoint larger than
  the ledger means events were cut from the tail.

Hash and signature checks (the cost) run in worker processes, one per core; ordering
checks run in the parent as results come back in order.
"""

from __future__ import annotations

import base64
import gc
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature

from ledger.canonical import canonical_json, event_hash
from ledger.chain import link, link_problem
from ledger.events import BODY_FIELDS, EventError, parse_event
from ledger.keyring import KeyEntry, KeyRing
from ledger.kinds import CHECKPOINT_STREAM, KEYRING_STREAM
from ledger.log.merkle import CompactRange, leaf_hash
from ledger.log.note import (
    Checkpoint,
    NoteError,
    VerifierKey,
    open_checkpoint,
    verifier_key,
)
from ledger.scope import covers, describe, place_of
from ledger.store import DatabaseURL, Store
from ledger.timeutil import parse_utc_trusted

PARALLEL_THRESHOLD = 4000
CHUNK = 2000


@dataclass
class Problem:
    check: str
    reason: str
    stream: str | None = None
    seq: int | None = None
    notification_id: int | None = None

    def __str__(self) -> str:
        where = f"{self.stream} seq {self.seq}" if self.stream is not None else "ledger"
        if self.notification_id is not None:
            where += f" (row {self.notification_id})"
        return f"{where}: {self.check}: {self.reason}"


@dataclass
class VerifyReport:
    ok: bool = True
    events: int = 0
    streams: int = 0
    tree_size: int = 0
    root: str = ""
    checkpoints_checked: int = 0
    anchor: str | None = None
    anchor_pinned: bool = False
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 1

    def add(self, problem: Problem) -> None:
        self.ok = False
        self.problems.append(problem)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --- worker side -------------------------------------------------------------------
# Each worker opens its own connection and checks a range of notification ids:
# parsing, schema, hash, key and role (``KeyRing.authorize``, as at ingest) and the
# signature. It returns only what the parent needs to check order: the chain and tree.

_W: dict[str, Any] = {}
_BODY_KEYS = frozenset(BODY_FIELDS)

ProblemRow = tuple[str, str, str, int, int]  # (check, reason, stream, seq, notification_id)


@dataclass
class RangeResult:
    """What a worker hands back for one range of notification ids."""

    count: int
    leaves: bytes  # RFC 9162 leaf hashes, 32 bytes each, in notification order
    first: dict[str, tuple[int, str, int]]  # stream -> (seq, prev, notification id) of its first event here
    last: dict[str, tuple[int, str]]  # stream -> (seq, hash) of its last event here
    problems: list[ProblemRow]
    starts: list[tuple[str, int]]  # streams whose first event here is seq 1, its link checked here
    opens: dict[str, str] = field(default_factory=dict)  # round stream -> its table, for round.opens here
    deferred: list[tuple[str, int, int, str, str]] = field(default_factory=list)
    """(stream, seq, notification id, key id, at) of round events by a scoped key whose
    round.open is in an earlier range: the parent checks their scope."""


def _init_worker(url: DatabaseURL | None, ring: KeyRing, deep: bool, store: Store | None = None) -> None:
    _W["store"] = store if store is not None else Store.open(url)  # type: ignore[arg-type]  # url is given whenever store is not (the pool's initializer)
    _W["ring"] = ring
    _W["deep"] = deep


def scope_problem_at(entry: KeyEntry | None, stream: str, payload: Any, at: str, round_table: str | None
                     ) -> tuple[str, str] | None:
    """("scope", reason) if ``entry``'s scope at ``at`` does not reach the event."""
    if entry is None:
        return None
    try:
        scope = entry.scope_at(parse_utc_trusted(at))
    except (ValueError, TypeError):
        return None  # the key check names an unreadable time
    place = place_of(stream, payload if isinstance(payload, dict) else {}, round_table)
    if covers(scope, place):
        return None
    return ("scope", f"untrusted: key {entry.key_id} ({entry.role}) may write only at {describe(scope)}, not at"
                     f" {place or 'a venue-level stream'}")


def _check_row(stream: str, seq: int, kind: str, state: bytes, ring: KeyRing, deep: bool,
               problems: list[tuple[str, str]], nid: int = 0, opens: dict[str, str] | None = None,
               deferred: list[tuple[str, int, int, str, str]] | None = None) -> tuple[str, str]:
    """Check one stored event; append its problems; return (claimed hash, prev). A round
    event whose round.open is not in ``opens`` (this range's) goes to ``deferred``."""
    try:
        d = orjson.loads(state)
        claimed, sig, key_id = d.pop("hash"), d.pop("sig"), d["key_id"]
        if not (isinstance(claimed, str) and isinstance(sig, str) and isinstance(key_id, str)):
            raise TypeError("hash, sig and key_id must be strings")
        if d.keys() != _BODY_KEYS:
            raise KeyError(f"fields {sorted(d.keys() ^ _BODY_KEYS)} differ from the envelope's")
    except (ValueError, KeyError, TypeError) as exc:  # orjson.JSONDecodeError is a ValueError
        problems.append(("row", f"stored bytes are not a pitboss event ({exc})"))
        return "", ""
    try:
        canonical = canonical_json({**d, "hash": claimed, "sig": sig}) == state
    except (ValueError, TypeError):
        canonical = False
    if not canonical:  # issue 13 point 6: any SQL reader must see exactly what was signed
        problems.append(("row", "stored bytes are not the canonical encoding (RFC 8785) of the event they parse to:"
                                " duplicate keys, whitespace, key order or escapes were changed, so a reader of the row"
                                " may see other values than were signed"))
    if (d["stream"], d["seq"], d["kind"]) != (stream, seq, kind):
        problems.append(("row", f"row is stored as ({stream}, {seq}, {kind}) but the event says"
                                f" ({d['stream']}, {d['seq']}, {d['kind']}): rows were swapped or moved"))
    entry = ring.keys.get(key_id)
    digest = b""
    try:
        if deep:
            parse_event({**d, "hash": claimed, "sig": sig})
        try:
            digest = event_hash(d)
        except (ValueError, TypeError) as exc:
            raise EventError("hash", f"cannot hash the stored content: {exc}") from None
        if digest.hex() != claimed:
            digest = b""
            raise EventError("hash", "content does not match its hash: altered after signing")
        if stream != KEYRING_STREAM:  # the key ring's own events are checked in order by the parent
            ring.check_ledger(d["ledger"])
            ring.authorize_fields(key_id, d["actor"], kind, d["at"])
            if entry is not None and entry.revoked_at_row is not None and nid > entry.revoked_at_row:
                raise EventError("key", f"stored after the key ring recorded this key's revocation (row"
                                        f" {entry.revoked_at_row}): ingest takes nothing more from such a key, so this"
                                        " row was written behind its back")
    except EventError as exc:
        problems.append((exc.check, exc.reason if exc.check != "key" else f"untrusted: {exc.reason}"))
    if entry is not None and entry.scoped and stream != KEYRING_STREAM:
        payload = d.get("payload")
        if stream.startswith("round:") and kind != "round.open.v1":
            table = opens.get(stream) if opens is not None else None
            if table is None:
                if deferred is not None:
                    deferred.append((stream, seq, nid, key_id, d["at"]))
            else:
                problem = scope_problem_at(entry, stream, payload, d["at"], table)
                if problem:
                    problems.append(problem)
        else:
            problem = scope_problem_at(entry, stream, payload, d["at"], None)
            if problem:
                problems.append(problem)
    if kind == "round.open.v1" and opens is not None and isinstance(d.get("payload"), dict):
        table = d["payload"].get("table")
        if isinstance(table, str):
            opens[stream] = table
    if entry is not None:
        try:
            entry.verifier.verify(bytes.fromhex(sig), digest or bytes.fromhex(claimed))
        except (InvalidSignature, ValueError):
            problems.append(("signature", f"bad signature: not made by key {key_id} over this event's hash"))
    prev = d["prev"] if isinstance(d["prev"], str) else ""
    return claimed, prev


def _check_range(bounds: tuple[int, int]) -> RangeResult:
    lo, hi = bounds
    store: Store = _W["store"]
    ring: KeyRing = _W["ring"]
    deep: bool = _W["deep"]
    rows = store.row_range(lo, hi)
    leaves = bytearray()
    first: dict[str, tuple[int, str, int]] = {}
    last: dict[str, tuple[int, str]] = {}
    starts: list[tuple[str, int]] = []
    out: list[ProblemRow] = []
    problems: list[tuple[str, str]] = []  # the current row's, emptied after each row
    opens: dict[str, str] = {}
    deferred: list[tuple[str, int, int, str, str]] = []
    for nid, stream, seq, kind, state in rows:
        claimed, prev = _check_row(stream, seq, kind, state, ring, deep, problems, nid, opens, deferred)
        try:
            leaves += leaf_hash(bytes.fromhex(claimed)) if len(claimed) == 64 else leaf_hash(claimed.encode())
        except ValueError:
            leaves += leaf_hash(claimed.encode())
        before = last.get(stream)
        if before is None and seq == 1:
            # Most streams start here: check the genesis link now and only tell the parent
            # the stream started (it must not have been seen in an earlier range).
            starts.append((stream, nid))
            problem = _chain_problem(None, 1, prev)
            if problem:
                problems.append(problem)
            last[stream] = (1, claimed)
        else:
            if before is None:
                first[stream] = (seq, prev, nid)
            else:
                problem = _chain_problem(before, seq, prev)
                if problem:
                    problems.append(problem)
            last[stream] = (max(seq, before[0]) if before else seq, claimed)
        if problems:
            out.extend((c, r, stream, seq, nid) for c, r in problems)
            problems.clear()
    return RangeResult(len(rows), bytes(leaves), first, last, out, starts, opens, deferred)


def _chain_problem(before: tuple[int, str] | None, seq: int, prev: str) -> tuple[str, str] | None:
    problem = link_problem(before, seq, prev)
    return ("chain", problem) if problem else None


# --- parent side -------------------------------------------------------------------

def _keyring(store: Store, report: VerifyReport) -> KeyRing:
    """Rebuild the key ring from its stream, checking each of its events fully."""
    ring = KeyRing()
    before: tuple[int, str] | None = None
    for ev in store.stream_events(KEYRING_STREAM):
        try:
            if link(before, ev.seq, ev.prev) != "ok":
                raise EventError("chain", "key ring chain is broken here")
            ev.check_hash()
            entry = ring.authorize(ev)
            ev.check_signature(entry.verifier)
            ring.apply(ev)
        except EventError as exc:
            report.add(Problem(exc.check, f"key ring: {exc.reason}; later key-ring events are not trusted",
                               KEYRING_STREAM, ev.seq))
            break
        before = (ev.seq, ev.hash)
    return ring


def _checkpoint_targets(
    store: Store, ring: KeyRing, public_dir: Path | None, report: VerifyReport
) -> dict[int, list[tuple[str, Checkpoint]]]:
    """Every checkpoint to compare against: size -> [(where it came from, checkpoint)]."""
    log_keys = [e for e in ring.keys.values() if e.role == "ledger"]

    def open_any(note: str) -> Checkpoint:
        last: Exception | None = None
        for e in log_keys:
            try:
                return open_checkpoint(note, VerifierKey.parse(verifier_key(e.actor, e.public_key)))
            except NoteError as exc:
                last = exc
        raise NoteError(str(last) if last else "no ledger key in the key ring")

    targets: dict[int, list[tuple[str, Checkpoint]]] = {}
    for ev in store.stream_events(CHECKPOINT_STREAM):
        try:
            cp = open_any(ev.payload["note"])
            if (cp.size, base64.b64encode(cp.root).decode()) != (ev.payload["size"], ev.payload["root"]):
                raise NoteError("the event's size/root differ from its signed note")
        except (NoteError, KeyError, TypeError) as exc:
            report.add(Problem("checkpoint", f"stored checkpoint does not verify: {exc}", CHECKPOINT_STREAM, ev.seq))
            continue
        targets.setdefault(cp.size, []).append((f"{CHECKPOINT_STREAM} seq {ev.seq}", cp))
    if public_dir is not None:
        for path in sorted(public_dir.glob("checkpoint-*.note")):
            try:
                cp = open_any(path.read_text())
            except (NoteError, OSError, UnicodeDecodeError) as exc:
                report.add(Problem("checkpoint", f"published checkpoint {path.name} does not verify: {exc}"))
                continue
            targets.setdefault(cp.size, []).append((f"published {path.name}", cp))
    return targets


def _results(store: Store, ring: KeyRing, max_id: int, workers: int, deep: bool) -> Iterator[RangeResult]:
    ranges = [(lo, min(lo + CHUNK - 1, max_id)) for lo in range(1, max_id + 1, CHUNK)]
    if workers <= 1:
        _init_worker(None, ring, deep, store)
        try:
            for bounds in ranges:
                yield _check_range(bounds)
        finally:
            _W.clear()  # the caller owns the store: hold no reference past this run
        return
    ctx = multiprocessing.get_context("fork")
    # Workers inherit the parent's heap; freezing it keeps their garbage collector from
    # walking (and copy-on-write copying) objects they never use.
    gc.freeze()
    try:
        with ctx.Pool(workers, initializer=_init_worker, initargs=(store.url, ring, deep)) as pool:
            yield from pool.imap(_check_range, ranges)
    finally:
        gc.unfreeze()


def _note_revocations(store: Store, ring: KeyRing) -> None:
    """Each revoked key's ``revoked_at_row``: the notification id of the key-ring event that
    first recorded its revocation."""
    for row in store.rows_of_kind("key.revoke.v1"):
        if row.stream != KEYRING_STREAM:
            continue
        try:
            key_id = orjson.loads(row.state)["payload"]["key_id"]
        except (ValueError, KeyError, TypeError):
            continue
        entry = ring.keys.get(key_id)
        if entry is not None and entry.revoked_at_seq is not None and entry.revoked_at_row is None:
            entry.revoked_at_row = row.notification_id


def verify_ledger(
    store: Store,
    *,
    public_dir: Path | None = None,
    anchor: bytes | None = None,
    workers: int | None = None,
    deep: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> VerifyReport:
    started = time.perf_counter()
    report = VerifyReport()
    ring = _keyring(store, report)
    _note_revocations(store, ring)
    house = ring.anchor
    report.anchor = house.public_key.hex() if house else None
    if anchor is not None:
        report.anchor_pinned = True
        if house is None or house.public_key != anchor:
            report.add(Problem("anchor", "the key ring's house key is not the pinned trust anchor", KEYRING_STREAM, 1))
    targets = _checkpoint_targets(store, ring, public_dir, report)
    total = store.count()
    if workers is None:
        workers = os.cpu_count() or 1
    if total < PARALLEL_THRESHOLD:
        workers = 1
    report.workers = workers
    max_id = store.max_notification_id()

    heads: dict[str, tuple[int, str]] = {}
    round_table: dict[str, str] = {}
    tree = CompactRange()
    for part in _results(store, ring, max_id, workers, deep):
        for check, reason, stream, seq, nid in part.problems:
            report.add(Problem(check, reason, stream, seq, nid))
        round_table.update(part.opens)
        for stream, seq, nid, key_id, at in part.deferred:
            problem = scope_problem_at(ring.keys.get(key_id), stream, {}, at, round_table.get(stream, ""))
            if problem:
                report.add(Problem(problem[0], problem[1], stream, seq, nid))
        for stream, nid in part.starts:
            if stream in heads:
                report.add(Problem("chain", f"seq 1 appears after seq {heads[stream][0]}: events out of order or repeated",
                                   stream, 1, nid))
        for stream, (seq, prev, nid) in part.first.items():
            problem = _chain_problem(heads.get(stream), seq, prev)
            if problem:
                report.add(Problem(problem[0], problem[1], stream, seq, nid))
        for stream, (seq, claimed) in part.last.items():
            before = heads.get(stream)
            heads[stream] = (max(seq, before[0]) if before else seq, claimed)
        leaves = part.leaves
        for i in range(0, len(leaves), 32):
            tree.append_leaf_hash(leaves[i:i + 32])
            for source, cp in targets.get(tree.size, ()):
                report.checkpoints_checked += 1
                if tree.root() != cp.root:
                    report.add(Problem(
                        "checkpoint",
                        f"the first {cp.size} events no longer hash to the root signed in {source}:"
                        " an event at or before that point was changed, removed, inserted or reordered",
                    ))
        report.events += part.count
        if progress:
            progress(report.events, total)
    for size in sorted(s for s in targets if s > tree.size):
        for source, _cp in targets[size]:
            report.checkpoints_checked += 1
            report.add(Problem(
                "checkpoint",
                f"{source} commits to {size} events but the ledger holds {tree.size}:"
                f" {size - tree.size} events were removed (tail truncated)",
            ))
    if 0 in targets:
        report.checkpoints_checked += len(targets[0])
    report.streams = len(heads)
    report.tree_size = tree.size
    report.root = base64.b64encode(tree.root()).decode()
    report.seconds = time.perf_counter() - started
    return report


"""Verify a whole ledger from its stored rows: nothing is trusted that is not re-proved.

For every stored event, in notification order:
- row: the bytes parse, and the row's (stream, seq, kind) are the event's own
  (catches rows swapped or moved by SQL);
- schema: the event passes the same strict schema as at ingest;
- hash: recomputed from the canonical body;
- signature: Ed25519 by the key it names;
- key and role: the key ring (rebuilt from its own stream) allows that key, for that
  actor, kind and time (revocations apply to every event at or after their time);
- chain: seq follows 1, 2, 3... within the stream and ``prev`` is the previous hash;
- tree: the RFC 9162 root after each checkpointed size equals that checkpoint's root,
  for checkpoints stored in the ledger and published as files; a checkpoint larger than
  the ledger means events were cut from the tail.

Hash and signature checks (the cost) run in worker processes, one per core; ordering
checks run in the parent as results come back in order.
"""

from __future__ import annotations

import base64
import itertools
import json
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ledger.canonical import GENESIS_PREV
from ledger.events import ENVELOPE_FIELDS, EventError, SignedEvent, parse_event
from ledger.keyring import KeyRing
from ledger.kinds import CHECKPOINT_STREAM, KEYRING_STREAM
from ledger.merkle import CompactRange, leaf_hash
from ledger.note import Checkpoint, NoteError, VerifierKey, open_checkpoint, verifier_key
from ledger.store import DatabaseURL, Store

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

Result = tuple[int, str, int, str, str, list[tuple[str, str]]]
# (notification_id, row stream, row seq, claimed hash, prev, problems)


def _init_worker(url: DatabaseURL | None, ring: KeyRing, store: Store | None = None) -> None:
    _W["store"] = store if store is not None else Store.open(url)  # type: ignore[arg-type]
    _W["ring"] = ring


def _check_row(nid: int, stream: str, seq: int, kind: str, state: bytes, ring: KeyRing) -> Result:
    problems: list[tuple[str, str]] = []
    try:
        d = json.loads(state)
        ev = SignedEvent(**{k: d[k] for k in ENVELOPE_FIELDS})
    except (ValueError, KeyError, TypeError) as exc:
        return (nid, stream, seq, "", "", [("row", f"stored bytes are not a pitboss event ({exc.__class__.__name__})")])
    if (ev.stream, ev.seq, ev.kind) != (stream, seq, kind):
        problems.append(("row", f"row is stored as ({stream}, {seq}, {kind}) but the event says"
                                f" ({ev.stream}, {ev.seq}, {ev.kind}): rows were swapped or moved"))
    try:
        parse_event(d)
        ev.check_hash()
        entry = ring.authorize(ev) if stream != KEYRING_STREAM else None
    except EventError as exc:
        problems.append((exc.check, exc.reason if exc.check != "key" else f"untrusted: {exc.reason}"))
        entry = ring.keys.get(ev.key_id) if isinstance(ev.key_id, str) else None
    if entry is not None:
        try:
            ev.check_signature(entry.verifier)
        except (EventError, ValueError, TypeError) as exc:
            problems.append(("signature", str(exc)))
    claimed = ev.hash if isinstance(ev.hash, str) else ""
    prev = ev.prev if isinstance(ev.prev, str) else ""
    return (nid, stream, seq, claimed, prev, problems)


def _check_range(bounds: tuple[int, int]) -> list[Result]:
    lo, hi = bounds
    store: Store = _W["store"]
    ring: KeyRing = _W["ring"]
    rows = store.recorder.select_notifications(lo, hi - lo + 1, stop=hi)
    return [_check_row(n.id, str(n.originator_id), n.originator_version, n.topic, bytes(n.state), ring) for n in rows]


# --- parent side -------------------------------------------------------------------

def _keyring(store: Store, report: VerifyReport) -> KeyRing:
    """Rebuild the key ring from its stream, checking each of its events fully."""
    ring = KeyRing()
    expected_prev, expected_seq = GENESIS_PREV, 1
    for ev in store.stream_events(KEYRING_STREAM):
        try:
            if ev.seq != expected_seq or ev.prev != expected_prev:
                raise EventError("chain", "key ring chain is broken here")
            ev.check_hash()
            entry = ring.authorize(ev)
            ev.check_signature(entry.verifier)
            ring.apply(ev)
        except EventError as exc:
            report.add(Problem(exc.check, f"key ring: {exc.reason}; later key-ring events are not trusted",
                               KEYRING_STREAM, ev.seq))
            break
        expected_prev, expected_seq = ev.hash, ev.seq + 1
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


def _results(store: Store, ring: KeyRing, max_id: int, workers: int) -> Iterator[Result]:
    ranges = [(lo, min(lo + CHUNK - 1, max_id)) for lo in range(1, max_id + 1, CHUNK)]
    if workers <= 1:
        _init_worker(None, ring, store)
        try:
            for bounds in ranges:
                yield from _check_range(bounds)
        finally:
            _W.clear()  # the caller owns the store: hold no reference past this run
        return
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers, initializer=_init_worker, initargs=(store.url, ring)) as pool:
        yield from itertools.chain.from_iterable(pool.imap(_check_range, ranges))


def verify_ledger(
    store: Store,
    *,
    public_dir: Path | None = None,
    anchor: bytes | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> VerifyReport:
    started = time.perf_counter()
    report = VerifyReport()
    ring = _keyring(store, report)
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
    tree = CompactRange()
    for nid, stream, seq, claimed, prev, errors in _results(store, ring, max_id, workers):
        for check, reason in errors:
            report.add(Problem(check, reason, stream, seq, nid))
        report.events += 1
        # chain
        last_seq, last_hash = heads.get(stream, (0, GENESIS_PREV))
        if seq != last_seq + 1:
            if seq <= last_seq:
                report.add(Problem("chain", f"seq {seq} appears after seq {last_seq}: events out of order or repeated", stream, seq, nid))
            else:
                missing = f"seq {last_seq + 1}" if seq == last_seq + 2 else f"seqs {last_seq + 1}..{seq - 1}"
                report.add(Problem("chain", f"{missing} missing: deleted from the stream", stream, seq, nid))
        elif prev != last_hash:
            report.add(Problem("chain", f"prev does not match the hash of seq {last_seq}", stream, seq, nid))
        heads[stream] = (max(seq, last_seq), claimed)
        # tree
        try:
            tree.append_leaf_hash(leaf_hash(bytes.fromhex(claimed)))
        except ValueError:
            tree.append_leaf_hash(leaf_hash(claimed.encode()))
        for source, cp in targets.get(tree.size, ()):
            report.checkpoints_checked += 1
            if tree.root() != cp.root:
                report.add(Problem(
                    "checkpoint",
                    f"the first {cp.size} events no longer hash to the root signed in {source}:"
                    " an event at or before that point was changed, removed, inserted or reordered",
                ))
        if progress and report.events % 5000 == 0:
            progress(report.events, total)
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


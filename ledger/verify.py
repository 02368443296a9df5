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
  nothing follows a round's ``round.close.v1`` (ingest refuses it: ``ledger.judges.round``);
- tree: the RFC 9162 root after each checkpointed size equals that checkpoint's root,
  for checkpoints stored in the ledger and published as files; a checkpoint larger than
  the ledger means events were cut from the tail;
- rows (issue 14 point 3): every row is read, whatever its id; an id outside 1..N, a gap
  (on SQLite, where ids are never burned) or a row count that differs from the tree size
  is a named problem;
- roots (issue 14 points 1 and 2, ``ledger.trust``): the key ring's house key is the
  pinned anchor; checkpoints count only when signed by the pinned log key, which must be
  a ledger key of that key ring, and, when witnesses are pinned, cosigned by a quorum of
  them; the verifier's last accepted checkpoint (its own state) and a ``--since`` note
  are checkpoints the ledger must still extend, so a rollback or a rewritten history is
  named.

The verdict is OK only when nothing is wrong, the roots are pinned and at least one
accepted checkpoint anchors the tree; FAILED when something is wrong; otherwise
UNVERIFIED, naming what was missing.

Hash and signature checks (the cost) run on every core, on ranges of CHUNK rows whose
subtree root is computed with them: in worker processes, one fewer than the cores, and in
the parent, which checks the next range itself whenever the result it needs next is not
back yet (``_results``); ordering checks run in the parent as results come back in order.
The ledger's last ranges are cut in quarters so that the checkers finish together. The
parent keeps a chain head per stream only until a round closes: its memory follows the
rounds open at once and the venue's other streams, not the ledger's length.
"""

from __future__ import annotations

import base64
import bisect
import gc
import hashlib
import heapq
import multiprocessing
import os
import sys
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from ledger.canonical import canonical_json, event_hash
from ledger.chain import follows, link, link_problem
from ledger.events import BODY_FIELDS, EventError, SignedEvent, check_payload, event_from_stored, parse_event, signed_event
from ledger.forking import worker_pool
from ledger.keyring import KeyEntry, KeyRing
from ledger.keys import describe_libsodium, verify_signature, verify_signatures
from ledger.kinds import CHECKPOINT_STREAM, KEYRING_STREAM
from ledger.log.merkle import CompactRange, leaf_hash, root_from_leaf_hashes
from ledger.log.note import (
    Checkpoint,
    NoteError,
    VerifierKey,
    open_checkpoint,
    verifier_key,
)
from ledger.scope import covers, describe, place_of
from ledger.store import DatabaseURL, Row, Store
from ledger.timeutil import parse_utc_trusted
from ledger.trust import ClientState, TrustError, TrustRoots

_sha256 = hashlib.sha256
PARALLEL_THRESHOLD = 4000
CHUNK = 1024
"""Rows a worker checks at once: a power of two, so that a whole range is a perfect
subtree of the log (its leaves start at a multiple of its width) whose root the worker
computes, and the parent appends one hash for it (``CompactRange.append_subtree``).
1,024, measured on a 2-core Xeon with the parent helping: faster than 2,048 in five
alternated pairs of five (0.754 against 0.728 of all-cores libsodium on average) and than
512 in five of five. Why (a range's rows, about 560 KB, staying in a core's cache; finer
sharing of the work between parent and worker) was not isolated."""
IN_FLIGHT = 3
"""Ranges in flight a worker (``_results``): a worker has its next range queued while the
parent takes a result, and no more than these results ever wait in the parent, nor more
than these a checker of the ranges the parent checked itself. A worker the parent helps
holds two: at the end, what is queued to a worker cannot be taken back."""


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
    ok: bool = False
    """True only for the verdict OK: no problem, pinned roots, an accepted checkpoint."""
    verdict: str = "UNVERIFIED"
    events: int = 0
    streams: int = 0
    tree_size: int = 0
    root: str = ""
    checkpoints_checked: int = 0
    checkpoints_accepted: int = 0
    accepted_size: int = 0
    """The largest checkpoint accepted (signed by the pinned log key, matched, witnessed)."""
    accepted_sizes: list[int] = field(default_factory=list)
    uncovered: int = 0
    """Events after the largest accepted checkpoint: signed and chained, not yet anchored."""
    anchor: str | None = None
    anchor_pinned: bool = False
    trust_roots: dict[str, Any] = field(default_factory=dict)
    unverified: list[str] = field(default_factory=list)
    """Why the verdict cannot be OK though nothing is wrong (a root not pinned, no checkpoint)."""
    notes: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    state_saved: str | None = None
    seconds: float = 0.0
    workers: int = 1
    signatures_checked_with: str = ""
    """The libsodium that judged every signature (``ledger.keys.describe_libsodium``)."""

    @property
    def clean(self) -> bool:
        """Nothing wrong was found (whether or not the verdict could be OK)."""
        return not self.problems

    def add(self, problem: Problem) -> None:
        self.problems.append(problem)

    def rejected(self) -> set[tuple[str, int]]:
        """(stream, seq) of every event a problem names: what jobs must not count."""
        return {(p.stream, p.seq) for p in self.problems if p.stream is not None and p.seq is not None}

    def rejected_rows(self) -> set[int]:
        return {p.notification_id for p in self.problems if p.notification_id is not None}

    def decide(self) -> None:
        self.verdict = "FAILED" if self.problems else ("UNVERIFIED" if self.unverified else "OK")
        self.ok = self.verdict == "OK"

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
    subroot: bytes = b""
    """The root of the range's leaves when their count is a power of two (a perfect subtree
    of the log when the range starts at a multiple of it, as ``_IdScan``'s ranges do)."""
    closes: list[str] = field(default_factory=list)
    """Round streams whose ``round.close.v1`` is here: nothing may follow it (the round
    judge), so the parent keeps no chain head for them once the range is merged."""
    done: list[str] = field(default_factory=list)
    """Rounds whole in this range, from seq 1 to their close: in none of ``starts``,
    ``last``, ``opens`` and ``closes`` (most rounds: the parent only checks that the name is
    new and records it closed, and the result crosses the pipe in a fraction of the bytes)."""
    done_rows: array[int] = field(default_factory=lambda: array("q"))
    """The notification id of each ``done`` round's seq 1."""


def _init_worker(url: DatabaseURL | None, ring: KeyRing, deep: bool, store: Store | None = None, nice: int = 0
                 ) -> None:
    if store is None:  # a pool worker: Ctrl-C is the parent's to handle (one line, exit 130), not each worker's
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if nice:
            os.nice(nice)
    _W["store"] = store if store is not None else Store.open(url)  # type: ignore[arg-type]  # url is given whenever store is not (the pool's initializer)
    _W["ring"] = ring
    _W["deep"] = deep


_COVERED: dict[tuple[tuple[str, ...], str | None], bool] = {}
"""``covers(scope, place)`` as computed for each (scope, place) met: verify asks it of
every event by a scoped key, and a day's events name few tables."""


_TABLE_COVERED: set[tuple[tuple[str, ...], str]] = set()
"""(scope, table) where ``covers(scope, "table:<table>")``: the question asked of nearly
every event verify checks (a round event by a dealer key), answered for a key whose scope
never changed without reading its time or building the place."""


def scope_problem_at(entry: KeyEntry | None, stream: str, payload: Any, at: str, round_table: str | None,
                     when: datetime | None = None) -> tuple[str, str] | None:
    """("scope", reason) if ``entry``'s scope at ``at`` (``when``, parsed) does not reach the
    event. ``round_table``: a round event's table (its round.open's), else None."""
    if entry is None:
        return None
    single = round_table is not None and len(entry.scopes) == 1 and stream.startswith("round:")
    if single and (entry.scopes[0][1], round_table) in _TABLE_COVERED:
        return None
    try:
        scope = entry.scope_at(when if when is not None else parse_utc_trusted(at))
    except (ValueError, TypeError):
        return None  # the key check names an unreadable time
    place = place_of(stream, payload if isinstance(payload, dict) else {}, round_table)
    covered = _COVERED.get((scope, place))
    if covered is None:
        if len(_COVERED) >= 100_000:
            _COVERED.clear()
        covered = _COVERED[(scope, place)] = covers(scope, place)
    if covered:
        if single and round_table is not None:  # one scope at every time, the place "table:<round_table>"
            if len(_TABLE_COVERED) >= 100_000:
                _TABLE_COVERED.clear()
            _TABLE_COVERED.add((scope, round_table))
        return None
    return ("scope", f"untrusted: key {entry.key_id} ({entry.role}) may write only at {describe(scope)}, not at"
                     f" {place or 'a venue-level stream'}")


def _check_row(stream: str, seq: int, kind: str, state: bytes, ring: KeyRing, deep: bool,
               problems: list[tuple[str, str]], nid: int = 0, opens: dict[str, str] | None = None,
               deferred: list[tuple[str, int, int, str, str]] | None = None, sig_ok: bool | None = None,
               decoded: Any = None) -> tuple[str, str]:
    """Check one stored event; append its problems; return (claimed hash, prev). A round
    event whose round.open is not in ``opens`` (this range's) goes to ``deferred``.
    ``sig_ok``: the signature's verdict when the caller checked it already (over the
    claimed hash, by the key ring's key of the row's ``key_id``: ``RowJudge.prepare``).
    ``decoded``: ``orjson.loads(state)`` when the caller has it already (``RowJudge``),
    which this takes ``hash`` and ``sig`` out of."""
    if decoded is not None:
        d = decoded
    else:
        try:
            d = orjson.loads(state)
        except ValueError as exc:  # orjson.JSONDecodeError is a ValueError
            problems.append(("row", f"stored bytes are not a pitboss event ({exc})"))
            return "", ""
    try:
        canonical = canonical_json(d) == state  # the whole event, before hash and sig are taken out
    except (ValueError, TypeError):
        canonical = False
    try:
        claimed, sig, key_id = d.pop("hash"), d.pop("sig"), d["key_id"]
        if not (isinstance(claimed, str) and isinstance(sig, str) and isinstance(key_id, str)):
            raise TypeError("hash, sig and key_id must be strings")
        if d.keys() != _BODY_KEYS:
            raise KeyError(f"fields {sorted(d.keys() ^ _BODY_KEYS)} differ from the envelope's")
    except (KeyError, TypeError, AttributeError) as exc:  # AttributeError: JSON that is not an object
        problems.append(("row", f"stored bytes are not a pitboss event ({exc})"))
        return "", ""
    if not canonical:  # issue 13 point 6: any SQL reader must see exactly what was signed
        problems.append(("row", "stored bytes are not the canonical encoding (RFC 8785) of the event they parse to:"
                                " duplicate keys, whitespace, key order or escapes were changed, so a reader of the row"
                                " may see other values than were signed"))
    if (d["stream"], d["seq"], d["kind"]) != (stream, seq, kind):
        problems.append(("row", f"row is stored as ({stream}, {seq}, {kind}) but the event says"
                                f" ({d['stream']}, {d['seq']}, {d['kind']}): rows were swapped or moved"))
    entry = ring.keys.get(key_id)
    digest = b""
    when: datetime | None = None
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
            try:
                when = parse_utc_trusted(d["at"])
            except (ValueError, TypeError) as exc:
                raise EventError("schema", f"at: {exc}") from None
            ring.authorize_fields(key_id, d["actor"], kind, d["at"], when)
            if entry is not None and entry.revoked_at_row is not None and nid > entry.revoked_at_row:
                raise EventError("key", f"stored after the key ring recorded this key's revocation (row"
                                        f" {entry.revoked_at_row}): ingest takes nothing more from such a key, so this"
                                        " row was written behind its back")
    except EventError as exc:
        problems.append((exc.check, exc.reason if exc.check != "key" else f"untrusted: {exc.reason}"))
    payload = d["payload"]
    is_round = stream.startswith("round:")
    table: str | None = None  # a round event's table: its own for the round.open, else its round.open's
    if is_round and kind == "round.open.v1":
        own = payload.get("table") if isinstance(payload, dict) else None
        if isinstance(own, str):
            table = own
            if opens is not None:
                opens[stream] = own
    elif is_round and opens is not None:
        table = opens.get(stream)
    if entry is None or stream == KEYRING_STREAM:
        pass
    elif table is not None and len(entry.scopes) == 1 and (entry.scopes[0][1], table) in _TABLE_COVERED:
        pass  # ``scope_problem_at``'s first answer, asked here of nearly every event: a call less
    elif entry.scoped:
        if is_round and table is None and kind != "round.open.v1":
            if deferred is not None:
                deferred.append((stream, seq, nid, key_id, d["at"]))
        else:
            problem = scope_problem_at(entry, stream, payload, d["at"], table, when)
            if problem:
                problems.append(problem)
    if entry is not None:
        ok = sig_ok
        if ok is None:
            try:
                ok = verify_signature(entry.public_key, bytes.fromhex(sig), digest or bytes.fromhex(claimed))
            except ValueError:
                ok = False
        if not ok:
            problems.append(("signature", f"bad signature: not made by key {key_id} over this event's hash"))
    prev = d["prev"] if isinstance(d["prev"], str) else ""
    return claimed, prev


def _check_range(bounds: tuple[int, int]) -> RangeResult:
    lo, hi = bounds
    store: Store = _W["store"]
    ring: KeyRing = _W["ring"]
    deep: bool = _W["deep"]
    rows = store.row_range(lo, hi, raw=True)
    leaves = bytearray()
    first: dict[str, tuple[int, str, int]] = {}
    last: dict[str, tuple[int, str]] = {}
    starts: list[tuple[str, int]] = []
    out: list[ProblemRow] = []
    problems: list[tuple[str, str]] = []  # the current row's, emptied after each row
    opens: dict[str, str] = {}
    deferred: list[tuple[str, int, int, str, str]] = []
    closes: set[str] = set()
    for nid, stream, seq, kind, state in rows:
        claimed, prev = _check_row(stream, seq, kind, state, ring, deep, problems, nid, opens, deferred)
        if stream in closes:
            problems.append(("chain", _AFTER_CLOSE))
        elif kind == "round.close.v1" and stream.startswith("round:"):
            closes.add(stream)
        try:  # RFC 9162 leaf hash of the claimed hash's bytes (``leaf_hash``, inlined: once a row)
            leaves += _sha256(b"\x00" + (bytes.fromhex(claimed) if len(claimed) == 64 else claimed.encode())).digest()
        except ValueError:
            leaves += leaf_hash(claimed.encode())
        before = last.get(stream)
        if before is None and seq == 1:
            # Most streams start here: check the genesis link now and only tell the parent
            # the stream started (it must not have been seen in an earlier range).
            starts.append((stream, nid))
            if not follows(None, 1, prev):  # the wording only for a problem
                problem = _chain_problem(None, 1, prev)
                if problem:
                    problems.append(problem)
            last[stream] = (1, claimed)
        else:
            if before is None:
                first[stream] = (seq, prev, nid)
            elif not follows(before, seq, prev):
                problem = _chain_problem(before, seq, prev)
                if problem:
                    problems.append(problem)
            last[stream] = (max(seq, before[0]) if before else seq, claimed)
        if problems:
            out.extend((c, r, stream, seq, nid) for c, r in problems)
            problems.clear()
    done: list[str] = []
    done_rows = array("q")
    if closes:
        begun = dict(starts)
        for stream in closes:
            start = begun.get(stream)
            if start is not None:
                done.append(stream)
                done_rows.append(start)
                del last[stream]
                opens.pop(stream, None)
        if done:
            whole_here = set(done)
            starts = [(stream, nid) for stream, nid in starts if stream not in whole_here]
            closes -= whole_here
    leaf_bytes = bytes(leaves)
    n = len(rows)
    whole = n > 1 and not n & (n - 1)  # a power of two: a perfect subtree where it starts at a multiple of n
    subroot = root_from_leaf_hashes([leaf_bytes[i:i + 32] for i in range(0, len(leaf_bytes), 32)]) if whole else b""
    return RangeResult(len(rows), leaf_bytes, first, last, out, starts, opens, deferred, subroot, list(closes), done,
                       done_rows)


_AFTER_CLOSE = ("an event of a round after its round.close: nothing may follow a round's close (ingest refuses it),"
                " so it was written behind the ledger's back")


class ClosedNames:
    """The names of closed rounds, as verification meets their closes, in about 8 bytes a
    name: a 64-bit digest of each, keyed with a secret drawn for this run (so nobody can
    choose a name that collides with another), in a sorted ``array`` searched by
    bisection, the latest ones in a small set until they are merged in. A set of the names
    (or of 16-byte digests) costs some 90 bytes a round: 8.7 MiB of the parent's memory
    for a 100,000-round day, which grew it with the ledger, not with the rounds open at
    once (issue 16, "memory bounded by the rounds open at once").

    A collision of two names' digests (about n / 2**64 a lookup) can only make verify name
    a row of an open round as following a close, a false alarm, never hide a row."""

    MERGE_AT = 8192  # names held in the set before they are merged into the array

    def __init__(self) -> None:
        self._key = os.urandom(16)
        self._sorted = array("q")
        self._recent: set[int] = set()
        self._digest: Callable[[str], int] = self._blake2b
        """A 64-bit digest of a name keyed with this run's secret: Python's own ``hash`` of
        a str (SipHash keyed at start-up, PEP 456; a tenth of BLAKE2b's cost here) unless
        PYTHONHASHSEED fixed that key (one anyone may know), then BLAKE2b keyed with ``_key``."""
        if sys.flags.hash_randomization and os.environ.get("PYTHONHASHSEED", "random") == "random":
            self._digest = hash

    def _blake2b(self, name: str) -> int:
        return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8, key=self._key).digest(), "little",
                              signed=True)

    def add(self, name: str) -> None:
        self._recent.add(self._digest(name))
        if len(self._recent) >= self.MERGE_AT:
            # one merge of two sorted runs, element by element: no list of every digest is made
            self._sorted = array("q", heapq.merge(self._sorted, sorted(self._recent)))
            self._recent = set()

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        d = self._digest(name)
        if d in self._recent:
            return True
        i = bisect.bisect_left(self._sorted, d)
        return i < len(self._sorted) and self._sorted[i] == d

    def __len__(self) -> int:
        return len(self._sorted) + len(self._recent)


def _start_problem(heads: dict[str, tuple[int, str]], closed: ClosedNames, stream: str, nid: int) -> Problem | None:
    """The problem with a stream's seq 1 in a later range than its first events (still
    open: ``heads``) or than its close (``closed``), or None when the name is new."""
    if stream in heads:
        return Problem("chain", f"seq 1 appears after seq {heads[stream][0]}: events out of order or repeated",
                       stream, 1, nid)
    if closed and stream in closed:
        return Problem("chain", _AFTER_CLOSE, stream, 1, nid)
    return None


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
            ev.check_signature(entry.public_key)
            ring.apply(ev)
        except EventError as exc:
            report.add(Problem(exc.check, f"key ring: {exc.reason}; later key-ring events are not trusted",
                               KEYRING_STREAM, ev.seq))
            break
        before = (ev.seq, ev.hash)
    return ring


@dataclass
class Target:
    """A checkpoint the tree must match at its size: where it came from, what it says, and
    the notes (with any witness cosignatures) that carry it."""

    source: str
    checkpoint: Checkpoint
    notes: list[str]
    must_match: bool = True
    matched: bool = False


def _log_keys(ring: KeyRing, roots: TrustRoots, report: VerifyReport) -> list[VerifierKey]:
    """The keys checkpoints are opened with: the pinned log key (which must be a ledger key
    of the anchored key ring), or, unpinned, the ring's own ledger keys (verdict UNVERIFIED)."""
    ledger_keys = [e for e in ring.keys.values() if e.role == "ledger"]
    if roots.log_key is None:
        out = []
        for e in ledger_keys:
            try:
                out.append(VerifierKey.parse(verifier_key(e.actor, e.public_key)))
            except NoteError:
                continue
        return out
    if not any(e.public_key == roots.log_key.public_key and e.actor == roots.log_key.name for e in ledger_keys):
        report.add(Problem("log key", f"the pinned log key {roots.log_key.name} ({roots.log_key.key_hash.hex()}) is not a"
                                      " ledger key of this key ring: checkpoints signed by another key prove nothing"
                                      " here", KEYRING_STREAM))
    return [roots.log_key]


def _open_any(note: str, keys: list[VerifierKey]) -> Checkpoint:
    last: Exception | None = None
    for key in keys:
        try:
            return open_checkpoint(note, key)
        except NoteError as exc:
            last = exc
    raise NoteError(str(last) if last else "no log key to open it with")


def add_target(targets: dict[int, list[Target]], source: str, cp: Checkpoint, note: str) -> None:
    """One more checkpoint to compare against; the same checkpoint from several places is
    one target whose notes pool their cosignatures."""
    for t in targets.get(cp.size, []):
        if t.checkpoint == cp:
            t.notes.append(note)
            t.source += f", {source}"
            return
    targets.setdefault(cp.size, []).append(Target(source, cp, [note]))


def _checkpoint_targets(
    store: Store, keys: list[VerifierKey], public_dir: Path | None, report: VerifyReport
) -> dict[int, list[Target]]:
    """Every checkpoint to compare against: size -> targets (stored in the ledger, published)."""
    targets: dict[int, list[Target]] = {}

    for ev in store.stream_events(CHECKPOINT_STREAM):
        try:
            cp = _open_any(ev.payload["note"], keys)
            if (cp.size, base64.b64encode(cp.root).decode()) != (ev.payload["size"], ev.payload["root"]):
                raise NoteError("the event's size/root differ from its signed note")
        except (NoteError, KeyError, TypeError) as exc:
            report.add(Problem("checkpoint", f"stored checkpoint does not verify with the log key: {exc}",
                               CHECKPOINT_STREAM, ev.seq))
            continue
        add_target(targets, f"{CHECKPOINT_STREAM} seq {ev.seq}", cp, ev.payload["note"])
    if public_dir is not None:
        for path in sorted(public_dir.glob("checkpoint-*.note")):
            try:
                note = path.read_text(encoding="utf-8")
                cp = _open_any(note, keys)
            except (NoteError, OSError, UnicodeDecodeError) as exc:
                report.add(Problem("checkpoint", f"published checkpoint {path.name} does not verify: {exc}"))
                continue
            add_target(targets, f"published {path.name}", cp, note)
    return targets


def _results(store: Store, ring: KeyRing, ranges: list[tuple[int, int]], workers: int, deep: bool, nice: int = 0
             ) -> Iterator[RangeResult]:
    """Each range of CHUNK rows (by their ids, whatever they are: ``_IdScan``) checked, in order."""
    if workers <= 1:
        _init_worker(None, ring, deep, store)
        try:
            for bounds in ranges:
                yield _check_range(bounds)
        finally:
            _W.clear()  # the caller owns the store: hold no reference past this run
        return
    ctx = multiprocessing.get_context("fork")
    # The parent checks ranges too, between taking the workers' results (one worker fewer:
    # two processes on two cores, not three, and the first range starts at once rather
    # than after the pool's start-up), except beside reconciliation's day pass (``nice``),
    # whose core it leaves alone.
    helping = nice == 0
    procs = workers - 1 if helping else workers
    # Workers inherit the parent's heap; freezing it keeps their garbage collector from
    # walking (and copy-on-write copying) objects they never use.
    gc.freeze()
    try:
        with worker_pool(ctx, procs, _init_worker, (store.url, ring, deep, None, nice)) as pool:
            if helping:
                _init_worker(None, ring, deep, store)
            # A few ranges a worker in flight, not all (``pool.imap`` queues every result
            # the parent has not taken yet, each with 32 bytes of leaf hash a row): the
            # results waiting in the parent are at most IN_FLIGHT a worker whatever the
            # ledger's size, even when it falls behind its workers (issue 16).
            todo = deque(ranges)
            flight: deque[Any] = deque()  # in range order: a worker's AsyncResult, or a RangeResult checked here
            queued = done_here = 0
            # a worker helped by the parent holds one range waiting behind the one it checks:
            # at the end, what is queued to a worker cannot be taken back by the parent
            depth = 2 if helping else IN_FLIGHT
            while todo or flight:
                while todo and queued < depth * procs:
                    flight.append(pool.apply_async(_check_range, (todo.popleft(),)))
                    queued += 1
                head = flight[0]
                if isinstance(head, RangeResult):
                    done_here -= 1
                elif helping and todo and done_here < IN_FLIGHT * workers and not head.ready():
                    flight.append(_check_range(todo.popleft()))  # the next range, here, while the worker works
                    done_here += 1
                    continue
                else:
                    queued -= 1
                    head = head.get()
                flight.popleft()
                yield head
    finally:
        gc.unfreeze()
        _W.clear()  # the caller owns the store: hold no reference past this run


def _note_revocations(store: Store, ring: KeyRing, ring_rows: Sequence[Row] | None = None) -> None:
    """Each revoked key's ``revoked_at_row``: the notification id of the key-ring event that
    first recorded its revocation (from ``ring_rows``, the key ring's rows, when the caller
    has read them already)."""
    for row in ring_rows if ring_rows is not None else store.stream_rows(KEYRING_STREAM):
        if row.kind != "key.revoke.v1":
            continue
        try:
            key_id = orjson.loads(row.state)["payload"]["key_id"]
        except (ValueError, KeyError, TypeError):
            continue
        entry = ring.keys.get(key_id)
        if entry is not None and entry.revoked_at_seq is not None and entry.revoked_at_row is None:
            entry.revoked_at_row = row.notification_id


def revoked_later(check: str, reason: str) -> bool:
    """A problem that is a key's revocation applied to an event signed while it was
    trusted at ingest: a judgement a key-compromise ruling may confirm later, which
    reconciliation reports. The read side keeps such events (its incremental views
    cannot take back what they applied); everything else that fails is left out."""
    return check == "key" and " is revoked from " in reason


READ_AHEAD = 8
"""Chunks of signatures a read-side job keeps with the checkers beyond the row it judges
(``RowJudge``): enough that they never wait for work (a chunk takes a checker about
twice as long as the caller takes to apply its rows), few enough that the pipe never
fills (8 chunks are about 35 KB of a pipe's 64 KB)."""


class RowJudge:
    """Issue 14 point 3 for the read side (views, AML, table state): a row counts only if
    it is what a key allowed to write it signed (the row's bytes, hash, signature, key and
    role at its time, and scope where its round's table is known), by the key ring
    rebuilt from its own stream, and its payload has the form ingest requires (its kind's
    schema: a row written behind ingest's back may carry anything). What it refuses is kept in ``refused`` (row id, reason).
    Chains and checkpoints are ``verify_ledger``'s: a job that needs them runs it."""

    def __init__(self, store: Store):
        report = VerifyReport()
        self.ring = _keyring(store, report)
        _note_revocations(store, self.ring)
        self.opens: dict[str, str] = {}
        self.refused: list[tuple[int, str]] = []
        self._problems: list[tuple[str, str]] = []
        self._pre: dict[int, int] = {}
        self._decoded: dict[int, dict[str, Any]] = {}
        """Each prepared row's JSON, decoded once for its signature job, its checks and its
        event (``event``): a chunk's worth at most (``prepare`` starts afresh)."""
        self._verdict: Callable[[int], bool] = lambda i: False

    def prepare(self, rows: Sequence[tuple[int, str, int, str, bytes]]) -> None:
        """Start checking the signatures of the rows about to be judged, on all cores
        (``ledger.keys.verify_signatures``), while the caller applies them in order."""
        jobs: list[tuple[bytes, bytes, bytes]] = []
        self._pre = {}
        self._decoded = decoded = {}
        job_for = self.ring.job_for
        for nid, stream, _, _, state in rows:
            if stream == KEYRING_STREAM:
                continue
            try:
                d = orjson.loads(state)
                job = job_for(d["key_id"], d["sig"], d["hash"])
            except (ValueError, KeyError, TypeError):  # not such an event: ``_check_row`` names why, in its turn
                continue
            decoded[nid] = d
            if job is not None:
                self._pre[nid] = len(jobs)
                jobs.append(job)
        self._verdict = verify_signatures(jobs, ahead=READ_AHEAD)  # asked for in order, in ``__call__``

    def __call__(self, nid: int, stream: str, seq: int, kind: str, state: bytes) -> bool:
        """Whether the row counts."""
        return stream == KEYRING_STREAM or self._judge(nid, stream, seq, kind, state) is not None

    def event(self, nid: int, stream: str, seq: int, kind: str, state: bytes) -> SignedEvent | None:
        """The row's event if it counts, else None: built from the JSON its checks decoded
        (``event_from_stored`` would decode the row again)."""
        if stream == KEYRING_STREAM:
            return event_from_stored(state)  # rebuilt and checked in order by _keyring
        d = self._judge(nid, stream, seq, kind, state)
        return None if d is None else signed_event(d)

    def _judge(self, nid: int, stream: str, seq: int, kind: str, state: bytes) -> dict[str, Any] | None:
        """The row's JSON, whole, if it counts (its checks pass), else None, its reasons in ``refused``."""
        pre = self._pre.pop(nid, None)
        d = self._decoded.pop(nid, None)
        if d is None:
            try:
                d = orjson.loads(state)
            except ValueError:
                d = None  # ``_check_row`` decodes it again to name why
        sig = d.get("sig") if type(d) is dict else None
        claimed, _ = _check_row(stream, seq, kind, state, self.ring, False, self._problems, nid, self.opens, None,
                                self._verdict(pre) if pre is not None else None, d)
        if not self._problems and d is not None:
            try:  # signed by a key allowed to write it, but maybe never through ingest: the form ingest requires
                check_payload(kind, d["payload"])
            except EventError as exc:
                self._problems.append((exc.check, exc.reason))
        self._problems[:] = [(c, r) for c, r in self._problems if not revoked_later(c, r)]
        if self._problems:
            self.refused.append((nid, f"{stream} seq {seq}: " + "; ".join(f"{c}: {r}" for c, r in self._problems)))
            self._problems.clear()
            return None
        assert d is not None  # a row whose JSON does not decode has a problem
        d["hash"], d["sig"] = claimed, sig  # what ``_check_row`` took out
        return d


def counted(rows: Iterable[tuple[int, str, int, str, bytes]], accept: Callable[[int, str, int, str, bytes], bool]
            ) -> Iterator[tuple[int, SignedEvent]]:
    """(notification id, event) of each row that ``accept`` counts, in order: decoded by
    the judge itself where it hands events back (``RowJudge.event``: once a row), else
    after it (``event_from_stored``)."""
    event = getattr(accept, "event", None)
    if event is not None:
        for row in rows:
            ev = event(*row)
            if ev is not None:
                yield row[0], ev
    else:
        for row in rows:
            if accept(*row):
                yield row[0], event_from_stored(row[4])


class _IdScan:
    """One streamed pass over every row's notification id, in order, holding no list of
    them (a ledger of millions of rows): the ranges of CHUNK rows the workers check, the
    row count, the leaf index of the rows asked about (``wanted``), and issue 14 point 3's
    findings: ids outside 1..N, and gaps where ids are never burned (SQLite)."""

    def __init__(self, store: Store, wanted: AbstractSet[int] = frozenset()):
        self.ranges: list[tuple[int, int]] = []
        self.total = 0
        self.positions: dict[int, int] = {}
        self.outside: list[int] = []
        self.gaps: list[str] = []
        self.gap_count = self.missing = 0
        self.first: int | None = None
        self.contiguous = False
        """Ids are exactly 1..N: a range's rows are known from its bounds."""
        bounds = store.id_bounds()
        if bounds is not None and bounds[0] == 1 and store.count() == bounds[1]:
            # N distinct ids (a key) from 1 to N are exactly 1..N: the streamed pass
            # would find no gap and nothing outside, and the ranges follow from N (two
            # index lookups and a count, against fetching every id)
            self.total = self.first = n = bounds[1]
            self.contiguous = True
            self.ranges = [(lo, min(lo + CHUNK - 1, n)) for lo in range(1, n + 1, CHUNK)]
            self.positions = {i: i - 1 for i in wanted if 1 <= i <= n}
            return
        previous: int | None = None
        start = last = 0
        for i in store.iter_notification_ids():
            if self.total % CHUNK == 0:
                start = i
            if i in wanted:
                self.positions[i] = self.total
            self.total += 1
            last = i
            if self.total % CHUNK == 0:
                self.ranges.append((start, i))
            if i < 1:
                if len(self.outside) < 20:
                    self.outside.append(i)
                continue
            if self.first is None:
                self.first = i
                if i != 1:
                    self._gap(1, i - 1)
            elif previous is not None and i != previous + 1:
                self._gap(previous + 1, i - 1)
            previous = i
        if self.total % CHUNK:
            self.ranges.append((start, last))

    TAPER = 2
    """Ranges a worker at the ledger's end that are cut in quarters (``tapered``)."""

    def tapered(self, workers: int) -> tuple[list[tuple[int, int]], list[int]]:
        """The ranges the workers check, and the rows each holds. Where ids are exactly
        1..N, the last ``TAPER`` ranges a worker are cut in quarters (still powers of two
        starting at multiples of their width: perfect subtrees), so that the workers
        finish within a quarter-range of one another rather than one waiting out the
        other's whole last range (about 5% of a 2-core run, issue 16)."""
        counts = [min(CHUNK, self.total - i) for i in range(0, self.total, CHUNK)]
        if not self.contiguous or workers <= 1 or CHUNK % 4:
            return self.ranges, counts
        cut = max(0, len(self.ranges) - self.TAPER * workers)
        ranges = self.ranges[:cut]
        quarter = CHUNK // 4
        for lo, hi in self.ranges[cut:]:
            ranges += [(a, min(a + quarter - 1, hi)) for a in range(lo, hi + 1, quarter)]
        return ranges, [hi - lo + 1 for lo, hi in ranges]

    def _gap(self, lo: int, hi: int) -> None:
        self.gap_count += 1
        self.missing += hi - lo + 1
        if len(self.gaps) < 10:
            self.gaps.append(f"{lo}..{hi}" if hi > lo else str(lo))

    def report(self, backend: str, report: VerifyReport) -> None:
        for i in self.outside:
            report.add(Problem("rows", f"a row has id {i}, outside 1..N: written around the ledger (ingest never does)",
                               notification_id=i))
        if not self.missing:
            return
        shown = ", ".join(self.gaps) + (f" and {self.gap_count - 10} more" if self.gap_count > 10 else "")
        if backend == "sqlite":
            report.add(Problem("rows", f"row ids {shown} are missing ({self.missing} rows): SQLite never skips an id,"
                                       " so rows were deleted around the ledger"))
        else:
            report.notes.append(f"row ids {shown} are unused ({self.missing}): PostgreSQL burns sequence ids on a write"
                                " that rolled back; deleted events show as chain and checkpoint problems, not here")


def verify_ledger(
    store: Store,
    *,
    roots: TrustRoots | None = None,
    public_dir: Path | None = None,
    since: str | None = None,
    save_state: bool = True,
    workers: int | None = None,
    deep: bool = False,
    progress: Callable[[int, int], None] | None = None,
    nice: int = 0,
) -> VerifyReport:
    """Re-prove the whole ledger against ``roots`` (``ledger.trust``). ``since``: a
    checkpoint note the ledger must still extend (a one-off ``--since``). With
    ``save_state`` and a verdict of OK, the largest accepted checkpoint becomes the
    verifier's last accepted one (``roots.state_dir``). ``nice``: added to the worker
    processes' niceness (reconciliation's day pass, running beside them, keeps a core)."""
    started = time.perf_counter()
    roots = roots or TrustRoots()
    report = VerifyReport(trust_roots=roots.describe())
    report.unverified += roots.missing()
    ring = _keyring(store, report)
    ring_rows = store.stream_rows(KEYRING_STREAM)
    _note_revocations(store, ring, ring_rows)
    house = ring.anchor
    report.anchor = house.public_key.hex() if house else None
    if roots.anchor is not None:
        report.anchor_pinned = True
        if house is None or house.public_key != roots.anchor:
            report.add(Problem("anchor", "the key ring's house key is not the pinned trust anchor: every key it"
                                         " registered is untrusted", KEYRING_STREAM, 1))
    keys = _log_keys(ring, roots, report)
    targets = _checkpoint_targets(store, keys, public_dir, report)
    state = ClientState(roots.state_dir) if roots.state_dir and roots.log_key else None
    if state is not None and roots.log_key is not None:
        try:
            held = state.load(roots.log_key)
        except TrustError as exc:
            report.add(Problem("state", str(exc)))
            held = None
        if held is not None:
            cp, note = held
            add_target(targets, f"the last checkpoint this verifier accepted ({state.directory})", cp, note)
    if since is not None:
        try:
            cp = _open_any(since, keys)
            add_target(targets, "--since", cp, since)
        except NoteError as exc:
            report.add(Problem("since", f"the --since checkpoint does not verify with the log key: {exc}"))
    if workers is None:
        workers = os.cpu_count() or 1
    scan = _IdScan(store, {row.notification_id for row in ring_rows})
    total = scan.total
    scan.report(store.url.backend, report)
    if total < PARALLEL_THRESHOLD:
        workers = 1
    report.workers = workers

    sizes = sorted(targets)
    heads: dict[str, tuple[int, str]] = {}
    round_table: dict[str, str] = {}
    closed = ClosedNames()
    """Each closed round's name (about 8 bytes), in place of its head and table: the
    parent's memory follows the rounds open at once and the venue's other streams, not
    every round of the ledger; a row of a closed round in a later range is still named."""
    tree = CompactRange()
    ranges, expected = scan.tapered(workers)
    for n, part in enumerate(_results(store, ring, ranges, workers, deep, nice)):
        if part.count != expected[n]:
            report.add(Problem("rows", f"{part.count} rows were read where {expected[n]} were listed: rows were written"
                                       " or removed around the ledger while it was read"))
        for check, reason, stream, seq, nid in part.problems:
            report.add(Problem(check, reason, stream, seq, nid))
        round_table.update(part.opens)
        for stream, seq, nid, key_id, at in part.deferred:
            problem = scope_problem_at(ring.keys.get(key_id), stream, {}, at, round_table.get(stream, ""))
            if problem:
                report.add(Problem(problem[0], problem[1], stream, seq, nid))
        after_close: set[str] = set()  # closed rounds with rows here: they stay closed, and named each time
        for stream, nid in part.starts:
            named = _start_problem(heads, closed, stream, nid)
            if named:
                report.add(named)
                if stream not in heads:
                    after_close.add(stream)
        for stream, nid in zip(part.done, part.done_rows):  # seq 1 to close, here: the name must be new
            named = _start_problem(heads, closed, stream, nid)
            if named:
                report.add(named)
                if stream not in heads:
                    continue  # closed already
                heads.pop(stream)
                round_table.pop(stream, None)
            closed.add(stream)
        for stream, (seq, prev, nid) in part.first.items():
            if stream not in heads and closed and stream in closed:
                report.add(Problem("chain", _AFTER_CLOSE, stream, seq, nid))
                after_close.add(stream)
                continue
            problem = _chain_problem(heads.get(stream), seq, prev)
            if problem:
                report.add(Problem(problem[0], problem[1], stream, seq, nid))
        for stream, (seq, claimed) in part.last.items():
            if stream in after_close:
                continue
            before = heads.get(stream)
            heads[stream] = (max(seq, before[0]) if before else seq, claimed)
        for stream in part.closes:
            if heads.pop(stream, None) is not None:
                round_table.pop(stream, None)
                closed.add(stream)
        leaves = part.leaves
        k = bisect.bisect_right(sizes, tree.size)
        width = part.count
        if part.subroot and tree.size % width == 0 and not (k < len(sizes) and sizes[k] < tree.size + width):
            tree.append_subtree(part.subroot, width.bit_length() - 1)  # no checkpoint inside: one hash for the range
            leaves = b""
            _compare(tree, targets, report)
        for i in range(0, len(leaves), 32):
            tree.append_leaf_hash(leaves[i:i + 32])
            _compare(tree, targets, report)
        report.events += part.count
        if progress:
            progress(report.events, total)
    if report.events != total:
        report.add(Problem("rows", f"the tree holds {report.events} leaves but the table lists {total} rows"))
    for size in sorted(s for s in targets if s > tree.size):
        for t in targets[size]:
            report.checkpoints_checked += 1
            report.add(Problem(
                "checkpoint",
                f"{t.source} commits to {size} events but the ledger holds {tree.size}:"
                f" {size - tree.size} events were removed (rolled back, or the tail truncated)",
            ))
    for t in targets.get(0, []):
        report.checkpoints_checked += 1
        t.matched = True
    _keyring_claims(ring_rows, scan.positions, targets, report)
    _accept(report, targets, roots, tree.size)
    report.streams = len(heads) + len(closed)
    report.tree_size = tree.size
    report.root = base64.b64encode(tree.root()).decode()
    report.decide()
    if report.ok and save_state and state is not None and roots.log_key is not None:
        best = max((t for ts in targets.values() for t in ts if t.matched and t.checkpoint.size == report.accepted_size),
                   key=lambda t: max(len(n) for n in t.notes), default=None)
        if best is not None:
            report.state_saved = str(state.save(roots.log_key, max(best.notes, key=len)))
    report.signatures_checked_with = describe_libsodium()
    report.seconds = time.perf_counter() - started
    return report


def _compare(tree: CompactRange, targets: dict[int, list[Target]], report: VerifyReport) -> None:
    """The tree at its current size against every checkpoint of that size."""
    for t in targets.get(tree.size, ()):
        report.checkpoints_checked += 1
        if tree.root() == t.checkpoint.root:
            t.matched = True
            continue
        report.add(Problem("checkpoint", f"the first {t.checkpoint.size} events no longer hash to the root signed in"
                                         f" {t.source}: an event at or before that point was changed, removed, inserted"
                                         " or reordered"))


def _keyring_claims(ring_rows: list[Row], positions: dict[int, int], targets: dict[int, list[Target]],
                    report: VerifyReport) -> None:
    """A checkpoint that states the key ring's head (``keyring_line``) must state it truly."""
    claims = [(t, c) for ts in targets.values() for t in ts if (c := t.checkpoint.keyring_head()) is not None]
    if not claims:
        return
    ring = []
    for row in ring_rows:
        try:
            ring.append((positions[row.notification_id], row.seq, orjson.loads(row.state)["hash"]))
        except (ValueError, KeyError, TypeError):
            continue
    for t, claim in claims:
        before = [(seq, h) for index, seq, h in ring if index < t.checkpoint.size]
        actual = before[-1] if before else None
        if actual != claim:
            t.matched = False
            report.add(Problem("checkpoint", f"{t.source} states the key ring ends at seq {claim[0]} within its"
                                             f" {t.checkpoint.size} events, but the ledger's key ring there ends at"
                                             f" {'seq ' + str(actual[0]) if actual else 'nothing'}"))


def _accept(report: VerifyReport, targets: dict[int, list[Target]], roots: TrustRoots, size: int) -> None:
    """Which matched checkpoints anchor the verdict: signed by the pinned log key and, when
    witnesses are pinned, cosigned by a quorum of them (issue 14 point 2)."""
    accepted = []
    for ts in targets.values():
        for t in ts:
            if not t.matched or t.checkpoint.size == 0:  # a size-0 checkpoint anchors nothing
                continue
            if roots.witnesses:
                names: set[str] = set()
                for note in t.notes:
                    try:
                        names.update(roots.cosigners(note))
                    except NoteError as exc:
                        report.add(Problem("witness", f"checkpoint size {t.checkpoint.size} ({t.source}): {exc}"))
                if len(names) < roots.quorum:
                    report.notes.append(f"checkpoint size {t.checkpoint.size} ({t.source}) has {len(names)} of the"
                                        f" {roots.quorum} witness cosignatures required: not accepted")
                    continue
            accepted.append(t)
    if roots.log_key is None:
        return  # already UNVERIFIED: checkpoints were opened with keys from the ledger itself
    if not accepted:
        report.unverified.append("no checkpoint signed by the pinned log key" + (
            f" and cosigned by {roots.quorum} of the pinned witnesses" if roots.witnesses else "")
            + " anchors the tree: events could have been removed unseen ('pitboss checkpoint')")
        return
    report.checkpoints_accepted = len(accepted)
    report.accepted_sizes = sorted({t.checkpoint.size for t in accepted})
    report.accepted_size = max(t.checkpoint.size for t in accepted)
    report.uncovered = size - report.accepted_size

"""Signed checkpoints of the global Merkle tree, and proofs against them.

The tree's leaves are the event hashes of every stored event in notification order
(RFC 9162 hashing, ``ledger.log.merkle``). ``create_checkpoint`` signs a C2SP checkpoint
note with the ledger's log key, appends it to the ``ledger:checkpoints`` stream as a
``ledger.checkpoint.v1`` event (so it is itself chained, signed and a later leaf) and
publishes the note as a file in the public directory, where a truncation of the
database cannot reach it.
"""

from __future__ import annotations

import base64
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

from ledger.events import SignedEvent, decode_stored
from ledger.house import HouseError, PublicDir, active_signer
from ledger.ingest import ingest_signed
from ledger.keyring import load_keyring
from ledger.keys import KeyDirectory
from ledger.kinds import CHECKPOINT_STREAM, KEYRING_STREAM
from ledger.log.merkle import MerkleTree, leaf_hash
from ledger.log.note import Checkpoint, NoteError, keyring_line, note_parts, sign_note, verifier_key
from ledger.log.proofs import consistency_proof_text, inclusion_proof_text
from ledger.log.tiles import TiledTree, TileReader, write_tiles
from ledger.producer import BatchBuilder
from ledger.store import Row, Store


@dataclass(frozen=True)
class LeafIndex:
    """Every leaf of the tree with where its event is stored (one pass over the log)."""

    hashes: list[bytes]
    positions: dict[tuple[str, int], int]
    notification_ids: list[int]
    keyring: list[tuple[int, int, str]]
    """(leaf index, seq, hash) of every key-ring event."""

    @classmethod
    def read(cls, store: Store) -> LeafIndex:
        hashes: list[bytes] = []
        positions: dict[tuple[str, int], int] = {}
        ids: list[int] = []
        keyring: list[tuple[int, int, str]] = []
        for row in store.rows():
            positions[(row.stream, row.seq)] = len(hashes)
            h = decode_stored(row.state)["hash"]
            if row.stream == KEYRING_STREAM:
                keyring.append((len(hashes), row.seq, h))
            hashes.append(bytes.fromhex(h))
            ids.append(row.notification_id)
        return cls(hashes, positions, ids, keyring)

    @property
    def size(self) -> int:
        return len(self.hashes)

    def position(self, row: Row) -> int:
        return self.positions[(row.stream, row.seq)]

    def keyring_head(self, size: int) -> tuple[int, str] | None:
        """The key ring's last (seq, hash) among the first ``size`` leaves."""
        before = [(seq, h) for index, seq, h in self.keyring if index < size]
        return before[-1] if before else None

    def tree(self, size: int | None = None) -> MerkleTree:
        return MerkleTree(leaf_hash(h) for h in self.hashes)


class SparseIndex:
    """Where the events one asks about sit in the log, without reading the log: a leaf's
    index is its row's rank in notification order (``docs/spec.md``, the log's order), found
    by bisecting the ordered notification ids; the tree comes from the published tiles
    (``ledger.log.tiles``) plus the rows after the last full tile (and those of a missing
    one). What ``pitboss evidence`` reads for one round; its caller checks the tree's root
    against a signed checkpoint and falls back to ``LeafIndex`` when it differs."""

    def __init__(self, store: Store, tile_root: Path):
        self.store = store
        self.tile_root = tile_root
        self._keyring: list[tuple[int, int, str]] | None = None
        # Dense ids (no gaps: SQLite's rowid, PostgreSQL's sequence without a rolled-back
        # insert) make a row's leaf index its id minus the lowest; otherwise every id is read.
        # SQLite leaves no gap (a rolled-back insert takes no rowid; ingest deletes nothing),
        # so its ids are taken as dense without counting the rows (a scan of the table: 70 ms
        # a 200,000-event day, growing with the ledger): a gap there is a row removed behind
        # the ledger's back, and every leaf index read is then proved against the signed root
        # by the caller, which fails and turns to the full pass. PostgreSQL's rolled-back
        # inserts do burn ids, so there the rows are counted.
        bounds = store.id_bounds()
        self._ids: list[int] | None = None
        self._low = bounds[0] if bounds else 0
        self._size = bounds[1] - bounds[0] + 1 if bounds else 0
        self.counted = False
        if store.url.backend != "sqlite":
            self.count_rows()

    def count_rows(self) -> bool:
        """Count the rows (once) and read every id if they have gaps; True if the index
        was right without them (before a step the caller cannot undo, such as signing a
        checkpoint)."""
        if self.counted:
            return True
        self.counted = True
        count = self.store.count()
        if count == self._size:
            return True
        self._ids = self.store.notification_ids()
        self._size = len(self._ids)
        return False

    @property
    def size(self) -> int:
        return self._size

    def notification_id(self, index: int) -> int:
        return self._ids[index] if self._ids is not None else self._low + index

    def position(self, row: Row) -> int:
        if self._ids is None:
            i = row.notification_id - self._low
            if 0 <= i < self._size:
                return i
        else:
            i = bisect_left(self._ids, row.notification_id)
            if i < self._size and self._ids[i] == row.notification_id:
                return i
        raise HouseError(f"{row.stream} seq {row.seq} was stored after this index was read")

    def keyring_head(self, size: int) -> tuple[int, str] | None:
        if self._keyring is None:
            self._keyring = [(self.position(r), r.seq, decode_stored(r.state)["hash"])
                             for r in self.store.stream_rows(KEYRING_STREAM)]
        before = [(seq, h) for index, seq, h in self._keyring if index < size]
        return before[-1] if before else None

    def tree(self, size: int | None = None) -> TiledTree:
        size = self.size if size is None else size

        def rows(lo: int, hi: int) -> list[bytes]:
            return [leaf_hash(bytes.fromhex(decode_stored(r.state)["hash"]))
                    for r in self.store.row_range(self.notification_id(lo), self.notification_id(hi - 1))]

        return TiledTree(TileReader(self.tile_root), size, rows)


@dataclass(frozen=True)
class StoredCheckpoint:
    checkpoint: Checkpoint
    note: str
    event: SignedEvent


def stored_checkpoints(store: Store) -> list[StoredCheckpoint]:
    out = []
    for ev in store.stream_events(CHECKPOINT_STREAM):
        p = ev.payload
        try:
            cp = Checkpoint.parse_body(note_parts(p["note"])[0])
        except NoteError:
            cp = Checkpoint(p["origin"], p["size"], base64.b64decode(p["root"]))
        out.append(StoredCheckpoint(cp, p["note"], ev))
    return out


def create_checkpoint(store: Store, keys: KeyDirectory, public: PublicDir,
                      witnesses: tuple[str, ...] = ()) -> StoredCheckpoint:
    """Sign, store and publish a checkpoint; with ``witnesses`` (their add-checkpoint URLs,
    c2sp.org/tlog-witness), add each one's cosignature to the published note."""
    ring = load_keyring(store)
    log = active_signer(ring, keys, "ledger")
    leaves = LeafIndex.read(store)
    size = len(leaves.hashes)
    head = leaves.keyring_head(size)
    tree = leaves.tree()
    cp = Checkpoint(log.actor, size, tree.root(), (keyring_line(*head),) if head else ())
    note = sign_note(cp.body(), log.actor, log.private_key)
    batch = BatchBuilder.for_store(store)
    ev = batch.add(log, CHECKPOINT_STREAM, "ledger.checkpoint.v1", {
        "origin": cp.origin, "size": cp.size,
        "root": base64.b64encode(cp.root).decode(), "note": note,
    })
    report = ingest_signed(store, batch.events)
    if report.status != "stored":
        raise HouseError(f"checkpoint not stored: {report.message} {[str(r) for r in report.rejections]}")
    public.path.mkdir(parents=True, exist_ok=True)
    write_tiles(public.path, tree.leaves[:size])  # the signed tree's hashes, for proofs without a pass over the log
    public.checkpoint_file(cp.size).write_text(note)
    public.vkey_file.write_text(verifier_key(log.actor, log.public_key) + "\n")
    if witnesses:
        from ledger.log.witness import request_cosignature

        lines = [request_cosignature(url, note, 0, lambda old: tree.consistency_proof(old, size)) for url in witnesses]
        note = note + "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        public.checkpoint_file(cp.size).write_text(note)
    return StoredCheckpoint(cp, note, ev)


def _pick_checkpoint(store: Store, size: int | None, covering: int = 0) -> StoredCheckpoint:
    cps = stored_checkpoints(store)
    if size is not None:
        for sc in cps:
            if sc.checkpoint.size == size:
                return sc
        raise HouseError(f"no stored checkpoint has size {size}")
    usable = [sc for sc in cps if sc.checkpoint.size > covering]
    if not usable:
        raise HouseError("no checkpoint covers that event yet: run 'pitboss checkpoint' first")
    return usable[-1]


def inclusion_proof(store: Store, stream: str, seq: int, size: int | None = None) -> str:
    leaves = LeafIndex.read(store)
    index = leaves.positions.get((stream, seq))
    if index is None:
        raise HouseError(f"no event {stream} seq {seq} in the ledger")
    sc = _pick_checkpoint(store, size, covering=index)
    if index >= sc.checkpoint.size:
        raise HouseError(f"checkpoint size {sc.checkpoint.size} does not cover leaf {index}")
    tree = leaves.tree()
    if tree.root(sc.checkpoint.size) != sc.checkpoint.root:
        raise HouseError(f"the stored leaves no longer match checkpoint size {sc.checkpoint.size}: run 'pitboss verify'")
    ev = store.event_at(stream, seq)
    assert ev is not None
    return inclusion_proof_text(ev.to_dict(), index, tree.inclusion_proof(index, sc.checkpoint.size), sc.note)


def consistency_proof(store: Store, old_size: int, new_size: int) -> tuple[str, str, str]:
    """(proof text, old checkpoint note, new checkpoint note)."""
    old = _pick_checkpoint(store, old_size)
    new = _pick_checkpoint(store, new_size)
    tree = LeafIndex.read(store).tree()
    for sc in (old, new):
        if tree.root(sc.checkpoint.size) != sc.checkpoint.root:
            raise HouseError(f"the stored leaves no longer match checkpoint size {sc.checkpoint.size}: run 'pitboss verify'")
    proof = tree.consistency_proof(old_size, new_size)
    return consistency_proof_text(old_size, new_size, proof), old.note, new.note


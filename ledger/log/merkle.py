"""RFC 9162 (Certificate Transparency v2) Merkle tree hashing and proofs.

Section 2.1.1: leaf hash = SHA-256(0x00 || leaf), node hash = SHA-256(0x01 || l || r),
the empty tree hashes to SHA-256(""); a tree of n leaves splits at the largest power of
two smaller than n. Inclusion proofs follow 2.1.3.1 (make) and 2.1.3.2 (verify);
consistency proofs 2.1.4.1 (make) and 2.1.4.2 (verify). The verifiers check that every
proof hash is consumed and reject anything else; they are pure and need no database.

A ledger leaf is the 32-byte event hash (see ``ledger.canonical``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

_sha256 = hashlib.sha256
EMPTY_ROOT = _sha256(b"").digest()


class ProofError(ValueError):
    """A proof that does not verify; the message says which check failed."""


def leaf_hash(leaf: bytes) -> bytes:
    return _sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return _sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """Largest power of two strictly smaller than n (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def root_from_leaf_hashes(hashes: Sequence[bytes]) -> bytes:
    """Merkle Tree Hash of already leaf-hashed entries (RFC 9162 2.1.1).

    Hashed a level at a time, a lone last node carried up unchanged: the same root as the
    RFC's split at the largest power of two (its tree is left-balanced), and a third
    faster than appending leaf by leaf (``tests/ledger/log`` checks the two agree)."""
    if not hashes:
        return EMPTY_ROOT
    level = list(hashes)
    while len(level) > 1:
        up = [_sha256(b"\x01" + left + right).digest() for left, right in zip(level[::2], level[1::2])]
        if len(level) & 1:
            up.append(level[-1])
        level = up
    return level[0]


class CompactRange:
    """Streaming accumulator: append leaf hashes, ask the root at the current size.

    Keeps the roots of the perfect subtrees the size decomposes into (at most log2 n),
    so a whole ledger is hashed in one pass with O(log n) memory.
    """

    __slots__ = ("_stack", "size")

    def __init__(self) -> None:
        self.size = 0
        self._stack: list[bytes] = []

    def append_leaf_hash(self, h: bytes) -> None:
        stack = self._stack
        n = self.size
        while n & 1:
            h = node_hash(stack.pop(), h)
            n >>= 1
        stack.append(h)
        self.size += 1

    def append(self, leaf: bytes) -> None:
        self.append_leaf_hash(leaf_hash(leaf))

    def append_subtree(self, root: bytes, height: int) -> None:
        """Append a perfect subtree of ``2**height`` leaves by its root: the same as
        appending its leaves one by one, when the size is a multiple of ``2**height`` (a
        subtree's leaves start at a multiple of its width: RFC 9162 2.1.1's split)."""
        width = 1 << height
        if self.size % width:
            raise ValueError(f"a subtree of {width} leaves cannot start at leaf {self.size}")
        stack = self._stack
        n = self.size >> height
        h = root
        while n & 1:
            h = node_hash(stack.pop(), h)
            n >>= 1
        stack.append(h)
        self.size += width

    def root(self) -> bytes:
        if not self._stack:
            return EMPTY_ROOT
        it = reversed(self._stack)
        h = next(it)
        for left in it:
            h = node_hash(left, h)
        return h


class MerkleTree:
    """An in-memory tree over leaf hashes, for making proofs (RFC 9162 2.1.3.1, 2.1.4.1)."""

    MEMO_MIN = 64
    """Subtrees of at least this many leaves keep their root once computed: every proof of
    a bundle then comes from one pass over the leaves (the first proof), the others reading
    O(log n) memoised nodes; smaller subtrees (at most 63 hashes) are recomputed, so the
    memo holds about 2n/64 nodes."""

    def __init__(self, leaf_hashes: Iterable[bytes]):
        self.leaves: list[bytes] = list(leaf_hashes)
        self._memo: dict[tuple[int, int], bytes] = {}

    @classmethod
    def from_leaves(cls, leaves: Iterable[bytes]) -> MerkleTree:
        return cls(leaf_hash(x) for x in leaves)

    def __len__(self) -> int:
        return len(self.leaves)

    def _leaf_range(self, lo: int, hi: int) -> Sequence[bytes]:
        """The leaf hashes lo..hi-1 (a tiled tree reads them from its tiles)."""
        return self.leaves[lo:hi]

    def root(self, size: int | None = None) -> bytes:
        size = len(self) if size is None else size
        self._check_size(size)
        return self._subroot(0, size) if size else root_from_leaf_hashes([])

    def _check_size(self, size: int) -> None:
        if not 0 <= size <= len(self):
            raise ValueError(f"tree size {size} is outside 0..{len(self)}")

    def _subroot(self, lo: int, hi: int) -> bytes:
        """MTH(D[lo:hi]) (RFC 9162 2.1.1), split as the RFC splits, memoised (``MEMO_MIN``)."""
        n = hi - lo
        if n < self.MEMO_MIN:
            return root_from_leaf_hashes(self._leaf_range(lo, hi))
        got = self._memo.get((lo, hi))
        if got is None:
            k = _split(n)
            got = self._memo[(lo, hi)] = node_hash(self._subroot(lo, lo + k), self._subroot(lo + k, hi))
        return got

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        size = len(self) if size is None else size
        self._check_size(size)
        if not 0 <= index < size:
            raise ValueError(f"leaf index {index} is not in a tree of size {size}")
        return self._path(index, 0, size)

    def _path(self, m: int, lo: int, hi: int) -> list[bytes]:
        n = hi - lo
        if n == 1:
            return []
        k = _split(n)
        if m < k:
            return self._path(m, lo, lo + k) + [self._subroot(lo + k, hi)]
        return self._path(m - k, lo + k, hi) + [self._subroot(lo, lo + k)]

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        new_size = len(self) if new_size is None else new_size
        self._check_size(new_size)
        if not 0 <= old_size <= new_size:
            raise ValueError(f"old size {old_size} is outside 0..{new_size}")
        if old_size == 0 or old_size == new_size:
            return []
        return self._subproof(old_size, 0, new_size, True)

    def _subproof(self, m: int, lo: int, hi: int, whole: bool) -> list[bytes]:
        n = hi - lo
        if m == n:
            return [] if whole else [self._subroot(lo, hi)]
        k = _split(n)
        if m <= k:
            return self._subproof(m, lo, lo + k, whole) + [self._subroot(lo + k, hi)]
        return self._subproof(m - k, lo + k, hi, False) + [self._subroot(lo, lo + k)]


def verify_inclusion(
    leaf_hash_: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> None:
    """RFC 9162 2.1.3.2. Raises ProofError unless the proof puts the leaf under root."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is not in a tree of size {size}")
    fn, sn = index, size - 1
    r = leaf_hash_
    for p in proof:
        if sn == 0:
            raise ProofError("inclusion proof has more hashes than the tree needs")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("inclusion proof has fewer hashes than the tree needs")
    if r != root:
        raise ProofError("inclusion proof does not lead to the checkpoint's root hash")


def verify_consistency(
    old_size: int, new_size: int, proof: Sequence[bytes], old_root: bytes, new_root: bytes
) -> None:
    """RFC 9162 2.1.4.2. Raises ProofError unless old_root's tree is a prefix of new_root's."""
    if not 0 <= old_size <= new_size:
        raise ProofError(f"old size {old_size} is larger than new size {new_size}")
    if old_size == new_size:
        if proof:
            raise ProofError("consistency proof between equal sizes must be empty")
        if old_root != new_root:
            raise ProofError("equal tree sizes with different root hashes")
        return
    if old_size == 0:
        if proof:
            raise ProofError("consistency proof from the empty tree must be empty")
        return
    if not proof:
        raise ProofError("consistency proof is empty")
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # exact power of two: old root is a subtree
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("consistency proof has more hashes than the trees need")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("consistency proof has fewer hashes than the trees need")
    if fr != old_root:
        raise ProofError("consistency proof does not reproduce the old root hash")
    if sr != new_root:
        raise ProofError("consistency proof does not reproduce the new root hash")

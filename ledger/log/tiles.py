"""The log's hashes as C2SP tlog-tiles (https://c2sp.org/tlog-tiles), published beside the
checkpoints, and a tree that makes proofs from them.

A tile at level L, index N holds 256 consecutive hashes of the tree at height 8L: level 0
holds leaf hashes (SHA-256(0x00 ‖ the event's 32 raw hash bytes), ``ledger.log.merkle``),
level 1 the roots of the 256-leaf subtrees, level 2 the roots of the 65,536-leaf ones.
Its path is ``tile/<L>/<N>`` with N written in 3-digit elements, all but the last
prefixed ``x`` (1234067 is ``x001/x234/067``). Only full tiles are written: once full, a
tile never changes in an append-only log. Partial tiles (``.p/<W>``) and entry bundles
(``tile/entries``) are not published; the events are in the ledger.

``create_checkpoint`` writes the tiles its signed tree covers, from the rows it hashed.
Nothing read from a tile is trusted: ``TiledTree``'s root must equal a signed
checkpoint's root before any proof made from it is used, and each proof is checked
against that root (``projections.evidence``); on any difference the caller recomputes
from the rows. So a missing, stale or altered tile costs time, never a wrong proof.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ledger.log.merkle import MerkleTree, root_from_leaf_hashes

WIDTH = 256
"""Hashes per full tile (tile height 8)."""
HASH = 32
LEVELS = 3
"""Levels written: 0-2. A full level-L tile covers 256^(L+1) leaves (level 1: 65,536,
level 2: 16.7M), and each of its hashes a 256^L-leaf subtree, so a root or a proof over
a log of n leaves reads a few tiles and hashes at most about 2 x 255 level-1 hashes, plus
one level-1 hash per 256 leaves past the last full level-1 tile."""


def tile_path(level: int, index: int) -> str:
    """``tile/<L>/<N>`` for a full tile (c2sp.org/tlog-tiles, "Merkle Tree")."""
    digits = f"{index:03d}"
    while len(digits) % 3:
        digits = "0" + digits
    parts = [digits[i:i + 3] for i in range(0, len(digits), 3)]
    return "/".join(["tile", str(level)] + [f"x{p}" for p in parts[:-1]] + [parts[-1]])


def _write_if_changed(path: Path, data: bytes) -> bool:
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return True


def write_tiles(root: Path, leaf_hashes: Sequence[bytes]) -> int:
    """Write every full tile of levels 0..2 over ``leaf_hashes`` under ``root`` (the public
    directory); a tile already there with the same bytes is left alone, one that differs
    is replaced. Returns how many files were written."""
    written = 0
    level_hashes = leaf_hashes
    for level in range(LEVELS):
        parents: list[bytes] = []
        for n in range(len(level_hashes) // WIDTH):
            part = level_hashes[n * WIDTH:(n + 1) * WIDTH]
            written += _write_if_changed(root / tile_path(level, n), b"".join(part))
            parents.append(root_from_leaf_hashes(part))
        level_hashes = parents
    return written


class TileReader:
    """Full tiles read from a directory, each file once; a missing or short file is None."""

    def __init__(self, root: Path):
        self.root = root
        self._cache: dict[tuple[int, int], bytes | None] = {}

    def tile(self, level: int, index: int) -> bytes | None:
        key = (level, index)
        if key not in self._cache:
            try:
                data = (self.root / tile_path(level, index)).read_bytes()
            except OSError:
                data = b""
            self._cache[key] = data if len(data) == WIDTH * HASH else None
        return self._cache[key]

    def hash(self, level: int, index: int) -> bytes | None:
        """Hash ``index`` of level ``level`` (within tile index // 256), or None."""
        tile = self.tile(level, index // WIDTH)
        if tile is None:
            return None
        at = (index % WIDTH) * HASH
        return tile[at:at + HASH]

    def full_leaf_tiles(self, limit: int) -> int:
        """How many level-0 tiles from the first are present (full-sized files), up to
        ``limit``. Sizes only: a tile's bytes are read when a root or proof needs them (a
        few, for one round's evidence), and the tree they give is checked against a signed
        checkpoint's root by the caller."""
        n = 0
        while n < limit:
            key = (0, n)
            if key in self._cache:
                if self._cache[key] is None:
                    break
            else:
                try:
                    if (self.root / tile_path(0, n)).stat().st_size != WIDTH * HASH:
                        break
                except OSError:
                    break
            n += 1
        return n


class TiledTree(MerkleTree):
    """A tree of ``size`` leaves whose hashes come from tiles where they cover it and from
    ``tail(lo, hi)`` (leaf hashes lo..hi-1, read from the ledger) beyond the last level-0
    tile present. Aligned subtrees of 256^L leaves are read from level L, so a root or a
    proof costs hundreds of hashes, not the log's size."""

    def __init__(self, tiles: TileReader, size: int, tail: Callable[[int, int], list[bytes]]):
        super().__init__(())
        self.tiles = tiles
        self.size = size
        self.tail_start = tiles.full_leaf_tiles(size // WIDTH) * WIDTH
        self.tail = tail(self.tail_start, size) if self.tail_start < size else []
        if len(self.tail) != size - self.tail_start:
            raise ValueError(f"the ledger holds {self.tail_start + len(self.tail)} leaves, not {size}")

    def __len__(self) -> int:
        return self.size

    def _leaf_range(self, lo: int, hi: int) -> Sequence[bytes]:
        out: list[bytes] = []
        i = lo
        while i < hi and i < self.tail_start:
            tile = self.tiles.tile(0, i // WIDTH)
            if tile is None:  # present when counted (``full_leaf_tiles``), gone or cut short since
                raise ValueError(f"level-0 tile {i // WIDTH} changed while it was read")
            end = min(hi, (i // WIDTH + 1) * WIDTH, self.tail_start)
            out += [tile[k * HASH:(k + 1) * HASH] for k in range(i % WIDTH, i % WIDTH + end - i)]
            i = end
        if i < hi:
            out += self.tail[i - self.tail_start:hi - self.tail_start]
        return out

    def _subroot(self, lo: int, hi: int) -> bytes:
        n = hi - lo
        height = n.bit_length() - 1
        if (n == 1 << height and height and height % 8 == 0 and height // 8 < LEVELS and lo % n == 0
                and hi <= self.tail_start):
            got = self.tiles.hash(height // 8, lo >> height)
            if got is not None:
                return got
        return super()._subroot(lo, hi)

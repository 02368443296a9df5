"""The log's hashes as C2SP tlog-tiles (https://c2sp.org/tlog-tiles), published beside the
checkpoints, and a tree that makes proofs from them.

A tile at level L, index N holds 256 consecutive hashes of the tree at height 8L: level 0
holds leaf hashes (SHA-256(0x00 ‖ the event's 32 raw hash bytes), ``ledger.log.merkle``),
level 1 the roots of the 256-leaf subtrees, level 2 the roots of the 65,536-leaf ones.
Its path is ``tile/<L>/<N>`` with N written in 3-digit elements, all but the last
prefixed ``x`` (1234067 is ``x001/x234/067``). A full tile never changes in an append-only
log. The rightmost tile of each level, while it holds fewer than 256 hashes, is written as
a partial tile ``tile/<L>/<N>.p/<W>`` of its first W hashes (W = 1..255), as C2SP defines
it: a tree whose size is not a multiple of 65,536 then takes its last level-1 hashes from
a file instead of hashing up to 65,535 leaves again. A tile's other, narrower partial
tiles are removed when a wider one or the full tile is written (their hashes are its
prefix). Entry bundles (``tile/entries``) are not published; the events are in the ledger.

``create_checkpoint`` writes the tiles its signed tree covers, from the rows it hashed.
Nothing read from a tile is trusted: ``TiledTree``'s root must equal a signed
checkpoint's root before any proof made from it is used, and each proof is checked
against that root (``projections.evidence``); on any difference the caller recomputes
from the rows. A missing or short level-0 tile is read from the rows it stands for, so a
missing, stale or altered tile costs time, never a wrong proof.
"""

from __future__ import annotations

import os
import shutil
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


def partial_dir(level: int, index: int) -> str:
    """``tile/<L>/<N>.p``: where the partial tiles of tile N of level L are written."""
    return tile_path(level, index) + ".p"


def write_tiles(root: Path, leaf_hashes: Sequence[bytes]) -> int:
    """Write every tile of levels 0..2 over ``leaf_hashes`` under ``root`` (the public
    directory): each full tile, and the rightmost one of each level as a partial tile when
    it holds 1..255 hashes. A tile already there with the same bytes is left alone, one
    that differs is replaced; a tile's narrower partial tiles (and all of them once it is
    full) are removed. Returns how many files were written."""
    written = 0
    level_hashes = leaf_hashes
    for level in range(LEVELS):
        parents: list[bytes] = []
        full = len(level_hashes) // WIDTH
        for n in range(full):
            part = level_hashes[n * WIDTH:(n + 1) * WIDTH]
            written += _write_if_changed(root / tile_path(level, n), b"".join(part))
            parents.append(root_from_leaf_hashes(part))
            shutil.rmtree(root / partial_dir(level, n), ignore_errors=True)  # full now: its partial tiles are a prefix of it
        width = len(level_hashes) - full * WIDTH
        if width:
            where = root / partial_dir(level, full)
            written += _write_if_changed(where / str(width), b"".join(level_hashes[full * WIDTH:]))
            for other in where.iterdir():
                if other.name != str(width):
                    other.unlink(missing_ok=True)
        level_hashes = parents
    return written


class TileReader:
    """Tiles read from a directory, each file once: a full tile (a missing or short file is
    None), or the widest partial tile of a tile that is not full."""

    def __init__(self, root: Path):
        self.root = root
        self._cache: dict[tuple[int, int], bytes | None] = {}
        self._partial: dict[tuple[int, int], bytes] = {}

    def tile(self, level: int, index: int) -> bytes | None:
        key = (level, index)
        if key not in self._cache:
            try:
                data = (self.root / tile_path(level, index)).read_bytes()
            except OSError:
                data = b""
            self._cache[key] = data if len(data) == WIDTH * HASH else None
        return self._cache[key]

    def partial(self, level: int, index: int) -> bytes:
        """The hashes of the widest partial tile ``tile/<L>/<N>.p/<W>`` present whose file
        holds exactly W hashes (b"" if none)."""
        key = (level, index)
        if key not in self._partial:
            best = b""
            try:
                names = os.listdir(self.root / partial_dir(level, index))
            except OSError:
                names = []
            for name in sorted((n for n in names if n.isascii() and n.isdigit() and 0 < int(n) < WIDTH), key=int,
                               reverse=True):
                try:
                    data = (self.root / partial_dir(level, index) / name).read_bytes()
                except OSError:
                    continue
                if len(data) == int(name) * HASH:
                    best = data
                    break
            self._partial[key] = best
        return self._partial[key]

    def hash(self, level: int, index: int) -> bytes | None:
        """Hash ``index`` of level ``level`` (within tile index // 256, full or partial), or None."""
        at = (index % WIDTH) * HASH
        tile = self.tile(level, index // WIDTH)
        if tile is None:
            tile = self.partial(level, index // WIDTH)
            if len(tile) < at + HASH:
                return None
        return tile[at:at + HASH]


class TiledTree(MerkleTree):
    """A tree of ``size`` leaves whose hashes come from tiles and from ``rows(lo, hi)``
    (leaf hashes lo..hi-1, read from the ledger): the leaves after the last full 256 from
    the rows, a level-0 tile that is missing or short from the rows it stands for, and
    aligned subtrees of 256^L leaves from level L (full or partial tiles). A root or a
    proof costs hundreds of hashes and a few files, not the log's size."""

    def __init__(self, tiles: TileReader, size: int, rows: Callable[[int, int], list[bytes]]):
        super().__init__(())
        self.tiles = tiles
        self.size = size
        self.rows = rows
        self.tail_start = size // WIDTH * WIDTH
        self.tail = rows(self.tail_start, size) if self.tail_start < size else []
        if len(self.tail) != size - self.tail_start:
            raise ValueError(f"the ledger holds {self.tail_start + len(self.tail)} leaves, not {size}")
        self._read: dict[int, list[bytes]] = {}  # level-0 tiles that were not there, read from the rows

    def __len__(self) -> int:
        return self.size

    def _leaf_range(self, lo: int, hi: int) -> Sequence[bytes]:
        out: list[bytes] = []
        i = lo
        while i < hi and i < self.tail_start:
            n = i // WIDTH
            end = min(hi, (n + 1) * WIDTH)
            tile = self.tiles.tile(0, n)
            if tile is not None:
                out += [tile[k * HASH:(k + 1) * HASH] for k in range(i - n * WIDTH, end - n * WIDTH)]
            else:
                out += self._rows_of_tile(n)[i - n * WIDTH:end - n * WIDTH]
            i = end
        if i < hi:
            out += self.tail[i - self.tail_start:hi - self.tail_start]
        return out

    def _rows_of_tile(self, n: int) -> list[bytes]:
        """The 256 leaf hashes of level-0 tile ``n``, read from the rows (the tile is
        missing or short), once."""
        got = self._read.get(n)
        if got is None:
            got = self._read[n] = self.rows(n * WIDTH, (n + 1) * WIDTH)
            if len(got) != WIDTH:
                raise ValueError(f"the ledger holds {len(got)} of the 256 leaves of level-0 tile {n}")
        return got

    def _subroot(self, lo: int, hi: int) -> bytes:
        n = hi - lo
        height = n.bit_length() - 1
        if (n == 1 << height and height and height % 8 == 0 and height // 8 < LEVELS and lo % n == 0
                and hi <= self.tail_start):
            got = self.tiles.hash(height // 8, lo >> height)
            if got is not None:
                return got
        return super()._subroot(lo, hi)

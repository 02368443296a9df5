"""The log's hashes as C2SP tlog-tiles (c2sp.org/tlog-tiles) and proofs made from them
(``ledger.log.tiles``): the same roots and proofs as the whole tree, whatever the tiles
cover; an altered tile gives a different root, never an exception or a wrong "same"."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from ledger.log.merkle import MerkleTree, ProofError, verify_inclusion
from ledger.log.tiles import TiledTree, TileReader, partial_dir, tile_path, write_tiles

N = 66_000  # 257 full level-0 tiles, one full level-1 tile (65,536 leaves), a 208-leaf tail
LEAVES = [hashlib.sha256(b"\x00" + i.to_bytes(4, "big")).digest() for i in range(N)]


@pytest.fixture(scope="module")
def whole() -> MerkleTree:
    return MerkleTree(LEAVES)


@pytest.fixture(scope="module")
def tiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("public")
    write_tiles(root, LEAVES)
    return root


def _tiled(root: Path, size: int) -> TiledTree:
    return TiledTree(TileReader(root), size, lambda lo, hi: LEAVES[lo:hi])


@pytest.mark.parametrize("index, path", [(0, "tile/0/000"), (5, "tile/0/005"), (999, "tile/0/999"),
                                         (1000, "tile/0/x001/000"), (1234067, "tile/0/x001/x234/067")])
def test_c2sp_tlog_tiles_paths_split_the_index_into_3_digit_elements(index: int, path: str) -> None:
    assert tile_path(0, index) == path


def test_full_tiles_hold_256_hashes_of_their_level_and_the_rightmost_is_partial(tiles: Path, whole: MerkleTree) -> None:
    """c2sp.org/tlog-tiles: full tiles ``tile/<L>/<N>``, and the rightmost tile of each level
    as ``tile/<L>/<N>.p/<W>`` while it holds W = 1..255 hashes."""
    level0 = sorted(p for p in (tiles / "tile" / "0").rglob("*") if p.is_file() and ".p" not in p.parent.name)
    assert len(level0) == N // 256 and all(p.stat().st_size == 256 * 32 for p in level0)
    assert (tiles / tile_path(0, 3)).read_bytes() == b"".join(LEAVES[768:1024])
    assert (tiles / partial_dir(0, 257) / "208").read_bytes() == b"".join(LEAVES[65_792:])
    level1 = (tiles / tile_path(1, 0)).read_bytes()  # the roots of the 256-leaf subtrees
    assert len(level1) == 256 * 32 and level1[32:64] == whole._subroot(256, 512)
    assert (tiles / partial_dir(1, 1) / "1").read_bytes() == whole._subroot(65_536, 65_792)
    assert (tiles / partial_dir(2, 0) / "1").read_bytes() == whole._subroot(0, 65_536)
    assert not (tiles / tile_path(2, 0)).exists()  # a full level-2 tile needs 16.7M leaves
    assert write_tiles(tiles, LEAVES) == 0  # unchanged tiles are not rewritten


def test_a_wider_partial_tile_replaces_the_narrower_and_a_full_tile_its_partials(tmp_path: Path) -> None:
    write_tiles(tmp_path, LEAVES[:600])
    assert sorted(p.name for p in (tmp_path / partial_dir(0, 2)).iterdir()) == ["88"]
    write_tiles(tmp_path, LEAVES[:700])
    assert sorted(p.name for p in (tmp_path / partial_dir(0, 2)).iterdir()) == ["188"]
    assert (tmp_path / partial_dir(1, 0) / "2").exists()
    write_tiles(tmp_path, LEAVES[:768])
    assert (tmp_path / tile_path(0, 2)).exists() and not (tmp_path / partial_dir(0, 2)).exists()
    assert sorted(p.name for p in (tmp_path / partial_dir(1, 0)).iterdir()) == ["3"]
    write_tiles(tmp_path, LEAVES[:1000])
    write_tiles(tmp_path, LEAVES[:1600])  # tiles 3, 4 and 5 full at once: tile 3's partials go too
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.p")) == [partial_dir(0, 6), partial_dir(1, 0)]


def test_a_root_past_the_last_full_level_1_tile_reads_its_partial_tile_not_the_leaves(
        tiles: Path, whole: MerkleTree, tmp_path: Path) -> None:
    """With every level-0 tile gone, a tree of 66,000 leaves still has its root from the
    full level-1 tile and the partial one (256 + 1 hashes) and the 208 rows after them:
    no row before the tail is read. Without the partial tile, tile 256's leaves are read."""
    shutil.copytree(tiles, tmp_path / "t")
    shutil.rmtree(tmp_path / "t" / "tile" / "0")
    asked: list[tuple[int, int]] = []

    def rows(lo: int, hi: int) -> list[bytes]:
        asked.append((lo, hi))
        return LEAVES[lo:hi]

    assert TiledTree(TileReader(tmp_path / "t"), N, rows).root() == whole.root()
    assert asked == [(65_792, N)]
    shutil.rmtree(tmp_path / "t" / partial_dir(1, 1))
    asked.clear()
    assert TiledTree(TileReader(tmp_path / "t"), N, rows).root() == whole.root()
    assert asked == [(65_792, N), (65_536, 65_792)]


def test_a_partial_tile_of_the_wrong_length_is_no_tile_and_an_altered_one_another_root(
        tiles: Path, whole: MerkleTree, tmp_path: Path) -> None:
    shutil.copytree(tiles, tmp_path / "t")
    path = tmp_path / "t" / partial_dir(1, 1) / "1"
    good = path.read_bytes()
    path.write_bytes(good + b"\x00")
    assert _tiled(tmp_path / "t", N).root() == whole.root()  # ignored: computed from the leaves
    path.write_bytes(bytes([good[0] ^ 1]) + good[1:])
    assert _tiled(tmp_path / "t", N).root() != whole.root()  # the caller compares it with the signed root


@pytest.mark.parametrize("written, size", [(65_800, N), (66_000, 65_700), (300, 700)])
def test_tiles_written_for_another_size_give_the_same_roots_and_proofs(
        tmp_path: Path, whole: MerkleTree, written: int, size: int) -> None:
    """A partial tile written for a smaller tree is a prefix (its hashes do not change); one
    written for a larger tree covers more than this tree asks of it."""
    write_tiles(tmp_path, LEAVES[:written])
    tree = _tiled(tmp_path, size)
    assert tree.root() == whole.root(size)
    for index in (0, size // 2, size - 1):
        assert tree.inclusion_proof(index, size) == whole.inclusion_proof(index, size)


@pytest.mark.parametrize("size", [1, 255, 256, 257, 511, 4096, 65_535, 65_536, 65_537, 65_791, N])
def test_roots_and_proofs_from_tiles_are_the_whole_trees(tiles: Path, whole: MerkleTree, size: int) -> None:
    tree = _tiled(tiles, size)
    assert tree.root(size) == whole.root(size)
    for index in {0, size // 3, size // 2, size - 1}:
        proof = tree.inclusion_proof(index, size)
        assert proof == whole.inclusion_proof(index, size)
        verify_inclusion(LEAVES[index], index, size, proof, whole.root(size))
    assert tree.consistency_proof(size // 2 or 1, size) == whole.consistency_proof(size // 2 or 1, size)


def test_a_missing_or_short_tile_is_read_from_the_rows_it_stands_for(tmp_path: Path, whole: MerkleTree) -> None:
    write_tiles(tmp_path, LEAVES[:5000])
    (tmp_path / tile_path(0, 7)).unlink()
    path = tmp_path / tile_path(0, 3)
    path.write_bytes(path.read_bytes()[:-1])  # a short file is not a tile
    asked: list[tuple[int, int]] = []

    def rows(lo: int, hi: int) -> list[bytes]:
        asked.append((lo, hi))
        return LEAVES[lo:hi]

    tree = TiledTree(TileReader(tmp_path), 5000, rows)
    assert tree.root() == whole.root(5000)  # from the level-1 tile's 19 hashes and the tail
    assert asked == [(4864, 5000)]
    for index in (3 * 256 + 5, 7 * 256 + 5, 9 * 256):
        assert tree.inclusion_proof(index, 5000) == whole.inclusion_proof(index, 5000)
    assert asked == [(4864, 5000), (3 * 256, 4 * 256), (7 * 256, 8 * 256)]  # the tail, then only those two tiles


def test_rows_that_cannot_stand_for_a_missing_tile_are_an_error_not_a_root(tmp_path: Path) -> None:
    """A ledger that holds fewer rows than a missing tile stands for raises ValueError,
    which ``pitboss evidence`` answers with a pass over the log, never with a root made of
    other bytes."""
    write_tiles(tmp_path, LEAVES[:4096])
    (tmp_path / tile_path(0, 5)).unlink()
    tree = TiledTree(TileReader(tmp_path), 4096, lambda lo, hi: LEAVES[lo:hi - 1])
    with pytest.raises(ValueError, match="255 of the 256 leaves of level-0 tile 5"):
        tree.inclusion_proof(5 * 256 + 1, 4096)


def test_an_altered_tile_gives_another_root_or_a_proof_that_fails(tmp_path: Path, whole: MerkleTree) -> None:
    """Byte 100 of a tile is in its hash 3. A level-1 hash is under the root (once the
    partial level-2 tile above it is gone); a level-0 hash (leaf 515) is under its
    neighbours' proofs (leaf 514's), which the caller checks against the signed root before
    using any (``projections.evidence``)."""
    write_tiles(tmp_path, LEAVES)
    shutil.rmtree(tmp_path / partial_dir(2, 0))
    for level, index in ((0, 2), (1, 0)):
        path = tmp_path / tile_path(level, index)
        good = path.read_bytes()
        path.write_bytes(good[:100] + bytes([good[100] ^ 1]) + good[101:])
        tree = _tiled(tmp_path, N)
        if level:
            assert tree.root() != whole.root()
        else:
            with pytest.raises(ProofError):
                verify_inclusion(LEAVES[514], 514, N, tree.inclusion_proof(514, N), whole.root())
        path.write_bytes(good[:-1])  # a short tile is no tile: read from the rows, right again
        tree = _tiled(tmp_path, N)
        assert tree.root() == whole.root() and tree.inclusion_proof(514, N) == whole.inclusion_proof(514, N)
        assert write_tiles(tmp_path, LEAVES) == 2  # mended from the leaves, and level 2's partial put back
        assert path.read_bytes() == good
        shutil.rmtree(tmp_path / partial_dir(2, 0), ignore_errors=True)

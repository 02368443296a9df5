"""The log's hashes as C2SP tlog-tiles (c2sp.org/tlog-tiles) and proofs made from them
(``ledger.log.tiles``): the same roots and proofs as the whole tree, whatever the tiles
cover; an altered tile gives a different root, never an exception or a wrong "same"."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ledger.log.merkle import MerkleTree, ProofError, verify_inclusion
from ledger.log.tiles import TiledTree, TileReader, tile_path, write_tiles

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


def test_only_full_tiles_are_written_each_256_hashes_of_its_level(tiles: Path, whole: MerkleTree) -> None:
    level0 = sorted(p for p in (tiles / "tile" / "0").rglob("*") if p.is_file())
    assert len(level0) == N // 256 and all(p.stat().st_size == 256 * 32 for p in level0)
    assert (tiles / tile_path(0, 3)).read_bytes() == b"".join(LEAVES[768:1024])
    level1 = (tiles / tile_path(1, 0)).read_bytes()  # the roots of the 256-leaf subtrees
    assert len(level1) == 256 * 32 and level1[32:64] == whole._subroot(256, 512)
    assert not (tiles / "tile" / "2").exists()  # a level-2 tile needs 16.7M leaves
    assert write_tiles(tiles, LEAVES) == 0  # unchanged tiles are not rewritten


@pytest.mark.parametrize("size", [1, 255, 256, 257, 511, 4096, 65_535, 65_536, 65_537, 65_791, N])
def test_roots_and_proofs_from_tiles_are_the_whole_trees(tiles: Path, whole: MerkleTree, size: int) -> None:
    tree = _tiled(tiles, size)
    assert tree.root(size) == whole.root(size)
    for index in {0, size // 3, size // 2, size - 1}:
        proof = tree.inclusion_proof(index, size)
        assert proof == whole.inclusion_proof(index, size)
        verify_inclusion(LEAVES[index], index, size, proof, whole.root(size))
    assert tree.consistency_proof(size // 2 or 1, size) == whole.consistency_proof(size // 2 or 1, size)


def test_a_missing_tile_is_read_from_the_ledger_instead(tmp_path: Path, whole: MerkleTree) -> None:
    write_tiles(tmp_path, LEAVES[:4096])
    (tmp_path / tile_path(0, 7)).unlink()
    tree = _tiled(tmp_path, 5000)
    assert tree.tail_start == 7 * 256  # the tiles from the first are used, the rest come from the rows
    assert tree.root() == whole.root(5000)


def test_tiles_are_counted_by_their_size_and_one_gone_before_it_is_read_is_an_error_not_a_root(
        tmp_path: Path, whole: MerkleTree) -> None:
    """The tiles are counted without reading them (a short file is not a tile); one that is
    cut short after the count raises ValueError, which ``pitboss evidence`` answers with a
    pass over the log, never with a root made of other bytes."""
    write_tiles(tmp_path, LEAVES[:4096])
    path = tmp_path / tile_path(0, 3)
    path.write_bytes(path.read_bytes()[:-1])
    assert _tiled(tmp_path, 4096).tail_start == 3 * 256
    write_tiles(tmp_path, LEAVES[:4096])
    tree = _tiled(tmp_path, 4096)
    assert tree.tail_start == 4096
    (tmp_path / tile_path(0, 5)).unlink()
    with pytest.raises(ValueError, match="tile 5 changed"):
        tree.root()
    assert _tiled(tmp_path, 4096).root() == whole.root(4096)  # counted again: read from the rows


def test_an_altered_tile_gives_another_root_or_a_proof_that_fails(tmp_path: Path, whole: MerkleTree) -> None:
    """Byte 100 of a tile is in its hash 3. A level-1 hash is under the root; a level-0
    hash (leaf 515) is under its neighbours' proofs (leaf 514's), which the caller checks
    against the signed root before using any (``projections.evidence``)."""
    write_tiles(tmp_path, LEAVES)
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
        assert write_tiles(tmp_path, LEAVES) == 1  # mended from the leaves
        assert path.read_bytes() == good

"""RFC 9162 section 2.1 tree hashing and proofs, including forged proofs.

Root vectors are the Certificate Transparency reference test tree (the eight leaves
used by RFC 6962 implementations' test suites).
"""

from __future__ import annotations

import hashlib
import itertools

import pytest

from ledger.log.merkle import (
    EMPTY_ROOT,
    CompactRange,
    MerkleTree,
    ProofError,
    leaf_hash,
    node_hash,
    root_from_leaf_hashes,
    verify_consistency,
    verify_inclusion,
)

LEAVES = [bytes.fromhex(h) for h in ["", "00", "10", "2021", "3031", "40414243",
                                      "5051525354555657", "606162636465666768696a6b6c6d6e6f"]]
ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def test_rfc9162_reference_roots() -> None:
    tree = MerkleTree.from_leaves(LEAVES)
    assert tree.root(0) == EMPTY_ROOT == hashlib.sha256(b"").digest()
    for n in range(1, 9):
        assert tree.root(n).hex() == ROOTS[n - 1], n


def test_compact_range_matches_tree_at_every_size() -> None:
    leaves = [bytes([i]) * 3 for i in range(70)]
    tree = MerkleTree.from_leaves(leaves)
    acc = CompactRange()
    for i, leaf in enumerate(leaves):
        acc.append(leaf)
        assert acc.root() == tree.root(i + 1)


def test_perfect_subtrees_appended_by_their_root_equal_their_leaves_rfc9162_2_1_1() -> None:
    """``CompactRange.append_subtree`` (verify's workers hash whole ranges of 2**k rows)
    gives the tree of the same leaves appended one by one, mixed with single leaves, and
    refuses a subtree that would not start at a multiple of its width."""
    hashes = [leaf_hash(bytes([i % 256, i // 256])) for i in range(200)]
    tree = MerkleTree(hashes)
    for height in (0, 1, 2, 3, 5):
        width = 1 << height
        acc = CompactRange()
        i = 0
        while i + width <= len(hashes):
            acc.append_subtree(root_from_leaf_hashes(hashes[i:i + width]), height)
            i += width
            assert acc.size == i and acc.root() == tree.root(i)
            if height and i % (2 * width) == 0 and i + 2 * width <= len(hashes):  # whole leaves between subtrees
                for h in hashes[i:i + width]:
                    acc.append_leaf_hash(h)
                i += width
                assert acc.root() == tree.root(i)
    acc = CompactRange()
    acc.append_leaf_hash(hashes[0])
    with pytest.raises(ValueError, match="cannot start at leaf 1"):
        acc.append_subtree(root_from_leaf_hashes(hashes[:4]), 2)


@pytest.mark.parametrize("size", range(1, 34))
def test_inclusion_proofs_verify_for_every_leaf(size: int) -> None:
    tree = MerkleTree.from_leaves(bytes([i]) for i in range(size))
    root = tree.root()
    for i in range(size):
        verify_inclusion(leaf_hash(bytes([i])), i, size, tree.inclusion_proof(i), root)


@pytest.mark.parametrize("new", range(1, 34))
def test_consistency_proofs_verify_for_every_old_size(new: int) -> None:
    tree = MerkleTree.from_leaves(bytes([i]) for i in range(new))
    for old in range(0, new + 1):
        verify_consistency(old, new, tree.consistency_proof(old, new), tree.root(old), tree.root(new))


def test_forged_inclusion_proofs_are_refused() -> None:
    tree = MerkleTree.from_leaves(bytes([i]) for i in range(13))
    root, proof, leaf = tree.root(), tree.inclusion_proof(5), leaf_hash(bytes([5]))
    forgeries = {
        "extra hash appended": (leaf, 5, proof + [proof[0]]),
        "hash missing": (leaf, 5, proof[:-1]),
        "hash altered": (leaf, 5, [proof[0][:-1] + bytes([proof[0][-1] ^ 1])] + proof[1:]),
        "wrong index": (leaf, 4, proof),
        "other leaf": (leaf_hash(b"x"), 5, proof),
        "index past size": (leaf, 13, proof),
    }
    for name, (lh, idx, p) in forgeries.items():
        with pytest.raises(ProofError):
            verify_inclusion(lh, idx, 13, p, root)
            pytest.fail(name)


def test_forged_consistency_proofs_are_refused() -> None:
    tree = MerkleTree.from_leaves(bytes([i]) for i in range(20))
    old_root, new_root, proof = tree.root(7), tree.root(20), tree.consistency_proof(7, 20)
    other = MerkleTree.from_leaves(bytes([i]) for i in [99] + list(range(1, 20)))
    cases = [
        (7, 20, proof + [proof[0]], old_root, new_root),   # not fully consumed
        (7, 20, proof[:-1], old_root, new_root),
        (7, 20, proof, other.root(7), new_root),           # old tree was different
        (7, 20, proof, old_root, other.root(20)),
        (20, 7, proof, new_root, old_root),
        (7, 7, proof, old_root, old_root),                  # equal sizes take no proof
        (7, 20, [], old_root, new_root),
    ]
    for args in cases:
        with pytest.raises(ProofError):
            verify_consistency(*args)


def test_node_hash_domain_separation() -> None:
    a, b = leaf_hash(b"a"), leaf_hash(b"b")
    assert node_hash(a, b) == hashlib.sha256(b"\x01" + a + b).digest()
    assert leaf_hash(a + b) != node_hash(a, b)


def test_all_small_trees_against_recursive_definition() -> None:
    def mth(d: list[bytes]) -> bytes:
        if not d:
            return hashlib.sha256(b"").digest()
        if len(d) == 1:
            return leaf_hash(d[0])
        k = 1 << ((len(d) - 1).bit_length() - 1)
        return node_hash(mth(d[:k]), mth(d[k:]))

    for n in itertools.chain(range(0, 20), [31, 32, 33, 64, 65, 100]):
        data = [i.to_bytes(2, "big") for i in range(n)]
        assert MerkleTree.from_leaves(data).root() == mth(data)


def test_level_by_level_root_equals_the_split_at_the_largest_power_of_two_rfc9162_2_1_1() -> None:
    """``root_from_leaf_hashes`` hashes a level at a time (a lone last node carried up):
    the same root as the RFC's recursive split and as appending leaf by leaf, every size."""
    hashes = [leaf_hash(i.to_bytes(2, "big")) for i in range(300)]

    def mth(d: list[bytes]) -> bytes:
        if len(d) == 1:
            return d[0]
        k = 1 << ((len(d) - 1).bit_length() - 1)
        return node_hash(mth(d[:k]), mth(d[k:]))

    acc = CompactRange()
    for n in range(1, 301):
        acc.append_leaf_hash(hashes[n - 1])
        assert root_from_leaf_hashes(hashes[:n]) == mth(hashes[:n]) == acc.root(), n
    assert root_from_leaf_hashes([]) == EMPTY_ROOT

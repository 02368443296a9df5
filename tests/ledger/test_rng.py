"""RNG draws of online rounds (issue #4 point 2; algorithm in ledger/rng.py)."""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter

import pytest

from ledger import rng
from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.house import create_key
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import EVERY_TABLE, ingest

SEED = bytes(range(32))
RID = "round:R-1"


def test_same_seed_same_draws_and_another_seed_other_draws() -> None:
    a = rng.shoe(SEED, RID, 8)
    assert a == rng.shoe(SEED, RID, 8)
    assert sorted(a) == sorted(c for _ in range(8) for c in deck())  # a permutation of the shoe
    assert a != rng.shoe(bytes(32), RID, 8)
    assert a != rng.shoe(SEED, "round:R-2", 8)  # the round id is part of the derivation
    assert list(itertools.islice(rng.dice(SEED, RID), 6)) == list(itertools.islice(rng.dice(SEED, RID), 6))


def test_derivation_is_reimplementable_from_the_documented_algorithm() -> None:
    # the first uniform draw, recomputed by hand from the docstring's definition
    block = __import__("hmac").new(SEED, b"pitboss.rng.v1\x00" + RID.encode() + b"\x00" + (0).to_bytes(8, "big"),
                                   hashlib.sha256).digest()
    x = int.from_bytes(block[:8], "big")
    assert x < 2**64 - (2**64 % 37)  # (holds for this seed: no rejection)
    assert next(rng.roulette_pockets(SEED, RID, "european")) == str(x % 37)


def test_shuffle_of_3_cards_is_unbiased_chi_square_99() -> None:
    """All 6 orderings equally likely: 60,000 shuffles under distinct seeds, chi-square
    with 5 degrees of freedom below its 99% critical value 15.086."""
    n = 60_000
    counts = Counter(
        tuple(rng.shuffle(["a", "b", "c"], rng.DrawStream(i.to_bytes(32, "big"), RID))) for i in range(n))
    assert len(counts) == 6
    expected = n / 6
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 15.086, (chi2, counts)


def test_uniform_rejects_to_remove_modulo_bias() -> None:
    s = rng.DrawStream(SEED, RID)
    counts = Counter(s.uniform(3) for _ in range(30_000))
    chi2 = sum((c - 10_000) ** 2 / 10_000 for c in counts.values())
    assert set(counts) == {0, 1, 2} and chi2 < 9.21  # df 2, 99%
    with pytest.raises(ValueError):
        s.uniform(0)



class _Reference:
    """The byte stream and ``uniform`` exactly as the module docstring words them, written
    for clarity only: HMAC-SHA256 keyed by the seed for each block, the stream as bytes."""

    def __init__(self, seed: bytes, round_id: str):
        self.seed, self.prefix, self.counter, self.buf = seed, b"pitboss.rng.v1\x00" + round_id.encode() + b"\x00", 0, b""

    def _u64(self) -> int:
        if len(self.buf) < 8:
            self.buf += __import__("hmac").new(self.seed, self.prefix + self.counter.to_bytes(8, "big"),
                                               hashlib.sha256).digest()
            self.counter += 1
        x, self.buf = int.from_bytes(self.buf[:8], "big"), self.buf[8:]
        return x

    def uniform(self, n: int) -> int:
        while True:
            x = self._u64()
            if x < 2**64 - (2**64 % n):
                return x % n


def _reference_shoe(seed: bytes, round_id: str, decks: int) -> list[str]:
    out, s = [c for _ in range(decks) for c in deck()], _Reference(seed, round_id)
    for i in range(len(out) - 1, 0, -1):
        j = s.uniform(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def test_draws_equal_the_docstrings_algorithm_word_for_word_pitboss_hmac_sha256_fy_v1() -> None:
    """The derivation as ledger.rng runs it (a keyed HMAC copied per block, words unpacked
    four at a time) against the docstring's text read
    literally: 200 seeds and round ids (non-ASCII among them), shoes of 1 to 8 decks,
    uniform over random ranges up to 2**32, roulette and dice."""
    import random

    r = random.Random(16)
    for i in range(200):
        seed, rid = r.randbytes(32), f"round:T{i}-{'é' * (i % 3)}{i}"
        assert rng.shoe(seed, rid, 1 + i % 8) == _reference_shoe(seed, rid, 1 + i % 8)
        ours, ref = rng.DrawStream(seed, rid), _Reference(seed, rid)
        ranges = [r.randint(1, 2**32) for _ in range(40)] + [1, 2, 3, 2**32]
        assert [ours.uniform(n) for n in ranges] == [ref.uniform(n) for n in ranges]
        ref = _Reference(seed, rid)
        assert list(itertools.islice(rng.roulette_pockets(seed, rid, "american"), 30)) == [
            "00" if k == 37 else str(k) for k in (ref.uniform(38) for _ in range(30))]
        ref = _Reference(seed, rid)
        assert list(itertools.islice(rng.dice(seed, rid), 30)) == [ref.uniform(6) + 1 for _ in range(30)]


class _Scripted(rng.DrawStream):
    """A draw stream that returns the given 8-byte words: the rejection branch, which
    HMAC output reaches for a shoe with a probability under 2**-55 a draw."""

    def __init__(self, words: list[int]):  # no seed: the words stand for the HMAC's
        self.words = list(words)

    def _u64(self) -> int:
        return self.words.pop(0)


def test_shuffle_rejects_a_word_at_or_above_the_limit_and_reads_the_next_docstring_uniform() -> None:
    # three cards: i = 2 draws uniform(3), whose limit is 2**64 - 1 (2**64 mod 3 = 1): the
    # word 2**64 - 1 is rejected, 4 gives j = 1; i = 1 draws uniform(2): 7 gives j = 1
    words = [2**64 - 1, 4, 7]
    assert rng.shuffle(["a", "b", "c"], _Scripted(words)) == ["a", "c", "b"]
    ref = _Scripted(words)
    assert [_Reference.uniform(ref, 3), _Reference.uniform(ref, 2)] == [1, 1]  # type: ignore[arg-type]
    assert ref.words == []  # both read all three words: the rejected one too


# --- at ingest -----------------------------------------------------------------------

@pytest.fixture
def rng_table(ledger):  # type: ignore[no-untyped-def]
    floor = create_key(ledger.store, ledger.keys, "floor:ana", "floor")
    game = create_key(ledger.store, ledger.keys, "game:server", "game", scope=EVERY_TABLE)
    service = create_key(ledger.store, ledger.keys, "rng:main", "rng", scope=EVERY_TABLE)
    b = BatchBuilder.for_store(ledger.store)
    b.add(floor, "table:OB", "table.open.v1", {"game": "baccarat", "seats": 7, "currency": "EUR", "dealing": "rng"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    return game, service


def _round(ledger, game, service, *, seed=SEED, reveal=None, cards=None, commit=True, close=True,  # type: ignore[no-untyped-def]
           source="rng", rid="round:OB-1"):
    b = BatchBuilder.for_store(ledger.store)
    b.add(game, rid, "round.open.v1", {"table": "OB", "game": "baccarat", "rules": {}, "source": source})
    if commit:
        b.add(service, rid, "rng.commit.v1", {"algorithm": rng.ALGORITHM, "commitment": rng.commitment(seed)})
    for kind, p in coup_events([("p1", "banker", 1000)], iter(cards or rng.shoe(seed, rid, 8))):
        b.add(game, rid, kind, p)
    if reveal is not False:
        b.add(service, rid, "rng.reveal.v1", {"seed": (reveal or seed).hex()})
    if close:
        b.add(game, rid, "round.close.v1", {"status": "complete"})
    return b


def test_an_rng_round_is_stored_and_replay_recomputes_every_draw(ledger, rng_table) -> None:  # type: ignore[no-untyped-def]
    from projections.replay import replay_round

    assert ingest(ledger.store, _round(ledger, *rng_table).lines()).status == "stored"
    rep = replay_round(ledger.store, "OB-1")
    assert rep.ok and rep.rng is not None
    assert rep.rng["derived"] == rep.rng["recorded"] == rng.shoe(SEED, "round:OB-1", 8)[: len(rep.rng["recorded"])]


def _refused(ledger, batch, reason: str) -> None:  # type: ignore[no-untyped-def]
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, batch.lines())
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    assert any(reason in r.reason for r in report.rejections), report.rejections


def test_a_changed_seed_is_refused(ledger, rng_table) -> None:  # type: ignore[no-untyped-def]
    _refused(ledger, _round(ledger, *rng_table, reveal=bytes(32)), "does not hash to the commitment")


def test_a_dealt_card_that_does_not_match_the_derivation_is_refused(ledger, rng_table) -> None:  # type: ignore[no-untyped-def]
    cards = rng.shoe(SEED, "round:OB-1", 8)
    cards[2] = next(c for c in deck() if c[0] != cards[2][0])  # the player's second card swapped for another rank
    _refused(ledger, _round(ledger, *rng_table, cards=cards), "draw 3 is")


def test_game_before_commitment_and_close_before_reveal_are_refused(ledger, rng_table) -> None:  # type: ignore[no-untyped-def]
    _refused(ledger, _round(ledger, *rng_table, commit=False), "before the RNG's commitment")
    _refused(ledger, _round(ledger, *rng_table, reveal=False), "the RNG seed is not revealed")


def test_reveal_before_the_draws_are_complete_is_refused(ledger, rng_table) -> None:  # type: ignore[no-untyped-def]
    game, service = rng_table
    b = BatchBuilder.for_store(ledger.store)
    b.add(game, "round:OB-2", "round.open.v1", {"table": "OB", "game": "baccarat", "rules": {}, "source": "rng"})
    b.add(service, "round:OB-2", "rng.commit.v1", {"algorithm": rng.ALGORITHM, "commitment": rng.commitment(SEED)})
    b.add(service, "round:OB-2", "rng.reveal.v1", {"seed": SEED.hex()})
    _refused(ledger, b, "only after the round's draws are complete")


def test_rng_table_rounds_must_say_so_and_only_rng_keys_commit(ledger, rng_table) -> None:  # type: ignore[no-untyped-def]
    game, _ = rng_table
    b = BatchBuilder.for_store(ledger.store)
    b.add(game, "round:OB-3", "round.open.v1", {"table": "OB", "game": "baccarat", "rules": {}})
    _refused(ledger, b, "deals by RNG")
    _refused(ledger, _round(ledger, game, game, rid="round:OB-4"), "may not sign kind rng.commit.v1")

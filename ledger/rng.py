"""RNG draws of online rounds: commit before, reveal after, derive in between (pure).

The protocol (issue #4 point 2), on the round's own stream:

1. ``rng.commit.v1`` {algorithm, commitment}, signed by an ``rng`` key, is the first
   event after ``round.open`` of a round dealt by RNG: ``commitment`` is the lowercase
   hex SHA-256 of the seed. Nothing of the game may come before it.
2. The game is played; every card, pocket or die is recorded as usual.
3. ``rng.reveal.v1`` {seed} (hex, 32 bytes), signed by an ``rng`` key, only once the
   round's draws are complete. Ingest checks SHA-256(seed) against the commitment and
   re-derives every draw; one that differs refuses the reveal (and its batch), naming
   the first difference. A round dealt by RNG closes "complete" only after its reveal.

Derivation, algorithm ``pitboss-hmac-sha256-fy-v1`` (a regulator can reimplement it
from this text alone):

- Byte stream: block ``i`` (i = 0, 1, 2, ...) is
  ``HMAC-SHA256(key=seed, msg=b"pitboss.rng.v1" || 0x00 || round_id (UTF-8) || 0x00 ||
  i as 8 bytes big-endian)``; the stream is block 0 || block 1 || ... . ``round_id`` is
  the round's stream name, e.g. ``round:B1-000123``, so one seed gives different draws
  in different rounds.
- ``uniform(n)``: read the next 8 bytes as a big-endian unsigned integer x; reject and
  read again while ``x >= 2**64 - (2**64 mod n)``; return ``x mod n``. Rejection removes
  the modulo bias (every value 0..n-1 has exactly the same number of accepted x).
- Cards: start from ``decks`` copies of the deck in the order clubs, diamonds, hearts,
  spades, each ``A 2 3 ... 9 T J Q K``; Fisher-Yates: for i from n-1 down to 1, swap
  positions i and ``uniform(i + 1)``. Cards are dealt from position 0 onward.
- Roulette: each spin is ``uniform(37)`` (European: the pocket number) or
  ``uniform(38)`` (American: 0-36, and 37 stands for "00").
- Dice: each die is ``uniform(6) + 1``, three per throw.

Why this is unbiased: HMAC-SHA256 under an unknown 256-bit key is a pseudo-random
function, rejection sampling gives an exactly uniform integer from uniform bits, and
Fisher-Yates with exactly uniform indices gives every ordering with the same
probability (Knuth, TAOCP vol. 2, 3.4.2, Algorithm P).
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import Field

from ledger.games.cards import deck
from ledger.kinds import Strict, register_kind

ALGORITHM = "pitboss-hmac-sha256-fy-v1"
SEED_BYTES = 32


class RngCommit(Strict):
    algorithm: Literal["pitboss-hmac-sha256-fy-v1"]
    commitment: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class RngReveal(Strict):
    seed: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


register_kind("rng.commit.v1", RngCommit, "round", ("rng",))
register_kind("rng.reveal.v1", RngReveal, "round", ("rng",))


def commitment(seed: bytes) -> str:
    return hashlib.sha256(seed).hexdigest()


_WORDS = struct.Struct(">4Q")
"""A block's 32 bytes as the four 8-byte big-endian words ``uniform`` reads, in order."""


class DrawStream:
    """The byte stream and ``uniform`` of the module docstring. The HMAC is keyed once per
    stream and copied for each block (the standard library's own keyed state: half the
    time of keying it again for every block, as ``hmac.digest`` does), and a block is read
    as its four 8-byte words at once (a block is 32 bytes: a word never straddles two)."""

    __slots__ = ("_keyed", "_prefix", "_counter", "_words")

    def __init__(self, seed: bytes, round_id: str):
        self._keyed = hmac.new(seed, digestmod="sha256")
        self._prefix = b"pitboss.rng.v1\x00" + round_id.encode() + b"\x00"
        self._counter = 0
        self._words: list[int] = []  # the current block's unread words, the next one last

    def _u64(self) -> int:
        words = self._words
        if not words:
            mac = self._keyed.copy()
            mac.update(self._prefix + self._counter.to_bytes(8, "big"))
            block = mac.digest()
            self._counter += 1
            words = self._words = list(_WORDS.unpack(block))
            words.reverse()
        return words.pop()

    def uniform(self, n: int) -> int:
        if not 1 <= n <= 2**32:
            raise ValueError(f"uniform({n}) is out of range")
        limit = 2**64 - (2**64 % n)
        while True:
            x = self._u64()
            if x < limit:
                return x % n


def shuffle(items: list[Any], draws: DrawStream) -> list[Any]:
    """Fisher-Yates (Knuth's Algorithm P) with unbiased indices; returns a new list."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = draws.uniform(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def shoe(seed: bytes, round_id: str, decks: int) -> list[str]:
    return shuffle([c for _ in range(decks) for c in deck()], DrawStream(seed, round_id))


def roulette_pockets(seed: bytes, round_id: str, wheel: str) -> Iterator[str]:
    s = DrawStream(seed, round_id)
    n = 38 if wheel == "american" else 37
    while True:
        k = s.uniform(n)
        yield "00" if k == 37 else str(k)


def dice(seed: bytes, round_id: str) -> Iterator[int]:
    s = DrawStream(seed, round_id)
    while True:
        yield s.uniform(6) + 1


def draw_source(spec: tuple[Any, ...], seed: bytes, round_id: str) -> Iterator[Any]:
    """A round's draws in the form its engine records them, in order. ``spec`` is the
    engine's (``Engine.draws``): ("cards", decks) -> ``"Ah"`` (a finite shoe);
    ("pockets", wheel) -> ``"00"``; ("dice",) -> faces 1-6."""
    if spec[0] == "cards":
        return iter(shoe(seed, round_id, spec[1]))
    if spec[0] == "pockets":
        return roulette_pockets(seed, round_id, spec[1])
    if spec[0] == "dice":
        return dice(seed, round_id)
    raise ValueError(f"no RNG derivation for {spec!r}")


def derive(spec: tuple[Any, ...], seed: bytes, round_id: str, count: int) -> list[Any]:
    """The first ``count`` draws of a round (``draw_source``)."""
    it = draw_source(spec, seed, round_id)
    out = [d for _, d in zip(range(count), it)]
    if len(out) < count:
        raise ValueError(f"{count} cards asked of a {len(out)}-card shoe")
    return out


def first_difference(spec: tuple[Any, ...], seed: bytes, round_id: str, recorded: list[Any]) -> str | None:
    """Why the recorded draws are not the seed's, naming the first that differs; or None."""
    want = derive(spec, seed, round_id, len(recorded))
    for i, (got, exp) in enumerate(zip(recorded, want, strict=True), start=1):
        if got != exp:
            return f"draw {i} is {got!r} but the revealed seed derives {exp!r} ({ALGORITHM})"
    return None

"""Ed25519 keys: generation, ids, signature verification, and the private-key directory.

Signing and key files use ``cryptography``; every signature check (ingest, verify,
verify-bundle, checkpoints and cosignatures) goes through ``verify_signature``, which is
libsodium's ``crypto_sign_open`` (docs/spec.md, "Ed25519 acceptance rules").

Private keys live only in PEM files (PKCS#8, mode 0600) in a keys directory (mode
0700). They never enter the database, the event stream, logs or error text: a
``Signer`` prints as its actor and key id only.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.bindings import crypto_core_ed25519_is_valid_point, crypto_sign_open
from nacl.exceptions import CryptoError


class KeyFileError(Exception):
    """A private key file that is missing, unreadable or too widely readable."""


def public_bytes(private_key: Ed25519PrivateKey) -> bytes:
    return private_key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )


def key_id_for(public_key: bytes) -> str:
    """A key's id: the first 16 hex digits of SHA-256 of its raw 32-byte public key."""
    return hashlib.sha256(public_key).hexdigest()[:16]


def verify_signature(public_key: bytes, sig: bytes, message: bytes) -> bool:
    """Whether ``sig`` is ``public_key``'s Ed25519 signature of ``message``, by RFC 8032
    section 5.1.7 as libsodium (1.0.18 and later, PyNaCl's ``crypto_sign_open``) applies it,
    strictly:

    - the signature is 64 bytes and the key 32;
    - S is canonical (S < L, RFC 8032 5.1.7 step 1), else refused;
    - R is not of small order, and A (the key) is a canonical encoding of a point that is
      not of small order, else refused (libsodium's checks beyond the RFC: they shut out
      the "any message" signatures that a small-order key or R admits);
    - the cofactorless equation [S]B = R + [k]A holds, k = SHA-512(R || A || M) mod L.

    One function and one library for every verdict, so ingest, verify and verify-bundle
    accept exactly the same signatures. libsodium releases the GIL, so threads scale."""
    if len(sig) != 64 or len(public_key) != 32:
        return False
    try:
        crypto_sign_open(sig + message, public_key)
    except (CryptoError, ValueError, TypeError):
        return False
    return True


_POOL: list[ThreadPoolExecutor] = []
SIGNATURE_CHUNK = 128
"""Signatures a thread checks in one go: large enough that handing work to a thread costs
little beside 128 verifications (about 7 ms), small enough that the first verdicts are
ready while the rest of the batch is still being checked."""


def _verify_chunk(jobs: list[tuple[bytes, bytes, bytes]]) -> list[bool]:
    return [verify_signature(pk, sig, msg) for pk, sig, msg in jobs]


class SignatureFeed:
    """Signatures checked on every core as they are handed in (threads: libsodium releases
    the GIL while it verifies): each full chunk goes to a thread at once, so checking
    starts while the caller is still producing jobs (ingest parses the rest of a batch
    meanwhile). ``add`` returns the job's number; ``finish`` returns ``verdict(i)``, which
    waits for the i-th job's verdict. Fewer than two chunks are checked inline at
    ``finish``, where a thread would cost more than it saves."""

    def __init__(self) -> None:
        self._jobs: list[tuple[bytes, bytes, bytes]] = []
        self._futures: list[Future[list[bool]]] = []
        self._threaded = (os.cpu_count() or 1) > 1

    def _submit(self, chunk: int) -> None:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="ed25519"))
        start = chunk * SIGNATURE_CHUNK
        self._futures.append(_POOL[0].submit(_verify_chunk, self._jobs[start:start + SIGNATURE_CHUNK]))

    def add(self, job: tuple[bytes, bytes, bytes]) -> int:
        """Hand in ``(public_key, sig, message)``; returns its number for ``verdict``."""
        jobs = self._jobs
        jobs.append(job)
        n = len(jobs)
        if n % SIGNATURE_CHUNK == 0 and n >= 2 * SIGNATURE_CHUNK and self._threaded:
            if not self._futures:
                self._submit(0)
            self._submit(n // SIGNATURE_CHUNK - 1)
        return n - 1

    def finish(self) -> Callable[[int], bool]:
        """The verdicts: every job handed in is being checked, or has been."""
        if not self._futures:
            done = _verify_chunk(self._jobs)
            return done.__getitem__
        for chunk in range(len(self._futures), -(-len(self._jobs) // SIGNATURE_CHUNK)):
            self._submit(chunk)
        futures = self._futures

        def verdict(i: int) -> bool:
            return futures[i // SIGNATURE_CHUNK].result()[i % SIGNATURE_CHUNK]

        return verdict


def verify_signatures(jobs: list[tuple[bytes, bytes, bytes]]) -> Callable[[int], bool]:
    """Check ``(public_key, sig, message)`` triples on every core while the caller goes on
    with its own work (``SignatureFeed``). Returns ``verdict(i)``, which waits for the i-th
    triple's verdict."""
    feed = SignatureFeed()
    for job in jobs:
        feed.add(job)
    return feed.finish()


def public_key_problem(public_key: bytes) -> str | None:
    """Why a key cannot be registered, or None: it must be 32 bytes encoding, canonically,
    a point of the curve's prime-order subgroup (libsodium's
    ``crypto_core_ed25519_is_valid_point``): a small-order or mixed-order key would verify
    nothing honestly, or "any message" (docs/spec.md, "Ed25519 acceptance rules")."""
    if len(public_key) != 32:
        return "an Ed25519 public key is 32 bytes"
    if not crypto_core_ed25519_is_valid_point(public_key):
        return "not a valid Ed25519 public key (not canonical, or of small or mixed order)"
    return None


@dataclass(frozen=True)
class Signer:
    """Who signs: an actor name, its key id and its private key (never printed)."""

    actor: str
    key_id: str
    private_key: Ed25519PrivateKey = field(repr=False, compare=False)

    @classmethod
    def generate(cls, actor: str) -> Signer:
        priv = Ed25519PrivateKey.generate()
        return cls(actor, key_id_for(public_bytes(priv)), priv)

    @property
    def public_key(self) -> bytes:
        return public_bytes(self.private_key)

    def sign(self, digest: bytes) -> bytes:
        return self.private_key.sign(digest)


class KeyDirectory:
    """PEM files named ``<key_id>.pem`` in one directory."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    def ensure(self) -> None:
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path, 0o700)

    def file_for(self, key_id: str) -> Path:
        return self.path / f"{key_id}.pem"

    def save(self, signer: Signer) -> Path:
        self.ensure()
        pem = signer.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        target = self.file_for(signer.key_id)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        return target

    def has(self, key_id: str) -> bool:
        return self.file_for(key_id).is_file()

    def load(self, key_id: str, actor: str) -> Signer:
        target = self.file_for(key_id)
        try:
            mode = target.stat().st_mode & 0o777
            data = target.read_bytes()
        except OSError as exc:
            raise KeyFileError(
                f"private key {key_id} not found in {self.path} ({exc.strerror})"
            ) from None
        if mode & 0o077:
            raise KeyFileError(
                f"private key file {target} is readable by others (mode {mode:o});"
                " chmod 600 it"
            )
        try:
            priv = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError):
            raise KeyFileError(f"private key file {target} is not a PEM key") from None
        if not isinstance(priv, Ed25519PrivateKey):
            raise KeyFileError(f"private key file {target} is not an Ed25519 key")
        if key_id_for(public_bytes(priv)) != key_id:
            raise KeyFileError(f"private key file {target} does not hold key {key_id}")
        return Signer(actor, key_id, priv)

"""Ed25519 keys: generation, ids, and the private-key directory.

Private keys live only in PEM files (PKCS#8, mode 0600) in a keys directory (mode
0700). They never enter the database, the event stream, logs or error text: a
``Signer`` prints as its actor and key id only.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


class KeyFileError(Exception):
    """A private key file that is missing, unreadable or too widely readable."""


def public_bytes(private_key: Ed25519PrivateKey) -> bytes:
    return private_key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )


def key_id_for(public_key: bytes) -> str:
    """A key's id: the first 16 hex digits of SHA-256 of its raw 32-byte public key."""
    return hashlib.sha256(public_key).hexdigest()[:16]


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

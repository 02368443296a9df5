"""C2SP signed notes (c2sp.org/signed-note) and checkpoints (c2sp.org/tlog-checkpoint).

A note is UTF-8 text ending in a newline, a blank line, then signature lines
``— <key name> <base64(4-byte key hash || 64-byte Ed25519 signature)>`` (U+2014 dash).
The key hash is the first 4 bytes of SHA-256(name || "\\n" || 0x01 || public key), and
a verifier key is written ``<name>+<hex key hash>+<base64(0x01 || public key)>``.

A checkpoint is a note whose text is exactly three lines: origin, decimal tree size,
base64 root hash; it is signed by the log key whose name is the origin.

Everything here is pure (no database) so that bundles and proofs verify offline.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

SIG_DASH = "\u2014"
ED25519_TYPE = b"\x01"


class NoteError(ValueError):
    """A note, checkpoint or verifier key that is malformed or does not verify."""


def key_hash(name: str, public_key: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + ED25519_TYPE + public_key).digest()[:4]


def check_key_name(name: str) -> None:
    """A signed note's key name (the log's origin): non-empty, no whitespace, no '+'
    (C2SP signed-note), and printable, so that it can be shown to a person as it is."""
    if not name or any(c.isspace() for c in name) or "+" in name or not name.isprintable():
        raise NoteError(f"key name {name!r} must be non-empty and printable, without spaces or '+'")


def verifier_key(name: str, public_key: bytes) -> str:
    """The text form of a verifier key: ``name+hexhash+base64(0x01||key)``."""
    check_key_name(name)
    b64 = base64.b64encode(ED25519_TYPE + public_key).decode()
    return f"{name}+{key_hash(name, public_key).hex()}+{b64}"


@dataclass(frozen=True)
class VerifierKey:
    name: str
    key_hash: bytes
    public_key: bytes

    @classmethod
    def parse(cls, text: str) -> VerifierKey:
        parts = text.strip().split("+", 2)
        if len(parts) != 3:
            raise NoteError("verifier key must be name+keyhash+base64key")
        name, hexhash, b64 = parts
        check_key_name(name)
        try:
            raw = base64.b64decode(b64, validate=True)
            khash = bytes.fromhex(hexhash)
        except ValueError as exc:
            raise NoteError(f"verifier key is not well encoded: {exc}") from None
        if len(raw) != 33 or raw[:1] != ED25519_TYPE or len(khash) != 4:
            raise NoteError("verifier key is not an Ed25519 key")
        if key_hash(name, raw[1:]) != khash:
            raise NoteError("verifier key hash does not match its name and key")
        return cls(name, khash, raw[1:])


def sign_note(text: str, name: str, private_key: Ed25519PrivateKey) -> str:
    if not text.endswith("\n"):
        raise NoteError("note text must end with a newline")
    check_key_name(name)
    from cryptography.hazmat.primitives import serialization

    pub = private_key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    sig = private_key.sign(text.encode())
    blob = base64.b64encode(key_hash(name, pub) + sig).decode()
    return f"{text}\n{SIG_DASH} {name} {blob}\n"


def open_note(note: str, key: VerifierKey) -> str:
    """Verify ``note`` with ``key``; return its text. Raises NoteError otherwise."""
    sep = note.rfind("\n\n")
    if sep < 0 or not note.endswith("\n"):
        raise NoteError("note has no blank line before its signatures")
    text, sig_block = note[: sep + 1], note[sep + 2 :]
    found = False
    for line in sig_block.splitlines():
        prefix = f"{SIG_DASH} "
        if not line.startswith(prefix):
            raise NoteError(f"malformed signature line {line!r}")
        try:
            name, b64 = line[len(prefix) :].split(" ")
            blob = base64.b64decode(b64, validate=True)
        except ValueError:
            raise NoteError(f"malformed signature line {line!r}") from None
        if name != key.name or blob[:4] != key.key_hash:
            continue  # another signer (a witness, say): not ours to judge
        found = True
        if len(blob) != 68:
            raise NoteError(f"signature by {name} has the wrong length")
        try:
            Ed25519PublicKey.from_public_bytes(key.public_key).verify(blob[4:], text.encode())
        except InvalidSignature:
            raise NoteError(f"signature by {name} does not verify") from None
    if not found:
        raise NoteError(f"note is not signed by {key.name}")
    return text


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes

    def body(self) -> str:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n"

    @classmethod
    def parse_body(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "":
            raise NoteError("checkpoint must have origin, size and root lines")
        origin, size_s, root_s = lines[0], lines[1], lines[2]
        if not size_s.isdigit() or (size_s != "0" and size_s.startswith("0")):
            raise NoteError(f"checkpoint size {size_s!r} is not a decimal number")
        try:
            root = base64.b64decode(root_s, validate=True)
        except ValueError:
            raise NoteError("checkpoint root hash is not base64") from None
        if len(root) != 32:
            raise NoteError("checkpoint root hash is not 32 bytes")
        return cls(origin, int(size_s), root)


def open_checkpoint(note: str, key: VerifierKey) -> Checkpoint:
    """Verify a signed checkpoint note and return its contents."""
    cp = Checkpoint.parse_body(open_note(note, key))
    if cp.origin != key.name:
        raise NoteError(f"checkpoint origin {cp.origin!r} is not the key name {key.name!r}")
    return cp

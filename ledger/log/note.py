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
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ledger.keys import public_bytes, verify_signature

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

SIG_DASH = "\u2014"
ED25519_TYPE = b"\x01"
COSIGNATURE_TYPE = b"\x04"
"""c2sp.org/tlog-cosignature: a witness's timestamped Ed25519 cosignature/v1."""
EMPTY_TREE_ROOT = hashlib.sha256(b"").digest()
"""RFC 9162 2.1.1: the root of the tree of no leaves."""
_DECIMAL = re.compile(r"0|[1-9][0-9]*")


class NoteError(ValueError):
    """A note, checkpoint or verifier key that is malformed or does not verify."""


def key_hash(name: str, public_key: bytes, sig_type: bytes = ED25519_TYPE) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + sig_type + public_key).digest()[:4]


def is_decimal(text: str) -> bool:
    """ASCII decimal without leading zeros: what C2SP sizes and proof indexes are. Not
    ``str.isdigit``, which takes "²" and Arabic-Indic digits."""
    return _DECIMAL.fullmatch(text) is not None


def check_key_name(name: str) -> None:
    """A signed note's key name (the log's origin): non-empty, no whitespace, no '+'
    (C2SP signed-note), and printable, so that it can be shown to a person as it is."""
    if not name or any(c.isspace() for c in name) or "+" in name or not name.isprintable():
        raise NoteError(f"key name {name!r} must be non-empty and printable, without spaces or '+'")


def verifier_key(name: str, public_key: bytes, sig_type: bytes = ED25519_TYPE) -> str:
    """The text form of a verifier key: ``name+hexhash+base64(type||key)``; the type is
    0x01 for a log's Ed25519 key, 0x04 for a witness's cosignature/v1 key."""
    check_key_name(name)
    b64 = base64.b64encode(sig_type + public_key).decode()
    return f"{name}+{key_hash(name, public_key, sig_type).hex()}+{b64}"


@dataclass(frozen=True)
class VerifierKey:
    name: str
    key_hash: bytes
    public_key: bytes
    sig_type: bytes = ED25519_TYPE

    @classmethod
    def parse(cls, text: str, sig_type: bytes = ED25519_TYPE) -> VerifierKey:
        """A verifier key of ``sig_type`` (a log's key by default; ``COSIGNATURE_TYPE`` for a witness)."""
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
        if len(raw) != 33 or len(khash) != 4:
            raise NoteError("verifier key is not an Ed25519 key")
        if raw[:1] != sig_type:
            want = "a witness's cosignature/v1 key (type 0x04)" if sig_type == COSIGNATURE_TYPE else \
                "a log's Ed25519 key (type 0x01)"
            raise NoteError(f"verifier key {name} is not {want}")
        if key_hash(name, raw[1:], sig_type) != khash:
            raise NoteError("verifier key hash does not match its name and key")
        return cls(name, khash, raw[1:], sig_type)

    def text(self) -> str:
        return verifier_key(self.name, self.public_key, self.sig_type)


def sign_note(text: str, name: str, private_key: Ed25519PrivateKey) -> str:
    if not text.endswith("\n"):
        raise NoteError("note text must end with a newline")
    check_key_name(name)
    pub = public_bytes(private_key)
    sig = private_key.sign(text.encode())
    blob = base64.b64encode(key_hash(name, pub) + sig).decode()
    return f"{text}\n{SIG_DASH} {name} {blob}\n"


_OPENED: dict[tuple[str, str, bytes, bytes], str] = {}
"""Notes that verified, by (note, key name, key hash, public key): a bundle's proofs each
carry the same checkpoint, checked once rather than twice a proof (a pure function of
these; what fails is never kept)."""


def open_note(note: str, key: VerifierKey) -> str:
    """Verify ``note`` with ``key``; return its text. Raises NoteError otherwise."""
    memo = (note, key.name, key.key_hash, key.public_key)
    text = _OPENED.get(memo)
    if text is None:
        text = _open_note(note, key)
        if len(_OPENED) >= 64:
            _OPENED.clear()
        _OPENED[memo] = text
    return text


def _open_note(note: str, key: VerifierKey) -> str:
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
        if not verify_signature(key.public_key, blob[4:], text.encode()):
            raise NoteError(f"signature by {name} does not verify")
    if not found:
        raise NoteError(f"note is not signed by {key.name}")
    return text


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint's body: origin, size, root and any extension lines (c2sp.org/tlog-checkpoint
    allows opaque non-empty lines after the root; pitboss writes one, ``keyring_line``)."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def body(self) -> str:
        ext = "".join(line + "\n" for line in self.extensions)
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n{ext}"

    @classmethod
    def parse_body(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "":
            raise NoteError("checkpoint must have origin, size and root lines")
        origin, size_s, root_s = lines[0], lines[1], lines[2]
        if not is_decimal(size_s):
            raise NoteError(f"checkpoint size {size_s!r} is not an ASCII decimal number")
        try:
            root = base64.b64decode(root_s, validate=True)
        except ValueError:
            raise NoteError("checkpoint root hash is not base64") from None
        if len(root) != 32:
            raise NoteError("checkpoint root hash is not 32 bytes")
        if size_s == "0" and root != EMPTY_TREE_ROOT:
            raise NoteError("a checkpoint of size 0 must carry the empty tree's root, SHA-256 of nothing (RFC 9162 2.1.1)")
        extensions = tuple(lines[3:-1])
        if any(not line for line in extensions):
            raise NoteError("a checkpoint extension line must not be empty")
        return cls(origin, int(size_s), root, extensions)

    def keyring_head(self) -> tuple[int, str] | None:
        """The key ring's last (seq, hash) within this checkpoint's tree, if it states it."""
        for line in self.extensions:
            parts = line.split(" ")
            if len(parts) == 3 and parts[0] == KEYRING_EXTENSION and is_decimal(parts[1]):
                return int(parts[1]), parts[2]
        return None


KEYRING_EXTENSION = "pitboss/keyring"


def keyring_line(seq: int, event_hash: str) -> str:
    """The extension line by which the log key commits to the key ring as of a checkpoint
    (its last seq and hash within the tree): a bundle's key ring must reach it, so a
    revocation cannot be left out of a bundle (issue 14 point 4)."""
    return f"{KEYRING_EXTENSION} {seq} {event_hash}"


def open_checkpoint(note: str, key: VerifierKey) -> Checkpoint:
    """Verify a signed checkpoint note and return its contents."""
    cp = Checkpoint.parse_body(open_note(note, key))
    if cp.origin != key.name:
        raise NoteError(f"checkpoint origin {cp.origin!r} is not the key name {key.name!r}")
    return cp


# --- c2sp.org/tlog-cosignature: a witness's cosignature/v1 -----------------------------

def _cosigned_message(body: str, timestamp: int) -> bytes:
    return f"cosignature/v1\ntime {timestamp}\n".encode() + body.encode()


def cosign(body: str, name: str, private_key: Ed25519PrivateKey, timestamp: int) -> str:
    """The cosignature/v1 line a witness adds to a checkpoint whose note text is ``body``:
    ``— name base64(key hash || 8-byte big-endian time || signature)``."""
    check_key_name(name)
    pub = public_bytes(private_key)
    sig = private_key.sign(_cosigned_message(body, timestamp))
    blob = key_hash(name, pub, COSIGNATURE_TYPE) + timestamp.to_bytes(8, "big") + sig
    return f"{SIG_DASH} {name} {base64.b64encode(blob).decode()}\n"


def note_parts(note: str) -> tuple[str, list[tuple[str, bytes]]]:
    """(note text, [(signer name, signature blob)]) of a signed note, without verifying."""
    sep = note.rfind("\n\n")
    if sep < 0 or not note.endswith("\n"):
        raise NoteError("note has no blank line before its signatures")
    text, sig_block = note[: sep + 1], note[sep + 2 :]
    sigs = []
    for line in sig_block.splitlines():
        prefix = f"{SIG_DASH} "
        try:
            if not line.startswith(prefix):
                raise ValueError
            name, b64 = line[len(prefix) :].split(" ")
            sigs.append((name, base64.b64decode(b64, validate=True)))
        except ValueError:
            raise NoteError(f"malformed signature line {line!r}") from None
    return text, sigs


def cosignature_time(note: str, witness: VerifierKey) -> int | None:
    """The time of ``witness``'s valid cosignature/v1 on ``note``, or None if it has none.
    A line that claims to be the witness's (its name and key hash) but does not verify
    raises NoteError: a forged cosignature is named, not skipped."""
    text, sigs = note_parts(note)
    for name, blob in sigs:
        if name != witness.name or blob[:4] != witness.key_hash:
            continue
        if len(blob) != 4 + 8 + 64:
            raise NoteError(f"cosignature by {name} has the wrong length")
        timestamp = int.from_bytes(blob[4:12], "big")
        if not verify_signature(witness.public_key, blob[12:], _cosigned_message(text, timestamp)):
            raise NoteError(f"cosignature by witness {name} does not verify")
        return timestamp
    return None

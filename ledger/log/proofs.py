"""Proof files and their standalone verifiers (no database, no pitboss state).

Inclusion proofs use the c2sp.org/tlog-proof@v1 text format::

    c2sp.org/tlog-proof@v1
    extra <base64 of the event's canonical JSON>
    index <leaf index>
    <base64 hash>            one line per RFC 9162 inclusion-proof hash
                             (blank line)
    <signed checkpoint note>

``extra`` carries the event itself, so the proof is self-contained: the verifier
recomputes the event hash (``ledger.canonical``), hashes it as a leaf and checks the
path to the checkpoint's root, and the checkpoint's signature against the log's
verifier key (``ledger.log.note``).

Consistency proofs use the same shape without a checkpoint; the two checkpoints are
given beside it::

    pitboss.dev/tlog-consistency@v1
    old <size>
    new <size>
    <base64 hash>            one line per RFC 9162 consistency-proof hash
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from ledger.canonical import canonical_json, event_hash
from ledger.log.merkle import ProofError, leaf_hash, verify_consistency, verify_inclusion
from ledger.log.note import Checkpoint, NoteError, VerifierKey, is_decimal, open_checkpoint

INCLUSION_HEADER = "c2sp.org/tlog-proof@v1"
CONSISTENCY_HEADER = "pitboss.dev/tlog-consistency@v1"
_BODY_FIELDS = ("ledger", "stream", "seq", "at", "kind", "actor", "key_id", "prev", "payload")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _hash_line(line: str) -> bytes:
    try:
        h = base64.b64decode(line, validate=True)
    except ValueError:
        raise ProofError(f"proof line {line!r} is not a base64 hash") from None
    if len(h) != 32:
        raise ProofError(f"proof line {line!r} is not a 32-byte hash")
    return h


def inclusion_proof_text(event: dict[str, Any], index: int, proof: list[bytes], checkpoint_note: str) -> str:
    lines = [INCLUSION_HEADER, f"extra {_b64(canonical_json(event))}", f"index {index}"]
    lines += [_b64(h) for h in proof]
    return "\n".join(lines) + "\n\n" + checkpoint_note


def consistency_proof_text(old_size: int, new_size: int, proof: list[bytes]) -> str:
    lines = [CONSISTENCY_HEADER, f"old {old_size}", f"new {new_size}"] + [_b64(h) for h in proof]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class VerifiedInclusion:
    event: dict[str, Any]
    index: int
    checkpoint: Checkpoint


def verify_inclusion_proof(proof_text: str, checkpoint_note: str | None, verifier_key: str) -> VerifiedInclusion:
    """Check that the proof's event is in the log the signed checkpoint commits to.

    ``checkpoint_note`` is the checkpoint the verifier trusts; when None, the one inside
    the proof is used. Either way its signature must verify with ``verifier_key``.
    Raises ``ProofError`` (or ``NoteError``) naming the check that failed.
    """
    head, sep, embedded = proof_text.partition("\n\n")
    if not sep:
        raise ProofError("proof has no blank line before its checkpoint")
    lines = head.split("\n")
    if not lines or lines[0] != INCLUSION_HEADER:
        raise ProofError(f"proof does not start with {INCLUSION_HEADER}")
    rest = lines[1:]
    extra = None
    if rest and rest[0].startswith("extra "):
        extra = rest.pop(0)[len("extra "):]
    if not rest or not rest[0].startswith("index "):
        raise ProofError("proof has no index line")
    idx_s = rest.pop(0)[len("index "):]
    if not is_decimal(idx_s):
        raise ProofError(f"proof index {idx_s!r} is not an ASCII decimal number")
    hashes = [_hash_line(x) for x in rest]
    key = VerifierKey.parse(verifier_key)
    cp = open_checkpoint(embedded, key)
    if checkpoint_note is not None:
        trusted = open_checkpoint(checkpoint_note, key)
        if trusted != cp:
            raise ProofError(
                f"the proof is for checkpoint size {cp.size}, not the given checkpoint (size {trusted.size})"
            )
    if extra is None:
        raise ProofError("proof carries no event (extra line)")
    try:
        event = json.loads(base64.b64decode(extra, validate=True))
        body = {k: event[k] for k in _BODY_FIELDS}
        claimed = bytes.fromhex(event["hash"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ProofError(f"proof's event is not a pitboss event: {exc}") from None
    if event_hash(body) != claimed:
        raise ProofError("proof's event does not hash to its recorded hash (altered)")
    verify_inclusion(leaf_hash(claimed), int(idx_s), cp.size, hashes, cp.root)
    return VerifiedInclusion(event, int(idx_s), cp)


def verify_consistency_proof(
    proof_text: str, old_checkpoint_note: str, new_checkpoint_note: str, verifier_key: str
) -> tuple[Checkpoint, Checkpoint]:
    """Check that the new checkpoint's log extends the old one's without changing it."""
    lines = proof_text.rstrip("\n").split("\n")
    if len(lines) < 3 or lines[0] != CONSISTENCY_HEADER:
        raise ProofError(f"proof does not start with {CONSISTENCY_HEADER}")
    if not (lines[1].startswith("old ") and lines[2].startswith("new ")):
        raise ProofError("proof needs 'old <size>' and 'new <size>' lines")
    if not (is_decimal(lines[1][4:]) and is_decimal(lines[2][4:])):
        raise ProofError("proof sizes are not ASCII decimal numbers")
    old_size, new_size = int(lines[1][4:]), int(lines[2][4:])
    hashes = [_hash_line(x) for x in lines[3:]]
    key = VerifierKey.parse(verifier_key)
    old = open_checkpoint(old_checkpoint_note, key)
    new = open_checkpoint(new_checkpoint_note, key)
    if (old.size, new.size) != (old_size, new_size):
        raise ProofError(
            f"proof is between sizes {old_size} and {new_size}, checkpoints are {old.size} and {new.size}"
        )
    verify_consistency(old.size, new.size, hashes, old.root, new.root)
    return old, new


__all__ = [
    "NoteError", "ProofError", "VerifiedInclusion", "consistency_proof_text",
    "inclusion_proof_text", "verify_consistency_proof", "verify_inclusion_proof",
]

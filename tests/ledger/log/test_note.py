"""C2SP signed-note and tlog-checkpoint formats (c2sp.org/signed-note, tlog-checkpoint)."""

from __future__ import annotations

import base64
import hashlib

import pytest

from ledger.keys import Signer
from ledger.log.note import (
    Checkpoint,
    NoteError,
    VerifierKey,
    key_hash,
    open_checkpoint,
    open_note,
    sign_note,
    verifier_key,
)


def test_key_hash_and_verifier_key_format() -> None:
    s = Signer.generate("x")
    name = "example.com/log"
    assert key_hash(name, s.public_key) == hashlib.sha256(name.encode() + b"\n\x01" + s.public_key).digest()[:4]
    text = verifier_key(name, s.public_key)
    n, h, b64 = text.split("+", 2)
    assert n == name and bytes.fromhex(h) == key_hash(name, s.public_key)
    assert base64.b64decode(b64) == b"\x01" + s.public_key
    assert VerifierKey.parse(text).public_key == s.public_key


def test_signature_line_format_and_round_trip() -> None:
    s = Signer.generate("x")
    cp = Checkpoint("example.com/log", 12, hashlib.sha256(b"r").digest())
    note = sign_note(cp.body(), cp.origin, s.private_key)
    text, sig_line = note.split("\n\n")
    assert text + "\n" == cp.body()
    assert sig_line.startswith("\u2014 example.com/log ") and note.endswith("\n")
    blob = base64.b64decode(sig_line.split(" ")[2])
    assert len(blob) == 68 and blob[:4] == key_hash(cp.origin, s.public_key)
    assert open_checkpoint(note, VerifierKey.parse(verifier_key(cp.origin, s.public_key))) == cp


def test_tampered_note_is_refused() -> None:
    s = Signer.generate("x")
    key = VerifierKey.parse(verifier_key("log", s.public_key))
    note = sign_note("log\n5\n" + base64.b64encode(b"\x00" * 32).decode() + "\n", "log", s.private_key)
    with pytest.raises(NoteError, match="does not verify"):
        open_note(note.replace("\n5\n", "\n6\n"), key)


def test_a_note_that_opened_once_opens_only_for_its_own_bytes_and_key() -> None:
    """``open_note`` keeps the notes that verified (a bundle's proofs all carry one
    checkpoint): the kept answer is for those exact bytes and that key, never for a note
    altered afterwards, the same text under another signature, or another key's name."""
    s, other = Signer.generate("x"), Signer.generate("y")
    key = VerifierKey.parse(verifier_key("log", s.public_key))
    body = "log\n5\n" + base64.b64encode(b"\x00" * 32).decode() + "\n"
    note = sign_note(body, "log", s.private_key)
    assert open_note(note, key) == body and open_note(note, key) == body
    with pytest.raises(NoteError, match="does not verify"):
        open_note(note.replace("\n5\n", "\n6\n"), key)
    blob = base64.b64encode(key_hash("log", s.public_key) + other.private_key.sign(body.encode())).decode()
    with pytest.raises(NoteError, match="does not verify"):  # the key's name and hash, another key's signature
        open_note(f"{body}\n\u2014 log {blob}\n", key)
    forged = sign_note(body, "log", other.private_key)
    with pytest.raises(NoteError, match="not signed by log"):
        open_note(forged, key)
    with pytest.raises(NoteError, match="not signed by log"):
        open_note(note, VerifierKey.parse(verifier_key("log", other.public_key)))


def test_witness_signature_from_another_key_is_ignored_not_trusted() -> None:
    s, w = Signer.generate("x"), Signer.generate("w")
    key = VerifierKey.parse(verifier_key("log", s.public_key))
    body = "log\n1\n" + base64.b64encode(b"\x01" * 32).decode() + "\n"
    note = sign_note(body, "log", s.private_key)
    witness_line = sign_note(body, "witness", w.private_key).split("\n\n")[1]
    assert open_note(note + witness_line, key) == body
    with pytest.raises(NoteError, match="not signed by log"):
        open_note(sign_note(body, "witness", w.private_key), key)


def test_checkpoint_origin_must_be_the_key_name() -> None:
    s = Signer.generate("x")
    body = "other\n1\n" + base64.b64encode(b"\x01" * 32).decode() + "\n"
    with pytest.raises(NoteError, match="origin"):
        open_checkpoint(sign_note(body, "log", s.private_key), VerifierKey.parse(verifier_key("log", s.public_key)))


@pytest.mark.parametrize("size", ["01", "-1", "1.0", ""])
def test_checkpoint_size_must_be_decimal(size: str) -> None:
    with pytest.raises(NoteError):
        Checkpoint.parse_body(f"log\n{size}\n" + base64.b64encode(b"\x01" * 32).decode() + "\n")

"""A small witness with the c2sp.org/tlog-witness behaviour, for a regulator to run.

The witness is a name and an Ed25519 key, configured with the log verifier keys it
follows. Per log (keyed by origin) it keeps only the latest checkpoint it cosigned, and
it cosigns a new one (c2sp.org/tlog-cosignature, cosignature/v1, with its time) only
after checking:

1. the request is ``old <size>``, the consistency-proof hashes (base64, a line each), a
   blank line, then the signed checkpoint (c2sp.org/tlog-witness "add-checkpoint");
2. the log is one it follows (else 404) and the checkpoint verifies with that log's key
   (else 403);
3. ``old`` is not larger than the checkpoint (else 400) and equals the size it holds
   (else 409 Conflict, answering its own size as ``text/x.tlog.size`` so the log can
   retry); at the same size the roots must be the same (else 409);
4. the RFC 9162 consistency proof from its checkpoint to the new one (else 422).

Only then it stores the new checkpoint, under an exclusive file lock and atomically, and
answers the cosignature line (200). It never cosigns two inconsistent checkpoints of
one log, nor a smaller one after a larger, across restarts, as long as its directory
survives. The HTTP front (``pitboss witness serve``) and the operator's client
(``request_cosignature``) are thin around ``Witness.add_checkpoint``.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ledger.keys import public_bytes
from ledger.log.merkle import ProofError, verify_consistency
from ledger.log.note import (
    COSIGNATURE_TYPE,
    EMPTY_TREE_ROOT,
    Checkpoint,
    NoteError,
    VerifierKey,
    check_key_name,
    cosign,
    is_decimal,
    open_checkpoint,
    verifier_key,
)

ProofFor = Callable[[int], list[bytes]]
"""The consistency-proof hashes from a size to the checkpoint being sent."""
SIZE_TYPE = "text/x.tlog.size"
MAX_REQUEST = 1 << 20


class WitnessError(Exception):
    """The witness cannot start or be configured; the message says why."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: str
    content_type: str = "text/plain; charset=utf-8"


def _safe(name: str) -> str:
    tag = hashlib.sha256(name.encode()).hexdigest()[:12]
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in name)[:64] + "-" + tag


class Witness:
    """A witness kept in a directory: ``witness.pem`` (0600), ``logs/*.vkey`` and
    ``checkpoints/*.note`` (the latest cosigned checkpoint of each log)."""

    def __init__(self, directory: Path):
        self.dir = directory
        key_file = directory / "witness.pem"
        name_file = directory / "name"
        if not key_file.is_file() or not name_file.is_file():
            raise WitnessError(f"no witness in {directory}: run 'pitboss witness init' first")
        self.name = name_file.read_text(encoding="utf-8").strip()
        from cryptography.hazmat.primitives import serialization  # a witness signs; its readers never need this
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise WitnessError(f"{key_file} is not an Ed25519 key")
        self._key = key

    @classmethod
    def create(cls, directory: Path, name: str) -> Witness:
        try:
            check_key_name(name)
        except NoteError as exc:
            raise WitnessError(f"witness name: {exc}") from None
        if (directory / "witness.pem").exists():
            raise WitnessError(f"{directory} already holds a witness")
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        fd = os.open(directory / "witness.pem", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        (directory / "name").write_text(name + "\n", encoding="utf-8")
        (directory / "logs").mkdir(exist_ok=True)
        (directory / "checkpoints").mkdir(exist_ok=True)
        return cls(directory)

    @property
    def vkey(self) -> str:
        """The witness's verifier key (type 0x04), for verifiers to pin with ``--witness``."""
        return verifier_key(self.name, public_bytes(self._key), COSIGNATURE_TYPE)

    def follow(self, log_vkey: str) -> VerifierKey:
        try:
            key = VerifierKey.parse(log_vkey)
        except NoteError as exc:
            raise WitnessError(f"log key: {exc}") from None
        (self.dir / "logs" / f"{_safe(key.name)}.vkey").write_text(key.text() + "\n", encoding="utf-8")
        return key

    def _log_key(self, origin: str) -> VerifierKey | None:
        path = self.dir / "logs" / f"{_safe(origin)}.vkey"
        return VerifierKey.parse(path.read_text(encoding="utf-8")) if path.is_file() else None

    def latest(self, origin: str) -> Checkpoint | None:
        key = self._log_key(origin)
        path = self.dir / "checkpoints" / f"{_safe(origin)}.note"
        if key is None or not path.is_file():
            return None
        return open_checkpoint(path.read_text(encoding="utf-8"), key)

    def add_checkpoint(self, request: str, now: int | None = None) -> Answer:
        head, sep, note = request.partition("\n\n")
        lines = head.split("\n")
        if not sep or not lines[0].startswith("old ") or not is_decimal(lines[0][4:]):
            return Answer(400, "the request must be 'old <size>', the proof lines, a blank line, then the checkpoint\n")
        old = int(lines[0][4:])
        try:
            proof = [base64.b64decode(x, validate=True) for x in lines[1:]]
        except ValueError:
            return Answer(400, "a consistency-proof line is not base64\n")
        if any(len(h) != 32 for h in proof):
            return Answer(400, "a consistency-proof line is not a 32-byte hash\n")
        origin = note.split("\n", 1)[0]
        key = self._log_key(origin)
        if key is None:
            return Answer(404, "this witness does not follow that log\n")
        try:
            cp = open_checkpoint(note, key)
        except NoteError as exc:
            return Answer(403, f"the checkpoint does not verify with the log's key: {exc}\n")
        if old > cp.size:
            return Answer(400, f"old size {old} is larger than the checkpoint's {cp.size}\n")
        state = self.dir / "checkpoints" / f"{_safe(origin)}.note"
        with open(self.dir / "checkpoints" / ".lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            held = open_checkpoint(state.read_text(encoding="utf-8"), key) if state.is_file() else \
                Checkpoint(origin, 0, EMPTY_TREE_ROOT)
            if old != held.size:
                return Answer(409, f"{held.size}\n", SIZE_TYPE)
            if old == cp.size and cp.root != held.root:
                return Answer(409, f"{held.size}\n", SIZE_TYPE)
            try:
                verify_consistency(old, cp.size, proof, held.root, cp.root)
            except ProofError as exc:
                return Answer(422, f"the consistency proof does not verify: {exc}\n")
            tmp = state.with_suffix(".tmp")
            tmp.write_text(note, encoding="utf-8")
            os.replace(tmp, state)
        line = cosign(cp.body(), self.name, self._key, int(time.time()) if now is None else now)
        return Answer(200, line)


def request_cosignature(url: str, checkpoint_note: str, old_size: int, proof_for: ProofFor,
                        timeout: float = 30.0) -> str:
    """The operator's side: send the checkpoint to a witness at ``url`` (its add-checkpoint
    endpoint), from the size the log believes it holds; on 409 retry once from the size the
    witness answers. Returns the cosignature line; raises WitnessError naming the answer."""
    import urllib.error  # here, not at the top: only a checkpoint sent to witnesses needs HTTP, and
    import urllib.request  # importing it costs every other command (``pitboss evidence``) about 15 ms

    size = old_size
    for _ in range(2):
        body = f"old {size}\n" + "".join(base64.b64encode(h).decode() + "\n" for h in proof_for(size))
        req = urllib.request.Request(url, data=(body + "\n" + checkpoint_note).encode(), method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the operator names the URL
                return str(resp.read(MAX_REQUEST).decode("utf-8"))
        except urllib.error.HTTPError as exc:
            text = exc.read(MAX_REQUEST).decode("utf-8", "replace").strip()
            if exc.code == 409 and is_decimal(text):
                size = int(text)
                continue
            raise WitnessError(f"witness {url} refused the checkpoint ({exc.code}): {text}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise WitnessError(f"witness {url} could not be reached: {exc}") from None
    raise WitnessError(f"witness {url} holds a checkpoint this log cannot prove consistent (size {size})")

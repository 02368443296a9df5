"""Ed25519 keys: generation, ids, signature verification, and the private-key directory.

Signing and key files use ``cryptography``; every signature check (ingest, verify,
verify-bundle, checkpoints and cosignatures) goes through ``verify_signature``, which is
libsodium's (docs/spec.md, "Ed25519 acceptance rules"): the machine's own libsodium when it
has one that passes the checks of ``system_libsodium``, else the copy inside PyNaCl.

Private keys live only in PEM files (PKCS#8, mode 0600) in a keys directory (mode
0700). They never enter the database, the event stream, logs or error text: a
``Signer`` prints as its actor and key id only.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nacl.bindings import crypto_core_ed25519_is_valid_point, crypto_sign_open
from nacl.exceptions import CryptoError

from ledger.forking import interrupts_held, started

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


class KeyFileError(Exception):
    """A private key file that is missing, unreadable or too widely readable."""


def public_bytes(private_key: Ed25519PrivateKey) -> bytes:
    from cryptography.hazmat.primitives import serialization  # signing only: a reader never loads it

    return private_key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )


def key_id_for(public_key: bytes) -> str:
    """A key's id: the first 16 hex digits of SHA-256 of its raw 32-byte public key."""
    return hashlib.sha256(public_key).hexdigest()[:16]


def verify_signature(public_key: bytes, sig: bytes, message: bytes) -> bool:
    """Whether ``sig`` is ``public_key``'s Ed25519 signature of ``message``, by RFC 8032
    section 5.1.7 as libsodium (1.0.18 and later) applies it, strictly:

    - the signature is 64 bytes and the key 32;
    - S is canonical (S < L, RFC 8032 5.1.7 step 1), else refused;
    - R is not of small order, and A (the key) is a canonical encoding of a point that is
      not of small order, else refused (libsodium's checks beyond the RFC: they shut out
      the "any message" signatures that a small-order key or R admits);
    - the cofactorless equation [S]B = R + [k]A holds, k = SHA-512(R || A || M) mod L.

    One function and one library for every verdict, so ingest, verify and verify-bundle
    accept exactly the same signatures: which copy of libsodium is ``libsodium_in_use``.
    libsodium releases the GIL, so threads scale."""
    if len(sig) != 64 or len(public_key) != 32:
        return False
    return _verify(public_key, sig, message)


def _bundled_verify(public_key: bytes, sig: bytes, message: bytes) -> bool:
    """PyNaCl's own copy of libsodium, through its public ``crypto_sign_open``."""
    try:
        crypto_sign_open(sig + message, public_key)
    except (CryptoError, ValueError, TypeError):
        return False
    return True


SYSTEM_SONAMES = ("libsodium.so.26", "libsodium.so.23")
"""The machine's own libsodium, by soname: 1.0.19 and later, then 1.0.16 to 1.0.18 (Debian's
and Ubuntu's package ``libsodium23``)."""

_SELF_TEST_KEY = bytes.fromhex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
_SELF_TEST_SIG = bytes.fromhex("92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
                               "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
"""RFC 8032 section 7.1, TEST 2: this key's signature of the one byte 0x72."""
_L = 2**252 + 27742317777372353535851937790883648493
_IDENTITY = bytes([1]) + bytes(31)


def release(version: bytes | None) -> tuple[int, int, int] | None:
    """libsodium's ``sodium_version_string()`` ("1.0.18", "1.0.20-stable") as (1, 0, 18),
    or None when it does not start with three dot-separated numbers."""
    import re

    m = re.match(rb"(\d+)\.(\d+)\.(\d+)(?!\d)", version or b"")
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


_SYSTEM_FOUND: list[str] = []
"""The soname and release of the machine's libsodium that ``system_libsodium`` took."""


@lru_cache(maxsize=1)
def system_libsodium() -> Any:
    """The machine's own libsodium's ``crypto_sign_verify_detached(sig, m, mlen, pk)`` (a
    ctypes function: 0 for a good signature), or None when the machine has none that is
    1.0.18 or later and judges as docs/spec.md says.

    Why prefer it: a distribution's build of libsodium checked signatures 9 to 10% faster
    than the copy compiled into PyNaCl's wheel on the 2-core AMD EPYC of 2026-11-28 (Debian
    12's 1.0.18: about 20,100 a second on one core against 18,400; benchmarks/run.py measures
    both in every run), and the detached call needs no copy of signature and message into one
    buffer. Before it is used it must accept RFC 8032's TEST 2 and refuse that signature
    over another message, the same signature with S + L (non-canonical S), and the "any
    message" signature (R = identity, S = 0) under the small-order identity key, so that a
    build with ``ED25519_COMPAT`` or an older release never judges a pitboss signature."""
    import ctypes

    for name in SYSTEM_SONAMES:
        try:
            lib = ctypes.CDLL(name)
            lib.sodium_version_string.restype = ctypes.c_char_p
            version = release(lib.sodium_version_string())
        except (OSError, AttributeError):
            continue
        if version is None or version < (1, 0, 18) or lib.sodium_init() < 0:
            continue
        f = lib.crypto_sign_verify_detached
        f.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p)
        f.restype = ctypes.c_int
        s_plus_l = (int.from_bytes(_SELF_TEST_SIG[32:], "little") + _L).to_bytes(32, "little")
        if (f(_SELF_TEST_SIG, b"\x72", 1, _SELF_TEST_KEY) == 0
                and f(_SELF_TEST_SIG, b"\x73", 1, _SELF_TEST_KEY) != 0
                and f(_SELF_TEST_SIG[:32] + s_plus_l, b"\x72", 1, _SELF_TEST_KEY) != 0
                and f(_IDENTITY + bytes(32), b"\x72", 1, _IDENTITY) != 0):
            _SYSTEM_FOUND[:] = [name, ".".join(map(str, version))]
            return f
    return None


LIBSODIUM_ENV = "PITBOSS_LIBSODIUM"
"""``bundled``: check signatures with PyNaCl's own copy of libsodium even where the machine
has its own (to compare the two, or to set a machine's library aside)."""


def _system_verify(f: Any) -> Callable[[bytes, bytes, bytes], bool]:
    def system_verify(public_key: bytes, sig: bytes, message: bytes) -> bool:
        # ctypes hands a bytes object's own buffer over as char*; anything else is copied once
        return bool(f(sig if type(sig) is bytes else bytes(sig), message if type(message) is bytes else bytes(message),
                      len(message), public_key if type(public_key) is bytes else bytes(public_key)) == 0)

    return system_verify


def _use_libsodium(name: str) -> None:
    """Check this process's signatures with ``name``'s libsodium from now on: ``system`` (the
    machine's own, ``system_libsodium``) or ``bundled`` (PyNaCl's copy). Chosen before the
    first check (``_choose``); tests and benchmarks call it to compare the two."""
    global _verify
    if name == "system":
        f = system_libsodium()
        if f is None:
            raise RuntimeError("this machine has no usable libsodium of its own (1.0.18 or later, strict)")
        _verify = _system_verify(f)
    else:
        _verify = _bundled_verify


def _choose() -> None:
    """The machine's own libsodium unless ``PITBOSS_LIBSODIUM=bundled`` or it has none that
    ``system_libsodium`` takes."""
    bundled = os.environ.get(LIBSODIUM_ENV, "").strip().lower() == "bundled"
    _use_libsodium("bundled" if bundled or system_libsodium() is None else "system")


def _first_verify(public_key: bytes, sig: bytes, message: bytes) -> bool:
    """Chooses the library on the first check (a command that checks no signature never
    loads a second libsodium), then stands aside."""
    _choose()
    return _verify(public_key, sig, message)


_verify: Callable[[bytes, bytes, bytes], bool] = _first_verify


def libsodium_in_use() -> str:
    """``system`` (the machine's own libsodium) or ``bundled`` (PyNaCl's copy): the library
    every signature of this process is checked with."""
    if _verify is _first_verify:
        _choose()
    return "bundled" if _verify is _bundled_verify else "system"


def describe_libsodium() -> str:
    """The library every signature of this process is checked with, as a verdict states it:
    "libsodium 1.0.18, the machine's own (libsodium.so.23)" or "libsodium bundled with
    PyNaCl 1.6.2"."""
    if libsodium_in_use() == "system" and _SYSTEM_FOUND:
        return f"libsodium {_SYSTEM_FOUND[1]}, the machine's own ({_SYSTEM_FOUND[0]})"
    import nacl

    return f"libsodium bundled with PyNaCl {nacl.__version__}"


SIGNATURE_CHUNK = 32
"""Signatures a checker process verifies in one go: large enough that handing work over
(a pipe's write and read, about 25 µs) costs little beside 32 verifications (about 1.2 ms
on a 2-core AMD EPYC), small enough that a checker starts soon after a batch does and
that the caller's share of the last chunks (``_Checkers.result``) comes out even (128
left a core idle for up to a chunk's 5 ms at a batch's end)."""


def _verify_chunk(jobs: list[tuple[bytes, bytes, bytes]]) -> list[bool]:
    return [verify_signature(pk, sig, msg) for pk, sig, msg in jobs]


_SLOTS = 4096
"""Chunks a checker may have outstanding (handed over, its answer not yet read): one claim
slot each, reused round the ring (``_Checkers``)."""
_FREE, _CHECKER, _CALLER = 0, 1, 2
"""A chunk's claim: not started, taken by its checker, taken by the caller."""


def _checker(conn: Connection, claims: Any, lock: Any) -> None:
    """A checker process: chunks of jobs in, one answer each out, in order, until the pipe
    closes. The answer is the chunk's verdicts, or None for a chunk the caller claimed
    before this process started it (``_Checkers.result``: the caller checked it itself)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    n = 0
    try:
        while True:
            jobs = conn.recv()
            slot, n = n % _SLOTS, n + 1
            with lock:
                mine = claims[slot] == _FREE
                if mine:
                    claims[slot] = _CHECKER
            conn.send(_verify_chunk(jobs) if mine else None)
    except (EOFError, OSError):
        return


class _Checkers:
    """Processes that verify chunks of signatures, each over its own pipe, one fewer than
    the cores: the caller is the last worker. It goes on with its own work while they
    check (ingest parses and judges the batch meanwhile), and when it must wait for a
    verdict it checks, itself, the last chunks no checker has started yet (``result``), so
    no core idles while signatures remain. (One checker per core was measured slower on
    2 cores: three processes shared two, the caller parsed at two thirds of its speed and
    the checkers, fed at that pace, idled through a third of the batch; and when the
    caller waited for the last verdicts, its core idled.)

    Processes, not threads: libsodium releases the GIL while it verifies, but a thread must
    take the GIL back between two verifications, and while the caller runs Python it waits
    up to the interpreter's switch interval (5 ms) for it, so threads checked little until
    the caller stopped to wait (measured here: most of a 1,000-event batch's signatures
    were still unchecked when the judges had finished with it). No helper thread either:
    the caller writes each chunk to a pipe and reads the answers back itself, in the order
    each checker was given its chunks, reading whatever is ready before each write so that
    no pipe fills both ways. A chunk is claimed, under its checker's lock, by whichever
    starts it first, the checker or the caller; a chunk the caller took is answered None.
    Started once (forked) by the thread and process that first needs them; any other
    thread or process checks inline."""

    def __init__(self) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        self.owner = (os.getpid(), threading.get_ident())
        self.conns: list[Connection] = []
        self.procs: list[BaseProcess] = []
        self.claims: list[Any] = []
        self.locks: list[Any] = []
        for _ in range(max(1, (os.cpu_count() or 1) - 1)):
            mine, theirs = ctx.Pipe()
            self.conns.append(mine)
            try:
                claims, lock = ctx.RawArray("b", _SLOTS), ctx.Lock()
                proc = ctx.Process(target=_checker, args=(theirs, claims, lock), daemon=True, name="pitboss-ed25519")
                proc.start()
            except BaseException:
                self.close()  # those started, stopped, and every pipe closed: the caller checks inline
                raise
            finally:
                theirs.close()  # the checker's end: its process has it (or there is none)
            self.procs.append(proc)
            self.claims.append(claims)
            self.locks.append(lock)
        self.sent = [0] * len(self.conns)
        self.read = [0] * len(self.conns)
        self.pending: dict[tuple[int, int], list[tuple[bytes, bytes, bytes]]] = {}
        """The jobs of each chunk handed over that is neither answered (and read) nor taken."""
        self.taken: set[tuple[int, int]] = set()
        """The chunks among those the caller checked itself."""
        self.ready: dict[tuple[int, int], list[bool]] = {}
        self.forgotten: set[tuple[int, int]] = set()
        """Chunks not answered yet whose verdicts no one will ask for (``forget``): their
        answers are read in turn and dropped."""
        self.turn = 0
        self.checked_here = 0
        """Chunks the caller has checked itself (``result``)."""

    def mine(self) -> bool:
        return self.owner == (os.getpid(), threading.get_ident())

    def alive(self) -> bool:
        return all(p.is_alive() for p in self.procs)

    def close(self) -> None:
        with interrupts_held():  # a Ctrl-C meanwhile waits until every checker is stopped
            for conn in self.conns:
                conn.close()
            for proc in self.procs:
                proc.terminate()
                proc.join(1)

    def _take(self, w: int) -> None:
        """Read checker ``w``'s next answer (waiting for it)."""
        ticket = (w, self.read[w])
        answer = self.conns[w].recv()
        self.read[w] += 1
        self.pending.pop(ticket, None)  # (a chunk the caller took let go of its jobs then)
        wanted = ticket not in self.forgotten
        self.forgotten.discard(ticket)
        if ticket in self.taken:
            self.taken.remove(ticket)
            if answer is not None:
                raise OSError(f"chunk {ticket} was checked by the caller and its checker both")
        elif answer is None:
            raise OSError(f"chunk {ticket} was skipped by its checker and not checked by the caller")
        elif wanted:
            self.ready[ticket] = answer

    def forget(self, ticket: tuple[int, int]) -> None:
        """No one will ask for the chunk's verdicts (its feed was let go before reading them
        all: a batch refused early): its answer is dropped, held in ``ready`` already or
        when it comes, and the caller does not check it itself."""
        self.ready.pop(ticket, None)
        w, n = ticket
        if n >= self.read[w]:
            self.forgotten.add(ticket)

    def _drain(self, w: int) -> None:
        conn = self.conns[w]
        while self.read[w] < self.sent[w] and conn.poll():
            self._take(w)

    def drain(self) -> bool:
        """Read every checker's answers that are ready, without waiting (into ``ready``);
        False when reading one failed, which is left for ``result``."""
        try:
            for w in range(len(self.conns)):
                self._drain(w)
        except (OSError, EOFError):
            return False
        return True

    def submit(self, jobs: list[tuple[bytes, bytes, bytes]]) -> tuple[int, int]:
        """Hand a chunk to the next checker; returns its ticket for ``result``."""
        w = self.turn
        self.turn = (w + 1) % len(self.conns)
        self._drain(w)
        n = self.sent[w]
        if n - self.read[w] >= _SLOTS:  # the slot's last chunk is not answered yet: the caller checks this one
            raise OSError("every claim slot of the checker is in use")
        self.claims[w][n % _SLOTS] = _FREE  # its last chunk, n - _SLOTS, is answered and read
        self.pending[(w, n)] = jobs
        self.conns[w].send(jobs)
        self.sent[w] += 1
        return w, n

    def _check_one(self) -> bool:
        """Claim and check here the last chunk that no checker has started, of the checker
        with the most chunks outstanding; False when there is none."""
        for w in sorted(range(len(self.conns)), key=lambda w: self.read[w] - self.sent[w]):
            n = self.sent[w] - 1
            while n >= self.read[w] and ((w, n) in self.taken or (w, n) in self.forgotten):
                n -= 1
            if n < self.read[w]:
                continue
            with self.locks[w]:
                free = self.claims[w][n % _SLOTS] == _FREE
                if free:
                    self.claims[w][n % _SLOTS] = _CALLER
            if free:
                self.taken.add((w, n))
                self.ready[(w, n)] = _verify_chunk(self.pending.pop((w, n)))  # its jobs are not held after
                self.checked_here += 1
                return True
        return False

    def result(self, ticket: tuple[int, int]) -> list[bool]:
        """The chunk's verdicts; while they are not in, the caller checks chunks no checker
        has started (from the last), else waits for an answer."""
        w, n = ticket
        while ticket not in self.ready:
            if n < self.read[w]:
                raise OSError(f"chunk {ticket} was answered and taken already")
            if self.conns[w].poll() or not self._check_one():
                self._take(w)
        return self.ready.pop(ticket)


_CHECKERS: list[_Checkers] = []


def _checkers() -> _Checkers | None:
    """The checker processes this thread may use, started on first use; None where they
    cannot serve (another thread or a forked child of their owner): the caller then checks
    inline. A feed asks only on more than one core (``SignatureFeed``)."""
    if _CHECKERS:
        if not _CHECKERS[0].mine():
            return None
        if _CHECKERS[0].alive():
            return _CHECKERS[0]
        _discard()  # a checker died: start afresh
    import multiprocessing

    if multiprocessing.current_process().daemon:
        return None  # a daemonic process (a pool's worker) may start no process of its own
    try:
        checkers = started(_Checkers, _Checkers.close)  # Ctrl-C while they start: stopped, never left running
    except (OSError, ValueError, AssertionError):  # no process could be started here
        return None
    _CHECKERS.append(checkers)
    return checkers


def _discard() -> None:
    """Stop using the checkers (one failed): the next feed starts new ones."""
    if _CHECKERS:
        _CHECKERS.pop().close()


_LET_GO = (b"", b"", b"")
"""In place of a job whose verdict is in (``SignatureFeed.collect``): were it ever checked
again, an empty signature is refused (``verify_signature``), never taken as good."""


class SignatureFeed:
    """Signatures checked on every core as they are handed in (``_Checkers``): each full
    chunk goes to a checker process at once, so checking starts while the caller is still
    producing jobs (ingest parses the rest of a batch meanwhile), and the caller checks the
    last chunks itself when it waits for their verdicts. ``add`` returns the job's
    number; ``finish`` returns ``verdict(i)``, which waits for the i-th job's verdict.
    Less than a chunk is checked inline at ``finish``: a batch that small is not worth
    starting the checkers for. A chunk whose checker fails is checked inline: a verdict is
    libsodium's (``verify_signature``) either way."""

    def __init__(self, ahead: int | None = None) -> None:
        self._jobs: list[tuple[bytes, bytes, bytes]] = []
        self._tickets: list[tuple[int, int]] = []
        self._done: dict[int, list[bool]] = {}
        self._collected = 0
        """Chunks before this one are all in ``_done`` (``collect``)."""
        self._pool: _Checkers | None = None
        self._parallel = (os.cpu_count() or 1) > 1
        self._ahead = ahead
        """None: each full chunk goes to a checker as it is added (ingest, whose parse paces
        the feed). A number: ``add`` only collects, and ``finish``'s verdicts hand the
        checkers at most this many chunks beyond the one asked for, for a caller that has
        its jobs at once and asks for their verdicts in order (the read side,
        ``ledger.verify.RowJudge``): handed all at once, they filled the pipe and the caller
        waited on its write with work of its own to do (a third of a view rebuild's time)."""

    def __del__(self) -> None:
        """The feed let go: the checkers forget the chunks whose verdicts it never read
        (``_Checkers.forget``), so that a long-running process holds no answers for batches
        refused before their last verdicts were asked for."""
        pool = self._pool
        try:
            if pool is None or not _CHECKERS or _CHECKERS[0] is not pool or not pool.mine():
                return
            for chunk, ticket in enumerate(self._tickets):
                if ticket[0] >= 0 and chunk not in self._done:
                    pool.forget(ticket)
        except Exception:  # at interpreter exit the module's names may be gone: nothing to keep then
            pass

    def _chunk_jobs(self, chunk: int) -> list[tuple[bytes, bytes, bytes]]:
        return self._jobs[chunk * SIGNATURE_CHUNK:(chunk + 1) * SIGNATURE_CHUNK]

    def _submit(self, chunk: int) -> None:
        if self._pool is None:
            self._pool = _checkers()
        jobs = self._chunk_jobs(chunk)
        try:
            if self._pool is None:
                raise OSError("no checker processes here")
            self._tickets.append(self._pool.submit(jobs))
        except (OSError, ValueError, EOFError):
            self._tickets.append((-1, chunk))
            self._done[chunk] = _verify_chunk(jobs)

    def add(self, job: tuple[bytes, bytes, bytes]) -> int:
        """Hand in ``(public_key, sig, message)``; returns its number for ``verdict``."""
        jobs = self._jobs
        jobs.append(job)
        n = len(jobs)
        if n % SIGNATURE_CHUNK == 0 and self._parallel and self._ahead is None:
            self._submit(n // SIGNATURE_CHUNK - 1)
            self.collect()
        return n - 1

    def _chunk(self, chunk: int) -> list[bool]:
        done = self._done.get(chunk)
        if done is None:
            pool = self._pool
            try:
                if pool is None:  # every ticket of a feed without checkers is done inline
                    raise OSError("no checker processes")
                done = pool.result(self._tickets[chunk])
                if len(done) != len(self._chunk_jobs(chunk)):
                    raise OSError("a checker answered for another chunk")
            except (OSError, EOFError):
                done = _verify_chunk(self._chunk_jobs(chunk))
                if pool is not None and _CHECKERS and _CHECKERS[0] is pool:
                    _discard()
                self._pool = None
            self._done[chunk] = done
        return done

    def collect(self) -> None:
        """Take in, without waiting, the verdicts of the chunks handed over whose answers are
        back, and let go of those chunks' jobs (about 230 bytes a signature): a caller with
        work of its own between its last job and its verdicts (ingest's judges) then holds
        the jobs only while they are being checked, not to the batch's end (issue 13 point
        8). A chunk whose answer is not back, or does not fit its jobs, keeps them: its
        verdicts come from ``verdict`` as before, checked here if its checker failed."""
        pool = self._pool
        if pool is None or not pool.drain():
            return
        chunk = self._collected
        while chunk < len(self._tickets):
            if chunk not in self._done:
                jobs = self._chunk_jobs(chunk)
                done = pool.ready.get(self._tickets[chunk])
                if done is None or len(done) != len(jobs):
                    break  # not back yet, or not fitting its jobs (``_chunk`` then checks it here)
                del pool.ready[self._tickets[chunk]]
                self._done[chunk] = done
                start = chunk * SIGNATURE_CHUNK
                self._jobs[start:start + len(jobs)] = [_LET_GO] * len(jobs)
            chunk += 1
        self._collected = chunk

    def finish(self) -> Callable[[int], bool]:
        """The verdicts: every job handed in is being checked, or has been (with ``ahead``:
        is handed to the checkers as the verdicts before it are asked for)."""
        chunks = -(-len(self._jobs) // SIGNATURE_CHUNK)
        if self._ahead is not None and self._parallel and chunks > 1:
            ahead = self._ahead

            def in_order(i: int) -> bool:
                chunk = i // SIGNATURE_CHUNK
                for later in range(len(self._tickets), min(chunks, chunk + ahead + 1)):
                    self._submit(later)
                return self._chunk(chunk)[i % SIGNATURE_CHUNK]

            return in_order
        if not self._tickets:
            done = _verify_chunk(self._jobs)
            return done.__getitem__
        for chunk in range(len(self._tickets), chunks):
            self._submit(chunk)

        def verdict(i: int) -> bool:
            return self._chunk(i // SIGNATURE_CHUNK)[i % SIGNATURE_CHUNK]

        return verdict


def verify_signatures(jobs: list[tuple[bytes, bytes, bytes]], ahead: int | None = None) -> Callable[[int], bool]:
    """Check ``(public_key, sig, message)`` triples on every core while the caller goes on
    with its own work (``SignatureFeed``). Returns ``verdict(i)``, which waits for the i-th
    triple's verdict. ``ahead``: the caller asks for the verdicts in order, and the
    checkers are handed at most this many chunks beyond the one asked for."""
    feed = SignatureFeed(ahead)
    for job in jobs:
        feed.add(job)
    return feed.finish()


@lru_cache(maxsize=4096)
def public_key_problem(public_key: bytes) -> str | None:
    """Why a key cannot be registered, or None: it must be 32 bytes encoding, canonically,
    a point of the curve's prime-order subgroup (libsodium's
    ``crypto_core_ed25519_is_valid_point``): a small-order or mixed-order key would verify
    nothing honestly, or "any message" (docs/spec.md, "Ed25519 acceptance rules").
    Cached: a pure function of the 32 bytes, asked twice a key each time the key ring is
    read (every ingest call reads it), at 33 µs a point check here."""
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
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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
        from cryptography.hazmat.primitives import serialization

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
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        try:
            priv = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError):
            raise KeyFileError(f"private key file {target} is not a PEM key") from None
        if not isinstance(priv, Ed25519PrivateKey):
            raise KeyFileError(f"private key file {target} is not an Ed25519 key")
        if key_id_for(public_bytes(priv)) != key_id:
            raise KeyFileError(f"private key file {target} does not hold key {key_id}")
        return Signer(actor, key_id, priv)

"""Ed25519 acceptance rules (docs/spec.md, "Ed25519 acceptance rules"): RFC 8032 section
5.1.7 as libsodium applies it, strictly, and judged the same by ingest, verify and
verify-bundle.

The edge cases are signatures that satisfy the cofactorless equation [S]B = R + [k]A and
yet must be refused: a small-order R, a small-order key A (the "any message" signature
R = identity, S = 0), and a non-canonical S (S + L). An implementation that checks only
the equation (OpenSSL's, behind ``cryptography``, accepts the first two) would let the
three verdicts drift apart, or accept a signature the key's holder never made.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from cli.main import main
from ledger import keys
from ledger.keys import Signer, public_key_problem, verify_signature
from tests.conftest import execute_sql
from tests.helpers import ingest, make_producers, night_batch

L = 2**252 + 27742317777372353535851937790883648493
"""RFC 8032 5.1: the order of the base point."""
IDENTITY = bytes([1]) + bytes(31)
"""The neutral element's encoding (y = 1, x = 0): a point of order 1."""
ORDER_TWO = bytes.fromhex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
"""(0, -1): a point of order 2."""

# RFC 8032 section 7.1, TEST 1-3: (secret key, public key, message, signature).
RFC8032_VECTORS = [
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
]


@contextmanager
def checking_with(lib: str) -> Iterator[None]:
    """This process's signatures checked with ``lib``'s libsodium (``ledger.keys._use_libsodium``)
    inside the block, the process's own choice put back after; skipped for ``system`` where
    the machine has no libsodium of its own."""
    if lib == "system" and keys.system_libsodium() is None:
        pytest.skip("this machine has no libsodium of its own (1.0.18 or later): only PyNaCl's copy ever judges here")
    before = keys.libsodium_in_use()
    keys._use_libsodium(lib)
    try:
        yield
    finally:
        keys._use_libsodium(before)


@pytest.fixture(params=["system", "bundled"])
def libsodium(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each libsodium pitboss may check with: the machine's own, where it has one, and PyNaCl's copy."""
    with checking_with(request.param):
        yield request.param


def _seed(signer: Signer) -> bytes:
    return signer.private_key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                            serialization.NoEncryption())


def small_order_r_signature(seed: bytes, public_key: bytes, message: bytes) -> bytes:
    """A signature by the key's holder with R = the identity: S = k * a mod L, so
    [S]B = [k]A = R + [k]A holds cofactorless; libsodium refuses it for its small-order R."""
    a_bytes = bytearray(hashlib.sha512(seed).digest()[:32])  # RFC 8032 5.1.5: the secret scalar, clamped
    a_bytes[0] &= 248
    a_bytes[31] &= 127
    a_bytes[31] |= 64
    a = int.from_bytes(a_bytes, "little")
    k = int.from_bytes(hashlib.sha512(IDENTITY + public_key + message).digest(), "little") % L
    return IDENTITY + ((k * a) % L).to_bytes(32, "little")


def non_canonical_s(sig: bytes) -> bytes:
    """The same signature with S + L in place of S (RFC 8032 5.1.7 step 1 refuses S >= L)."""
    s = int.from_bytes(sig[32:], "little") + L
    assert s < 2**256
    return sig[:32] + s.to_bytes(32, "little")


@pytest.mark.parametrize("secret,public,message,signature", RFC8032_VECTORS)
def test_rfc8032_7_1_test_vectors_verify_and_any_changed_bit_does_not(secret: str, public: str, message: str,
                                                                       signature: str, libsodium: str) -> None:
    pub, msg, sig = bytes.fromhex(public), bytes.fromhex(message), bytes.fromhex(signature)
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(secret))
    assert key.sign(msg) == sig  # the vectors as transcribed are RFC 8032's (signing is deterministic)
    assert verify_signature(pub, sig, msg)
    for i in (0, 31, 32, 63):
        assert not verify_signature(pub, sig[:i] + bytes([sig[i] ^ 1]) + sig[i + 1:], msg)
    assert not verify_signature(pub, sig, msg + b"\x00")
    assert not verify_signature(pub, sig[:63], msg) and not verify_signature(pub[:31], sig, msg)


def test_rfc8032_5_1_7_a_non_canonical_s_is_refused(libsodium: str) -> None:
    secret, public, message, signature = RFC8032_VECTORS[0]
    assert not verify_signature(bytes.fromhex(public), non_canonical_s(bytes.fromhex(signature)), bytes.fromhex(message))


def test_libsodium_a_small_order_r_is_refused_though_the_equation_holds(libsodium: str) -> None:
    signer = Signer.generate("dealer:x")
    msg = hashlib.sha256(b"an event").digest()
    forged = small_order_r_signature(_seed(signer), signer.public_key, msg)
    assert not verify_signature(signer.public_key, forged, msg)
    # the construction is right: the same arithmetic with an ordinary R is a valid signature
    assert verify_signature(signer.public_key, signer.sign(msg), msg)


@pytest.mark.parametrize("key", [IDENTITY, ORDER_TWO], ids=["identity", "order-2"])
def test_libsodium_a_small_order_key_verifies_nothing_and_cannot_be_registered(key: bytes, libsodium: str) -> None:
    """With A of small order, R = identity and S = 0 satisfy [S]B = R + [k]A for every
    message when k*A is the identity: a key that "signs" anything."""
    for msg in (b"", b"withdraw 10000", bytes(32)):
        assert not verify_signature(key, IDENTITY + bytes(32), msg)
    assert public_key_problem(key) is not None
    assert public_key_problem(Signer.generate("x").public_key) is None


P = 2**255 - 19
SMALL_ORDER = [bytes(32), IDENTITY, ORDER_TWO,
               bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
               bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
               (P).to_bytes(32, "little"), (P + 1).to_bytes(32, "little")]
"""Encodings of points of small order (libsodium's list in ``ge25519_has_small_order``):
y = 0 (order 4), y = 1 (order 1), y = -1 (order 2), two of order 8, and y = p and p + 1,
the non-canonical spellings of 0 and 1; each also with the sign bit set (``_encodings``)."""


def _encodings() -> list[bytes]:
    out = []
    for e in SMALL_ORDER:
        out += [e, e[:31] + bytes([e[31] | 0x80])]
    return out


def _edge_cases() -> list[tuple[str, bytes, bytes, bytes]]:
    """(name, key, signature, message): good signatures, each with bits changed, S + k*L,
    R and A replaced by every small-order encoding, the "any message" signature under each
    small-order key, a small-order R made by a real key, and keys that are not canonical."""
    rng = random.Random(8032)
    cases: list[tuple[str, bytes, bytes, bytes]] = []
    for secret, public, message, signature in RFC8032_VECTORS:
        pub, msg, sig = bytes.fromhex(public), bytes.fromhex(message), bytes.fromhex(signature)
        cases.append(("rfc8032", pub, sig, msg))
        for _ in range(40):
            i = rng.randrange(64)
            cases.append(("bit in sig", pub, sig[:i] + bytes([sig[i] ^ (1 << rng.randrange(8))]) + sig[i + 1:], msg))
            j = rng.randrange(32)
            cases.append(("bit in key", pub[:j] + bytes([pub[j] ^ (1 << rng.randrange(8))]) + pub[j + 1:], sig, msg))
        s = int.from_bytes(sig[32:], "little")
        for k in range(1, 16):
            if s + k * L < 2**256:
                cases.append((f"S + {k}L", pub, sig[:32] + (s + k * L).to_bytes(32, "little"), msg))
        for e in _encodings():
            cases.append(("small-order R", pub, e + sig[32:], msg))
            cases.append(("small-order A", e, sig, msg))
            cases.append(("any message", e, IDENTITY + bytes(32), msg))
            cases.append(("any message, R spelled otherwise", e, e + bytes(32), msg))
        for y in range(2, 19):  # y + p < 2^255: the non-canonical spellings of y = 2..18 (0 and 1 are above)
            cases.append(("key y + p", (y + P).to_bytes(32, "little"), sig, msg))
    signer = Signer.generate("dealer:x")
    for n in range(20):
        msg = hashlib.sha256(bytes([n])).digest()
        cases.append(("signer", signer.public_key, signer.sign(msg), msg))
        cases.append(("small-order R by the signer", signer.public_key,
                      small_order_r_signature(_seed(signer), signer.public_key, msg), msg))
    return cases


def test_the_machines_libsodium_and_pynacls_judge_every_edge_case_alike() -> None:
    """docs/spec.md, "Ed25519 acceptance rules": the machine's own libsodium, which pitboss
    prefers where it has one (faster), and PyNaCl's copy must give the same verdict on
    every edge case the rules name, so the library a verifier happens to load never
    changes a verdict."""
    cases = _edge_cases()
    verdicts = {}
    for lib in ("system", "bundled"):
        with checking_with(lib):
            verdicts[lib] = [verify_signature(pub, sig, msg) for _, pub, sig, msg in cases]
    differ = [cases[i][0] for i, (a, b) in enumerate(zip(verdicts["system"], verdicts["bundled"])) if a != b]
    assert not differ
    accepted = {name for (name, *_), ok in zip(cases, verdicts["system"]) if ok}
    assert accepted == {"rfc8032", "signer"}  # every other case is refused by both
    assert len(cases) > 500


@pytest.mark.parametrize(("text", "expected"), [
    (b"1.0.18", (1, 0, 18)), (b"1.0.20-stable", (1, 0, 20)), (b"1.0.9", (1, 0, 9)), (b"2.1.10 (custom)", (2, 1, 10)),
    (b"1.0", None), (b"", None), (None, None), (b"v1.0.18", None), (b"1.0.18x", (1, 0, 18)), (b"1.0.1\xff8", (1, 0, 1)),
])
def test_a_libsodium_release_is_read_from_its_version_string(text: bytes | None, expected: tuple[int, ...] | None
                                                            ) -> None:
    """``system_libsodium`` takes a machine's library only from 1.0.18 on (docs/spec.md):
    "1.0.9" must not read as newer than "1.0.18", and a version it cannot read is refused."""
    assert keys.release(text) == expected
    assert (keys.release(b"1.0.9") or ()) < (1, 0, 18) <= (keys.release(b"1.0.20-stable") or ())


def test_the_library_is_the_machines_own_unless_told_otherwise() -> None:
    """``PITBOSS_LIBSODIUM=bundled`` sets the machine's libsodium aside; by default pitboss
    checks with it where ``system_libsodium`` takes it, else with PyNaCl's copy."""
    code = "from ledger.keys import libsodium_in_use; print(libsodium_in_use())"
    env = {k: v for k, v in os.environ.items() if k != keys.LIBSODIUM_ENV}
    default = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert default.stdout.strip() == ("system" if keys.system_libsodium() is not None else "bundled")
    told = subprocess.run([sys.executable, "-c", code], env={**env, keys.LIBSODIUM_ENV: "bundled"},
                          capture_output=True, text=True, check=True)
    assert told.stdout.strip() == "bundled"


def test_a_small_order_key_is_refused_by_the_key_ring(ledger) -> None:  # type: ignore[no-untyped-def]
    """``key.register`` with a public key of small order is a key-ring rule violation
    (refused at ingest, so verify never meets it in a clean ledger)."""
    from ledger.house import active_signer
    from ledger.keyring import load_keyring
    from ledger.keys import key_id_for
    from ledger.producer import BatchBuilder
    from ledger.timeutil import utc_now

    house = active_signer(load_keyring(ledger.store), ledger.keys, "house")
    now = utc_now()
    b = BatchBuilder.for_store(ledger.store)
    b.add(house, "keyring", "key.register.v2", {
        "key_id": key_id_for(IDENTITY), "actor": "dealer:weak", "role": "dealer", "public_key": IDENTITY.hex(),
        "kinds": ["round.open.v1"], "valid_from": now, "scope": ["table:*"]}, at=now)
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected"
    assert report.rejections[0].check == "rule" and "public_key" in report.rejections[0].reason


def _round_event(lines: list[str]) -> tuple[int, dict]:  # type: ignore[type-arg]
    for i, line in enumerate(lines):
        d = json.loads(line)
        if d["stream"].startswith("round:"):
            return i, d
    raise AssertionError("no round event")


FORGERIES = {
    "small_order_r": lambda seed, pub, d: small_order_r_signature(seed, pub, bytes.fromhex(d["hash"])),
    "non_canonical_s": lambda seed, pub, d: non_canonical_s(bytes.fromhex(d["sig"])),
}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_ingest_verify_and_verify_bundle_refuse_the_same_edge_case_signatures(ledger, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                             forgery: str) -> None:
    p = make_producers(ledger)
    # ingest: the dealer's event with the edge-case signature is refused as "signature"
    b = night_batch(ledger.store, p, rounds=2)
    lines = b.lines()
    i, d = _round_event(lines)
    assert d["key_id"] == p.dealer.key_id
    d["sig"] = FORGERIES[forgery](_seed(p.dealer), p.dealer.public_key, d).hex()
    report = ingest(ledger.store, lines[:i] + [json.dumps(d)] + lines[i + 1:])
    assert report.status == "rejected"
    first = report.rejections[0]  # later events of the round follow a refused one: refused in turn
    assert (first.stream, first.seq, first.check) == (d["stream"], d["seq"], "signature"), report.rejections
    assert [r.check for r in report.rejections].count("signature") == 1
    assert ingest(ledger.store, lines).status == "stored"

    # verify-bundle: the same signature put into a bundle (manifest made to agree) is named
    stream = d["stream"]
    out = tmp_path / "bundle"
    res = CliRunner().invoke(main, ledger.cli_args() + ["evidence", stream, "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    events = out / "events.jsonl"
    rows = events.read_text().splitlines()
    j = next(n for n, line in enumerate(rows) if json.loads(line)["stream"] == stream and json.loads(line)["seq"] == d["seq"])
    bd = json.loads(rows[j])
    bd["sig"] = FORGERIES[forgery](_seed(p.dealer), p.dealer.public_key, bd).hex()
    rows[j] = json.dumps(bd, separators=(",", ":"))
    events.write_text("\n".join(rows) + "\n")
    from tests.projections.test_evidence import _rehash

    _rehash(out)
    res = CliRunner().invoke(main, ["--db", "/nonexistent/none.db", "verify-bundle", str(out), "--json"])
    verdict = json.loads(res.stdout)
    assert res.exit_code == 1 and not verdict["ok"]
    assert any(f"line {j + 1}" in prob and "signature" in prob for prob in verdict["problems"]), verdict["problems"]

    # verify: the same signature written into the stored row behind the ledger's back
    row = next(r for r in ledger.store.rows() if (r.stream, r.seq) == (stream, d["seq"]))
    stored = json.loads(row.state)
    forged_sig = FORGERIES[forgery](_seed(p.dealer), p.dealer.public_key, stored).hex()
    state = row.state.replace(stored["sig"].encode(), forged_sig.encode())
    col = "rowid" if ledger.store.url.backend == "sqlite" else "notification_id"
    execute_sql(ledger.store, f"UPDATE {ledger.store.events_table} SET state=? WHERE {col}=?", (state, row.notification_id))
    res = CliRunner().invoke(main, ledger.cli_args() + ["verify", "--json", "--quiet"])
    report_v = json.loads(res.stdout)
    assert res.exit_code == 1
    assert [(q["check"], q["stream"], q["seq"]) for q in report_v["problems"]] == [("signature", stream, d["seq"])]



@pytest.mark.parametrize(("chunks", "extra"), [(0, 0), (0, 1), (1, -1), (2, -1), (2, 0), (2, 1), (3, 0), (0, 1000)])
def test_the_signature_feed_gives_each_job_its_own_verdict(chunks: int, extra: int) -> None:
    """``ledger.keys.SignatureFeed`` (ingest's signatures, checked on all cores while the
    batch is still parsed): every job's verdict is the serial ``verify_signature``'s, for
    less than a chunk (checked inline), exact multiples of a chunk and remainders (handed
    to the checker processes as they fill), with bad signatures, wrong keys and short
    inputs scattered through."""
    from ledger.keys import SIGNATURE_CHUNK, SignatureFeed, verify_signatures

    n = chunks * SIGNATURE_CHUNK + extra  # sizes that straddle one and two chunks, whatever a chunk's size
    a, b = Signer.generate("a"), Signer.generate("b")
    jobs = []
    for i in range(n):
        msg = hashlib.sha256(str(i).encode()).digest()
        sig = (a if i % 7 else b).sign(msg)
        if i % 11 == 0:
            sig = sig[:-1] + bytes([sig[-1] ^ 1])
        if i % 13 == 0:
            msg = msg[:-1]
        jobs.append((a.public_key if i % 5 else b.public_key, sig, msg))
    expected = [verify_signature(pk, sig, msg) for pk, sig, msg in jobs]
    feed = SignatureFeed()
    assert [feed.add(job) for job in jobs] == list(range(n))
    verdict = feed.finish()
    assert [verdict(i) for i in range(n)] == expected
    whole = verify_signatures(jobs)
    assert [whole(i) for i in range(n)] == expected
    for ahead in (0, 2):  # the read side's feed: chunks handed over as the verdicts before them are asked for
        in_order = verify_signatures(jobs, ahead=ahead)
        assert [in_order(i) for i in range(n)] == expected
    assert n < 20 or (True in expected and False in expected)  # both verdicts occur


def test_a_feed_with_ahead_hands_the_checkers_only_that_many_chunks_beyond_the_one_asked_for() -> None:
    """``SignatureFeed(ahead=N)`` (``ledger.verify.RowJudge``: a view rebuild's rows, asked
    for in order): handed every chunk at once, the checkers' pipe filled and the caller
    waited on its write with rows of its own to apply; now at most N chunks beyond the one
    asked for are with them, and the caller checks the rest as it reaches them."""

    from ledger import keys

    jobs, expected = _checked_jobs(40 * keys.SIGNATURE_CHUNK)
    feed = keys.SignatureFeed(ahead=3)
    for job in jobs:
        feed.add(job)
    assert not feed._tickets  # adding hands nothing over
    verdict = feed.finish()
    got = []
    for i in range(len(jobs)):
        got.append(verdict(i))
        assert len(feed._tickets) <= i // keys.SIGNATURE_CHUNK + 4
    assert got == expected
    assert len(feed._tickets) == 40


def _checked_jobs(n: int) -> tuple[list[tuple[bytes, bytes, bytes]], list[bool]]:
    """``_jobs(n)`` and each one's verdict by ``verify_signature`` in this process, for a
    test of the checker processes (skipped on one core, where a feed starts none)."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: no checker processes")
    jobs = _jobs(n)
    return jobs, [verify_signature(*job) for job in jobs]


def _jobs(n: int) -> list[tuple[bytes, bytes, bytes]]:
    a = Signer.generate("a")
    out = []
    for i in range(n):
        msg = hashlib.sha256(str(i).encode()).digest()
        sig = a.sign(msg)
        out.append((a.public_key, sig if i % 9 else sig[:-1] + bytes([sig[-1] ^ 1]), msg))
    return out


def _kill_checkers():  # type: ignore[no-untyped-def]
    """Every checker process of the running pool, killed (and reaped): the pool."""
    import os
    import signal

    from ledger import keys

    pool = keys._CHECKERS[0]
    for proc in pool.procs:
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(5)
    return pool


def test_verdicts_stay_libsodiums_when_a_checker_process_dies() -> None:
    """A checker killed while a feed's chunks are with it: the chunks it never answered
    are checked in the feed's own process, and the next feed starts new checkers."""

    from ledger import keys

    jobs, expected = _checked_jobs(1000)
    feed = keys.SignatureFeed()
    for job in jobs:
        feed.add(job)
    pool = _kill_checkers()
    verdict = feed.finish()
    assert [verdict(i) for i in range(len(jobs))] == expected
    again = keys.verify_signatures(jobs)
    assert [again(i) for i in range(len(jobs))] == expected
    assert keys._CHECKERS and keys._CHECKERS[0] is not pool and keys._CHECKERS[0].alive()


def test_the_caller_checks_the_last_chunks_itself_rather_than_wait_with_the_same_verdicts() -> None:
    """When a verdict is not in yet, the feed's own process checks the last chunks that no
    checker has started (``_Checkers.result``), claiming each under the checker's lock, so
    a chunk is checked once, by one of them; the checker answers None for a chunk the
    caller took. Verdicts stay libsodium's whoever checked, and the next feed's answers
    come in order after the skipped ones."""

    from ledger import keys

    jobs, expected = _checked_jobs(48 * keys.SIGNATURE_CHUNK)
    keys.verify_signatures(jobs[:keys.SIGNATURE_CHUNK])  # the checkers, started
    pool = keys._CHECKERS[0]
    before = pool.checked_here
    verdict = keys.verify_signatures(jobs)
    assert [verdict(i) for i in range(len(jobs))] == expected
    assert pool.checked_here > before  # the first verdict was not in: the caller took the last chunks
    assert not pool.taken & pool.pending.keys()  # a chunk the caller took holds no jobs after
    assert keys._CHECKERS[0] is pool  # no answer was out of turn (that would discard the checkers)
    again = keys.verify_signatures(jobs)
    assert [again(i) for i in range(len(jobs))] == expected
    assert keys._CHECKERS[0] is pool


def _verdicts_in_a_pool_worker(jobs: list[tuple[bytes, bytes, bytes]]) -> list[bool]:
    from ledger import keys

    verdict = keys.verify_signatures(jobs)
    return [verdict(i) for i in range(len(jobs))]


def test_a_feed_in_a_daemonic_process_checks_inline() -> None:
    """A process that may start none of its own (a multiprocessing pool's worker, which is
    daemonic, as a caller's own service may run ingest) checks its signatures inline,
    with the same verdicts, rather than fail starting checkers."""
    import multiprocessing

    jobs = _jobs(300)
    expected = [verify_signature(*job) for job in jobs]
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_verdicts_in_a_pool_worker, (jobs,)) == expected


def test_checkers_that_cannot_start_leave_nothing_open_and_the_feed_checks_inline(monkeypatch) -> None:
    """A checker process that fails to start (no processes left, say): the feed checks its
    signatures inline with the same verdicts, and no pipe end is left open."""
    import multiprocessing.context
    import os

    from ledger import keys

    jobs, expected = _checked_jobs(200)
    while keys._CHECKERS:
        keys._discard()

    def refuse(self) -> None:  # type: ignore[no-untyped-def]
        raise OSError("no more processes")

    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", refuse)
    before = len(os.listdir("/proc/self/fd"))
    verdict = keys.verify_signatures(jobs)
    assert [verdict(i) for i in range(len(jobs))] == expected
    assert not keys._CHECKERS and len(os.listdir("/proc/self/fd")) == before


def test_a_feed_in_another_thread_checks_its_own_signatures() -> None:
    """The checker processes answer the thread that started them; a feed in another
    thread checks inline and gets the same verdicts (no answer meant for another feed)."""
    import threading

    from ledger import keys

    jobs = _jobs(600)
    expected = [verify_signature(*job) for job in jobs]
    keys.verify_signatures(jobs[:300])  # this thread's checkers, started
    got: list[list[bool]] = []

    def other() -> None:
        verdict = keys.verify_signatures(jobs)
        got.append([verdict(i) for i in range(len(jobs))])

    mine = keys.SignatureFeed()
    for job in jobs[:256]:
        mine.add(job)  # chunks with this thread's checkers while the other thread runs
    t = threading.Thread(target=other)
    t.start()
    t.join()
    verdict = mine.finish()
    assert got == [expected] and [verdict(i) for i in range(256)] == expected[:256]


@pytest.mark.parametrize("lib", ["system", "bundled"])
def test_a_verdict_names_the_libsodium_that_judged_its_signatures(ledger, lib: str) -> None:  # type: ignore[no-untyped-def]
    """Every verdict states what it was checked against (issue 14 point 1); the library
    that judged each signature is part of that: ``verify``'s text and JSON name it."""
    p = make_producers(ledger)
    assert ingest(ledger.store, night_batch(ledger.store, p, rounds=2).lines()).status == "stored"
    with checking_with(lib):
        res = CliRunner().invoke(main, ledger.cli_args() + ["verify", "--workers", "1", "--json"] + ledger.trust_args())
        text = CliRunner().invoke(main, ledger.cli_args() + ["verify", "--workers", "1"] + ledger.trust_args())
    said = json.loads(res.stdout)["signatures_checked_with"]
    if lib == "system":
        assert said.startswith("libsodium 1.") and "the machine's own (libsodium.so." in said
    else:
        import nacl

        assert said == f"libsodium bundled with PyNaCl {nacl.__version__}"
    assert f"signatures checked with {said}" in text.stdout


@pytest.mark.parametrize("killed", [False, True], ids=["checkers-alive", "checker-killed-after"])
def test_a_feed_lets_go_of_the_jobs_whose_verdicts_are_in_and_keeps_their_verdicts(killed: bool) -> None:
    """``SignatureFeed.collect`` (called as each chunk is handed over and as ingest's judges
    go: issue 13 point 8, a batch's memory): the chunks whose answers are back have their
    verdicts taken in and their jobs let go, the rest keep theirs; every verdict is still
    the serial ``verify_signature``'s, also when a checker dies after the collection (the
    chunks it had not answered are checked in the feed's own process, from their jobs)."""
    import time

    from ledger import keys

    jobs, expected = _checked_jobs(24 * keys.SIGNATURE_CHUNK)
    feed = keys.SignatureFeed()
    for job in jobs[:20 * keys.SIGNATURE_CHUNK]:
        feed.add(job)
    deadline = time.monotonic() + 30
    while feed._collected < 10 and time.monotonic() < deadline:
        time.sleep(0.005)
        feed.collect()
    collected = feed._collected
    assert 10 <= collected <= 20
    assert all(job is keys._LET_GO for job in feed._jobs[:collected * keys.SIGNATURE_CHUNK])
    assert feed._jobs[collected * keys.SIGNATURE_CHUNK:] == jobs[collected * keys.SIGNATURE_CHUNK:20 * keys.SIGNATURE_CHUNK]
    for job in jobs[20 * keys.SIGNATURE_CHUNK:]:
        feed.add(job)
    if killed:
        _kill_checkers()
    verdict = feed.finish()
    assert [verdict(i) for i in range(len(jobs))] == expected
    assert not keys.verify_signature(*keys._LET_GO)  # a job let go, were it checked again, is refused


def test_a_feed_let_go_before_its_verdicts_are_read_leaves_no_answers_with_the_checkers() -> None:
    """A feed dropped with verdicts unread (a batch refused before its last signatures were
    asked for): the checkers forget its chunks (``_Checkers.forget``), dropping the answers
    already in and those still to come, so a long-running process holds nothing of it; the
    next feed's verdicts are libsodium's and come in order, from the same checkers."""
    import time

    from ledger import keys

    jobs, expected = _checked_jobs(12 * keys.SIGNATURE_CHUNK)
    keys.verify_signatures(jobs[:keys.SIGNATURE_CHUNK])  # the checkers, started
    pool = keys._CHECKERS[0]
    feed = keys.SignatureFeed()
    for job in jobs:
        feed.add(job)
    verdict = feed.finish()
    assert verdict(0) == expected[0]
    deadline = time.monotonic() + 30
    while not pool.ready and time.monotonic() < deadline:  # some answers in before the feed goes
        time.sleep(0.005)
        pool.drain()
    tickets = {t for t in feed._tickets if t[0] >= 0}
    assert pool.ready.keys() & tickets
    del verdict, feed
    assert not pool.ready.keys() & tickets
    again = keys.verify_signatures(jobs)
    assert [again(i) for i in range(len(jobs))] == expected
    while any(pool.read[w] < pool.sent[w] for w in range(len(pool.conns))) and time.monotonic() < deadline:
        time.sleep(0.005)
        pool.drain()
    assert not pool.ready.keys() & tickets and not pool.pending.keys() & tickets and not pool.forgotten
    assert keys._CHECKERS[0] is pool

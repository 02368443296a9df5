"""The parallel verify path (forked workers, each reading its own range of rows) finds
exactly what the single-process path finds, including chain breaks that straddle two
ranges. Ranges are made tiny so that every stream crosses range boundaries."""

from __future__ import annotations

import base64

import orjson
import pytest

import ledger.verify as verify_mod
from ledger.log.checkpoints import create_checkpoint
from ledger.log.merkle import leaf_hash, root_from_leaf_hashes
from tests.conftest import execute_sql
from tests.helpers import ingest, make_producers, night_batch


@pytest.fixture(params=[3, 4, 8], ids=lambda n: f"ranges of {n}")
def tiny_ranges(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Ranges of 3 rows, and of 4 and 8: a power of two, where each whole range is a
    perfect subtree the worker hashes and the parent appends by its root (unless a
    checkpoint's size falls inside it)."""
    monkeypatch.setattr(verify_mod, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(verify_mod, "CHUNK", request.param)


def _problems(ledger, workers: int) -> list[tuple[object, ...]]:  # type: ignore[no-untyped-def]
    rep = verify_mod.verify_ledger(ledger.store, public_dir=ledger.public.path, workers=workers)
    assert rep.workers == workers
    return sorted((p.check, p.stream or "", p.seq or 0, p.reason) for p in rep.problems), rep  # type: ignore[return-value]


def test_parallel_equals_serial_on_clean_and_tampered_ledgers(ledger, tiny_ranges) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    ingest(ledger.store, night_batch(ledger.store, p, rounds=6).lines())
    create_checkpoint(ledger.store, ledger.keys, ledger.public)
    ingest(ledger.store, night_batch(ledger.store, p, rounds=3).lines())
    create_checkpoint(ledger.store, ledger.keys, ledger.public)

    serial, rep1 = _problems(ledger, 1)
    parallel, rep2 = _problems(ledger, 2)
    assert serial == parallel == [] and rep1.root == rep2.root and rep1.events == rep2.events
    assert rep1.checkpoints_checked == rep2.checkpoints_checked == 2  # both checkpoints, matched
    leaves = [leaf_hash(bytes.fromhex(orjson.loads(r.state)["hash"])) for r in ledger.store.rows()]
    assert rep2.root == base64.b64encode(root_from_leaf_hashes(leaves)).decode()  # the tree, leaf by leaf

    rows = list(ledger.store.rows())
    col = "rowid" if ledger.store.url.backend == "sqlite" else "notification_id"
    t = ledger.store.events_table
    victim = next(r for r in rows if r.stream.startswith("round:") and r.seq == 1)
    execute_sql(ledger.store, f"DELETE FROM {t} WHERE {col}=?", (victim.notification_id,))
    acct = [r for r in rows if r.stream == "account:P1"]
    execute_sql(ledger.store, f"UPDATE {t} SET state=? WHERE {col}=?",
                (acct[1].state.replace(b'"d1"', b'"d9"'), acct[1].notification_id))

    serial, _ = _problems(ledger, 1)
    parallel, _ = _problems(ledger, 2)
    assert serial == parallel
    checks = {(c, s, q) for c, s, q, _ in parallel}
    assert ("chain", victim.stream, 2) in checks
    assert ("hash", "account:P1", 2) in checks
    assert any(c == "checkpoint" for c, _, _ in checks)


def test_closed_names_answer_like_a_set_across_merges() -> None:
    """``ClosedNames`` (the closed rounds' names in 8 bytes each) holds what was added,
    in its set and after merges into its sorted array, and nothing else."""
    names = verify_mod.ClosedNames()
    names.MERGE_AT = 7  # type: ignore[misc]  # many merges of a few names
    added = [f"round:bac-1:{i}" for i in range(0, 300, 3)]
    for n, name in enumerate(added, 1):
        names.add(name)
        assert name in names and len(names) == n
    assert all(name in names for name in added)
    assert not any(f"round:bac-1:{i}" in names for i in range(1, 300, 3))
    assert len(names._sorted) == 98 and list(names._sorted) == sorted(names._sorted)


@pytest.mark.parametrize("merge_at", [2, verify_mod.ClosedNames.MERGE_AT], ids=["merged", "recent"])
@pytest.mark.parametrize("later", [True, False], ids=["in a later range", "in the same range"])
def test_an_event_after_a_rounds_close_is_named(ledger, tiny_ranges, later: bool,  # type: ignore[no-untyped-def]
                                                merge_at: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing may follow a round's close (ledger.judges.round): an event written after it
    behind ingest's back, correctly linked and signed with the real (stolen) dealer key, is
    named by verify, whether it lands in the close's range of rows or a later one (where
    verify keeps no chain head for the closed round, only its name in ``ClosedNames``,
    whether still in its set of recent names or merged into its array)."""
    from ledger.events import sign_event

    monkeypatch.setattr(verify_mod.ClosedNames, "MERGE_AT", merge_at)
    p = make_producers(ledger)
    ingest(ledger.store, night_batch(ledger.store, p, rounds=6).lines())
    head = next(r for r in ledger.store.rows() if r.kind == "round.close.v1")
    closed = ledger.store.head(head.stream)
    assert closed is not None and closed.kind == "round.close.v1"
    if later:
        ingest(ledger.store, night_batch(ledger.store, p, rounds=3).lines())  # rows between: a later range
    else:
        monkeypatch.setattr(verify_mod, "CHUNK", 4096)  # one range holds the close and the forgery
    forged = []
    for n in (1, 2):  # two rows, each linked to the one before: the second lands in yet another range
        ev = sign_event(p.dealer, ledger=closed.ledger, stream=closed.stream, seq=closed.seq + n, kind="round.open.v1",
                        payload={"table": "bac-1", "game": "fan-tan", "rules": {"decks": 8}},
                        prev=forged[-1].hash if forged else closed.hash, at=closed.at)
        forged.append(ev)
        execute_sql(ledger.store,
                    f"INSERT INTO {ledger.store.events_table} (originator_id, originator_version, topic, state)"
                    " VALUES (?,?,?,?)", (ev.stream, ev.seq, ev.kind, ev.encoded()))
        if later:
            ingest(ledger.store, night_batch(ledger.store, p, rounds=2).lines())
    serial, rep1 = _problems(ledger, 1)
    parallel, rep2 = _problems(ledger, 2)
    assert serial == parallel and rep1.streams == rep2.streams
    assert [(c, s, q) for c, s, q, r in parallel if "after its round.close" in r] == [
        ("chain", closed.stream, closed.seq + 1), ("chain", closed.stream, closed.seq + 2)]


class _StreamedIds:
    """The ledger's own store, with its id bounds hidden: ``_IdScan`` then takes its
    streamed pass over every id, the path for ids that are not exactly 1..N."""

    def __init__(self, store) -> None:  # type: ignore[no-untyped-def]
        self._store = store

    def id_bounds(self) -> None:
        return None

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._store, name)


def test_the_id_scan_shortcut_for_ids_1_to_n_equals_the_streamed_pass(ledger, tiny_ranges) -> None:  # type: ignore[no-untyped-def]
    """Issue 14 point 3 (every row read, whatever its id): when the ids are exactly 1..N
    the scan takes its ranges from N (two index lookups and a count); it must list the very
    ranges, count and leaf positions the pass over every id lists, and on a gap or an id
    outside 1..N take that pass itself."""
    p = make_producers(ledger)
    ingest(ledger.store, night_batch(ledger.store, p, rounds=4).lines())
    ring = {r.notification_id for r in ledger.store.stream_rows("keyring")}

    def scan(store):  # type: ignore[no-untyped-def]
        s = verify_mod._IdScan(store, ring)
        return s.ranges, s.total, s.positions, s.outside, s.gaps, s.missing

    fast, streamed = scan(ledger.store), scan(_StreamedIds(ledger.store))
    assert fast == streamed and fast[1] == ledger.store.count() and fast[3:] == ([], [], 0)
    ids = ledger.store.notification_ids()
    col = "rowid" if ledger.store.url.backend == "sqlite" else "notification_id"
    execute_sql(ledger.store, f"DELETE FROM {ledger.store.events_table} WHERE {col}=?", (ids[len(ids) // 2],))
    after = scan(ledger.store)
    assert after == scan(_StreamedIds(ledger.store)) and after[1] == len(ids) - 1 and after[5] == 1


def test_tapered_ranges_cover_every_row_once_in_aligned_perfect_subtrees(ledger, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 16 (verify on all cores): the ledger's last ranges are cut in quarters so that
    the workers finish together; the ranges still cover 1..N once, in order, and each
    range of a power-of-two count starts at a multiple of it (a perfect subtree of the log,
    appended by its root)."""
    monkeypatch.setattr(verify_mod, "CHUNK", 8)
    p = make_producers(ledger)
    ingest(ledger.store, night_batch(ledger.store, p, rounds=6).lines())
    scan = verify_mod._IdScan(ledger.store)
    ranges, counts = scan.tapered(2)
    assert len(ranges) > len(scan.ranges) and ranges[-1][1] == scan.total
    assert [i for lo, hi in ranges for i in range(lo, hi + 1)] == list(range(1, scan.total + 1))
    assert counts == [hi - lo + 1 for lo, hi in ranges] and 2 in counts
    assert all((lo - 1) % n == 0 for (lo, _), n in zip(ranges, counts) if n & (n - 1) == 0)
    assert scan.tapered(1) == (scan.ranges, [min(8, scan.total - i) for i in range(0, scan.total, 8)])


class _Substituted:
    """The ledger's own store, with some rows read back as other bytes (by notification
    id): rows the unique (stream, seq) key of the events table would refuse to hold, such
    as a second seq 1 of a stream, for the single-process path (``workers=1``) to judge."""

    def __init__(self, store, subs: dict[int, tuple[str, int, str, bytes]]) -> None:  # type: ignore[no-untyped-def]
        self._store, self._subs = store, subs

    def row_range(self, lo: int, hi: int, raw: bool = False):  # type: ignore[no-untyped-def]
        assert raw
        return [(nid, *self._subs[nid]) if nid in self._subs else (nid, stream, seq, kind, state)
                for nid, stream, seq, kind, state in self._store.row_range(lo, hi, raw=True)]

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._store, name)


@pytest.mark.parametrize("reused", ["closed", "open"])
def test_a_round_whole_in_one_range_under_a_name_already_used_is_named(ledger, tiny_ranges,  # type: ignore[no-untyped-def]
                                                                        reused: str) -> None:
    """A round from seq 1 to its close inside one range travels to the parent as its name
    only (``RangeResult.done``); the parent must still find that the name was used before:
    by a round closed in an earlier range (nothing may follow a close) or by a round still
    open (seq 1 repeated). The rows are signed with the real dealer key and read in place
    of others, as a database whose unique key was dropped could hold them."""
    from ledger.events import sign_event

    p = make_producers(ledger)
    ingest(ledger.store, night_batch(ledger.store, p, rounds=6).lines())
    rows = list(ledger.store.rows())
    closed = next(r for r in rows if r.kind == "round.close.v1")
    ledger_name, at = orjson.loads(closed.state)["ledger"], orjson.loads(closed.state)["at"]

    def forged(stream: str, seq: int, kind: str, prev: str) -> tuple[str, int, str, bytes]:
        payload = ({"table": "bac-1", "game": "fan-tan", "rules": {"decks": 8}} if kind == "round.open.v1"
                   else {"status": "complete"})
        ev = sign_event(p.dealer, ledger=ledger_name, stream=stream, seq=seq, kind=kind, payload=payload, prev=prev,
                        at=at)
        return (stream, seq, kind, ev.encoded())

    subs: dict[int, tuple[str, int, str, bytes]] = {}
    name = closed.stream
    if reused == "open":
        name = "round:bac-1:forged-open"
        subs[closed.notification_id + 1] = forged(name, 1, "round.open.v1", "0" * 64)  # a round left open
    x = rows[-4].notification_id  # a later range: seq 1 and the close side by side
    subs[x] = forged(name, 1, "round.open.v1", "0" * 64)
    subs[x + 1] = forged(name, 2, "round.close.v1", orjson.loads(subs[x][3])["hash"])
    rep = verify_mod.verify_ledger(_Substituted(ledger.store, subs), public_dir=ledger.public.path, workers=1)
    named = [(p.check, p.reason) for p in rep.problems if p.stream == name and p.seq == 1]
    expected = "after its round.close" if reused == "closed" else "seq 1 appears after seq 1"
    assert [c for c, r in named if expected in r] == ["chain"], named


@pytest.mark.parametrize("digest", ["hash", "blake2b"])
def test_closed_names_answer_like_a_set_with_either_digest(digest: str) -> None:
    """Python's keyed ``hash`` of a str by default; BLAKE2b keyed with the run's own secret
    when PYTHONHASHSEED fixed Python's key (one anyone could know)."""
    names = verify_mod.ClosedNames()
    if digest == "blake2b":
        names._digest = names._blake2b
    names.MERGE_AT = 5  # type: ignore[misc]
    added = [f"round:bac-1:{i}" for i in range(0, 60, 2)]
    for name in added:
        names.add(name)
    assert all(name in names for name in added) and len(names) == len(added)
    assert not any(f"round:bac-1:{i}" in names for i in range(1, 60, 2))

"""Projections (issue #5 point 1 and 3) on SQLite and PostgreSQL: a view written chunk by
chunk equals a rebuild from zero, an interrupted (even SIGKILLed) run resumes without
counting anything twice, and balances equal a computation straight from the events."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ledger.events import event_from_stored
from ledger.sim.sample import write_sample_batch
from ledger.store import Row
from ledger.verify import RowJudge
from projections.runner import ViewStore, catch_up, rebuild
from projections.views import ACCOUNT_COLUMNS, Add, Put, Table, View, account_balance
from tests.conftest import execute_sql
from tests.helpers import ROOT, ingest


def _fill(ledger, rounds: int, tmp: Path, name: str = "b") -> None:  # type: ignore[no-untyped-def]
    path = tmp / f"{name}.jsonl"
    write_sample_batch(ledger.store, ledger.keys, path, rounds)
    assert ingest(ledger.store, path.read_text().splitlines()).status == "stored"


def _all_rows(vs: ViewStore) -> dict[str, object]:
    return {n: vs.rows(n) for n in vs.views}


def _balances(vs: ViewStore) -> dict[str, int]:
    """Each account's balance as the accounts view holds it."""
    return {a: account_balance(dict(zip(ACCOUNT_COLUMNS, values, strict=True)))
            for a, _, *values in vs.rows("accounts")["accounts"]}


def _deposits_lost(rows: list[Row]) -> dict[str, int]:
    """What each account loses when these deposit rows (as stored before tampering) count for nothing."""
    lost: dict[str, int] = {}
    for row in rows:
        ev = event_from_stored(row.state)
        lost[ev.stream[8:]] = lost.get(ev.stream[8:], 0) + ev.payload["amount"]
    return lost


def test_incremental_runs_equal_a_rebuild_from_zero(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with ViewStore(ledger.store.url) as vs:
        _fill(ledger, 30, tmp_path, "a")
        catch_up(ledger.store, vs, chunk=37)
        _fill(ledger, 45, tmp_path, "b")
        catch_up(ledger.store, vs, ["accounts"], chunk=11)  # views at different positions
        catch_up(ledger.store, vs, chunk=53)
        incremental = _all_rows(vs)
        assert incremental["rounds"]["rounds"] and incremental["accounts"]["accounts"]
        rebuild(ledger.store, vs)
        assert _all_rows(vs) == incremental
        top = ledger.store.max_notification_id()
        assert all(vs.position(n) == top for n in vs.views)


def test_balances_equal_the_events_summed_directly(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _fill(ledger, 40, tmp_path)
    expected: dict[str, int] = {}
    bets: dict[tuple[str, int], tuple[str, int]] = {}
    cash_in = 0
    for row in ledger.store.rows():
        ev = event_from_stored(row.state)
        p = ev.payload
        if ev.kind == "cash.deposit.v1":
            expected[ev.stream[8:]] = expected.get(ev.stream[8:], 0) + p["amount"]
            cash_in += p["amount"]
        elif ev.kind == "cash.withdrawal.v1":
            expected[ev.stream[8:]] = expected.get(ev.stream[8:], 0) - p["amount"]
            cash_in -= p["amount"]
        elif ev.kind == "baccarat.bet.v1":
            n = sum(1 for k in bets if k[0] == ev.stream) + 1
            bets[(ev.stream, n)] = (p["player"], p["amount"])
        elif ev.kind == "baccarat.settle.v1":
            player, staked = bets[(ev.stream, p["bet"])]
            expected[player] = expected.get(player, 0) + p["paid"] - staked
    with ViewStore(ledger.store.url) as vs:
        catch_up(ledger.store, vs)
        got = _balances(vs)
        tables = vs.rows("tables")["tables"]
    assert got == expected
    house = sum(row[-1] for row in tables)
    assert house == cash_in - sum(got.values())  # what players lost, the house won


def test_a_stopped_run_resumes_where_it_committed(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _fill(ledger, 40, tmp_path)
    with ViewStore(ledger.store.url) as vs:
        catch_up(ledger.store, vs, chunk=25, stop_after=3)
        assert all(vs.position(n) == 75 for n in vs.views)
        catch_up(ledger.store, vs, chunk=25)
        resumed = _all_rows(vs)
        rebuild(ledger.store, vs)
        assert _all_rows(vs) == resumed


RUNNER = """
import sys, time
from ledger.store import Store
from projections.runner import ViewStore, catch_up
store = Store.open(sys.argv[1])
with ViewStore(store.url) as vs:
    catch_up(store, vs, chunk=7, progress=lambda done, top: time.sleep(0.02))
store.close()
"""


def test_sigkill_mid_run_then_restart_equals_a_rebuild(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Kill the projection process at random points; after each restart the views equal a
    rebuild from zero (rows and positions are committed together)."""
    _fill(ledger, 60, tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    kills = 0
    rng = random.Random(5)
    partial = 0
    top = ledger.store.max_notification_id()
    for _ in range(10):  # issue #7 point 1: the projection process killed again and again, each from zero
        with ViewStore(ledger.store.url) as vs:
            for name in vs.views:
                vs.reset(name)
        proc = subprocess.Popen([sys.executable, "-c", RUNNER, ledger.url], env=env)
        # The kill lands by construction: once the runner has committed its first chunk (or
        # at once, one time in five), then a random moment later within its run.
        deadline, wait = time.monotonic() + 120, rng.random() > 0.2
        with ViewStore(ledger.store.url) as vs:
            while wait and proc.poll() is None and not any(vs.position(n) for n in vs.views):
                assert time.monotonic() < deadline, "the projection runner committed nothing for 120 s"
                time.sleep(0.005)
        time.sleep(rng.uniform(0, 2.0))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        with ViewStore(ledger.store.url) as vs:  # what survived the kill is whole: resume, compare with zero
            positions = {n: vs.position(n) for n in vs.views}
            partial += any(0 < p < top for p in positions.values())
            catch_up(ledger.store, vs)
            after = _all_rows(vs)
            rebuild(ledger.store, vs)
            assert _all_rows(vs) == after, positions
    print(f"projection runner: {kills} kills, {partial} with views part-way")
    assert kills >= 5 and partial >= 3, (kills, partial)


def _count_round_reads(store, monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """Every ``stream_events`` read of a round's stream from here on."""
    reads: list[str] = []
    plain = store.stream_events

    def counted(stream: str):  # type: ignore[no-untyped-def]
        if stream.startswith("round:"):
            reads.append(stream)
        return plain(stream)

    monkeypatch.setattr(store, "stream_events", counted)
    return reads


def test_a_rebuild_walks_each_round_from_the_rows_it_reads_with_no_query_per_round(  # type: ignore[no-untyped-def]
        ledger, tmp_path: Path, monkeypatch) -> None:
    """Issue 16 point 4: the views take a closed round from the rows the run has read
    (``runner.Applier`` holds the open rounds), not from a query per round; a run that
    starts inside a round reads that round whole, as stored."""
    _fill(ledger, 20, tmp_path)
    with ViewStore(ledger.store.url) as vs:
        reads = _count_round_reads(ledger.store, monkeypatch)
        rebuild(ledger.store, vs)
        assert reads == []
        whole = _all_rows(vs)
        for n in vs.views:
            vs.reset(n)
        close = next(r.notification_id for r in ledger.store.rows() if r.kind == "round.close.v1")
        catch_up(ledger.store, vs, chunk=close - 1, stop_after=1)  # stops inside the first round
        catch_up(ledger.store, vs, chunk=close - 1)
        assert reads and all(r.startswith("round:") for r in reads)
        assert _all_rows(vs) == whole


def test_issue_14_point_3_rows_changed_behind_ingests_back_count_for_nothing_in_a_rebuild(  # type: ignore[no-untyped-def]
        ledger, tmp_path: Path) -> None:
    """Issue 14 point 3 (a row counts only if it is what a key allowed to write it signed),
    read side: one deposit's amount raised in its stored bytes (its hash no longer
    matches) and another's signature swapped for a third row's (its hash matches, its
    signature does not) are refused by ``RowJudge`` with or without ``prepare``, and a
    rebuild counts neither; every other row's event is the one ``event_from_stored``
    reads (issue 16 point 4: the judge's one decoding serves the checks and the event)."""
    _fill(ledger, 20, tmp_path)
    with ViewStore(ledger.store.url) as vs:
        catch_up(ledger.store, vs)
        before = _balances(vs)
    deposits = [r for r in ledger.store.rows() if r.kind == "cash.deposit.v1"]
    raised, swapped = deposits[0], deposits[1]
    donor = next(r for r in ledger.store.rows() if r.stream.startswith("round:"))
    col = "rowid" if ledger.store.url.backend == "sqlite" else "notification_id"
    table = ledger.store.events_table
    amount = event_from_stored(raised.state).payload["amount"]
    forged = raised.state.replace(f'"amount":{amount},'.encode(), f'"amount":{amount + 1_000_000},'.encode(), 1)
    assert forged != raised.state
    execute_sql(ledger.store, f"UPDATE {table} SET state=? WHERE {col}=?", (forged, raised.notification_id))
    sig, other = event_from_stored(swapped.state).sig, event_from_stored(donor.state).sig
    execute_sql(ledger.store, f"UPDATE {table} SET state=? WHERE {col}=?",
                (swapped.state.replace(sig.encode(), other.encode()), swapped.notification_id))
    bad = {raised.notification_id, swapped.notification_id}
    rows = list(ledger.store.rows())
    for prepared in (False, True):
        judge = RowJudge(ledger.store)
        if prepared:
            judge.prepare(rows)
        for row in rows:
            ev = judge.event(*row)
            assert (ev is None) == (row.notification_id in bad), (prepared, row.stream, row.seq)
            if ev is not None:
                read = event_from_stored(row.state)
                assert ev == read and (ev.hash, ev.sig, ev.payload) == (read.hash, read.sig, read.payload)
        assert [(nid, why.split(": ")[1]) for nid, why in judge.refused] == [
            (raised.notification_id, "hash"), (swapped.notification_id, "signature")], judge.refused
    lost = _deposits_lost([raised, swapped])
    with ViewStore(ledger.store.url) as vs:
        rebuild(ledger.store, vs)
        after = _balances(vs)
    assert after == {a: b - lost.get(a, 0) for a, b in before.items()}


@pytest.mark.parametrize("junk", [(b"not json {", b"\xff\xfe\x00 not utf-8"),
                                  (b"[1, 2, 3]", b'{"kind": "cash.deposit.v1", "payload": {}}')],
                         ids=["not-json", "no-signed-object"])
def test_issue_14_point_3_rows_that_are_no_event_at_all_are_refused_by_name_and_a_rebuild_goes_on(  # type: ignore[no-untyped-def]
        ledger, tmp_path: Path, junk: tuple[bytes, bytes]) -> None:
    """Issue 14 point 3, read side, for rows whose bytes are no signed event at all
    (written behind ingest's back, which only stores events it parsed): not JSON, not
    UTF-8, JSON that is no object, an object without a key, hash or signature. The judge
    (with and without ``prepare``, whose decoding catches them first) refuses each in its
    turn with a reason; a rebuild neither stops nor counts them, and counts every other row."""
    _fill(ledger, 12, tmp_path)
    with ViewStore(ledger.store.url) as vs:
        catch_up(ledger.store, vs)
        before = _balances(vs)
    deposits = [r for r in ledger.store.rows() if r.kind == "cash.deposit.v1"]
    assert len(deposits) >= len(junk)
    col = "rowid" if ledger.store.url.backend == "sqlite" else "notification_id"
    lost = _deposits_lost(deposits[:len(junk)])
    for row, state in zip(deposits, junk, strict=False):
        execute_sql(ledger.store, f"UPDATE {ledger.store.events_table} SET state=? WHERE {col}=?",
                    (state, row.notification_id))
    bad = [r.notification_id for r in deposits[:len(junk)]]
    rows = list(ledger.store.rows())
    streams = {r.notification_id: f"{r.stream} seq {r.seq}: " for r in deposits}
    for prepared in (False, True):
        judge = RowJudge(ledger.store)
        if prepared:
            judge.prepare(rows)
        counted = [row.notification_id for row in rows if judge.event(*row) is not None]
        assert sorted(set(r.notification_id for r in rows) - set(counted)) == sorted(bad), prepared
        assert [nid for nid, _ in judge.refused] == bad, judge.refused
        for nid, why in judge.refused:
            assert why.startswith(streams[nid]) and why.split(": ")[-1].strip(), why  # stream seq N: check: reason
    with ViewStore(ledger.store.url) as vs:
        rebuild(ledger.store, vs)
        after = _balances(vs)
    assert after == {a: b - lost.get(a, 0) for a, b in before.items()}


class _Ledgerish(View):
    """A view with a counter table, a write-once table and a table given both (for write's
    in-order path): what ``ViewStore.write`` must store whatever the operations' grouping."""

    name = "ledgerish"
    tables = (Table("counters", ("who", "cur"), ("a", "b")), Table("once", ("rid",), ("v",), ("v",)),
              Table("both", ("k",), ("n",)))


def test_write_sums_a_chunks_adds_per_row_and_stores_what_one_by_one_would(ledger) -> None:  # type: ignore[no-untyped-def]
    """Issue 5 point 1 (a view is the events' sum) kept by issue 16's batched write: a
    chunk's Adds to one row summed first, each table in one executemany, a table given
    both kinds of operation written in order; the rows equal the operations applied one
    by one (computed here in Python), on SQLite and PostgreSQL."""
    view = _Ledgerish()
    rng = random.Random(5)
    with ViewStore(ledger.store.url, {view.name: view}) as vs:
        vs.reset(view.name)
        expected: dict[tuple[object, ...], list[int]] = {}
        once: dict[tuple[object, ...], str] = {}
        for chunk in range(3):
            ops: list[Add | Put] = []
            for i in range(400):
                key = (f"p{rng.randrange(7)}", rng.choice(["EUR", "USD"]))
                amounts = (rng.randrange(-10**12, 10**12), rng.randrange(3))
                ops.append(Add("counters", key, amounts))
                total = expected.setdefault(key, [0, 0])
                total[0] += amounts[0]
                total[1] += amounts[1]
                if i % 50 == 0:
                    rid = (f"r{chunk}-{i}",)
                    ops.append(Put("once", rid, (f"v{i}",)))
                    once[rid] = f"v{i}"
            if chunk == 1:  # a Put then Adds to its row: only in order does the row end at 1 + 2 + 3
                ops += [Put("both", ("x",), (1,)), Add("both", ("x",), (2,)), Add("both", ("x",), (3,))]
            vs.write(view, 100 * (chunk + 1), ops)
        rows = vs.rows(view.name)
        assert {tuple(r[:2]): list(r[2:]) for r in rows["counters"]} == expected
        assert {tuple(r[:1]): r[1] for r in rows["once"]} == once
        assert rows["both"] == [("x", 6)]
        assert vs.position(view.name) == 300


def test_a_view_answers_nothing_for_a_kind_outside_its_kinds_so_the_runner_may_skip_it(ledger) -> None:  # type: ignore[no-untyped-def]
    """Issue 16 point 4 (cheaper readers): the runner calls a view's ``handle`` only for the
    kinds in ``View.kinds``; that is sound only while ``handle`` gives no operation for any
    other kind. Every registered kind, on a round, table, account and tournament stream."""
    from types import SimpleNamespace

    from ledger.kinds import KINDS
    from projections.views import VIEWS, Context

    ctx = Context(ledger.store)
    limited = [v for v in VIEWS.values() if v.kinds is not None]
    assert {v.name for v in limited} == {"chips", "tables", "rounds", "round_index"}
    for v in limited:
        assert v.kinds is not None and v.kinds <= set(KINDS)
        for kind in sorted(set(KINDS) - v.kinds):
            for stream in ("round:T1-1", "table:T1", "account:ana", "tournament:t1", "chips:T1"):
                ev = SimpleNamespace(kind=kind, stream=stream, seq=1, payload={}, at="2026-11-28T12:00:00Z")
                assert v.handle(ev, ctx) == [], (v.name, kind, stream)  # type: ignore[arg-type]

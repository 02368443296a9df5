"""Two writers racing on one stream: one wins, the other gets a conflict, never a fork.
Runs on a SQLite file and on PostgreSQL, in separate processes."""

from __future__ import annotations

import multiprocessing

from ledger.ingest import check_batch, ingest_events, parse_lines
from ledger.producer import BatchBuilder
from ledger.store import ConflictError, Store
from ledger.verify import verify_ledger
from tests.conftest import dump_rows
from tests.helpers import ingest, make_producers


def _deposit_batch(ledger, p, ref: str) -> list[str]:  # type: ignore[no-untyped-def]
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.cage, "account:P1", "cash.deposit.v1", {"amount": 100, "currency": "EUR", "method": "cash", "reference": ref})
    return b.lines()


def test_both_checked_then_both_append_one_conflicts(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    a, b = _deposit_batch(ledger, p, "a"), _deposit_batch(ledger, p, "b")
    ev_a, rej_a, _ = check_batch(ledger.store, parse_lines(a))
    ev_b, rej_b, _ = check_batch(ledger.store, parse_lines(b))
    assert not rej_a and not rej_b  # both valid against the same head
    ledger.store.append(ev_a)
    before = dump_rows(ledger.store)
    try:
        ledger.store.append(ev_b)
    except ConflictError as exc:
        assert "another writer" in str(exc)
    else:
        raise AssertionError("second writer was not stopped")
    assert dump_rows(ledger.store) == before
    late = ingest(ledger.store, b)
    assert late.status == "rejected" and late.rejections[0].check == "chain"


def _writer(url: str, lines: list[str], barrier, results) -> None:  # type: ignore[no-untyped-def]
    try:
        store = Store.open(url)
        try:
            items = parse_lines(lines)
            barrier.wait(timeout=30)
            results.put(ingest_events(store, items).status)
        finally:
            store.close()
    except BaseException as exc:  # report, so the parent fails with the reason instead of hanging
        results.put(f"error: {exc!r}")
        raise


def test_racing_processes_never_fork_a_stream(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    ctx = multiprocessing.get_context("spawn")
    for round_no in range(5):
        batches = [_deposit_batch(ledger, p, f"r{round_no}w{i}") for i in range(2)]
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_writer, args=(ledger.url, lines, barrier, results)) for lines in batches]
        try:
            for proc in procs:
                proc.start()
            statuses = sorted(results.get(timeout=90) for _ in procs)
        finally:
            for proc in procs:
                proc.join(5)
                if proc.is_alive():
                    proc.kill()
        assert statuses.count("stored") == 1, statuses
        assert set(statuses) <= {"stored", "conflict", "rejected"}
    events = ledger.store.stream_events("account:P1")
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean


def test_bulk_heads_equal_per_stream_heads(ledger) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers import night_batch

    p = make_producers(ledger)
    ingest(ledger.store, night_batch(ledger.store, p, rounds=7).lines())
    streams = sorted({r.stream for r in ledger.store.rows()}) + ["round:none"]
    bulk = ledger.store.heads(streams)
    for s in streams:
        one = ledger.store.head(s)
        assert (bulk.get(s).hash if s in bulk else None) == (one.hash if one else None), s


def test_bulk_heads_probe_the_key_on_postgresql_whatever_the_statistics(ledger) -> None:  # type: ignore[no-untyped-def]
    """``Store.heads`` on PostgreSQL reads each named stream's last event through the
    primary key (stream, seq), also on a large table whose statistics were never gathered
    (a new ledger, a large batch just stored). Its first query, ``DISTINCT ON ... = ANY``,
    was planned there as a scan of the whole table and a sort: 12% of a 40,000-event
    ingest's time, where this query takes 5 to 6% (``ledger.store.pg_heads_sql``)."""
    import psycopg
    import pytest

    from ledger.store import DatabaseURL, pg_heads_sql

    if ledger.store.url.backend != "postgres":
        pytest.skip("a PostgreSQL planner question: SQLite's query is its own")
    db = DatabaseURL.parse(ledger.url)
    table = f'"{db.schema}".heads_plan'
    with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (LIKE {ledger.store.events_table} INCLUDING ALL)")
        conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")  # no statistics, ever
        conn.execute(f"INSERT INTO {table} (originator_id, originator_version, topic, state)"
                     " SELECT 'round:R' || (g / 20), g % 20 + 1, 'round.open.v1', '\\x00'::bytea"
                     " FROM generate_series(0, 199999) g")
        names = [f"round:R{i}" for i in range(0, 10_000, 40)] + ["round:none"]
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + pg_heads_sql(table), (names,)).fetchall())
        rows = conn.execute(pg_heads_sql(table), (names,)).fetchall()
    assert "Seq Scan" not in plan and "Index Scan Backward" in plan, plan
    assert sorted((r[0], r[1]) for r in rows) == sorted((n, 20) for n in names if n != "round:none")

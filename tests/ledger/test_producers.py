"""Concurrency (issue #7 point 6), on a SQLite file and on PostgreSQL: four producer
processes appending to four tables at once, and two to the same table, building each
batch on the same head and sending it together: no event lost, no chain forked, every
collision reported to the loser (conflict or chain refusal), which re-signs and sends
again. Throughput: benchmarks/concurrency.py."""

from __future__ import annotations

import multiprocessing

from ledger.house import create_key
from ledger.producer import BatchBuilder
from ledger.sim.load import produce
from ledger.verify import verify_ledger
from tests.helpers import ingest

BATCHES, SIZE = 12, 20


def _run(args: tuple, results) -> None:  # type: ignore[no-untyped-def,type-arg]
    try:
        results.put(produce(*args))
    except BaseException as exc:  # report, so the parent fails with the reason instead of hanging
        results.put({"error": repr(exc)})
        raise


def test_producers_on_different_and_the_same_tables_lose_nothing_and_never_fork(ledger) -> None:  # type: ignore[no-untyped-def]
    floor = create_key(ledger.store, ledger.keys, "floor:load", "floor")
    cage = create_key(ledger.store, ledger.keys, "cage:load", "cage")  # chips are issued by the cage
    b = BatchBuilder.for_store(ledger.store)
    for t in ("T0", "T1", "T2", "T3", "SHARED"):
        b.add(floor, f"table:{t}", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    jobs = [(ledger.url, str(ledger.keys.path), cage.key_id, cage.actor, f"chips:T{i}", BATCHES, SIZE)
            for i in range(4)]
    jobs += [(ledger.url, str(ledger.keys.path), cage.key_id, cage.actor, "chips:SHARED", BATCHES, SIZE, barrier)
             for _ in range(2)]
    procs = [ctx.Process(target=_run, args=(job, results)) for job in jobs]
    for proc in procs:
        proc.start()
    try:
        outcomes = [results.get(timeout=300) for _ in procs]
    finally:
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
    assert not [o for o in outcomes if "error" in o], outcomes
    for i in range(4):
        (mine,) = [o for o in outcomes if o["stream"] == f"chips:T{i}"]
        events = ledger.store.stream_events(f"chips:T{i}")
        assert mine["stored_events"] == len(events) == BATCHES * SIZE
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
    shared = [o for o in outcomes if o["stream"] == "chips:SHARED"]
    events = ledger.store.stream_events("chips:SHARED")
    assert sum(o["stored_events"] for o in shared) == len(events) == 2 * BATCHES * SIZE  # nothing lost
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # one chain, no fork
    collisions = sum(o["conflicts"] + o["refused"] for o in shared)
    assert collisions >= 1 and all(r for o in shared for r in o["reasons"])  # the losers were told why
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean

"""Concurrent producers' throughput (issue #7 point 6): one JSON object.

    python benchmarks/concurrency.py [--batches N] [--size N] [--json]

For each backend (a SQLite file; PostgreSQL at 127.0.0.1:5432 in a fresh schema when it
answers), the same work twice, in the same run: one producer process appending
4 x N batches of chip buy-ins to one table (the baseline), then four producer processes
appending N batches each to four tables at once (``ledger.sim.load.produce``: every batch
through ingest, one transaction each). Figures: events/s of each, and the ratio of the
concurrent run to the single producer. SQLite serializes writers on the file lock;
PostgreSQL on the ledger's advisory lock, so the ratio says what concurrency buys (the
checks run in parallel, the appends one at a time).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ledger.house import PublicDir, create_key, init_ledger  # noqa: E402
from ledger.ingest import ingest_lines  # noqa: E402
from ledger.keys import KeyDirectory  # noqa: E402
from ledger.producer import BatchBuilder  # noqa: E402
from ledger.sim.load import produce  # noqa: E402
from ledger.store import Store  # noqa: E402


def _job(args: tuple[Any, ...]) -> dict[str, Any]:
    return produce(*args)


def measure(url: str, tmp: Path, batches: int, size: int) -> dict[str, Any]:
    keys = KeyDirectory(tmp / "keys")
    with Store.open(url, create=True) as store:
        init_ledger(store, keys, PublicDir(tmp / "public"), "bench.pitboss/load")
        floor = create_key(store, keys, "floor:bench", "floor")
        cage = create_key(store, keys, "cage:bench", "cage")  # chips are issued by the cage
        b = BatchBuilder.for_store(store)
        for t in ("SOLO", "T0", "T1", "T2", "T3"):
            b.add(floor, f"table:{t}", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
        assert ingest_lines(store, b.lines()).status == "stored"
    ctx = multiprocessing.get_context("spawn")
    common = (url, str(keys.path), cage.key_id, cage.actor)
    with ctx.Pool(1) as pool:
        t = time.perf_counter()
        solo = pool.map(_job, [(*common, "chips:SOLO", 4 * batches, size)])
        solo_s = time.perf_counter() - t
    with ctx.Pool(4) as pool:
        t = time.perf_counter()
        four = pool.map(_job, [(*common, f"chips:T{i}", batches, size) for i in range(4)])
        four_s = time.perf_counter() - t
    solo_events = sum(r["stored_events"] for r in solo)
    four_events = sum(r["stored_events"] for r in four)
    return {"events_each_run": solo_events, "one_producer_events_per_s": round(solo_events / solo_s),
            "four_producers_events_per_s": round(four_events / four_s),
            "ratio_four_to_one": round((four_events / four_s) / (solo_events / solo_s), 3),
            "conflicts": sum(r["conflicts"] + r["refused"] for r in four)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=25)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out: dict[str, Any] = {"cores": multiprocessing.cpu_count()}
    with tempfile.TemporaryDirectory() as d:
        out["sqlite"] = measure(f"sqlite:///{d}/bench.db", Path(d), args.batches, args.size)
    from benchmarks.projections import drop_schema, postgres_problem

    problem = postgres_problem()
    if problem:
        out["postgres"] = problem
    else:
        url = f"postgresql://postgres@127.0.0.1/test?schema=bench_{uuid.uuid4().hex[:8]}"
        try:
            with tempfile.TemporaryDirectory() as d:
                out["postgres"] = measure(url, Path(d), args.batches, args.size)
        finally:
            drop_schema(url)
    print(json.dumps(out, indent=2, sort_keys=True) if args.json else out)


if __name__ == "__main__":
    main()

"""Projection and reconciliation benchmarks (issue #5): one JSON object.

    python benchmarks/projections.py [--rounds N] [--json]

For each backend (a SQLite file; PostgreSQL at 127.0.0.1:5432 in a fresh schema when it
answers), a demo day of N rounds is signed and ingested through the producer path
(``ledger.demo``), then timed: rebuilding every view from zero (events/s), reconciling
the day (seconds: the whole ledger re-proved, every round replayed, every view compared
with a recomputation, the AML scan), and the AML scan alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ledger.demo import run_demo  # noqa: E402
from ledger.house import PublicDir, init_ledger  # noqa: E402
from ledger.keys import KeyDirectory  # noqa: E402
from ledger.store import Store  # noqa: E402
from ledger.timeutil import utc_now  # noqa: E402
from projections.aml import scan_store  # noqa: E402
from projections.reconcile import reconcile_day  # noqa: E402
from projections.runner import ViewStore, rebuild  # noqa: E402


def measure(url: str, tmp: Path, rounds: int) -> dict[str, Any]:
    store = Store.open(url, create=True)
    keys, public = KeyDirectory(tmp / "keys"), PublicDir(tmp / "public")
    try:
        init_ledger(store, keys, public, "bench.pitboss/ledger")
        t = time.perf_counter()
        summary = run_demo(store, keys, public, tmp / "out", seed=1, hands=rounds)
        ingest_s = time.perf_counter() - t
        events = store.max_notification_id()
        with ViewStore(store.url) as vs:
            t = time.perf_counter()
            rebuild(store, vs)
            rebuild_s = time.perf_counter() - t
        t = time.perf_counter()
        report = reconcile_day(store, utc_now()[:10], public_dir=public.path)
        reconcile_s = time.perf_counter() - t
        t = time.perf_counter()
        flags = scan_store(store)
        aml_s = time.perf_counter() - t
    finally:
        store.close()
    return {"rounds": summary["rounds"], "ledger_events": events, "demo_sign_and_ingest_s": round(ingest_s, 2),
            "rebuild_events_per_s": round(events / rebuild_s), "rebuild_s": round(rebuild_s, 2),
            "reconcile_s": round(reconcile_s, 2), "reconciled": report["ok"], "aml_scan_s": round(aml_s, 2),
            "aml_flags": len(flags)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=100_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out: dict[str, Any] = {"goal_rounds": 100_000}
    with tempfile.TemporaryDirectory() as d:
        out["sqlite"] = measure(f"sqlite:///{d}/bench.db", Path(d) / "s", args.rounds)
    try:
        import psycopg

        psycopg.connect("host=127.0.0.1 dbname=test user=postgres connect_timeout=3").close()
    except Exception as exc:  # noqa: BLE001 - any failure to connect means: no PostgreSQL here
        out["postgres"] = f"skipped: no PostgreSQL at 127.0.0.1:5432 ({type(exc).__name__})"
    else:
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        with tempfile.TemporaryDirectory() as d:
            out["postgres"] = measure(f"postgresql://postgres@127.0.0.1/test?schema={schema}", Path(d), args.rounds)
    print(json.dumps(out, indent=2, sort_keys=True) if args.json else out)


if __name__ == "__main__":
    main()

"""Projection and reconciliation benchmarks (issue #5): one JSON object.

    python benchmarks/projections.py [--rounds N] [--json]

For each backend (a SQLite file; PostgreSQL at 127.0.0.1:5432 in a fresh schema when it
answers), a demo day of N rounds is signed and ingested through the producer path
(``ledger.sim.demo``), then timed: rebuilding every view from zero (events/s), reconciling
the day (seconds: the whole ledger re-proved, every round replayed, every view compared
with a recomputation, the AML scan), and the AML scan alone. Baselines measured in the
same run on the same ledger: reading every stored event and decoding its JSON (what any
rebuild must at least do), and ``verify_ledger`` alone (the integrity part of the
reconciliation); the ratios say what the projections and the rest of the reconciliation
cost on top.

    python benchmarks/projections.py --rounds 100000 --backend sqlite --json
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

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ledger.house import PublicDir, init_ledger  # noqa: E402
from ledger.keys import KeyDirectory  # noqa: E402
from ledger.sim.demo import run_demo  # noqa: E402
from ledger.store import Store  # noqa: E402
from ledger.timeutil import utc_now  # noqa: E402
from ledger.verify import verify_ledger  # noqa: E402
from projections.aml import scan_store  # noqa: E402
from projections.reconcile import reconcile_day  # noqa: E402
from projections.runner import ViewStore, rebuild  # noqa: E402


def say(msg: str) -> None:
    """Progress on stderr (a 100,000-round day runs for an hour or more); stdout is the JSON."""
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())} UTC] {msg}", file=sys.stderr, flush=True)


def measure(url: str, tmp: Path, rounds: int) -> dict[str, Any]:
    say(f"{url.split('?')[0]}: signing and ingesting a demo day of {rounds} rounds")
    store = Store.open(url, create=True)
    keys, public = KeyDirectory(tmp / "keys"), PublicDir(tmp / "public")
    try:
        init_ledger(store, keys, public, "bench.pitboss/ledger")
        t = time.perf_counter()
        summary = run_demo(store, keys, public, seed=1, hands=rounds, progress=say)
        ingest_s = time.perf_counter() - t
        events = store.max_notification_id()
        say("reading and decoding every event (baseline)")
        t = time.perf_counter()
        read = sum(1 for row in store.rows() if orjson.loads(row.state))
        read_s = time.perf_counter() - t
        say("verify_ledger alone (baseline)")
        t = time.perf_counter()
        verify_ledger(store, public_dir=public.path, save_state=False)
        verify_s = time.perf_counter() - t
        say("rebuilding every view from zero")
        with ViewStore(store.url) as vs:
            t = time.perf_counter()
            rebuild(store, vs)
            rebuild_s = time.perf_counter() - t
        say("reconciling the day")
        t = time.perf_counter()
        from ledger.log.note import VerifierKey
        from ledger.trust import TrustRoots

        roots = TrustRoots(anchor=bytes.fromhex(public.anchor_file.read_text().strip()),  # the operator's own, pinned
                           log_key=VerifierKey.parse(public.vkey_file.read_text()))
        report = reconcile_day(store, utc_now()[:10], roots=roots, public_dir=public.path)
        reconcile_s = time.perf_counter() - t
        say("the AML scan alone")
        t = time.perf_counter()
        flags = scan_store(store)
        aml_s = time.perf_counter() - t
    finally:
        store.close()
    return {"rounds": summary["rounds"], "ledger_events": events, "demo_sign_and_ingest_s": round(ingest_s, 2),
            "rebuild_events_per_s": round(events / rebuild_s), "rebuild_s": round(rebuild_s, 2),
            "reconcile_s": round(reconcile_s, 2), "reconciled": report["ok"], "aml_scan_s": round(aml_s, 2),
            "aml_flags": len(flags), "baseline_read_events_per_s": round(read / read_s),
            "baseline_verify_s": round(verify_s, 2),
            "ratio_rebuild_to_read": round((events / rebuild_s) / (read / read_s), 3),
            "ratio_reconcile_to_verify": round(reconcile_s / verify_s, 3)}


def drop_schema(url: str) -> None:
    """A benchmark's PostgreSQL schema goes when its figures are taken (millions of rows)."""
    import psycopg

    from ledger.store import DatabaseURL

    db = DatabaseURL.parse(url)
    with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{db.schema}" CASCADE')


def postgres_problem() -> str | None:
    try:
        import psycopg

        psycopg.connect("host=127.0.0.1 dbname=test user=postgres connect_timeout=3").close()
    except Exception as exc:  # noqa: BLE001 - any failure to connect means: no PostgreSQL here
        return f"skipped: no PostgreSQL at 127.0.0.1:5432 ({type(exc).__name__})"
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=100_000)
    ap.add_argument("--backend", choices=("both", "sqlite", "postgres"), default="both")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out: dict[str, Any] = {"goal_rounds": 100_000}
    if args.backend in ("both", "sqlite"):
        with tempfile.TemporaryDirectory() as d:
            out["sqlite"] = measure(f"sqlite:///{d}/bench.db", Path(d) / "s", args.rounds)
    if args.backend in ("both", "postgres"):
        problem = postgres_problem()
        if problem:
            out["postgres"] = problem
        else:
            schema = f"bench_{uuid.uuid4().hex[:8]}"
            url = f"postgresql://postgres@127.0.0.1/test?schema={schema}"
            try:
                with tempfile.TemporaryDirectory() as d:
                    out["postgres"] = measure(url, Path(d), args.rounds)
            finally:
                drop_schema(url)
    print(json.dumps(out, indent=2, sort_keys=True) if args.json else out)


if __name__ == "__main__":
    main()

"""Peak memory and time of ``pitboss ingest`` against the size of what it ingests (issue
13 point 8): a file of signed events of about ``--mb`` MB, ingested as one batch (or in
``--batch-size`` batches), in a child process whose peak resident memory is read from the
kernel: its peak (``VmHWM``) is reset just before the ingest starts (``/proc/self/clear_refs``),
after the code is imported, the store opened and the key ring read, so peak minus the
resident memory at that moment is what the ingest of the batch costs.

    python benchmarks/ingest_memory.py --mb 10 [--batch-size N] [--line-kb K] [--backend sqlite|postgres] --json

Prints JSON: bytes of input, events, peak RSS of the ingest and of the baseline, their
difference per byte of the largest batch (the goal: at most 2), and seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ledger.house import PublicDir, create_key, init_ledger  # noqa: E402
from ledger.keys import KeyDirectory  # noqa: E402
from ledger.producer import BatchBuilder  # noqa: E402
from ledger.store import Store  # noqa: E402

CHILD = """
import sys, time
from ledger.store import Store
from ledger.ingest import file_batches, ingest_batches
from ledger.keyring import load_keyring

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

url, path, batch = sys.argv[1], sys.argv[2], sys.argv[3]
with Store.open(url) as store:
    load_keyring(store)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak (VmHWM) starts again from here: what the ingest itself adds
    base = status("VmRSS")
    started = time.perf_counter()
    with open(path, "rb") as f:
        reports = ingest_batches(store, file_batches(f, int(batch) or None))
    ok = all(r.status == "stored" for r in reports)
    print(status("VmHWM"), base, time.perf_counter() - started, ok, reports[0].seconds)
"""


def write_events(store: Store, keys: KeyDirectory, path: Path, megabytes: float, line_kb: int = 0) -> tuple[int, int]:
    """About ``megabytes`` MB of JSONL: deposits to many accounts with long references (a
    stream each: the most the ledger holds per byte), or with ``line_kb``, rounds whose
    opening records house options of that many KB (the largest lines there are)."""
    cage = create_key(store, keys, "cage:mem", "cage")
    floor = create_key(store, keys, "floor:mem", "floor")
    dealer = create_key(store, keys, "dealer:mem", "dealer", scope=["table:MEM"])
    if line_kb:
        b = BatchBuilder.for_store(store)
        b.add(floor, "table:MEM", "table.open.v1", {"game": "fan-tan", "seats": 7, "currency": "EUR"})
        b.write_jsonl(path)
    target = int(megabytes * 1_000_000)
    written = events = 0
    b = BatchBuilder.for_store(store)  # one builder: each stream's seq runs on through the file
    with path.open("a" if line_kb else "w", encoding="utf-8") as f:
        while written < target:
            b.events.clear()
            for _ in range(2000 if not line_kb else max(1, 2000 // line_kb)):
                events += 1
                if line_kb:
                    rid = f"round:MEM-{events}"
                    b.add(dealer, rid, "round.open.v1", {"table": "MEM", "game": "fan-tan",
                                                         "rules": {"note": "x" * (line_kb * 1000 - 600)}})
                    b.add(dealer, rid, "round.close.v1", {"status": "complete"})
                    continue
                b.add(cage, f"account:M{events % 50_000}", "cash.deposit.v1",
                      {"amount": 100 + events, "currency": "EUR", "method": "cash",
                       "reference": f"r{events}-" + "x" * 120})
            text = "".join(line + "\n" for line in b.lines())
            f.write(text)
            written += len(text.encode())
    return written, events


def child(url: str, path: str, batch: int) -> tuple[int, int, float, bool, float]:
    """(peak RSS, RSS just before the ingest, seconds, all stored, seconds of the first batch)."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", CHILD, url, path, str(batch)], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    return int(out[0]), int(out[1]), float(out[2]), out[3] == "True", float(out[4])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=10)
    ap.add_argument("--batch-size", type=int, default=0, help="lines a batch (0: the whole file is one batch)")
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--line-kb", type=int, default=0, help="rounds whose openings are this many KB (0: deposits)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.backend == "sqlite":
            url = f"sqlite:///{tmp / 'ledger.db'}"
        else:
            url = f"postgresql://postgres@127.0.0.1:5432/test?schema=mem_{os.getpid()}"
        keys = KeyDirectory(tmp / "keys")
        with Store.open(url, create=True) as store:
            init_ledger(store, keys, PublicDir(tmp / "public"), "bench.pitboss/memory")
            size, events = write_events(store, keys, tmp / "in.jsonl", args.mb, args.line_kb)
            size = (tmp / "in.jsonl").stat().st_size
        peak, base_rss, seconds, ok, _ = child(url, str(tmp / "in.jsonl"), args.batch_size)
        batch_bytes = size  # the largest batch's bytes
        if args.batch_size:
            sizes, current = [], 0
            with (tmp / "in.jsonl").open("rb") as f:
                for n, line in enumerate(f, start=1):
                    current += len(line)
                    if n % args.batch_size == 0:
                        sizes.append(current)
                        current = 0
            batch_bytes = max(sizes + [current])
        if args.backend == "postgres":
            from tests.conftest import drop_pg_schema

            drop_pg_schema(url)
    out = {
        "backend": args.backend, "line_kb": args.line_kb or None, "input_bytes": size, "events": events, "batch_bytes": batch_bytes,
        "batch_size": args.batch_size or None, "stored": ok, "seconds": round(seconds, 2),
        "events_per_s": round(events / seconds), "peak_rss": peak, "baseline_rss": base_rss,
        "peak_over_batch": round((peak - base_rss) / batch_bytes, 2),
        "self_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    print(json.dumps(out, indent=None if args.json else 2))


if __name__ == "__main__":
    main()

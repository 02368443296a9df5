"""Peak memory and time of ``pitboss ingest`` against the size of what it ingests (issue
13 point 8): a file of signed events of about ``--mb`` MB, ingested as one batch (or in
``--batch-size`` batches), in a child process whose peak resident memory is read from the
kernel: its peak (``VmHWM``) is reset just before the ingest starts (``/proc/self/clear_refs``),
after the code is imported, the store opened and the key ring read, so peak minus the
resident memory at that moment is what the ingest of the batch costs.

    python benchmarks/ingest_memory.py --mb 10 [--batch-size N] [--backend sqlite|postgres] --json

Prints JSON: bytes of input, events, peak RSS of the ingest and of the baseline, their
difference per byte of the largest batch (the goal: at most 2), seconds, and the time to
the first refusal of a file whose first line is bad (streaming: it does not wait for the
whole file to be read).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
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


def write_events(store: Store, keys: KeyDirectory, path: Path, megabytes: float) -> tuple[int, int]:
    """Deposits to many accounts with long references: about ``megabytes`` MB of JSONL."""
    cage = create_key(store, keys, "cage:mem", "cage")
    target = int(megabytes * 1_000_000)
    written = events = 0
    with path.open("w", encoding="utf-8") as f:
        while written < target:
            b = BatchBuilder.for_store(store)
            for _ in range(2000):
                events += 1
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
            size, events = write_events(store, keys, tmp / "in.jsonl", args.mb)
        peak, base_rss, seconds, ok, _ = child(url, str(tmp / "in.jsonl"), args.batch_size)
        lines = (tmp / "in.jsonl").read_bytes().splitlines(keepends=True)
        batch_bytes = size if not args.batch_size else max(
            sum(len(x) for x in lines[i:i + args.batch_size]) for i in range(0, len(lines), args.batch_size))
        bad = tmp / "bad.jsonl"
        bad.write_bytes(b"{not json\n" + b"".join(lines))
        del lines
        started = time.perf_counter()
        _, _, _, _, first_refusal = child(url, str(bad), 0)
        refusal_wall = time.perf_counter() - started
        if args.backend == "postgres":
            from tests.conftest import drop_pg_schema

            drop_pg_schema(url)
    out = {
        "backend": args.backend, "input_bytes": size, "events": events, "batch_bytes": batch_bytes,
        "batch_size": args.batch_size or None, "stored": ok, "seconds": round(seconds, 2),
        "events_per_s": round(events / seconds), "peak_rss": peak, "baseline_rss": base_rss,
        "peak_over_batch": round((peak - base_rss) / batch_bytes, 2),
        "bad_first_line_refused_in_s": round(first_refusal, 3), "bad_first_line_wall_s": round(refusal_wall, 2),
        "self_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    print(json.dumps(out, indent=None if args.json else 2))


if __name__ == "__main__":
    main()

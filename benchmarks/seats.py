"""Per-stream state at ingest (issue 13 point 8): N events on one seat stream must cost
O(N), not a re-read of the stream for each event. Prints JSON: for each size, the seconds
to ingest that many ``seat.join``/``seat.leave`` events of one player in batches of 1,000
on a fresh SQLite ledger, and the seconds per 1,000 for the first and the last batch (flat
when the cost is linear).

    python benchmarks/seats.py [--sizes 1000,10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ledger.house import PublicDir, create_key, init_ledger  # noqa: E402
from ledger.ingest import IngestSession  # noqa: E402
from ledger.keys import KeyDirectory  # noqa: E402
from ledger.producer import BatchBuilder  # noqa: E402
from ledger.store import Store  # noqa: E402

BATCH = 1000


def run(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(f"sqlite:///{tmp}/seats.db", create=True)
        keys = KeyDirectory(Path(tmp) / "keys")
        init_ledger(store, keys, PublicDir(Path(tmp) / "public"), "bench.example/seats")
        game = create_key(store, keys, "game:bench", "game", scope=["table:*", "shoe:*"])
        b = BatchBuilder.for_store(store)
        for k in range(n):
            payload = {"table": "T1", "blind_level": "1/2"}
            if k % 2:
                payload.update(hands_played=20, others_seated=3)
            b.add(game, "seat:P1", "seat.leave.v1" if k % 2 else "seat.join.v1", payload)
        lines = b.lines()
        session = IngestSession(store)
        per_batch = []
        started = time.perf_counter()
        for i in range(0, n, BATCH):
            t = time.perf_counter()
            report = session.send(lines[i:i + BATCH])
            assert report.status == "stored", report.message
            per_batch.append(time.perf_counter() - t)
        total = time.perf_counter() - started
        store.close()
    return {"events": n, "seconds": round(total, 3), "events_per_s": round(n / total),
            "first_batch_s": round(per_batch[0], 3), "last_batch_s": round(per_batch[-1], 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = {"seat_stream": [run(int(n)) for n in args.sizes.split(",")]}
    print(json.dumps(out, indent=None if args.json else 2))


if __name__ == "__main__":
    main()

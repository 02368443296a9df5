"""Concurrent producers (issue #7 point 6): what each producer process does, shared by
the concurrency test and ``benchmarks/concurrency.py``.

``produce(url, keys_dir, key_id, actor, stream, batches, size, barrier)`` appends
``batches`` batches of ``size`` chip buy-ins (signed by a cage key) to ``stream`` (a ``chips:<table>`` stream
whose table is open), each through ingest (one ``IngestSession``), as a producer would: on a conflict or a
chain refusal (another writer got there first) it re-reads the head, re-signs and sends
again, counting the refusals. With a ``barrier``, writers of the same stream build each
batch on the same head and send it together, so they collide. Returns counts.
"""

from __future__ import annotations

import time
from typing import Any

from ledger.ingest import IngestSession
from ledger.keys import KeyDirectory
from ledger.producer import BatchBuilder
from ledger.store import Store


def produce(url: str, keys_dir: str, key_id: str, actor: str, stream: str, batches: int, size: int,
            barrier: Any = None) -> dict[str, Any]:
    signer = KeyDirectory(keys_dir).load(key_id, actor)
    out: dict[str, Any] = {"stream": stream, "stored_events": 0, "stored_batches": 0, "conflicts": 0,
                           "refused": 0, "seconds": 0.0, "reasons": []}
    with Store.open(url) as store:
        session = IngestSession(store)
        start = time.perf_counter()
        for n in range(batches):
            together = barrier  # the first attempt of each batch is sent with the other writer
            while True:
                b = BatchBuilder.for_store(store)
                for k in range(size):
                    b.add(signer, stream, "chips.buy_in.v1", {"player": f"{actor.split(':')[-1]}-{n}-{k}",
                                                              "amount": 100})
                if together is not None:
                    together.wait(timeout=60)
                report = session.send(b.lines())
                if report.status == "stored":
                    out["stored_events"] += report.stored
                    out["stored_batches"] += 1
                    break
                if report.status == "conflict":
                    out["conflicts"] += 1
                elif report.rejections and report.rejections[0].check == "chain":
                    out["refused"] += 1
                else:  # not a collision: retrying would refuse it again
                    raise RuntimeError(f"batch refused: {report.message} {[str(r) for r in report.rejections[:1]]}")
                out["reasons"].append(report.message if report.status == "conflict" else
                                      (report.rejections[0].reason if report.rejections else report.message))
                together = None  # after a collision, retry on its own
        out["seconds"] = time.perf_counter() - start
    return out

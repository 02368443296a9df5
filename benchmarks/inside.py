"""Where verify's and ingest's core time goes, row by row, against a signature: one JSON
object (issue 16's two signature-bound goals, timed from inside).

    python benchmarks/inside.py [--quick] [--json]

``benchmarks/run.py`` says how far verify and ingest are from their goals; this says what
must shrink to reach them. On a fresh SQLite file, the benchmark's own ``ledger``
workload (``run.WORKLOADS``, 40,000 events; 10,000 with ``--quick``) is built, read back
and ingested; then:

- **verify:** three times five ``verify_ledger`` runs on it, each between two all-cores
  bare libsodium figures (``run.all_cores_libsodium``, through the fastest entry point:
  ``run.pick_libsodium``, first), as ``run.py`` pairs them;
- **ingest:** the workload ingested three times into fresh files, each in four quarters
  by ``run.py``'s own ``_ingest_paired`` (``ingest_batches``, as ``pitboss ingest
  --batch-size 1000`` ingests it), each quarter between two such figures, this script's
  clock around each; the limit is ``run.py``'s, the smaller of
  the libsodium figure and eventsourcing's recorder inserting the identical rows
  (measured once a file).

Around each timed run, the core time of this process and of its child processes (the
verify workers and ingest's signature checker, read from ``/proc``: Linux only) gives a
row's core time. With every core busy, a row's share of the signature is ``cores`` over
the all-cores libsodium rate, and the rest of the row's time is the work beside the
signature (decoding, hashing, judging, storing, the processes' pipes). A goal ``g`` of
the limit needs a row in at most ``cores / (g x limit)`` of core time, so the work
beside each signature at most that less the signature: ``needed_beside_us``. Each figure
is printed per run and as median and range.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ledger.keys import libsodium_in_use  # noqa: E402
from ledger.store import DatabaseURL, Store  # noqa: E402
from ledger.verify import verify_ledger  # noqa: E402

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _children() -> dict[int, float]:
    """This process's live children: pid -> core seconds, from /proc/<pid>/stat (fields 14
    and 15, user and system time, counted after the command's parenthesis)."""
    me, out = os.getpid(), {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == me:
            out[int(name)] = (int(fields[11]) + int(fields[12])) / _TICKS
    return out


class CoreClock:
    """Core seconds spent by this process and its children between ``start`` and ``stop``:
    this process's own (``getrusage``), children reaped meanwhile (``RUSAGE_CHILDREN``: the
    verify workers; less what one alive at the start had spent by then) and children alive
    at the end (``/proc``: ingest's checker, started before or during the timed run)."""

    def start(self) -> None:
        own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        self.own = own.ru_utime + own.ru_stime
        self.faults = own.ru_minflt
        self.reaped = reaped.ru_utime + reaped.ru_stime
        self.live = _children()
        self.wall = time.perf_counter()

    def stop(self) -> dict[str, float]:
        wall = time.perf_counter() - self.wall
        own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        live = _children()
        others = reaped.ru_utime + reaped.ru_stime - self.reaped  # a reaped child's whole life ...
        others += sum(t - self.live.get(pid, 0.0) for pid, t in live.items())
        others -= sum(t for pid, t in self.live.items() if pid not in live)  # ... less what it had at start
        return {"wall_s": wall, "own_s": own.ru_utime + own.ru_stime - self.own, "children_s": others,
                "own_minor_faults": own.ru_minflt - self.faults}


def _figures(run: dict[str, float], events: int, sodium: float, limit: float, goal: float, cores: int
             ) -> dict[str, float]:
    row = (run["own_s"] + run["children_s"]) / events * 1e6
    signature = cores / sodium * 1e6
    rate = events / run["wall_s"]
    return {
        "events_per_s": round(rate),
        "libsodium_all_cores_per_s": round(sodium),
        "limit_per_s": round(limit),
        "ratio": round(rate / limit, 3),
        "row_us": round(row, 1),
        "own_us": round(run["own_s"] / events * 1e6, 1),
        "children_us": round(run["children_s"] / events * 1e6, 1),
        "signature_us": round(signature, 1),
        "beside_us": round(row - signature, 1),
        "needed_beside_us": round(cores / (goal * limit) * 1e6 - signature, 1),
        "busy": round((run["own_s"] + run["children_s"]) / (run["wall_s"] * cores), 3),
        "own_minor_faults": int(run["own_minor_faults"]),
    }


def _summary(runs: list[dict[str, float]]) -> dict[str, Any]:
    keys = [k for k in runs[0] if k not in ("libsodium_all_cores_per_s", "limit_per_s")]
    return {k: {"median": round(statistics.median(r[k] for r in runs), 3), "min": min(r[k] for r in runs),
                "max": max(r[k] for r in runs)} for k in keys}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10,000 events, fewer runs (a check that it works)")
    ap.add_argument("--json", action="store_true", help="print only the JSON object (no progress on stderr)")
    args = ap.parse_args()
    if not Path("/proc/self/stat").exists():
        raise SystemExit("benchmarks/inside.py reads child processes' core time from /proc: Linux only")
    import run as bench  # benchmarks/run.py (this script's folder is first on the path), whose set-up and baselines this shares
    goals = {"verify": bench.GOALS["verify_vs_all_cores_libsodium"], "ingest_sqlite": bench.GOALS["ingest_sqlite_vs_limit"]}
    cores = os.cpu_count() or 1
    n_events = 10_000 if args.quick else 40_000
    n_sig = 20_000 if args.quick else 60_000
    files, verifies = (1, 2) if args.quick else (3, 5)

    def note(msg: str) -> None:
        if not args.json:
            print(f"[{time.strftime('%H:%M:%S', time.gmtime())} UTC] {msg}", file=sys.stderr, flush=True)

    note("choosing the fastest libsodium entry point on this machine ...")
    out: dict[str, Any] = {"machine": {"cores": cores, "cpu": bench.cpu(), "python": sys.version.split()[0],
                                       "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]},
                           "events": n_events, "goals": goals}
    out["libsodium"] = {**bench.pick_libsodium(), "pitboss_checks_with": libsodium_in_use()}
    clock = CoreClock()
    ingest_runs: list[dict[str, float]] = []
    verify_runs: list[dict[str, float]] = []
    inserts: list[int] = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for f in range(files):
            note(f"building {n_events:,} signed events, file {f + 1} of {files} ...")
            url = f"sqlite:///{tmp / f'ledger-{f}.db'}"
            store, keys = bench._fresh(url, tmp, f"inside-{f}")
            batches = bench._read_back(bench._build_batches(store, keys, n_events, "ledger"), tmp / f"{f}.jsonl")
            env = DatabaseURL.parse(f"sqlite:///{tmp / f'baseline-{f}.db'}").env()
            env.pop("APPLICATION_RECORDER_TOPIC", None)  # the library's own recorder, as run.py measures it
            insert = bench._baseline_recorder_insert(env, bench._stored_rows(batches))
            inserts.append(round(insert))
            note(f"ingest in {bench.INGEST_SEGMENTS} segments, file {f + 1} of {files} ...")
            paired = bench._ingest_paired(store, batches, n_sig, cores, clock)
            for run, events, mean in zip(paired["segment_clock"], paired["segment_events"],
                                         paired["libsodium_around"]):
                ingest_runs.append(_figures(run, events, mean, min(mean, insert), goals["ingest_sqlite"], cores))
            store.close()
            if f == 0:
                note(f"verify, {3 * verifies} runs each between two libsodium figures ...")
                store = Store.open(url)  # a settled file, reopened, as run.py verifies it
                for _ in range(3):
                    sodium = [bench.all_cores_libsodium(n_sig, cores)[0]]
                    for _ in range(verifies):
                        clock.start()
                        rep = verify_ledger(store, public_dir=None)
                        run = clock.stop()
                        assert rep.clean, rep.problems[:3]
                        sodium.append(bench.all_cores_libsodium(n_sig, cores)[0])
                        mean = (sodium[-1] + sodium[-2]) / 2
                        verify_runs.append(_figures(run, rep.events, mean, mean, goals["verify"], cores))
                store.close()
    out["verify"] = {"summary": _summary(verify_runs), "runs": verify_runs}
    out["ingest_sqlite"] = {"summary": _summary(ingest_runs), "runs": ingest_runs,
                            "baseline_recorder_insert_per_s": inserts}
    out["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

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
import gc
import json
import os
import shutil
import statistics
import subprocess
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
from ledger.verify import verify_ledger  # noqa: E402
from projections.aml import scan_store  # noqa: E402
from projections.reconcile import reconcile_day  # noqa: E402
from projections.runner import ViewStore, rebuild  # noqa: E402

_SAID: list[str] = []


def say(msg: str, done: int | None = None, total: int | None = None) -> None:
    """Progress on stderr (a 100,000-round day runs for an hour or more); stdout is the JSON.
    Takes ``run_demo``'s progress calls (message, done, total): each message once, with the
    count it was first reported at."""
    if _SAID and _SAID[-1] == msg:
        return
    _SAID.append(msg)
    count = f" ({done:,})" if done is not None else ""
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())} UTC] {msg}{count}", file=sys.stderr, flush=True)


def measure(url: str, tmp: Path, rounds: int) -> dict[str, Any]:
    say(f"{url.split('?')[0]}: signing and ingesting a demo day of {rounds} rounds")
    built = build_day(url, tmp, rounds)
    store = Store.open(url)
    public = PublicDir(tmp / "public")
    try:
        ingest_s, events = built["build_s"], built["events"]
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
        report = reconcile_day(store, built["day"], roots=roots, public_dir=public.path)
        reconcile_s = time.perf_counter() - t
        say("the AML scan alone")
        t = time.perf_counter()
        flags = scan_store(store)
        aml_s = time.perf_counter() - t
    finally:
        store.close()
    return {"rounds": built["rounds"], "ledger_events": events, "demo_sign_and_ingest_s": round(ingest_s, 2),
            "rebuild_events_per_s": round(events / rebuild_s), "rebuild_s": round(rebuild_s, 2),
            "reconcile_s": round(reconcile_s, 2), "reconciled": report["ok"], "aml_scan_s": round(aml_s, 2),
            "aml_flags": len(flags), "baseline_read_events_per_s": round(read / read_s),
            "baseline_verify_s": round(verify_s, 2),
            "ratio_rebuild_to_read": round((events / rebuild_s) / (read / read_s), 3),
            "ratio_reconcile_to_verify": round(reconcile_s / verify_s, 3)}


def installed_env() -> dict[str, str]:
    """The environment a command is timed in: as an installed program runs, with its
    modules' bytecode cached (``pip install`` compiles it; Python caches it on first use).
    Some machines set ``PYTHONDONTWRITEBYTECODE``, which makes every start compile every
    module from source (about 0.15 s for ``pitboss evidence``): not what a user waits for."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cli(url: str, tmp: Path) -> tuple[list[str], dict[str, str]]:
    """``pitboss`` for a day built under ``tmp``, with the operator's roots pinned."""
    public = PublicDir(tmp / "public")
    exe = Path(sys.executable).parent / "pitboss"
    argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "cli.main"]
    env = {**installed_env(), "PITBOSS_ANCHOR": public.anchor_file.read_text().strip(),
           "PITBOSS_LOG_KEY": public.vkey_file.read_text().strip(), "XDG_STATE_HOME": str(tmp / "state")}
    return argv + ["--db", url, "--keys", str(tmp / "keys"), "--public", str(public.path)], env


def build_day(url: str, tmp: Path, rounds: int) -> dict[str, Any]:
    store = Store.open(url, create=True)
    keys, public = KeyDirectory(tmp / "keys"), PublicDir(tmp / "public")
    try:
        init_ledger(store, keys, public, "bench.pitboss/ledger")
        t = time.perf_counter()
        summary = run_demo(store, keys, public, seed=1, hands=rounds, progress=say)
        last = store.rows_of_kind("round.close.v1")[-1]  # the day the demo dealt (a run may cross midnight)
        return {"rounds": summary["rounds"], "events": store.max_notification_id(),
                "build_s": round(time.perf_counter() - t, 1), "day": orjson.loads(last.state)["at"][:10]}
    finally:
        store.close()


def day_figures(url: str, tmp: Path, rounds: int, sodium_all_cores: float) -> dict[str, Any]:
    """A demo day of ``rounds`` rounds, then: reconcile against its signature-bound time
    (the day's events / ``sodium_all_cores``, bare libsodium verifications per second on all
    cores, measured by the caller in the same run); the view rebuild against reading and
    decoding the same rows; ``pitboss evidence`` for one round, as the command a support
    agent runs (median of three, each into a new directory, from the tiles the demo's
    checkpoint published, after one untimed run: ``installed_env``), then once more with the
    tiles removed (a pass over the log)."""
    built = build_day(url, tmp, rounds)
    events = built["events"]
    store = Store.open(url)
    public = PublicDir(tmp / "public")
    try:
        say("reading and decoding every event (baseline)")
        gc.collect()
        t = time.perf_counter()
        read = sum(1 for row in store.rows() if orjson.loads(row.state))
        read_s = time.perf_counter() - t
        say("rebuilding every view from zero")
        with ViewStore(store.url) as vs:
            gc.collect()
            t = time.perf_counter()
            rebuild(store, vs)
            rebuild_s = time.perf_counter() - t
        say("reconciling the day")
        from ledger.log.note import VerifierKey
        from ledger.trust import TrustRoots

        roots = TrustRoots(anchor=bytes.fromhex(public.anchor_file.read_text().strip()),  # the operator's own, pinned
                           log_key=VerifierKey.parse(public.vkey_file.read_text()))
        gc.collect()
        t = time.perf_counter()
        report = reconcile_day(store, built["day"], roots=roots, public_dir=public.path)
        reconcile_s = time.perf_counter() - t
        rounds_ids = [r.stream for r in store.rows() if r.stream.startswith("round:") and r.seq == 1]
    finally:
        store.close()
    target = rounds_ids[len(rounds_ids) // 2]
    argv, env = _cli(url, tmp)
    # one untimed run first: the modules' bytecode cached, the ledger's file in the page cache (a support
    # agent's machine that has run pitboss before)
    subprocess.run(argv + ["evidence", target, "-o", str(tmp / "bundle-warm"), "--json"], env=env, capture_output=True,
                   check=True)
    times = []
    for i in range(3):
        t = time.perf_counter()
        res = subprocess.run(argv + ["evidence", target, "-o", str(tmp / f"bundle-{i}"), "--json"], env=env,
                             capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        assert res.returncode == 0, res.stdout + res.stderr
    # the same command with the published tiles gone: a pass over the whole log (which writes them again)
    shutil.rmtree(tmp / "public" / "tile", ignore_errors=True)
    t = time.perf_counter()
    res = subprocess.run(argv + ["evidence", target, "-o", str(tmp / "bundle-cold"), "--json"], env=env,
                         capture_output=True, text=True)
    cold = time.perf_counter() - t
    assert res.returncode == 0, res.stdout + res.stderr
    bound = events / sodium_all_cores
    return {**built, "reconciled": report["verdict"], "reconcile_s": round(reconcile_s, 2),
            "signature_bound_s": round(bound, 2),
            "ratio_reconcile_to_signature_bound": round(reconcile_s / bound, 2),
            "rebuild_events_per_s": round(events / rebuild_s), "baseline_read_decode_events_per_s": round(read / read_s),
            "ratio_rebuild_to_read": round((events / rebuild_s) / (read / read_s), 3),
            "evidence_round": target, "evidence_runs_s": [round(x, 2) for x in times],
            "evidence_one_round_s": round(statistics.median(times), 2),
            "evidence_one_round_without_tiles_s": round(cold, 2),
            "evidence_bundle_bytes": sum(f.stat().st_size for f in (tmp / "bundle-2").rglob("*") if f.is_file())}


_PEAK = """
import os, subprocess, sys, time


def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def tree(root):
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    parents[int(name)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += [c for c, p in parents.items() if p == pid]
    return out


proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = 0
while True:
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid:
        break
    peak = max(peak, sum(pss(p) for p in tree(proc.pid)))
    time.sleep(0.05)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, peak)
"""
"""Runs a command and prints its exit code, the peak RSS of its largest process (KiB, from
the kernel) and the peak of its processes' proportional set sizes summed (KiB, sampled
every 50 ms: the command's memory when it runs in more than one process, shared pages
counted once). Started as a small process of its own: Linux carries a process's peak RSS
across exec, so a command forked straight from this benchmark (hundreds of MB once it
has built a day) would report the benchmark's size, not its own."""


def reconcile_peak_memory(rounds: int) -> dict[str, int]:
    """Peak memory (KiB) of ``pitboss reconcile`` of a day of ``rounds`` rounds, the command
    alone (the day is built by another process), started from a small launcher
    (``_PEAK``): ``all_processes`` (verification's workers and the day's pass beside it
    included) and ``largest_process``."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        url = f"sqlite:///{tmp / 'day.db'}"
        day = build_day(url, tmp, rounds)["day"]
        argv, env = _cli(url, tmp)
        out = subprocess.run([sys.executable, "-c", _PEAK, *argv, "reconcile", "--day", day, "--json"], env=env,
                             capture_output=True, text=True, check=True).stdout.split()
        assert out[0] == "0", f"reconcile exited {out[0]}"
        return {"all_processes": int(out[2]), "largest_process": int(out[1])}


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

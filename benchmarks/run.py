"""pitboss benchmarks: every performance figure, each with a baseline measured in the
same run on the same machine, and its ratio against the goal.

    python benchmarks/run.py [--quick] [--memory] --json

Baselines are the fastest way this machine does the same work:
- libsodium: bare Ed25519 verification through the fastest of ``SODIUM_ENTRIES`` on this
  machine (PyNaCl's copy of libsodium through its public ``crypto_sign_open`` or straight
  through its cffi module, or the machine's own libsodium where it has one: a
  distribution's build was 9-10% faster than PyNaCl's here; ``pick_libsodium``, printed
  under ``libsodium`` with the library pitboss itself checks with) on one thread and on
  ``cores`` threads (libsodium releases the GIL, so
  threads scale; "all cores" is the larger of that and cores x one thread); measured in
  adjacent pairs around each verify run and each quarter of each ingest run
  (``_ingest_paired``), the ratio being the median of the pairs', since this shared 2-core
  machine moves single figures by 10-25% from one second to the next. ``cryptography``'s
  figure is printed for reference only.
- recorder insert: eventsourcing's own recorder (``insert_events``) inserting the
  identical rows ingest stores (same bytes, same batch size), no signing or checking; on
  PostgreSQL also the same with its array parameter sent binary (``%b``), three times
  faster than the library's text dump here, and the limit takes the faster of the two.
- poker: pokerkit replaying the same PHH text (``benchmarks/poker.py``), GC frozen on both
  sides; phevaluator through its fastest entry point (``evaluate_7cards`` on card ids).
- a day (``benchmarks/projections.py``): reconcile against the time the day's signatures
  alone take on all cores (events / all-cores libsodium); the view rebuild against
  reading and decoding the same rows; ``pitboss evidence`` for one round, as a command.
- start-up: ``pitboss --help`` against ``python -c pass``, whole processes, best of N.
Commands are timed as an installed program runs: with their modules' bytecode cached
(``benchmarks/projections.installed_env``), after one untimed run.

Figures for two ingest workloads (``WORKLOADS``): ``ledger`` is the ledger's own event
kinds, ``baccarat`` adds the game engine's judgement of every bet, card and settlement
(figure names carry ``baccarat_``). Ingest is handed the batches' lines as bytes read back
from a JSONL file, as ``pitboss ingest --batch-size 1000 FILE`` reads them (``_read_back``),
and ingests them as it does (``ingest_batches``). ``ratios``,
``goals`` and ``met`` close the object.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eventsourcing.application import Application  # noqa: E402
from eventsourcing.persistence import StoredEvent  # noqa: E402

from ledger.events import parse_event, parse_json_line  # noqa: E402
from ledger.games.baccarat import coup_events  # noqa: E402
from ledger.games.cards import deck  # noqa: E402
from ledger.house import PublicDir, create_key, init_ledger  # noqa: E402
from ledger.ingest import ingest_batches, ingest_lines  # noqa: E402
from ledger.keys import KeyDirectory, libsodium_in_use, system_libsodium  # noqa: E402
from ledger.producer import BatchBuilder  # noqa: E402
from ledger.store import DatabaseURL, Store  # noqa: E402
from ledger.verify import verify_ledger  # noqa: E402

PG_BASE = os.environ.get("PITBOSS_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
BATCH = 1000


WORKLOADS = {
    "ledger": "issue 2's own kinds: rounds that open and close (a game with no engine) and deposits",
    "baccarat": "whole baccarat coups (bets, cards, settlements judged by the engine) and deposits",
}


def _build_batches(store: Store, keys: KeyDirectory, n_events: int, workload: str = "baccarat") -> list[list[str]]:
    """Tables opened, then rounds and cash movements, signed for real (see WORKLOADS)."""
    floor = create_key(store, keys, "floor:bench", "floor")
    dealer = create_key(store, keys, "dealer:bench", "dealer", scope=["table:*", "shoe:*"])
    cage = create_key(store, keys, "cage:bench", "cage")
    batches: list[list[str]] = []
    b = BatchBuilder.for_store(store)
    game = "baccarat" if workload == "baccarat" else "fan-tan"
    for t in range(4):
        b.add(floor, f"table:T{t}", "table.open.v1", {"game": game, "seats": 7, "currency": "EUR"})
    batches.append(b.lines())
    b = BatchBuilder.for_store(store)  # one builder: accounts recur across batches
    shoe: list[str] = []
    rng = random.Random(7)
    rules = {"decks": 8, "commission_bp": 500}
    r = 0
    while len(b.events) < n_events:
        if len(shoe) < 14:  # reshuffle (the cut card's place is not modelled here)
            shoe = [c for _ in range(8) for c in deck()]
            rng.shuffle(shoe)
        rid = f"round:T{r % 4}-{r:08d}"
        b.add(dealer, rid, "round.open.v1", {"table": f"T{r % 4}", "game": game, "rules": rules})
        if workload == "baccarat":
            cards = iter(shoe)
            for kind, payload in coup_events([(f"P{r % 97}", "banker", 1000), (f"P{(r + 1) % 97}", "player", 500)], cards, rules):
                b.add(dealer, rid, kind, payload)
            shoe = list(cards)
        b.add(dealer, rid, "round.close.v1", {"status": "complete"})
        if r % 10 == 0:
            b.add(cage, f"account:P{r % 97}", "cash.deposit.v1",
                  {"amount": 5000 + r, "currency": "EUR", "method": "card", "reference": f"d{r}"})
        r += 1
    lines = b.lines()
    batches += [lines[i:i + BATCH] for i in range(0, len(lines), BATCH)]
    return batches


def _read_back(batches: list[list[str]], path: Path) -> list[list[bytes]]:
    """The batches' lines as ``pitboss ingest FILE`` meets them: bytes lines read from a
    JSONL file (``ledger.ingest.file_batches``), not the str objects the builder made.
    Measured here (2-core Xeon, alternated): the str lines held since they were built
    ingested about 6% slower than the same lines as bytes, in the build's process or a
    fresh one (a UTF-8 encode a line, and lines scattered through the heap the signing
    left), a cost of the benchmark's set-up that the command does not have."""
    with path.open("wb") as f:
        for lines in batches:
            f.writelines(line.encode() + b"\n" for line in lines)
    with path.open("rb") as f:
        return [[f.readline() for _ in lines] for lines in batches]


def _stored_rows(batches: list[list[bytes]]) -> list[list[StoredEvent]]:
    """The rows ingest stores, byte for byte: (stream, seq, kind, canonical bytes)."""
    out = []
    for lines in batches[1:]:
        rows = []
        for line in lines:
            ev = parse_event(parse_json_line(line))
            rows.append(StoredEvent(originator_id=ev.stream, originator_version=ev.seq, topic=ev.kind, state=ev.encoded()))
        out.append(rows)
    return out


def _baseline_recorder_insert(env: dict[str, str], rows: list[list[StoredEvent]], binary: bool = False) -> float:
    """eventsourcing's own recorder (``insert_events``, its fastest public write path)
    inserting the identical rows ingest stores, one transaction per batch of the same size.

    ``binary`` (PostgreSQL): the same recorder and transaction with its one INSERT's array
    parameter sent in binary format (``%b`` for its ``%s``: psycopg dumps the library's
    composites as text, escaping every byte), the fastest way we know to make that insert;
    the limit takes the faster of the two."""
    app = Application(env=env)
    try:
        if binary:
            from psycopg.sql import SQL

            from ledger.store.postgres import binary_insert

            rec: Any = app.recorder
            with rec.datastore.get_connection() as conn:
                text = rec.insert_events_statement.as_string(conn)
            rec.insert_events_statement = SQL(binary_insert(text))  # type: ignore[arg-type]
        gc.collect()
        total, started = 0, time.perf_counter()
        for batch in rows:
            app.recorder.insert_events(batch)
            total += len(batch)
        return total / (time.perf_counter() - started)
    finally:
        app.close()


def _sodium_jobs() -> tuple[bytes, list[bytes], list[bytes], list[bytes]]:
    """(key, 64 signed messages as sig || message, their signatures, their messages):
    32-byte messages, as an event hash, split beforehand for the entry points that take
    signature and message apart."""
    from nacl.bindings import crypto_sign, crypto_sign_keypair

    pk, sk = crypto_sign_keypair()
    signed = [crypto_sign(os.urandom(32), sk) for _ in range(64)]
    return pk, signed, [s[:64] for s in signed], [s[64:] for s in signed]


def _loop_pynacl(n: int, jobs: tuple[bytes, list[bytes], list[bytes], list[bytes]]) -> None:
    """PyNaCl's public ``crypto_sign_open`` (its own copy of libsodium)."""
    from nacl.bindings import crypto_sign_open

    pk, signed = jobs[0], jobs[1]
    for i in range(n):
        crypto_sign_open(signed[i & 63], pk)


def _loop_pynacl_cffi(n: int, jobs: tuple[bytes, list[bytes], list[bytes], list[bytes]]) -> None:
    """The same copy's C ``crypto_sign_open`` through PyNaCl's cffi module, its output buffers
    made once: no wrapper, no allocation and no copy a call."""
    from nacl._sodium import ffi, lib

    f, m, mlen = lib.crypto_sign_open, ffi.new("unsigned char[]", 96), ffi.new("unsigned long long *")
    pk, signed = jobs[0], jobs[1]
    for i in range(n):
        if f(m, mlen, signed[i & 63], 96, pk):
            raise AssertionError("a good signature refused")


def _loop_system(n: int, jobs: tuple[bytes, list[bytes], list[bytes], list[bytes]]) -> None:
    """The machine's own libsodium's ``crypto_sign_verify_detached`` through ctypes
    (``ledger.keys.system_libsodium``: found, 1.0.18 or later, self-tested)."""
    f = system_libsodium()
    pk, sigs, msgs = jobs[0], jobs[2], jobs[3]
    for i in range(n):
        if f(sigs[i & 63], msgs[i & 63], 32, pk):
            raise AssertionError("a good signature refused")


SODIUM_ENTRIES: dict[str, Any] = {"pynacl": _loop_pynacl, "pynacl_cffi": _loop_pynacl_cffi, "system": _loop_system}
"""Every way this machine has to check an Ed25519 signature with libsodium: PyNaCl's copy
through its public function and through its C function, and the machine's own libsodium
where it has one (``ledger.keys.system_libsodium``)."""
_sodium_loop = _loop_pynacl
"""The fastest of ``SODIUM_ENTRIES`` on this machine (``pick_libsodium``): every libsodium
figure of the run is made with it."""


def pick_libsodium(n: int = 10_000, rounds: int = 3) -> dict[str, Any]:
    """Each available entry point on one core, alternated ``rounds`` times, best of each;
    the fastest becomes ``_sodium_loop`` for the whole run."""
    global _sodium_loop
    entries = {k: f for k, f in SODIUM_ENTRIES.items() if k != "system" or system_libsodium() is not None}
    jobs = _sodium_jobs()
    best: dict[str, float] = dict.fromkeys(entries, 0.0)
    gc.collect()
    for _ in range(rounds):
        for name, loop in entries.items():
            started = time.perf_counter()
            loop(n, jobs)
            best[name] = max(best[name], n / (time.perf_counter() - started))
    fastest = max(best, key=lambda k: best[k])
    _sodium_loop = entries[fastest]
    return {"entry_points_per_s_1core": {k: round(v) for k, v in best.items()}, "fastest": fastest,
            "system_libsodium_absent": "system" not in entries}


def bare_libsodium(n: int, threads: int) -> float:
    """Bare libsodium verifications per second over ``threads`` threads (libsodium releases
    the GIL: threads scale where a process pool's start-up and pickling do not)."""
    jobs = [_sodium_jobs() for _ in range(threads)]
    loop = _sodium_loop
    per = n // threads
    gc.collect()
    if threads == 1:
        started = time.perf_counter()
        loop(per, jobs[0])
        return per / (time.perf_counter() - started)
    barrier = threading.Barrier(threads + 1)

    def work(j: tuple[bytes, list[bytes], list[bytes], list[bytes]]) -> None:
        barrier.wait()
        loop(per, j)

    ts = [threading.Thread(target=work, args=(j,)) for j in jobs]
    for t in ts:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in ts:
        t.join()
    return per * threads / (time.perf_counter() - started)


def all_cores_libsodium(n: int, cores: int) -> tuple[float, float]:
    """(all cores, one core): the "all cores" figure is the larger of ``cores`` threads'
    and ``cores`` x one thread's, the fastest this machine was seen to check signatures,
    so that neither ingest's limit nor verify's is lowered by threads that scaled badly
    for a moment (two threads measured 0.85 to 1.03 of twice one thread, alternated, on
    the 2-core EPYC of 2026-11-27)."""
    threads = bare_libsodium(n, cores)
    one = bare_libsodium(n // 2, 1)
    return max(threads, cores * one), one


def bare_cryptography(n: int) -> float:
    """For reference: ``cryptography`` (OpenSSL) verify on one core, what pitboss used before."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    pub = key.public_key()
    msgs = [os.urandom(32) for _ in range(64)]
    sigs = [key.sign(m) for m in msgs]
    gc.collect()
    started = time.perf_counter()
    for i in range(n):
        pub.verify(sigs[i & 63], msgs[i & 63])
    return n / (time.perf_counter() - started)


def _pg_url() -> str | None:
    import psycopg

    try:
        with psycopg.connect(**DatabaseURL.parse(PG_BASE).connect_kwargs()):
            pass
    except psycopg.Error:
        return None
    return f"{PG_BASE}?schema=bench_{uuid.uuid4().hex[:10]}"


def _drop_schema(url: str) -> None:
    import psycopg

    db = DatabaseURL.parse(url)
    with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{db.schema}" CASCADE')


def _fresh(url: str, tmp: Path, tag: str) -> tuple[Store, KeyDirectory]:
    keys = KeyDirectory(tmp / f"keys-{tag}")
    store = Store.open(url, create=True)
    init_ledger(store, keys, PublicDir(tmp / f"public-{tag}"), "bench.pitboss/ledger")
    return store, keys


INGEST_SEGMENTS = 4


def _ingest_paired(store: Store, batches: list[list[bytes]], n_sig: int, cores: int, clock: Any = None
                   ) -> dict[str, Any]:
    """Ingest the batches (after the first, the tables, untimed) in ``INGEST_SEGMENTS``
    runs of consecutive batches, with all-cores bare libsodium measured before the first
    and after each, as verify is paired: the ratio to take is each segment's rate against
    the mean of the two libsodium figures around it, the median over segments, so that a
    burst of the machine's other tenants weighs on one pair rather than on the whole
    figure (a whole ingest against one figure either side moved by 10% from run to run
    here). Each segment is one ``ingest_batches`` run over its batches, as ``pitboss ingest
    --batch-size`` ingests a file (each batch after a segment's first is parsed while the
    one before it is stored). The events/s printed is the whole run's: every event over
    every segment's time. ``clock`` (``benchmarks/inside.py``'s ``CoreClock``): started and
    stopped around each segment's ingest, its readings returned as ``segment_clock``."""
    assert ingest_lines(store, batches[0]).status == "stored"
    timed = batches[1:]
    cut = [round(i * len(timed) / INGEST_SEGMENTS) for i in range(INGEST_SEGMENTS + 1)]
    sodium = [all_cores_libsodium(n_sig, cores)[0]]
    rates: list[float] = []
    counts: list[int] = []
    readings: list[dict[str, float]] = []
    total, seconds = 0, 0.0
    for a, b in zip(cut, cut[1:]):
        if clock is not None:
            clock.start()
        started = time.perf_counter()
        reports = ingest_batches(store, timed[a:b])
        took = time.perf_counter() - started
        if clock is not None:
            readings.append(clock.stop())
        assert [r.status for r in reports] == ["stored"] * (b - a), reports[-1].message
        events = sum(r.stored for r in reports)
        sodium.append(all_cores_libsodium(n_sig, cores)[0])
        rates.append(events / took)
        counts.append(events)
        total, seconds = total + events, seconds + took
    return {"events_per_s": total / seconds, "segment_events_per_s": rates, "segment_events": counts,
            "segment_clock": readings, "libsodium_around": [(x + y) / 2 for x, y in zip(sodium, sodium[1:])]}


def _sibling(name: str) -> Any:
    """benchmarks/<name>.py as a module of its own name (``projections`` would otherwise be
    the package of ours)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", Path(__file__).resolve().parent / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def startup(repeats: int) -> dict[str, Any]:
    """``pitboss --help`` against a bare ``python -c pass``: whole processes, alternated,
    best of ``repeats`` each (start-up is what a shell user and cron wait for)."""
    exe = Path(sys.executable)
    pitboss = exe.parent / "pitboss"
    cmd = [str(pitboss), "--help"] if pitboss.exists() else [sys.executable, "-m", "cli.main", "--help"]
    env = _sibling("projections").installed_env()  # bytecode cached, as an installed program runs
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)  # untimed: writes that cache
    bare, ours = [], []
    for _ in range(repeats):
        for argv, into in (([sys.executable, "-c", "pass"], bare), (cmd, ours)):
            t = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
            into.append(time.perf_counter() - t)
    return {"help_s": round(min(ours), 4), "baseline_python_pass_s": round(min(bare), 4),
            "ratio": round(min(ours) / min(bare), 2)}


def cpu() -> dict[str, Any]:
    """The processor the figures were taken on, as Linux names it (``/proc/cpuinfo``'s first
    processor: model name, vendor, family, model), so that a set can be told from another
    machine's of the same name but another kind (AMD EPYCs of family 25 models 1 and 17
    check signatures at about 15,000 and 20,000 a second a core, docs/benchmarks.md);
    ``platform``'s processor name, else its machine type, where there is no such file or
    it names none of them (ARM's Linux names its implementer and part instead)."""
    fields = {"model name": "model_name", "vendor_id": "vendor", "cpu family": "family", "model": "model"}
    found: dict[str, Any] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block ends here
                key, _, value = line.partition(":")
                name = fields.get(key.strip())
                if name:
                    value = value.strip()
                    found[name] = int(value) if value.isdigit() else value
    except OSError:
        pass
    if not found:
        import platform

        found["model_name"] = platform.processor() or platform.machine() or "unknown"
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    ap.add_argument("--json", action="store_true", help="print only the JSON object")
    ap.add_argument("--day-rounds", type=int, default=None,
                    help="rounds of the day reconciled, rebuilt and bundled (default 10,000; 1,000 with --quick)")
    ap.add_argument("--memory", action="store_true",
                    help="also the peak-memory ratio of reconciling a 10x larger day (builds it: long)")
    args = ap.parse_args()
    n_events = 6_000 if args.quick else 40_000
    cores = os.cpu_count() or 1
    out: dict[str, Any] = {"machine": {"cores": cores, "cpu": cpu(), "python": sys.version.split()[0],
                                       "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]},
                           "events": n_events, "batch": BATCH}

    def note(msg: str) -> None:
        if not args.json:
            print(msg, file=sys.stderr)

    figures: dict[str, Any] = {}
    note("choosing the fastest libsodium entry point on this machine ...")
    out["libsodium"] = {**pick_libsodium(), "pitboss_checks_with": libsodium_in_use()}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        backends = [("sqlite", f"sqlite:///{tmp / 'ledger.db'}", f"sqlite:///{tmp / 'baseline.db'}")]
        pg = _pg_url()
        if pg:
            backends.append(("postgres", pg, pg.replace("schema=bench_", "schema=benchbase_")))
        else:
            out["postgres"] = f"skipped: no server at {PG_BASE}"
        sqlite_store = None
        out["workloads"] = WORKLOADS
        n_sig = 20_000 if args.quick else 60_000
        for name, url0, base_url0 in backends:
            for workload in WORKLOADS:
                prefix = "" if workload == "ledger" else f"{workload}_"
                url = url0.replace("ledger.db", f"{workload}.db").replace("schema=bench_", f"schema=bench_{workload}_")
                base_url = base_url0.replace("baseline.db", f"baseline-{workload}.db").replace(
                    "schema=benchbase_", f"schema=benchbase_{workload}_")
                note(f"building {n_events} signed events ({workload}) for {name} ...")
                store, keys = _fresh(url, tmp, f"{name}-{workload}")
                batches = _build_batches(store, keys, n_events, workload)
                batches = _read_back(batches, tmp / f"{name}-{workload}.jsonl")
                note(f"ingest ({workload}) on {name}, and its baselines ...")
                paired = _ingest_paired(store, batches, n_sig, cores)
                out[f"ingest_{prefix}{name}_events_per_s"] = round(paired["events_per_s"])
                out[f"ingest_{prefix}{name}_segments_events_per_s"] = [round(x) for x in paired["segment_events_per_s"]]
                out[f"baseline_libsodium_all_cores_around_ingest_{prefix}{name}_segments"] = [
                    round(x) for x in paired["libsodium_around"]]
                out[f"baseline_libsodium_all_cores_during_ingest_{prefix}{name}"] = round(
                    statistics.median(paired["libsodium_around"]))
                base_db = DatabaseURL.parse(base_url)
                if base_db.backend == "postgres":
                    from ledger.store.admin import ensure_pg_schema

                    ensure_pg_schema(base_db)
                env = base_db.env()
                env.pop("APPLICATION_RECORDER_TOPIC", None)  # the library's own recorder, not ours
                rows = _stored_rows(batches)
                insert = _baseline_recorder_insert(env, rows)
                out[f"baseline_recorder_insert_{prefix}{name}_events_per_s"] = round(insert)
                if name == "postgres":
                    _drop_schema(base_url)
                    ensure_pg_schema(base_db)
                    binary = _baseline_recorder_insert(env, rows, binary=True)
                    out[f"baseline_recorder_insert_binary_{prefix}{name}_events_per_s"] = round(binary)
                    insert = max(insert, binary)
                out[f"baseline_insert_limit_{prefix}{name}_events_per_s"] = round(insert)
                del rows
                store.close()
                if name == "sqlite" and workload == "ledger":
                    # Verify runs as its own nightly process on a settled file: closing
                    # (SQLite checkpoints the WAL when the last connection closes), reopening.
                    sqlite_store = Store.open(url)
                elif name != "sqlite":
                    _drop_schema(url)
                    _drop_schema(base_url)
        rounds = 3 if args.quick else 5
        note(f"verify and bare libsodium verify, {rounds} paired rounds ...")
        assert sqlite_store is not None
        one, alls, ver, deep, pair, pair_deep, crypto = [], [], [], [], [], [], []
        for _ in range(rounds):
            crypto.append(bare_cryptography(n_sig // 2))
            all_before, one_before = all_cores_libsodium(n_sig, cores)
            one.append(one_before)
            alls.append(all_before)
            rep = verify_ledger(sqlite_store, public_dir=None)
            assert rep.clean, rep.problems[:3]
            ver.append(rep.events / rep.seconds)
            rep = verify_ledger(sqlite_store, public_dir=None, deep=True)
            assert rep.clean, rep.problems[:3]
            deep.append(rep.events / rep.seconds)
            bare_after = all_cores_libsodium(n_sig, cores)[0]
            pair.append(ver[-1] / ((alls[-1] + bare_after) / 2))
            pair_deep.append(deep[-1] / ((alls[-1] + bare_after) / 2))
            alls.append(bare_after)
        out["baseline_libsodium_verify_per_s_1core"] = round(statistics.median(one))
        out["baseline_libsodium_verify_per_s_all_cores"] = round(statistics.median(alls))
        out["reference_cryptography_verify_per_s_1core"] = round(statistics.median(crypto))
        out["verify_events"] = rep.events
        out["verify_events_per_s"] = round(statistics.median(ver))
        out["verify_deep_events_per_s"] = round(statistics.median(deep))
        sqlite_store.close()

    sodium_all = out["baseline_libsodium_verify_per_s_all_cores"]
    ratios: dict[str, float] = {}
    for name, _, _ in backends:
        for prefix in ("", "baccarat_"):
            insert_limit = out[f"baseline_insert_limit_{prefix}{name}_events_per_s"]
            pairs = [rate / min(sodium, insert_limit) for rate, sodium in zip(
                out[f"ingest_{prefix}{name}_segments_events_per_s"],
                out[f"baseline_libsodium_all_cores_around_ingest_{prefix}{name}_segments"])]
            out[f"ingest_{prefix}{name}_pair_ratios"] = [round(x, 3) for x in pairs]
            ratios[f"ingest_{prefix}{name}_vs_limit"] = round(statistics.median(pairs), 3)
    ratios["verify_vs_all_cores_libsodium"] = round(statistics.median(pair), 3)
    ratios["verify_deep_vs_all_cores_libsodium"] = round(statistics.median(pair_deep), 3)
    out["verify_pair_ratios"] = [round(x, 3) for x in pair]

    note("start-up ...")
    figures["startup"] = startup(5 if args.quick else 15)
    ratios["help_vs_python_pass"] = figures["startup"]["ratio"]

    note("poker replay and the evaluator ...")
    figures["poker"] = _sibling("poker").measure(args.quick)
    ratios["poker_replay_vs_pokerkit_same_phh_text"] = figures["poker"]["ratios"]["replay_from_phh_text_vs_pokerkit"]
    ratios["evaluator_vs_phevaluator_fastest"] = figures["poker"]["ratios"]["eval7_replay_path_vs_phevaluator_fastest"]

    day_rounds = args.day_rounds or (1_000 if args.quick else 10_000)
    note(f"a {day_rounds}-round day: reconcile, rebuild, evidence ...")
    bench_projections = _sibling("projections")  # benchmarks/projections.py (the package of that name is ours)

    with tempfile.TemporaryDirectory() as d:
        day = bench_projections.day_figures(f"sqlite:///{d}/day.db", Path(d), day_rounds, sodium_all)
    figures["day"] = day
    ratios["reconcile_vs_signature_bound"] = day["ratio_reconcile_to_signature_bound"]
    ratios["rebuild_vs_read_and_decode"] = day["ratio_rebuild_to_read"]
    ratios["evidence_one_round_s"] = day["evidence_one_round_s"]
    if args.memory:
        small, large = day_rounds, day_rounds * 10
        note(f"peak memory of reconcile: {small} and {large} rounds (each in its own process) ...")
        mem = {str(n): bench_projections.reconcile_peak_memory(n) for n in (small, large)}
        figures["reconcile_peak_memory_kib"] = mem
        # all of the command's processes (verification's workers, the day's pass beside them), shared pages once
        ratios["reconcile_peak_memory_10x_day"] = round(mem[str(large)]["all_processes"]
                                                        / mem[str(small)]["all_processes"], 3)
        figures["reconcile_peak_memory_10x_day_largest_process"] = round(mem[str(large)]["largest_process"]
                                                                         / mem[str(small)]["largest_process"], 3)
    else:
        figures["reconcile_peak_memory_kib"] = "not measured: run with --memory (builds a day 10x larger)"
    out.update(figures)
    out["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out["ratios"] = ratios
    out["goals"] = GOALS
    out["met"] = {k: (ratios[k] >= g if k not in LOWER_IS_BETTER else ratios[k] <= g)
                  for k, g in GOALS.items() if k in ratios}
    print(json.dumps(out, indent=2, sort_keys=True))


GOALS = {
    "verify_vs_all_cores_libsodium": 0.8,
    "ingest_sqlite_vs_limit": 0.5,
    "ingest_postgres_vs_limit": 0.4,
    "reconcile_vs_signature_bound": 1.5,
    "reconcile_peak_memory_10x_day": 1.2,
    "rebuild_vs_read_and_decode": 0.3,
    "poker_replay_vs_pokerkit_same_phh_text": 10,
    "evaluator_vs_phevaluator_fastest": 0.5,
    "evidence_one_round_s": 0.5,
    "help_vs_python_pass": 4,
}
LOWER_IS_BETTER = {"reconcile_vs_signature_bound", "reconcile_peak_memory_10x_day", "evidence_one_round_s",
                   "help_vs_python_pass"}


if __name__ == "__main__":
    main()

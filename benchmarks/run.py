"""pitboss benchmarks: one JSON object of named figures and ratios, each against a
baseline measured in the same run on the same machine.

    python benchmarks/run.py [--quick] --json

Figures (issue 2), for two workloads (``WORKLOADS``): ``ledger`` is issue 2's own event
kinds, ``baccarat`` adds the game engine's judgement of every bet, card and settlement
(figure names carry ``baccarat_``):
- ingest_<backend>_events_per_s: ``ingest_lines`` (parse, schema, hash, chain, key,
  signature, game rules, one atomic append per batch) of realistic events (whole
  baccarat coups, deposits), batch after batch, one process.
- baseline_es_insert_<backend>_events_per_s: eventsourcing's own ``Application.save``
  of the same events, unsigned, same batch size (library mapper and JSON transcoder).
- baseline_ed25519_verify_per_s_1core / _all_cores: a bare ``cryptography`` verify loop.
- verify_events_per_s: ``verify_ledger`` over the SQLite ledger, all cores;
  verify_deep_events_per_s: the same with ``deep=True`` (schema re-checked too).
- ratios: ingest per core / the slower of its two baselines (goal >= 0.5);
  verify / bare verify on all cores (goal >= 0.8).

Verify and the bare Ed25519 loops run in adjacent pairs (five rounds, three with
--quick) because this shared 2-core machine moves single figures by 10-25% from one
second to the next; the verify ratios are the medians of the per-pair ratios, the
figures the medians of each series.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eventsourcing.application import Application  # noqa: E402
from eventsourcing.domain import Aggregate, event  # noqa: E402

from ledger.games.baccarat import coup_events  # noqa: E402
from ledger.games.cards import deck  # noqa: E402
from ledger.house import PublicDir, create_key, init_ledger  # noqa: E402
from ledger.ingest import ingest_lines  # noqa: E402
from ledger.keys import KeyDirectory  # noqa: E402
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


class BenchStream(Aggregate):
    @event("Recorded")
    def record(self, kind: str, at: str, payload: dict[str, Any]) -> None:
        pass


def _baseline_es_insert(env: dict[str, str], batches: list[list[str]]) -> float:
    """eventsourcing's own path: aggregates, library mapper, JSON transcoder, one save per batch."""
    app = Application(env={**env, "ORIGINATOR_ID_TYPE": "uuid"})
    try:
        total, started = 0, time.perf_counter()
        for lines in batches[1:]:
            streams: dict[str, BenchStream] = {}
            for line in lines:
                d = json.loads(line)
                agg = streams.get(d["stream"])
                if agg is None:
                    agg = streams[d["stream"]] = BenchStream()
                agg.record(d["kind"], d["at"], d["payload"])
            app.save(*streams.values())
            total += len(lines)
        return total / (time.perf_counter() - started)
    finally:
        app.close()


def _verify_loop(n: int) -> float:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    pub = key.public_key()
    msgs = [os.urandom(32) for _ in range(64)]
    sigs = [key.sign(m) for m in msgs]
    started = time.perf_counter()
    for i in range(n):
        pub.verify(sigs[i & 63], msgs[i & 63])
    return n / (time.perf_counter() - started)


def _bare_verify(n: int, workers: int) -> float:
    if workers == 1:
        return _verify_loop(n)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers) as pool:
        started = time.perf_counter()
        pool.map(_verify_loop, [n // workers] * workers)
        return (n // workers * workers) / (time.perf_counter() - started)


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


def _ingest_rate(store: Store, batches: list[list[str]]) -> float:
    assert ingest_lines(store, batches[0]).status == "stored"
    total, started = 0, time.perf_counter()
    for lines in batches[1:]:
        report = ingest_lines(store, lines)
        assert report.status == "stored", report.message
        total += report.stored
    return total / (time.perf_counter() - started)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    ap.add_argument("--json", action="store_true", help="print only the JSON object")
    args = ap.parse_args()
    n_events = 6_000 if args.quick else 40_000
    cores = os.cpu_count() or 1
    out: dict[str, Any] = {"machine": {"cores": cores, "python": sys.version.split()[0]}, "events": n_events, "batch": BATCH}

    def note(msg: str) -> None:
        if not args.json:
            print(msg, file=sys.stderr)

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
        for name, url0, base_url0 in backends:
            for workload in WORKLOADS:
                prefix = "" if workload == "ledger" else f"{workload}_"
                url = url0.replace("ledger.db", f"{workload}.db").replace("schema=bench_", f"schema=bench_{workload}_")
                base_url = base_url0.replace("baseline.db", f"baseline-{workload}.db").replace(
                    "schema=benchbase_", f"schema=benchbase_{workload}_")
                note(f"building {n_events} signed events ({workload}) for {name} ...")
                store, keys = _fresh(url, tmp, f"{name}-{workload}")
                batches = _build_batches(store, keys, n_events, workload)
                note(f"ingest ({workload}) on {name} ...")
                out[f"ingest_{prefix}{name}_events_per_s"] = round(_ingest_rate(store, batches))
                note(f"eventsourcing baseline ({workload}) on {name} ...")
                base_db = DatabaseURL.parse(base_url)
                if base_db.backend == "postgres":
                    from ledger.store.admin import ensure_pg_schema

                    ensure_pg_schema(base_db)
                env = base_db.env()
                env.pop("ORIGINATOR_ID_TYPE")
                env.pop("APPLICATION_RECORDER_TOPIC", None)  # the library's own recorder, not ours
                out[f"baseline_es_insert_{prefix}{name}_events_per_s"] = round(_baseline_es_insert(env, batches))
                store.close()
                if name == "sqlite" and workload == "ledger":
                    # Verify runs as its own nightly process on a settled file: closing
                    # (SQLite checkpoints the WAL when the last connection closes), reopening.
                    sqlite_store = Store.open(url)
                elif name != "sqlite":
                    _drop_schema(url)
                    _drop_schema(base_url)
        rounds = 3 if args.quick else 5
        note(f"verify and bare Ed25519 verify, {rounds} paired rounds ...")
        n_sig = 20_000 if args.quick else 60_000
        assert sqlite_store is not None
        one, alls, ver, deep, pair, pair_deep = [], [], [], [], [], []
        for _ in range(rounds):
            one.append(_bare_verify(n_sig, 1))
            alls.append(_bare_verify(n_sig, cores))
            rep = verify_ledger(sqlite_store, public_dir=None)
            assert rep.clean, rep.problems[:3]
            ver.append(rep.events / rep.seconds)
            rep = verify_ledger(sqlite_store, public_dir=None, deep=True)
            assert rep.clean, rep.problems[:3]
            deep.append(rep.events / rep.seconds)
            bare_after = _bare_verify(n_sig, cores)
            pair.append(ver[-1] / ((alls[-1] + bare_after) / 2))
            pair_deep.append(deep[-1] / ((alls[-1] + bare_after) / 2))
            alls.append(bare_after)
        out["baseline_ed25519_verify_per_s_1core"] = round(statistics.median(one))
        out["baseline_ed25519_verify_per_s_all_cores"] = round(statistics.median(alls))
        out["verify_events"] = rep.events
        out["verify_events_per_s"] = round(statistics.median(ver))
        out["verify_deep_events_per_s"] = round(statistics.median(deep))
        sqlite_store.close()

    ratios: dict[str, float] = {}
    v1 = out["baseline_ed25519_verify_per_s_1core"]
    for name, _, _ in backends:
        for prefix in ("", "baccarat_"):
            slower = min(out[f"baseline_es_insert_{prefix}{name}_events_per_s"], v1)
            ratios[f"ingest_{prefix}{name}_per_core_vs_slower_baseline"] = round(out[f"ingest_{prefix}{name}_events_per_s"] / slower, 3)
    ratios["verify_vs_bare_ed25519_all_cores"] = round(statistics.median(pair), 3)
    ratios["verify_deep_vs_bare_ed25519_all_cores"] = round(statistics.median(pair_deep), 3)
    out["verify_pair_ratios"] = [round(x, 3) for x in pair]
    out["ratios"] = ratios
    out["goals"] = {"ingest_per_core_vs_slower_baseline": 0.5, "verify_vs_bare_ed25519_all_cores": 0.8}
    print(json.dumps(out, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()

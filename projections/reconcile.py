"""Nightly reconciliation of one gaming day (issue #5 point 6).

``reconcile_day(store, day)`` checks, and lists every discrepancy with its events:

1. integrity: the whole ledger re-proved (``ledger.verify``: every event's hash,
   signature, key as at its time, chain, and every checkpoint's root, so the day's
   checkpoints are consistent with the previous day's). A broken event anywhere fails
   every day: the tree that proves the day runs through it. An event untrusted because
   its key was revoked from before its time fails it too, until a key-compromise ruling
   (``ruling.key_compromise.v1``) confirms it; the report lists those as confirmed;
2. rounds: every round closed that day walked again through its engine from its own
   events (``ledger.judges.round``): a settlement or award that differs from the rules, even
   one correctly signed by a compromised key and written behind ingest's back, is named
   with its seq;
3. conservation: per round, the players' results plus the house's take sum to zero
   (stakes in = payouts + commission/rake); per table that records chip movements,
   opening chips + buy-ins − cash-outs + the players' results = the chips counted
   (``projections.table_chips``; a table with movements but no count that day is listed
   under "not_checked"); per account, the balance is the sum of its events (the
   ``accounts`` view equals a fresh recomputation), and no event takes an account's money
   at the cage below zero (``projections.cage``: a withdrawal, buy-in or entry the
   account could not cover);
4. rulings (``projections.rulings_check``): every poker hand in progress when a server
   crash of the day began was rolled back (000 refund policy); every misdeal's re-deal
   was dealt as the voided hand was (TDA 2013 rule 34 B); the day's rulings are listed;
5. projections: every view, caught up, equals a recomputation from zero in a scratch
   store.

6. tournaments ended that day (``ledger.judges.tournament.conservation``): money in = fees +
   prize pool (less any overlay) + bounties; prize pool = prizes + refunds + breakage
   (the cents rounded down, listed); what was paid = prizes + refunds + fee refunds +
   bounties;
7. the AML scan (``projections.aml``): the day's flags are listed in the report; they are
   findings for compliance, not discrepancies, so they do not fail the day.

Passes over the log: verification (on all cores), and one pass that does everything else
from the same rows, each decoded once: each round walked once from its rows as the log
brings them (no query per round; memory for the rounds open at once), its derivation
shared by the rules and conservation checks, the chips, the recomputation of the views
from zero (``Context.remember``), the cage book and the AML scan (``_day_pass``). The views
are then compared with their recomputation a page at a time (``view_differences``).

On more than one core the day's pass runs beside verification, in a process of its own,
counting every row (``_Beside``); its result is used only when verification then rejects
no row, which makes it the very pass verification's verdicts give. When verification
rejects a row, that pass is dropped and the day is passed again without the rejected rows.

The verdict (issue 14 point 5) is RECONCILED only when every check was made against
the pinned roots (``ledger.trust``) and holds: NOT RECONCILED when a check fails;
UNVERIFIED when the roots are not pinned or no accepted checkpoint anchors the ledger;
INCOMPLETE when a check could not be made (a table with chips but no count, events with
no receipt) and ``accept_unchecked`` was not given; NOTHING TO RECONCILE for a day with
no events of the floor or the cage. The ledger must still extend the previous day's
checkpoint: the first checkpoint that covers every event dated before the day must
exist and be accepted by verification whenever the ledger holds such events.

Only events that verification accepted count (issue 14 point 3): a row that fails its
own checks is a discrepancy, and the rulings, views and AML flags are built without it.
So is a row whose payload ingest would refuse for its form (its kind's schema, ingest
stage 2; check "schema"): signed by a key allowed to write it, it can only have been
written behind ingest's back, whatever day it is dated, and it counts for nothing.

The gaming day is the UTC date (a round belongs to the day it closed). A day's events are
those dated that day and those the ledger received that day (its receipts,
``ledger.receipt.v1``) though dated another: those late arrivals are listed, and
reconciled with the day they arrived, so no event escapes every day's reconciliation.
"""

from __future__ import annotations

import bisect
import multiprocessing
import os
import signal
import tempfile
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from ledger.events import EventError, SignedEvent, check_payload, event_from_stored
from ledger.forking import started
from ledger.judges import tournament as tournaments
from ledger.judges.round import walk
from ledger.kinds import RECEIPT_STREAM
from ledger.refs import event_ref
from ledger.store import DatabaseURL, Row, Store
from ledger.timeutil import gaming_day, parse_utc, real_day
from ledger.trust import TrustRoots
from ledger.verify import VerifyReport, revoked_later, verify_ledger
from projections.aml import CASH_MOVES, NOT_COVERED, Scanner, rapid_windows
from projections.cage import CageBook
from projections.money import opened_by_importer, readable_keyring, round_money
from projections.rulings_check import RulingBook
from projections.runner import CHUNK, Accept, Applier, TableConfigs, ViewStore, catch_up
from projections.table_chips import ChipBook
from projections.views import Add, Context, Put

Progress = Callable[..., None]
"""``say(step)`` as a step starts, ``say(step, done, total)`` as it advances."""


VERDICTS = ("RECONCILED", "NOT RECONCILED", "UNVERIFIED", "INCOMPLETE", "NOTHING TO RECONCILE")
BOOKKEEPING = ("ledger:", "keyring")
"""Streams of the ledger's own bookkeeping (receipts, checkpoints, the key ring): a day
with nothing else has nothing to reconcile."""


def compromise_rulings(store: Store, rejected: frozenset[tuple[str, int]] = frozenset()) -> dict[str, str]:
    """Event ref -> the key-compromise ruling (``ruling.key_compromise.v1``) that confirmed
    it; a ruling that verification rejected confirms nothing."""
    out: dict[str, str] = {}
    for row in store.rows_of_kind("ruling.key_compromise.v1"):
        if (row.stream, row.seq) in rejected:
            continue
        for ref in orjson.loads(row.state)["payload"]["acts_on"]:
            out[ref] = event_ref(row.stream, row.seq)
    return out


def view_differences(live: ViewStore, fresh: ViewStore, name: str, shown: int = 20) -> list[dict[str, Any]]:
    """Every row of view ``name`` as it is (``live``) against its recomputation (``fresh``),
    streamed a page at a time: each live row must be the fresh row of its key; when fewer
    live rows matched than the recomputation holds, the fresh rows with no equal live row
    are missing. The first ``shown`` of each, in key order."""
    out: list[dict[str, Any]] = []
    for t in live.views[name].tables:
        n = len(t.keys)
        matched, extra = 0, 0
        for page in live.table_pages(name, t.name):
            theirs = fresh.rows_at(name, t.name, [row[:n] for row in page])  # a query per few hundred rows
            for row in page:
                if theirs.get(row[:n]) == row:
                    matched += 1
                    continue
                extra += 1
                if extra <= shown:
                    out.append({"check": "projection", "stream": f"view:{t.name}", "seq": None,
                                "reason": f"row {row} is not what the ledger gives"})
        if matched == fresh.row_count(name, t.name):
            continue
        missing = 0
        for page in fresh.table_pages(name, t.name):
            ours = live.rows_at(name, t.name, [row[:n] for row in page])
            for row in page:
                if missing < shown and ours.get(row[:n]) != row:
                    missing += 1
                    out.append({"check": "projection", "stream": f"view:{t.name}", "seq": None,
                                "reason": f"row {row} is missing"})
            if missing >= shown:
                break
    return out


class LeafRuns:
    """Increasing leaf numbers (a row's place in the log, from 1) kept as runs, two
    integers a run: the day's events come in long runs broken by the ledger's own
    bookkeeping, so this holds a few numbers per receipt, not one per event."""

    def __init__(self) -> None:
        self.runs = array("q")

    def add(self, leaf: int) -> None:
        runs = self.runs
        if runs and runs[-1] == leaf - 1:
            runs[-1] = leaf
        else:
            runs.extend((leaf, leaf))


def leaves_after(runs: Sequence[int], size: int) -> int:
    """How many of the leaves in ``runs`` (``LeafRuns.runs``) come after the first ``size``."""
    return sum(last - max(first, size + 1) + 1 for first, last in zip(runs[::2], runs[1::2]) if last > size)


class _Beside:
    """The day's pass (``_day_pass``) made in a process of its own while verification
    runs, counting every row, as if verification will reject none: the pass then takes
    none of the cores' time after verification's (issue 16 point 3). When verification
    does reject a row the caller drops this pass and makes the exact one (the rows
    rejected left out), so a verdict never rests on a row verification refused.

    The process is forked before verification starts its own workers, opens the ledger
    on a connection of its own (a connection is never shared across a fork), writes only
    its scratch copy of the views (``fresh_url``), ignores Ctrl-C (the parent's to
    handle) and is killed if the parent stops early."""

    def __init__(self, proc: Any, conn: Any, done: Any, top: int, fresh_url: DatabaseURL):
        self.proc, self.conn, self.done, self.top, self.fresh_url = proc, conn, done, top, fresh_url

    @classmethod
    def start(cls, store: Store, day: str, fresh_url: DatabaseURL, workers: int | None) -> _Beside | None:
        """None where it would not run beside anything: one core (or ``workers=1``), or
        no ``fork`` on this platform."""
        if (workers or os.cpu_count() or 1) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            return None
        ctx = multiprocessing.get_context("fork")

        def start() -> _Beside:
            ours, theirs = ctx.Pipe(duplex=False)
            done = ctx.Value("q", 0, lock=False)
            proc = ctx.Process(target=_beside_main, args=(theirs, store.url, day, fresh_url, done), daemon=True)
            proc.start()
            theirs.close()
            return cls(proc, ours, done, store.max_notification_id(), fresh_url)

        return started(start, cls.stop)  # Ctrl-C while it starts: stopped, never left running (ledger.forking)

    def result(self, say: Callable[[int, int], None]) -> dict[str, Any] | None:
        """The pass's result once it is done (``say(done, total)`` meanwhile), or None if
        it failed (the caller makes the pass itself, and meets the failure there)."""
        try:
            while not self.conn.poll(0.25):
                say(int(self.done.value), self.top)
            status, value = self.conn.recv()
        except (EOFError, OSError):
            return None
        self.proc.join()
        return value if status == "ok" else None

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


def _beside_main(conn: Any, url: DatabaseURL, day: str, fresh_url: DatabaseURL, done: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        store = Store.open(url)
        try:
            def say(at: int, total: int) -> None:
                done.value = at

            result = _day_pass(store, day, lambda *row: True, fresh_url, say)
        finally:
            store.close()
        conn.send(("ok", result))
    except BaseException as exc:  # noqa: BLE001  # any failure: the parent makes the pass itself and meets it there
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _readable(rows: Iterable[Row]) -> Iterator[SignedEvent]:
    """The rows that decode as events (one that does not, verification refuses: it counts
    for nothing)."""
    for row in rows:
        try:
            yield event_from_stored(row.state)
        except (ValueError, KeyError, TypeError):
            continue


def _crash_starts(rows: Iterable[Row]) -> list[str] | None:
    """The ``started`` of every stored crash incident, or None (the ruling check then keeps
    every pool round) if one does not read as a UTC time."""
    out = []
    for row in rows:
        try:
            started = orjson.loads(row.state)["payload"]["started"]
            parse_utc(started)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None
        out.append(started)
    return out


def _day_pass(store: Store, day: str, counts: Accept, fresh_url: DatabaseURL, say: Callable[[int, int], None]) -> dict[str, Any]:
    """Everything reconciliation derives from one pass over the log, the integrity check
    aside: each row that ``counts`` (verification accepted it) decoded once, each round
    walked once when its close comes (module doc), the views recomputed from zero into
    ``fresh_url``. ``say(done, total)`` as it advances. Its result is plain data (it may
    come from another process: ``_Beside``)."""
    discrepancies: list[dict[str, Any]] = []
    malformed: list[int] = []  # rows verification accepted whose payload ingest would refuse: they count for nothing
    # read before the pass, in the same scan: the few rows that say which of the pass's many it must keep
    # (every stored one, counted or not: a superset keeps the checks exact) -- the cash movements, for the
    # wagers the AML scan's rapid_in_out can ask about, and the crash incidents, for the rounds in progress
    # at one (memory follows what is open at once, not the day: issue 16 point 3)
    first = store.rows_of_kinds(["ledger.receipt.v1", *CASH_MOVES, "incident.server_crash.v1"])
    # the ledger's clock (ledger.receipt.v1): an event was received by the first receipt after it in the log
    receipts = [(row.notification_id, orjson.loads(row.state)["payload"]["received"])
                for row in first if row.kind == "ledger.receipt.v1" and row.stream == RECEIPT_STREAM]
    windows = rapid_windows(_readable(row for row in first if row.kind in CASH_MOVES))
    starts = _crash_starts(row for row in first if row.kind == "incident.server_crash.v1")
    del first
    receipt_ids = [nid for nid, _ in receipts]
    late: list[dict[str, Any]] = []
    unreceipted = 0

    closed = 0
    day_events = 0
    rounds_ok = 0
    book = ChipBook(day)
    rulings = RulingBook(starts=starts)
    ended: list[str] = []  # tournaments that ended on the day
    round_table: dict[str, str] = {}  # the table of each open round (dropped at its close)
    imported: set[str] = set()
    ring = readable_keyring(store)
    checkpoint_sizes: list[int] = []
    leaf = 0
    floor_leaves = LeafRuns()  # the day's events, by leaf: those after the largest accepted checkpoint are named
    before_day = 0  # leaves up to and including the last event dated before the day
    open_rounds: dict[str, list[tuple[int, bytes, SignedEvent | None]]] = {}
    """The rows of each round not yet closed, as the log brings them (every row, as the
    stream holds it, decoded once when it counts): a round is walked from these when its
    close comes, with no query, and memory holds the rounds open at once, not the day."""
    cage = CageBook(day)

    with ViewStore(fresh_url) as fresh:
        ctx = Context(store)
        scanner = Scanner(ctx, windows=windows)  # the AML rules, fed from this pass: each closed round derived once

        def observe(ev: SignedEvent, seen: dict[str, list[Add | Put]]) -> None:
            cage.event(ev, seen)
            scanner.feed(ev)

        # the views recomputed from zero in this same pass: every account's history
        views = Applier(fresh, ctx=ctx, observe=observe, hold_rounds=False)  # the rounds are walked below
        configs = TableConfigs(store)  # the tables' configurations as the pass meets them: no query per round
        top = store.max_notification_id()
        fed = 0
        for row in store.rows():
            leaf += 1
            counted = counts(*row)  # what verification did not accept counts for nothing else
            ev = event_from_stored(row.state) if counted else None
            if ev is not None:
                try:  # signed by a key allowed to write it, but maybe never through ingest: its schema, as ingest's
                    check_payload(row.kind, ev.payload)
                except EventError as exc:
                    discrepancies.append({"check": "schema", "stream": row.stream, "seq": row.seq,
                                          "reason": f"{exc.reason} (ingest refuses such an event: it was written behind"
                                                    " its back, and counts for nothing here)"})
                    malformed.append(row.notification_id)
                    ev = None
            if row.stream.startswith("round:"):
                open_rounds.setdefault(row.stream, []).append((row.seq, row.state, ev))
            if ev is None:
                continue  # named among the integrity discrepancies
            configs.see(ev)
            walked = None
            if row.kind == "round.close.v1":  # walked once: for the checks below and for the views
                held = sorted(open_rounds.pop(row.stream, []), key=lambda h: h[0])
                events = [e if e is not None else event_from_stored(state) for _, state, e in held]
                # each counted row's payload was checked above; a row that did not count was not
                walked = walk(events, configs, checked=all(e is not None for _, _, e in held))
                if walked[0] is not None:
                    ctx.remember(row.stream, events, walked[0], bool(walked[1]))
            views.feed(row.notification_id, ev)
            fed += 1
            if fed % CHUNK == 0:
                views.flush(row.notification_id)
                say(row.notification_id, top)
            at = ev.at
            dated = gaming_day(at)
            if dated < day:
                before_day = leaf
            if row.kind == "ledger.checkpoint.v1":
                checkpoint_sizes.append(ev.payload["size"])
            k = bisect.bisect_left(receipt_ids, row.notification_id)
            received = receipts[k][1] if k < len(receipts) else None
            unreceipted += received is None and not row.stream.startswith(BOOKKEEPING)  # the ledger's own: signed with its clock
            # a day's events are those dated that day and those the ledger received that day, dated otherwise:
            # an event that arrives late is reconciled with the day it arrived (issue 13 point 3)
            on_day = dated == day or (received is not None and gaming_day(received) == day)
            if on_day and dated != day:
                late.append({"event": event_ref(row.stream, row.seq), "kind": row.kind, "at": at,
                             "received": received})
            day_events += on_day
            if on_day and not row.stream.startswith(BOOKKEEPING):
                floor_leaves.add(leaf)
            if row.stream.startswith("chips:"):
                book.chip_event(ev, on_day)
                continue
            if row.kind == "table.open.v1":
                book.currency[row.stream.split(":", 1)[1]] = ev.payload["currency"]  # the chips' unit, for people
            if row.kind == "table.open.v1" and opened_by_importer(ring, ev.key_id):
                imported.add(row.stream.split(":", 1)[1])  # an imported hand history: evidence, in its own unit
                continue
            if row.kind == "round.open.v1":
                round_table[row.stream] = ev.payload["table"]
                rulings.opened(row.stream, ev.payload["game"], at)
                continue
            if row.kind in ("tournament.finish.v1", "tournament.cancel.v1") and on_day:
                ended.append(row.stream)
                continue
            if row.kind in ("ruling.v1", "incident.server_crash.v1"):
                rulings.record(row.stream, row.seq, row.kind, ev.payload, at, on_day)
                continue
            if walked is None:
                continue
            rulings.closed(row.stream, at)
            table = round_table.pop(row.stream, "")
            tracked = book.tracks(table)
            if not (on_day or tracked):
                continue
            rs, refused = walked
            problems = [{"check": "rules", "stream": row.stream, "seq": seq, "reason": exc.reason}
                        for seq, exc in refused if exc.check != "schema"]  # a schema's refusal is named above
            spoiled = len(problems) < len(refused)  # the round was walked without an event it holds
            money = None
            if rs is not None and not problems and not spoiled:
                money = round_money(rs.game, rs.engine.outcome(rs.st) if rs.engine else None,
                                    events[-1].payload.get("status", ""))
                total = sum(money.nets.values()) + money.house_net
                if total != 0:
                    problems.append({"check": "conservation", "stream": row.stream, "seq": events[-1].seq,
                                     "reason": f"players' results and the house's take sum to {total}, not 0"})
            if table not in imported and (tracked or on_day):
                # a round the rules refuse moves no chips here; its problem is named above (on its day)
                book.round_closed(events[-1], table, money if money and not problems else None, on_day)
            if on_day:
                closed += 1
                discrepancies += problems
                rounds_ok += not problems and not spoiled
        views.flush(top)
    after: list[dict[str, Any]] = list(book.problems)
    after += rulings.problems(lambda stream: store.event_at(stream, 1))
    tournament_report = []
    for stream in ended:
        events = store.stream_events(stream)
        try:
            t = tournaments.fold(stream, events)
        except EventError as exc:  # altered behind ingest's back: the rules refuse the stored stream
            after.append({"check": "tournament", "stream": stream, "seq": None, "reason": exc.reason})
            continue
        assert t is not None and t.end is not None
        e, m = t.end, tournaments.money_in(t)
        after += [{"check": "tournament", "stream": stream, "seq": events[-1].seq, "reason": why}
                          for why in tournaments.conservation(t)]
        tournament_report.append({
            "id": stream.split(":", 1)[1], "status": t.phase, "currency": t.rules["currency"],
            "money_in": m["total"], "fees": m["fees"],
            "prize_pool": e["prize_pool"], "paid": sum(v for p, v in e["prizes"].items() if not e["seats"].get(p)),
            "refunded": sum(e["refunds"].values()) + sum(e["fee_refunds"].values()),
            "bounties": sum(e["bounties"].values()), "breakage": e["breakage"]})

    after += cage.problems
    previous = min((size for size in checkpoint_sizes if size >= before_day), default=None)
    tables = sorted(book.days.values(), key=lambda t: t.table)
    return {
        "rounds_problems": discrepancies, "malformed": malformed, "after_views": after, "late": late, "unreceipted": unreceipted,
        "closed": closed, "day_events": day_events, "rounds_ok": rounds_ok,
        "floor_events": leaves_after(floor_leaves.runs, 0), "floor_leaves": floor_leaves.runs,
        "before_day": before_day, "previous": previous,
        "tournaments": tournament_report, "rulings": rulings.of_day(),
        "tables": [t.to_json() for t in tables],
        "tables_without_count": [t.table for t in tables if not t.counts],
        "aml_flags": [f.to_json() for f in scanner.flags() if f.day == day],
    }


def reconcile_day(store: Store, day: str, *, roots: TrustRoots | None = None, public_dir: Path | None = None,
                  since: str | None = None, accept_unchecked: bool = False, workers: int | None = None,
                  progress: Progress | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    day = real_day(day)
    say = progress or (lambda *args: None)
    tmp = tempfile.TemporaryDirectory()
    try:
        return _reconcile(store, day, roots, public_dir, since, accept_unchecked, workers, say, Path(tmp.name), started)
    finally:
        tmp.cleanup()


def _reconcile(store: Store, day: str, roots: TrustRoots | None, public_dir: Path | None, since: str | None,
               accept_unchecked: bool, workers: int | None, say: Progress, tmp: Path, started: float
               ) -> dict[str, Any]:
    """Verification on all cores with the day's pass beside it (``_Beside``), then the
    views compared and the verdict."""
    step = "verifying every event (signatures, keys, chains, checkpoints)"
    discrepancies: list[dict[str, Any]] = []
    beside = _Beside.start(store, day, DatabaseURL(backend="sqlite", path=tmp / "beside"), workers)
    try:
        say(step)
        # the pass beside keeps a core of its own: verification's workers yield to it (nice), and have every
        # core once it is done
        ver = verify_ledger(store, roots=roots, public_dir=public_dir, since=since, workers=workers,
                            progress=lambda done, total: say(step, done, total), nice=10 if beside else 0)
        day_pass, fresh_url, counts = _integrity_and_pass(store, day, ver, discrepancies, beside, say, tmp)
    finally:
        if beside is not None:
            beside.stop()
    return _verdict(store, day, ver, discrepancies, day_pass, fresh_url, counts, accept_unchecked, say, started)


def _integrity_and_pass(store: Store, day: str, ver: VerifyReport, discrepancies: list[dict[str, Any]],
                        beside: _Beside | None, say: Progress, tmp: Path) -> tuple[dict[str, Any], DatabaseURL, Accept]:
    """The integrity discrepancies from ``ver`` (into ``discrepancies``), then the day's
    pass: the one made beside verification when verification rejected no row (that pass
    counted every row, so it is the pass verification's verdicts give), else one made now
    without the rejected rows. Returns the pass, where it recomputed the views, and which
    rows count."""
    confirmed = compromise_rulings(store, frozenset(ver.rejected()))
    addressed = []
    rejected_list: list[tuple[str, int]] = []
    bad_rows: set[int] = set()
    for p in ver.problems:
        item = {"check": f"integrity:{p.check}", "stream": p.stream, "seq": p.seq, "reason": p.reason}
        ruling = None
        if p.check == "key" and "revoked" in p.reason and p.stream is not None and p.seq is not None:
            ruling = confirmed.get(event_ref(p.stream, p.seq))
        if ruling:  # untrusted (its key revoked), and a key-compromise ruling confirmed it: it counts
            addressed.append({**item, "ruling": ruling})
        else:
            discrepancies.append(item)
            if revoked_later(p.check, p.reason):
                continue  # a discrepancy until a ruling confirms it; the books still hold it
            if p.stream is not None and p.seq is not None:
                rejected_list.append((p.stream, p.seq))
            if p.notification_id is not None:
                bad_rows.add(p.notification_id)
    rejected = frozenset(rejected_list)  # what verification did not accept counts for nothing else

    def counts(nid: int, stream: str, seq: int, kind: str, state: bytes) -> bool:
        return nid not in bad_rows and (stream, seq) not in rejected

    step = (f"one pass over the log: replaying the rounds closed on {day}, following the chips at every table and"
            " the money at the cage, recomputing every view from zero, the AML scan")
    found = None
    if beside is not None and not rejected and not bad_rows:
        found = beside.result(lambda done, total: say(step, done, total))
    if found is not None:
        fresh_url = beside.fresh_url  # type: ignore[union-attr]  # found comes only from beside
    else:
        say(step)
        fresh_url = DatabaseURL(backend="sqlite", path=tmp / "recompute")
        found = _day_pass(store, day, counts, fresh_url, lambda done, total: say(step, done, total))
    found["addressed"] = addressed
    return found, fresh_url, counts


def _verdict(store: Store, day: str, ver: VerifyReport, discrepancies: list[dict[str, Any]], day_pass: dict[str, Any],
             fresh_url: DatabaseURL, counts: Accept, accept_unchecked: bool, say: Progress, started: float
             ) -> dict[str, Any]:
    discrepancies += day_pass["rounds_problems"]
    say("comparing every view with its recomputation")
    with ViewStore(store.url) as live, ViewStore(fresh_url) as fresh:
        malformed = frozenset(day_pass["malformed"])
        catch_up(store, live, accept=lambda nid, *rest: nid not in malformed and counts(nid, *rest))
        for name in live.views:
            discrepancies += view_differences(live, fresh, name)
    discrepancies += day_pass["after_views"]
    previous, before_day = day_pass["previous"], day_pass["before_day"]
    unreceipted, floor_events = day_pass["unreceipted"], day_pass["floor_events"]
    unanchored = leaves_after(day_pass["floor_leaves"], ver.accepted_size)
    # issue 14 point 2: the ledger still extends the previous day's checkpoint, the first
    # checkpoint that covers every event dated before the day
    if before_day:
        if previous is None:
            discrepancies.append({"check": "integrity:previous day", "stream": "ledger:checkpoints", "seq": None,
                                  "reason": f"no checkpoint covers the events dated before {day}: the day cannot be"
                                            " shown to extend the history already reconciled ('pitboss checkpoint')"})
        elif previous not in ver.accepted_sizes and not ver.unverified:
            discrepancies.append({"check": "integrity:previous day", "stream": "ledger:checkpoints", "seq": None,
                                  "reason": f"the previous day's checkpoint (size {previous}) was not accepted by"
                                            " verification (signed by the pinned log key, matched, witnessed)"})
    not_checked = ([f"table chips: {table} recorded chip movements on {day} but no count"
                    for table in day_pass["tables_without_count"]]
                   + ([f"received time: {unreceipted} events have no ledger receipt after them (ingested without"
                       " the ledger's log key, or after the last receipt): they count by their own date only"]
                      if unreceipted else [])
                   + ([f"anchoring: {unanchored} events of {day} come after the largest accepted checkpoint (size"
                       f" {ver.accepted_size}): they could be removed unseen; sign a checkpoint ('pitboss checkpoint')"
                       " before reconciling"] if unanchored and not ver.unverified else []))
    if discrepancies:
        verdict = "NOT RECONCILED"
    elif ver.unverified:  # nothing wrong (or only what rulings confirmed), but not checked against pinned roots
        verdict = "UNVERIFIED"
    elif floor_events == 0:
        verdict = "NOTHING TO RECONCILE"
    elif not_checked and not accept_unchecked:
        verdict = "INCOMPLETE"
    else:
        verdict = "RECONCILED"
    return {
        "day": day,
        "verdict": verdict,
        "trust_roots": ver.trust_roots,
        "verification": {"verdict": ver.verdict, "unverified": ver.unverified, "notes": ver.notes,
                         "accepted_size": ver.accepted_size, "uncovered": ver.uncovered,
                         "state_saved": ver.state_saved, "signatures_checked_with": ver.signatures_checked_with},
        "previous_day_checkpoint": previous,
        "accepted_unchecked": accept_unchecked and bool(not_checked),
        "aml_flags": day_pass["aml_flags"],
        "ok": verdict == "RECONCILED",
        "events_of_day": day_pass["day_events"],
        "rounds_closed": day_pass["closed"],
        "rounds_reconciled": day_pass["rounds_ok"],
        "ledger_events_verified": ver.events,
        "checkpoints_checked": ver.checkpoints_checked,
        "rulings": day_pass["rulings"],
        "untrusted_confirmed": day_pass["addressed"],
        "tournaments": day_pass["tournaments"],
        "tables": day_pass["tables"],
        "late_arrivals": day_pass["late"],
        "not_checked": not_checked,
        "aml_not_covered": list(NOT_COVERED),
        "discrepancies": discrepancies,
        "seconds": round(time.perf_counter() - started, 3),
    }

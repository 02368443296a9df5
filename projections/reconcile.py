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

The gaming day is the UTC date (a round belongs to the day it closed). A day's events are
those dated that day and those the ledger received that day (its receipts,
``ledger.receipt.v1``) though dated another: those late arrivals are listed, and
reconciled with the day they arrived, so no event escapes every day's reconciliation.
"""

from __future__ import annotations

import bisect
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ledger.events import EventError, event_from_stored
from ledger.judges import tournament as tournaments
from ledger.judges.round import walk
from ledger.kinds import RECEIPT_STREAM
from ledger.refs import event_ref
from ledger.store import DatabaseURL, Store
from ledger.timeutil import gaming_day
from ledger.verify import verify_ledger
from projections.aml import NOT_COVERED, scan_store
from projections.cage import CageBook
from projections.money import opened_by_importer, readable_keyring, round_money
from projections.rulings_check import RulingBook
from projections.runner import ViewStore, catch_up
from projections.table_chips import ChipBook

Progress = Callable[[str], None]


def compromise_rulings(store: Store) -> dict[str, str]:
    """Event ref -> the key-compromise ruling (``ruling.key_compromise.v1``) that confirmed it."""
    out: dict[str, str] = {}
    for row in store.rows_of_kind("ruling.key_compromise.v1"):
        for ref in orjson.loads(row.state)["payload"]["acts_on"]:
            out[ref] = event_ref(row.stream, row.seq)
    return out


def reconcile_day(store: Store, day: str, *, public_dir: Path | None = None, anchor: bytes | None = None,
                  workers: int | None = None, progress: Progress | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    say = progress or (lambda msg: None)
    discrepancies: list[dict[str, Any]] = []

    say("verifying every event (signatures, keys, chains, checkpoints)")
    ver = verify_ledger(store, public_dir=public_dir, anchor=anchor, workers=workers)
    confirmed = compromise_rulings(store)
    addressed = []
    for p in ver.problems:
        item = {"check": f"integrity:{p.check}", "stream": p.stream, "seq": p.seq, "reason": p.reason}
        ruling = None
        if p.check == "key" and "revoked" in p.reason and p.stream is not None and p.seq is not None:
            ruling = confirmed.get(event_ref(p.stream, p.seq))
        if ruling:  # untrusted (its key revoked), and a key-compromise ruling confirmed it
            addressed.append({**item, "ruling": ruling})
        else:
            discrepancies.append(item)

    # the ledger's clock (ledger.receipt.v1): an event was received by the first receipt after it in the log
    receipts = [(row.notification_id, orjson.loads(row.state)["payload"]["received"])
                for row in store.rows_of_kind("ledger.receipt.v1") if row.stream == RECEIPT_STREAM]
    receipt_ids = [nid for nid, _ in receipts]
    late: list[dict[str, Any]] = []
    unreceipted = 0

    say(f"replaying the rounds closed on {day}; following the chips at every table")
    closed: list[str] = []
    day_events = 0
    rounds_ok = 0
    book = ChipBook(day)
    rulings = RulingBook()
    ended: list[str] = []  # tournaments that ended on the day
    round_table: dict[str, str] = {}
    imported: set[str] = set()
    ring = readable_keyring(store)
    for row in store.rows():
        obj = orjson.loads(row.state)
        dated = gaming_day(obj["at"])
        k = bisect.bisect_left(receipt_ids, row.notification_id)
        received = receipts[k][1] if k < len(receipts) else None
        unreceipted += received is None
        # a day's events are those dated that day and those the ledger received that day, dated otherwise:
        # an event that arrives late is reconciled with the day it arrived (issue 13 point 3)
        on_day = dated == day or (received is not None and gaming_day(received) == day)
        if on_day and dated != day:
            late.append({"event": event_ref(row.stream, row.seq), "kind": row.kind, "at": obj["at"],
                         "received": received})
        day_events += on_day
        if row.stream.startswith("chips:"):
            book.chip_event(event_from_stored(row.state), on_day)
            continue
        if row.kind == "table.open.v1" and opened_by_importer(ring, obj["key_id"]):
            imported.add(row.stream.split(":", 1)[1])  # an imported hand history: evidence, in its own unit
            continue
        if row.kind == "round.open.v1":
            round_table[row.stream] = obj["payload"]["table"]
            rulings.opened(row.stream, obj["payload"]["game"], obj["at"])
            continue
        if row.kind in ("tournament.finish.v1", "tournament.cancel.v1") and on_day:
            ended.append(row.stream)
            continue
        if row.kind in ("ruling.v1", "incident.server_crash.v1"):
            rulings.record(row.stream, row.seq, row.kind, obj["payload"], obj["at"], on_day)
            continue
        if row.kind != "round.close.v1":
            continue
        rulings.closed(row.stream, obj["at"])
        tracked = book.tracks(round_table.get(row.stream, ""))
        if not (on_day or tracked):
            continue
        events = store.stream_events(row.stream)
        rs, refused = walk(events)
        problems = [{"check": "rules", "stream": row.stream, "seq": seq, "reason": exc.reason} for seq, exc in refused]
        money = None
        if rs is not None and not problems:
            money = round_money(rs.game, rs.engine.outcome(rs.st) if rs.engine else None,
                                events[-1].payload.get("status", ""))
            total = sum(money.nets.values()) + money.house_net
            if total != 0:
                problems.append({"check": "conservation", "stream": row.stream, "seq": events[-1].seq,
                                 "reason": f"players' results and the house's take sum to {total}, not 0"})
        table = round_table.get(row.stream, "")
        if table not in imported and (tracked or on_day):
            # a round the rules refuse moves no chips here; its problem is named above (on its day)
            book.round_closed(events[-1], table, money if money and not problems else None, on_day)
        if on_day:
            closed.append(row.stream)
            discrepancies += problems
            rounds_ok += not problems
    discrepancies += book.problems
    discrepancies += rulings.problems(lambda stream: store.event_at(stream, 1))
    tournament_report = []
    for stream in ended:
        events = store.stream_events(stream)
        try:
            t = tournaments.fold(stream, events)
        except EventError as exc:  # altered behind ingest's back: the rules refuse the stored stream
            discrepancies.append({"check": "tournament", "stream": stream, "seq": None, "reason": exc.reason})
            continue
        assert t is not None and t.end is not None
        e, m = t.end, tournaments.money_in(t)
        discrepancies += [{"check": "tournament", "stream": stream, "seq": events[-1].seq, "reason": why}
                          for why in tournaments.conservation(t)]
        tournament_report.append({
            "id": stream.split(":", 1)[1], "status": t.phase, "money_in": m["total"], "fees": m["fees"],
            "prize_pool": e["prize_pool"], "paid": sum(v for p, v in e["prizes"].items() if not e["seats"].get(p)),
            "refunded": sum(e["refunds"].values()) + sum(e["fee_refunds"].values()),
            "bounties": sum(e["bounties"].values()), "breakage": e["breakage"]})

    say("checking every view against a recomputation from zero; following the money at the cage")
    cage = CageBook(day)
    with ViewStore(store.url) as live:
        catch_up(store, live)
        with tempfile.TemporaryDirectory() as tmp:
            with ViewStore(DatabaseURL(backend="sqlite", path=Path(tmp) / "recompute")) as fresh:
                catch_up(store, fresh, observe=cage.event)  # from zero: every account's history
                for name in live.views:
                    a, b = live.rows(name), fresh.rows(name)
                    for table in a:
                        got, want = set(a[table]), set(b[table])
                        for extra in sorted(got - want, key=repr)[:20]:
                            discrepancies.append({"check": "projection", "stream": f"view:{table}", "seq": None,
                                                  "reason": f"row {extra} is not what the ledger gives"})
                        for missing in sorted(want - got, key=repr)[:20]:
                            discrepancies.append({"check": "projection", "stream": f"view:{table}", "seq": None,
                                                  "reason": f"row {missing} is missing"})
    discrepancies += cage.problems
    say("scanning for AML flags")
    flags = [f for f in scan_store(store) if f.day == day]
    return {
        "day": day,
        "aml_flags": [f.to_json() for f in flags],
        "ok": not discrepancies,
        "events_of_day": day_events,
        "rounds_closed": len(closed),
        "rounds_reconciled": rounds_ok,
        "ledger_events_verified": ver.events,
        "checkpoints_checked": ver.checkpoints_checked,
        "rulings": rulings.of_day(),
        "untrusted_confirmed": addressed,
        "tournaments": tournament_report,
        "tables": [t.to_json() for t in sorted(book.days.values(), key=lambda t: t.table)],
        "late_arrivals": late,
        "not_checked": [f"table chips: {t.table} recorded chip movements on {day} but no count"
                        for t in sorted(book.days.values(), key=lambda t: t.table) if not t.counts]
                       + ([f"received time: {unreceipted} events have no ledger receipt after them (ingested without"
                           " the ledger's log key, or after the last receipt): they count by their own date only"]
                          if unreceipted else [])
                       + [f"aml: {n}" for n in NOT_COVERED],
        "discrepancies": discrepancies,
        "seconds": round(time.perf_counter() - started, 3),
    }

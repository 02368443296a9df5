"""Importing PHH hand histories into the ledger, and exporting rounds back to PHH.

Import: each hand becomes one round on the table ``phh-import`` (opened by the importer
key on first use, game "poker", no dealing procedure: the hands were dealt elsewhere),
signed by an ``importer`` key. Hands are converted and judged by the poker engine first
(``ledger.importers.phh``); a refused hand is reported with its reason and the rest go in, in
atomic batches of whole hands. The round id is derived from the source key and the
hand's text, so importing the same file again reports the hands as already imported.

Export: a round of the poker engine written as a PHH hand (TOML) that pokerkit loads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

from ledger.clock import Clock
from ledger.games import RuleViolation
from ledger.games.poker import PokerEngine, final_stacks
from ledger.importers.phh import PhhError, hand_events, load_hands
from ledger.ingest import ingest_lines, write_receipt
from ledger.keys import KeyDirectory, Signer
from ledger.producer import BatchBuilder
from ledger.sim.sample import producer_signer
from ledger.store import Store

TABLE = "phh-import"
IMPORTER = "importer:phh"
HANDS_PER_BATCH = 200


def round_id_for(source: str, hand: dict[str, Any]) -> str:
    digest = hashlib.sha256((source + "\0" + repr(sorted(hand.items()))).encode()).hexdigest()
    return f"phh-{digest[:24]}"


def import_paths(store: Store, keys: KeyDirectory, paths: Iterable[str],
                 progress: Callable[[int], None] | None = None, receipts: Signer | None = None) -> list[dict[str, Any]]:
    """One result per input hand: {"source", "round"} or {"source", "error"} (in input order).
    With ``receipts`` (the ledger's log key) the ledger's receipt follows the import."""
    signer = producer_signer(store, keys, IMPORTER, "importer", [f"table:{TABLE}"])
    results: list[dict[str, Any]] = []
    pending: list[tuple[int, str, dict[str, Any], list[tuple[str, dict[str, Any]]]]] = []
    for path in paths:
        p = Path(path)
        try:
            hands = load_hands(p.read_text(encoding="utf-8"), p.suffix == ".phhs")
        except (OSError, UnicodeDecodeError, PhhError) as exc:
            results.append({"source": path, "error": f"cannot read: {exc}"})
            continue
        for section, hand in hands:
            source = f"{path}#{section}" if section is not None else path
            rid = round_id_for(source, hand)
            try:
                # another room's showdown, taken as the history records it (PokerRules.showdown)
                rules, events, _ = hand_events({"showdown": "as_recorded", **hand})
            except PhhError as exc:
                results.append({"source": source, "error": str(exc)})
                continue
            if store.head(f"round:{rid}") is not None:
                results.append({"source": source, "round": rid, "already_imported": True})
                continue
            results.append({"source": source, "round": rid})
            pending.append((len(results) - 1, rid, rules, events))
    _ensure_table(store, signer)
    done = 0
    for start in range(0, len(pending), HANDS_PER_BATCH):
        chunk = pending[start:start + HANDS_PER_BATCH]
        if _ingest_hands(store, signer, chunk) is not None:  # isolate the refused hand(s) one by one
            for item in chunk:
                refusal = _ingest_hands(store, signer, [item])
                if refusal is not None:
                    results[item[0]] = {"source": results[item[0]]["source"], "error": refusal}
        done += len(chunk)
        if progress:
            progress(done)
    if pending and receipts is not None:  # the ledger's clock for what was imported (ledger.receipt.v1)
        write_receipt(store, receipts, Clock())
    return results


def _ensure_table(store: Store, signer: Any) -> None:
    head = store.head(f"table:{TABLE}")
    if head is not None and head.kind == "table.open.v1":
        return
    b = BatchBuilder.for_store(store)
    b.add(signer, f"table:{TABLE}", "table.open.v1", {"game": "poker", "seats": 10, "currency": "CHIP"})
    report = ingest_lines(store, b.lines())
    if not report.ok:
        raise RuntimeError(f"cannot open the import table: {report.message}")


def _ingest_hands(store: Store, signer: Any, chunk: list[Any]) -> str | None:
    """Ingest whole hands as one atomic batch; None if stored, else why not."""
    b = BatchBuilder.for_store(store)
    for _, rid, rules, events in chunk:
        stream = f"round:{rid}"
        b.add(signer, stream, "round.open.v1", {"table": TABLE, "game": "poker", "rules": rules})
        for kind, payload in events:
            b.add(signer, stream, kind, payload)
        b.add(signer, stream, "round.close.v1", {"status": "complete"})
    report = ingest_lines(store, b.lines())
    return None if report.ok else ("; ".join(str(r) for r in report.rejections[:3]) or report.message)


# --- export --------------------------------------------------------------------------

def _amount(value: int | None, scale: str | None) -> str:
    if value is None:
        return "inf"
    if not scale:
        return str(value)
    return format((Decimal(value) * Decimal(scale)).normalize(), "f") if value else "0"


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def export_round(events: list[Any], config: dict[str, Any] | None = None) -> str:
    """A PHH hand (TOML text) for a stored poker round's events (round.open first), played
    by ``config``, the table configuration its round.open cites (``config_of``)."""
    opening = events[0]
    if opening.kind != "round.open.v1" or opening.payload["game"] != "poker":
        raise PhhError(f"{opening.stream} is not a poker round")
    rules = {**(config or {}).get("rules", {}), **opening.payload["rules"]}
    scale = rules.get("scale")
    engine = PokerEngine()
    st = engine.start(rules)
    actions: list[str] = []
    for ev in events[1:]:
        p = ev.payload
        if ev.kind == "round.close.v1":
            continue
        try:
            st = engine.apply(st, ev.kind, p)
        except RuleViolation as exc:
            raise PhhError(f"seq {ev.seq}: {exc.reason}") from None
        if ev.kind == "poker.deal.v1":
            actions.append(f"d db {''.join(p['cards'])}" if p["seat"] == 0
                           else f"d dh p{p['seat']} {''.join(p['cards'])}")
        elif ev.kind == "poker.draw.v1":
            actions.append(f"p{p['seat']} sd {''.join(p['discard'])}".rstrip())
        elif ev.kind == "poker.action.v1":
            verb = {"fold": "f", "check": "cc", "call": "cc", "bring_in": "pb"}.get(p["action"])
            actions.append(f"p{p['seat']} {verb}" if verb else f"p{p['seat']} cbr {_amount(p['to'], scale)}")
        elif ev.kind == "poker.show.v1":
            actions.append(f"p{p['seat']} sm {''.join(p['cards'])}" if p["cards"] else f"p{p['seat']} sm")
    n = len(rules["players"])
    lines = [
        f"variant = '{rules['variant']}'",
        f"ante_trimming_status = {'true' if rules.get('ante_trimming') else 'false'}",
        f"antes = {_toml_list([_amount(a, scale) for a in rules.get('antes') or [0] * n])}",
        f"blinds_or_straddles = {_toml_list([_amount(a, scale) for a in rules['blinds_or_straddles']])}",
    ]
    for key in ("bring_in", "min_bet", "small_bet", "big_bet"):
        if key in rules:
            lines.append(f"{key} = {_amount(rules[key], scale)}")
    lines.append(f"starting_stacks = {_toml_list([_amount(s, scale) for s in rules['starting_stacks']])}")
    lines.append("actions = " + _toml_list([repr(a) for a in actions]))
    lines.append("players = " + _toml_list([repr(p) for p in rules["players"]]))
    if all(s is not None for s in rules["starting_stacks"]) and st.phase == "done":
        lines.append(f"finishing_stacks = {_toml_list([_amount(s, scale) for s in final_stacks(st)])}")
    return "\n".join(lines) + "\n"

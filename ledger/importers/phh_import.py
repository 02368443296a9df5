"""Importing PHH hand histories into the ledger, and exporting rounds back to PHH.

Import: each hand becomes one round on the table ``phh-import`` (opened by the importer
key on first use, game "poker", no dealing procedure: the hands were dealt elsewhere),
signed by an ``importer`` key. Hands are converted and judged by the poker engine first
(``ledger.importers.phh``); a refused hand is reported with its reason and the rest go in, in
atomic batches of whole hands. The round id is derived from the hand's own content
(``round_id_for``), so the same hand imported again, from any path or file, is reported as
already stored. Each round's provenance (file name and SHA-256, section, the players'
names as written, the hand's metadata) is recorded beside it (``import.source.v1``,
``ledger.judges.provenance``). A directory stands for every .phh/.phhs file under it.

Export: a round of the poker engine written as a PHH hand (TOML, through ``tomli_w``)
that pokerkit loads, with the names and metadata its provenance recorded.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import math
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

from ledger.clock import Clock
from ledger.games import RuleViolation
from ledger.games.poker import PokerEngine, final_stacks
from ledger.importers.phh import PhhError, hand_events, load_hands
from ledger.ingest import ingest_lines, write_receipt
from ledger.judges.provenance import stream_for
from ledger.keys import KeyDirectory, Signer
from ledger.producer import BatchBuilder
from ledger.sim.sample import producer_signer
from ledger.store import Store

TABLE = "phh-import"
IMPORTER = "importer:phh"
HANDS_PER_BATCH = 200


GAME_FIELDS = frozenset({
    "variant", "ante_trimming_status", "antes", "blinds_or_straddles", "bring_in", "small_bet", "big_bet", "min_bet",
    "starting_stacks", "actions", "players", "finishing_stacks", "winnings",
    "rake", "dead_blinds", "odd_chip", "limit_reopen_at_half", "open_pair_big_bet", "showdown",
})
"""A hand's fields the round itself carries (its rules and events); the others (event,
venue, date, currency, ``_user`` fields...) are its metadata, kept in its provenance."""


def _plain(value: Any) -> Any:
    """A TOML value as JSON for the hand's content key (dates and floats as text)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, (datetime.date, datetime.time)):
        return {type(value).__name__: value.isoformat()}
    return value


def round_id_for(hand: dict[str, Any], fmt: str = "phh") -> str:
    """The round id of an imported hand, from the hand's own content (its TOML or JSON
    values as canonical JSON, SHA-256): the same hand from any file, under any path, is
    one round."""
    text = json.dumps(_plain(hand), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{fmt}-{hashlib.sha256(text.encode()).hexdigest()[:24]}"


def _meta(value: Any) -> Any:
    """A metadata value in the ledger's JSON subset (``ledger.kinds.JsonObject``): what
    JSON has no type for (floats, dates, times) is tagged so an export writes it back."""
    if isinstance(value, dict):
        return {k: _meta(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_meta(v) for v in value]
    if isinstance(value, float):
        return {"$toml": "float", "value": repr(value)}
    if isinstance(value, datetime.datetime):
        return {"$toml": "datetime", "value": value.isoformat()}
    if isinstance(value, (datetime.date, datetime.time)):
        return {"$toml": type(value).__name__, "value": value.isoformat()}
    return value


def _unmeta(value: Any) -> Any:
    if isinstance(value, dict):
        tag = value.get("$toml")
        if tag == "float":
            return float(value["value"])
        if tag in ("datetime", "date", "time"):
            return getattr(datetime, tag).fromisoformat(value["value"])
        return {k: _unmeta(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmeta(v) for v in value]
    return value


SUFFIXES = {"phh": (".phh", ".phhs"), "ohh": (".ohh", ".json")}


def hand_files(paths: Iterable[str], fmt: str = "phh") -> list[Path]:
    """The files named, a directory standing for every file of the format under it
    (recursively, in path order): .phh and .phhs, or .ohh and .json."""
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.suffix in SUFFIXES[fmt] and f.is_file()))
        else:
            out.append(p)
    return out


class _Read(NamedTuple):
    """One hand of a file: where it is, as written, as a PHH hand, why it is refused
    before any rule (or None), and the format's own check of the engine's result."""

    section: str | None
    written: dict[str, Any]
    hand: dict[str, Any]
    refused: str | None = None
    check: Callable[[Any, dict[str, Any]], str | None] | None = None


def _phh_hands(raw: bytes, p: Path) -> list[_Read]:
    return [_Read(section, hand, hand) for section, hand in load_hands(raw.decode("utf-8"), p.suffix == ".phhs")]


def _ohh_hands(raw: bytes, p: Path) -> list[_Read]:
    """An OHH file's hands converted to PHH (``ledger.importers.ohh``), each checked
    against the pots the file records."""
    from ledger.importers.ohh import load_ohh, ohh_to_phh

    out: list[_Read] = []
    for section, o in load_ohh(raw.decode("utf-8")):
        try:
            hand, order = ohh_to_phh(o)
        except PhhError as exc:
            out.append(_Read(section, o, {}, str(exc)))
            continue
        out.append(_Read(section, o, hand, check=functools.partial(_ohh_check, o, hand, order)))
    return out


def _ohh_check(o: dict[str, Any], hand: dict[str, Any], order: list[Any], st: Any, rules: dict[str, Any]) -> str | None:
    """Why the engine's final stacks differ from what the OHH hand's pots record, or None."""
    from ledger.importers.ohh import recorded_final_stacks

    want = recorded_final_stacks(o, hand, order)
    if want is None:
        return None
    factor = 10 ** (len(rules["scale"].split(".")[1]) if "scale" in rules else 0)
    got = [Decimal(v) / factor for v in final_stacks(st)]
    if got != want:
        return (f"the engine's final stacks {[str(g) for g in got]} differ from what the hand's pots record"
                f" {[str(w) for w in want]}")
    return None


def import_paths(store: Store, keys: KeyDirectory, paths: Iterable[str],
                 progress: Callable[[str, int, int], None] | None = None,
                 receipts: Signer | None = None, fmt: str = "phh") -> list[dict[str, Any]]:
    """One result per input hand (in input order): {"source", "round"} (with
    ``"already_imported": True`` when the ledger has that hand already) or {"source",
    "error"}. Each stored round gets its provenance (``import.source.v1``: the file's name
    and SHA-256, the section, the players' names, the hand's metadata). With ``receipts``
    (the ledger's log key) the ledger's receipt follows the import. ``progress(step,
    done, total)``: files read and judged, then hands stored."""
    signer = producer_signer(store, keys, IMPORTER, "importer", [f"table:{TABLE}"])
    results: list[dict[str, Any]] = []
    pending: list[tuple[int, str, dict[str, Any], list[tuple[str, dict[str, Any]]], dict[str, Any]]] = []
    seen: set[str] = set()
    read = _ohh_hands if fmt == "ohh" else _phh_hands
    files = hand_files(paths, fmt)
    for done_files, p in enumerate(files):
        if progress:
            progress("reading and judging the hands (files)", done_files, len(files))
        path = str(p)
        try:
            raw = p.read_bytes()
            hands = read(raw, p)
        except (OSError, UnicodeDecodeError, PhhError) as exc:
            results.append({"source": path, "error": f"cannot read: {exc}"})
            continue
        digest = hashlib.sha256(raw).hexdigest()
        for section, written, hand, refused, check in hands:
            source = f"{path}#{section}" if section is not None else path
            if refused is not None:
                results.append({"source": source, "error": refused})
                continue
            rid = round_id_for(written, fmt)
            try:
                # another room's showdown, taken as the history records it (PokerRules.showdown)
                rules, events, st = hand_events({"showdown": "as_recorded", **hand})
                problem = check(st, rules) if check is not None else None
                if problem:
                    raise PhhError(problem)
            except PhhError as exc:
                results.append({"source": source, "error": str(exc)})
                continue
            if rid in seen or store.head(f"round:{rid}") is not None:
                results.append({"source": source, "round": rid, "already_imported": True})
                continue
            seen.add(rid)
            names = [str(n) for n in hand.get("players") or []]
            if fmt == "ohh":
                from ledger.importers.ohh import GAME_FIELDS as OHH_FIELDS

                meta = {k: _meta(v) for k, v in written.items() if k not in OHH_FIELDS}
            else:
                meta = {k: _meta(v) for k, v in written.items() if k not in GAME_FIELDS}
            provenance = {"format": fmt, "file": p.name, "sha256": digest, "names": names, "meta": meta}
            if section is not None:
                provenance["section"] = section
            results.append({"source": source, "round": rid})
            pending.append((len(results) - 1, rid, rules, events, provenance))
    if progress:
        progress("reading and judging the hands (files)", len(files), len(files))
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
            progress("storing the hands", done, len(pending))
    if pending and receipts is not None:  # the ledger's clock for what was imported (ledger.receipt.v1)
        write_receipt(store, receipts, Clock())
    return results


def provenance_of(store: Store, round_stream: str) -> dict[str, Any] | None:
    """The round's ``import.source.v1`` payload, if it was imported with one."""
    events = store.stream_events(stream_for(round_stream))
    return dict(events[0].payload) if events else None


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
    for _, rid, rules, events, provenance in chunk:
        stream = f"round:{rid}"
        b.add(signer, stream, "round.open.v1", {"table": TABLE, "game": "poker", "rules": rules})
        for kind, payload in events:
            b.add(signer, stream, kind, payload)
        b.add(signer, stream, "round.close.v1", {"status": "complete"})
        b.add(signer, stream_for(stream), "import.source.v1", {"round": stream, "table": TABLE, **provenance})
    report = ingest_lines(store, b.lines())
    return None if report.ok else ("; ".join(str(r) for r in report.rejections[:3]) or report.message)


# --- export --------------------------------------------------------------------------

def _amount(value: int | None, scale: str | None) -> int | float:
    """An amount in the hand's own units: an integer, or a decimal where the hand had one
    (HandHQ's dollars); ``inf`` for a stack the source did not record."""
    if value is None:
        return math.inf
    if not scale:
        return value
    exact = Decimal(value) * Decimal(scale)
    return int(exact) if exact == exact.to_integral_value() else float(exact)


def export_round(events: list[Any], config: dict[str, Any] | None = None,
                 provenance: dict[str, Any] | None = None) -> str:
    """A PHH hand (TOML, written by ``tomli_w``) for a stored poker round's events
    (round.open first), played by ``config``, the table configuration its round.open cites
    (``config_of``). An imported round's ``provenance`` (``import.source.v1``) gives back
    the players' names as the source spelled them and the hand's metadata (event, year,
    currency...)."""
    import tomli_w

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
    names = (provenance or {}).get("names") or []
    doc: dict[str, Any] = {
        "variant": rules["variant"],
        "ante_trimming_status": bool(rules.get("ante_trimming")),
        "antes": [_amount(a, scale) for a in rules.get("antes") or [0] * n],
        "blinds_or_straddles": [_amount(a, scale) for a in rules["blinds_or_straddles"]],
    }
    for key in ("bring_in", "min_bet", "small_bet", "big_bet"):
        if key in rules:
            doc[key] = _amount(rules[key], scale)
    doc["starting_stacks"] = [_amount(s, scale) for s in rules["starting_stacks"]]
    doc["actions"] = actions
    doc["players"] = names if len(names) == n else list(rules["players"])
    if all(s is not None for s in rules["starting_stacks"]) and st.phase == "done":
        doc["finishing_stacks"] = [_amount(s, scale) for s in final_stacks(st)]
    for key, value in ((provenance or {}).get("meta") or {}).items():
        doc.setdefault(key, _unmeta(value))
    return tomli_w.dumps(doc)

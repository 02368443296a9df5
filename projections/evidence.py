"""Dispute evidence bundles: everything about one round that anyone can check offline.

``write_bundle`` (needs the ledger) writes a directory::

    manifest.json    format, round, checkpoint size, every file with its SHA-256
    events.jsonl     the signed events, one per line: the key ring up to the round, the
                     table's events since it opened, the equipment (shoe, wheel, dice)
                     events the round depended on, every event of the round
                     (rulings included) and what its rulings cite (a server crash)
    proofs/N.proof   a c2sp.org/tlog-proof@v1 inclusion proof of line N's event
    checkpoint.note  the signed checkpoint every proof is against
    log.vkey         the log's verifier key; house.pub: the operator's trust anchor
    outcome.json     the engine's re-derived outcome beside the recorded settlements,
                     the RNG commitment/reveal and re-derived draws, any differences,
                     the floor's rulings on the round and the game as it stood then
    report.md        a readable timeline, with the video references of every inspection

``verify_bundle`` (no database, no pitboss state) checks it all and returns the problems,
each naming the file or event: file hashes against the manifest; the checkpoint's
signature; the key ring from the trust anchor; every event's hash, signature and key
(as at its time), its chain, and its inclusion proof; and the round replayed through its
engine to the same outcome. The manifest is a convenience (it names an altered file at
once); the proof is the signatures and the Merkle paths to a signed checkpoint.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ledger.chain import link
from ledger.events import EventError, SignedEvent, parse_event, parse_json_line
from ledger.house import HouseError, PublicDir
from ledger.judges.round import derived_draws, walk
from ledger.keyring import KeyRing
from ledger.keys import KeyDirectory
from ledger.kinds import KEYRING_STREAM
from ledger.log.checkpoints import LeafIndex, create_checkpoint, stored_checkpoints
from ledger.log.merkle import ProofError
from ledger.log.note import NoteError
from ledger.log.proofs import inclusion_proof_text, verify_inclusion_proof
from ledger.refs import parse_ref
from ledger.store import Store

FORMAT = "pitboss.evidence.v1"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def round_evidence_events(store: Store, leaves: LeafIndex, stream: str) -> list[SignedEvent]:
    """The round's events and what it depended on, in ledger (leaf) order."""
    round_events = store.stream_events(stream)
    if not round_events or round_events[0].kind != "round.open.v1":
        raise HouseError(f"no round {stream} in the ledger")
    opening, last = round_events[0], round_events[-1]
    last_index = leaves.positions[(last.stream, last.seq)]
    open_index = leaves.positions[(opening.stream, opening.seq)]
    picked: list[SignedEvent] = [ev for ev in store.stream_events(KEYRING_STREAM)
                                 if leaves.positions[(ev.stream, ev.seq)] < last_index]
    table = [ev for ev in store.stream_events(f"table:{opening.payload['table']}")
             if leaves.positions[(ev.stream, ev.seq)] < open_index]
    opens = [i for i, ev in enumerate(table) if ev.kind == "table.open.v1"]
    picked += table[opens[-1]:] if opens else table
    source = opening.payload.get("source")
    if source and source != "rng":
        picked += [ev for ev in store.stream_events(source) if leaves.positions[(ev.stream, ev.seq)] < last_index]
    picked += round_events
    for ev in round_events:  # what a ruling acts on outside the round (the server crash it follows)
        for ref in ev.payload.get("acts_on", []) if ev.kind == "ruling.v1" else []:
            cited_stream, seq = parse_ref(ref)
            cited = store.event_at(cited_stream, int(seq))
            if cited is not None and cited.stream != stream and cited not in picked:
                picked.append(cited)
    return sorted(picked, key=lambda ev: leaves.positions[(ev.stream, ev.seq)])


def replay_outcome(events: list[SignedEvent], stream: str) -> dict[str, Any]:
    """The round walked through its engine: derived outcome, recorded results, problems."""
    mine = [e for e in events if e.stream == stream]
    recorded = [{"seq": ev.seq, "kind": ev.kind, **ev.payload} for ev in mine
                if ev.kind.endswith((".settle.v1", ".award.v1"))]
    status = next((ev.payload["status"] for ev in mine if ev.kind == "round.close.v1"), None)
    rs, refused = walk(mine)
    problems = [f"{stream} seq {seq}: {exc.reason}" for seq, exc in refused]
    derived = None
    if rs is not None and rs.engine is not None and rs.engine.close_problem(rs.st) is None:
        derived = rs.engine.outcome(rs.st)
    rulings = [{"seq": ev.seq, "signer": ev.actor, "at": ev.at, **ev.payload} for ev in mine if ev.kind == "ruling.v1"]
    return {"round": stream, "game": rs.game if rs else None, "status": status, "derived": derived,
            "recorded": recorded, "rng": derived_draws(rs) if rs is not None else None, "differences": problems,
            "rulings": rulings,
            "state_at_ruling": rs.engine.snapshot(rs.st) if rulings and rs is not None and rs.engine else None}


def write_bundle(store: Store, keys: KeyDirectory, public: PublicDir, round_id: str, out: Path) -> dict[str, Any]:
    stream = round_id if round_id.startswith("round:") else f"round:{round_id}"
    leaves = LeafIndex.read(store)
    events = round_evidence_events(store, leaves, stream)
    needed = max(leaves.positions[(ev.stream, ev.seq)] for ev in events) + 1
    cps = [sc for sc in stored_checkpoints(store) if sc.checkpoint.size >= needed]
    sc = cps[-1] if cps else create_checkpoint(store, keys, public)
    if sc.checkpoint.size < needed:  # pragma: no cover - a fresh checkpoint covers everything
        raise HouseError("no checkpoint covers the round")
    tree = leaves.tree()
    if tree.root(sc.checkpoint.size) != sc.checkpoint.root:
        raise HouseError(f"the stored leaves no longer match checkpoint size {sc.checkpoint.size}: run 'pitboss verify'")
    out.mkdir(parents=True, exist_ok=True)
    (out / "proofs").mkdir(exist_ok=True)
    files: dict[str, bytes] = {}
    files["events.jsonl"] = "".join(ev.to_json_line() + "\n" for ev in events).encode()
    for n, ev in enumerate(events, start=1):
        index = leaves.positions[(ev.stream, ev.seq)]
        proof = inclusion_proof_text(ev.to_dict(), index, tree.inclusion_proof(index, sc.checkpoint.size), sc.note)
        files[f"proofs/{n}.proof"] = proof.encode()
    files["checkpoint.note"] = sc.note.encode()
    files["log.vkey"] = public.vkey_file.read_bytes()
    files["house.pub"] = public.anchor_file.read_bytes()
    outcome = replay_outcome(events, stream)
    files["outcome.json"] = (json.dumps(outcome, indent=2, sort_keys=True) + "\n").encode()
    files["report.md"] = _report(stream, events, outcome, sc.checkpoint.size).encode()
    for name, data in files.items():
        (out / name).write_bytes(data)
    manifest = {"format": FORMAT, "round": stream, "checkpoint_size": sc.checkpoint.size, "events": len(events),
                "files": {name: _sha(data) for name, data in sorted(files.items())}}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def _report(stream: str, events: list[SignedEvent], outcome: dict[str, Any], size: int) -> str:
    lines = [f"# Evidence: {stream}", "",
             f"Game: {outcome['game']}. Status: {outcome['status']}. {len(events)} signed events, each with an"
             f" inclusion proof against the signed checkpoint of size {size}.", "",
             "Check it offline: `pitboss verify-bundle <this directory>` (add `--anchor` with the operator's"
             " published house key).", "", "## Timeline", "",
             "| # | time (UTC) | stream | seq | signer | kind | details |", "| --- | --- | --- | --- | --- | --- | --- |"]
    videos = []
    for n, ev in enumerate(events, start=1):
        detail = json.dumps(ev.payload, sort_keys=True, separators=(",", ":"))
        if len(detail) > 160:
            detail = detail[:157] + "..."
        lines.append(f"| {n} | {ev.at} | {ev.stream} | {ev.seq} | {ev.actor} | {ev.kind} | `{detail}` |")
        if "video" in ev.payload:
            v = ev.payload["video"]
            videos.append(f"- {ev.kind} ({ev.stream} seq {ev.seq}): camera {v['camera']}, {v['start']} to"
                          f" {v['end']}, footage SHA-256 `{v['sha256']}`")
    lines += ["", "## Video references", ""] + (videos or ["(none: no live equipment events)"])
    lines += ["", "## Outcome", "", "Derived by the engine from the events:", "", "```json",
              json.dumps(outcome["derived"], indent=2, sort_keys=True), "```", "",
              "Recorded settlements and awards:", "", "```json", json.dumps(outcome["recorded"], indent=2), "```", ""]
    if outcome["rng"]:
        lines += ["RNG commitment, revealed seed and draws re-derived from it:", "", "```json",
                  json.dumps(outcome["rng"], indent=2, sort_keys=True), "```", ""]
    lines += ["Differences between the record and the rules: "
              + ("none." if not outcome["differences"] else "; ".join(outcome["differences"])), ""]
    lines += ["## Rulings", ""]
    if not outcome["rulings"]:
        lines += ["None recorded for this round.", ""]
    for r in outcome["rulings"]:
        lines += [f"- seq {r['seq']}, {r['at']}, signed by {r['signer']}: **{r['effect']}** under {r['rule']},"
                  f" acting on {', '.join(r['acts_on'])}. Reason: {r['reason']}."
                  + (f" Re-dealt as round:{r['redeal']}." if r.get("redeal") else "")]
    if outcome["rulings"]:
        lines += ["", f"What it changed: the round closed **{outcome['status']}**; no stake was won or lost (every"
                  " player keeps the stack they started with). The game as it stood when ruled on:", "", "```json",
                  json.dumps(outcome["state_at_ruling"], indent=2, sort_keys=True, default=str), "```", ""]
    return "\n".join(lines)


def verify_bundle(path: Path, anchor: str | None = None, vkey: str | None = None) -> tuple[list[str], dict[str, Any]]:
    """(problems, summary). No database: everything comes from the directory (and the
    anchor / verifier key the caller pins, which should come from the operator, not the
    bundle)."""
    problems: list[str] = []
    try:
        manifest = json.loads((path / "manifest.json").read_text())
    except (OSError, ValueError) as exc:
        return [f"manifest.json: unreadable ({exc})"], {}
    if manifest.get("format") != FORMAT:
        problems.append(f"manifest.json: format is {manifest.get('format')!r}, not {FORMAT}")
    for name, digest in sorted(manifest.get("files", {}).items()):
        try:
            data = (path / name).read_bytes()
        except OSError:
            problems.append(f"{name}: missing")
            continue
        if _sha(data) != digest:
            problems.append(f"{name}: its SHA-256 differs from the manifest (the file was altered)")
    vkey_text = vkey or (path / "log.vkey").read_text().strip()
    anchor_text = (anchor or (path / "house.pub").read_text()).strip()
    note = (path / "checkpoint.note").read_text()
    lines = (path / "events.jsonl").read_bytes().splitlines()
    ring = KeyRing()
    heads: dict[str, SignedEvent] = {}
    events: list[SignedEvent] = []
    for n, line in enumerate(lines, start=1):
        where = f"events.jsonl line {n}"
        try:
            ev = parse_event(parse_json_line(line))
            where += f" ({ev.stream} seq {ev.seq})"
            ev.check_hash()
            prev = heads.get(ev.stream)
            if prev is not None and link((prev.seq, prev.hash), ev.seq, ev.prev) != "ok":
                raise EventError("chain", f"does not follow {ev.stream} seq {prev.seq}")
            if prev is None and ev.stream in (KEYRING_STREAM, manifest.get("round")) and \
                    link(None, ev.seq, ev.prev) != "ok":
                raise EventError("chain", f"{ev.stream} must start at seq 1 in the bundle")
            entry = ring.authorize(ev)
            if ev.stream == KEYRING_STREAM and ev.seq == 1 and entry.public_key.hex() != _anchor_hex(anchor_text):
                raise EventError("key", "the key ring's house key is not the trust anchor")
            ev.check_signature(entry.verifier)
            if ev.stream == KEYRING_STREAM:
                ring.apply(ev)
            heads[ev.stream] = ev
            events.append(ev)
        except EventError as exc:
            problems.append(f"{where}: {exc.check}: {exc.reason}")
            continue
        try:
            proof = (path / "proofs" / f"{n}.proof").read_text()
            verified = verify_inclusion_proof(proof, note, vkey_text)
            if verified.event.get("hash") != ev.hash:
                raise ProofError("the proof is for another event")
        except (OSError, ProofError, NoteError, ValueError) as exc:
            problems.append(f"proofs/{n}.proof ({ev.stream} seq {ev.seq}): {exc}")
    stream = manifest.get("round", "")
    derived = replay_outcome(events, stream)
    try:
        recorded_outcome = json.loads((path / "outcome.json").read_text())
    except (OSError, ValueError) as exc:
        problems.append(f"outcome.json: unreadable ({exc})")
        recorded_outcome = {}
    if derived["derived"] != recorded_outcome.get("derived"):
        problems.append("outcome.json: the outcome it states differs from the one the engine derives from the events")
    problems += [f"{stream}: {d}" for d in derived["differences"]]
    summary = {"round": stream, "events": len(lines), "verified_events": len(events),
               "checkpoint_size": manifest.get("checkpoint_size"), "outcome": derived["derived"]}
    return problems, summary


def _anchor_hex(text: str) -> str:
    """house.pub holds the house key's public key (hex, possibly with a label)."""
    for token in text.replace(":", " ").split():
        if len(token) == 64 and all(c in "0123456789abcdef" for c in token.lower()):
            return token.lower()
    return text

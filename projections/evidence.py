"""Dispute evidence bundles: everything about one round that anyone can check offline.

``write_bundle`` (needs the ledger) writes a directory::

    manifest.json    format, round, checkpoint size, every file with its SHA-256
    events.jsonl     the signed events, one per line: the key ring up to the round, the
                     table's events since it opened, the equipment (shoe, wheel, dice)
                     events the round depended on, every event of the round
                     (rulings included) and what its rulings cite (a server crash)
    proofs/N.tlog-proof  a c2sp.org/tlog-proof@v1 inclusion proof of line N's event
    checkpoint.note  the signed checkpoint every proof is against (with any witness
                     cosignatures); it states the key ring's head within its tree
    log.vkey         the log's verifier key (a ledger key of the bundle's key ring)
    outcome.json     the engine's re-derived outcome beside the recorded settlements,
                     the RNG commitment/reveal and re-derived draws, any differences,
                     the floor's rulings on the round and the game as it stood then,
                     the result in one sentence
    report.md        the round in plain language, the cards, the timeline, the video
                     references of every inspection (``projections.report``)
    report.html      the same as one self-contained page that re-checks the bundle in
                     the browser, offline

``verify_bundle`` (no database, no pitboss state) checks it all against the roots the
person running it pins (``ledger.trust``; issue 14 point 4) and returns the problems,
each naming the file or event: the manifest lists exactly the bundle's files, every path
inside the bundle and each file's SHA-256; the key ring from the pinned anchor, complete
up to the checkpoint (the checkpoint's signed ``pitboss/keyring`` line names its last
event), so a revocation made after the round still applies; ``log.vkey`` is a ledger key
of that key ring (and the pinned log key, when one is pinned); the checkpoint's
signature and, with pinned witnesses, a quorum of cosignatures; every event's hash,
signature and key (as at its time, by the whole key ring), its chain, and its inclusion
proof; and the round replayed through its engine to the same outcome. Every figure of
the verdict comes from signed data: the checkpoint size from the signed note, the events
from the ones that verified.
"""

from __future__ import annotations

import hashlib
import json
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ledger.chain import link
from ledger.events import EventError, SignedEvent, event_from_stored, parse_event, parse_json_line
from ledger.house import HouseError, PublicDir
from ledger.judges.round import derived_draws, walk
from ledger.keyring import KeyRing, load_keyring
from ledger.keys import KeyDirectory, describe_libsodium
from ledger.kinds import KEYRING_STREAM
from ledger.log.checkpoints import LeafIndex, SparseIndex, StoredCheckpoint, create_checkpoint, stored_checkpoints
from ledger.log.merkle import MerkleTree, ProofError, leaf_hash, verify_inclusion
from ledger.log.note import NoteError, VerifierKey, note_parts, open_checkpoint, verifier_key
from ledger.log.proofs import inclusion_proof_text, verify_inclusion_proof
from ledger.log.tiles import write_tiles
from ledger.refs import parse_ref
from ledger.store import Row, Store
from ledger.trust import TrustRoots
from projections.money import show, table_currency
from projections.report import report_html, report_markdown, report_model

FORMAT = "pitboss.evidence.v2"
PROOF_FILES = {"pitboss.evidence.v1": "proofs/{n}.proof", FORMAT: "proofs/{n}.tlog-proof"}
"""Where line N's inclusion proof is, by bundle format: v2 names proofs as c2sp.org/tlog-proof
says they SHOULD be named (``.tlog-proof``); v1 bundles (``.proof``) still verify."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


Located = tuple[int, SignedEvent]
"""An event with its leaf index in the log."""


class LogIndex(Protocol):
    """Where events sit in the log and the tree over them: ``LeafIndex`` (one pass over
    the log) or ``SparseIndex`` (the published tiles, a few rows)."""

    @property
    def size(self) -> int: ...
    def position(self, row: Row) -> int: ...
    def keyring_head(self, size: int) -> tuple[int, str] | None: ...
    def tree(self, size: int | None = None) -> MerkleTree: ...


def _located(leaves: LogIndex, rows: list[Row]) -> list[Located]:
    return [(leaves.position(r), event_from_stored(r.state)) for r in rows]


def round_evidence_events(store: Store, leaves: LogIndex, stream: str, ring_until: int) -> list[Located]:
    """The round's events and what it depended on, in ledger (leaf) order, with the whole
    key ring among the first ``ring_until`` leaves (the bundle's checkpoint); each with its
    leaf index. Reads the streams concerned, never the whole log."""
    round_events = _located(leaves, store.stream_rows(stream))
    if not round_events or round_events[0][1].kind != "round.open.v1":
        raise HouseError(f"no round {stream} in the ledger")
    (open_index, opening), (last_index, _) = round_events[0], round_events[-1]
    picked = [(i, ev) for i, ev in _located(leaves, store.stream_rows(KEYRING_STREAM)) if i < ring_until]
    table = [(i, ev) for i, ev in _located(leaves, store.stream_rows(f"table:{opening.payload['table']}"))
             if i < open_index]
    opens = [n for n, (_, ev) in enumerate(table) if ev.kind == "table.open.v1"]
    picked += table[opens[-1]:] if opens else table
    source = opening.payload.get("source")
    if source and source != "rng":
        picked += equipment_history(_located(leaves, store.stream_rows(source)), open_index, last_index)
    picked += round_events
    seen = {i for i, _ in picked}
    for _, ev in round_events:  # what a ruling acts on outside the round (the server crash it follows)
        for ref in ev.payload.get("acts_on", []) if ev.kind == "ruling.v1" else []:
            cited_stream, seq = parse_ref(ref)
            for i, cited in _located(leaves, store.row_at(cited_stream, int(seq))):
                if cited.stream != stream and i not in seen:
                    picked.append((i, cited))
                    seen.add(i)
    return sorted(picked, key=lambda located: located[0])


INSPECTIONS = ("shoe.inspect.v1", "wheel.inspect.v1", "dice.inspect.v1")


def equipment_history(events: list[Located], open_index: int, last_index: int) -> list[Located]:
    """What the round depends on of its equipment: the stream from its last inspection
    before the round opened (the run of inspections that passed it: dealer and floor, 000 II
    3.1.1-3.2.1), through the shuffle, cut and load, to the round's last event (a cut card
    that came out during it). Not the equipment's whole life: the equipment's rules restart
    at an inspection (``ledger.judges.equipment``), so nothing before it bears on the round."""
    before = [(i, ev) for i, ev in events if i < last_index]
    start = 0
    for n in range(len(before) - 1, -1, -1):
        if before[n][0] < open_index and before[n][1].kind in INSPECTIONS:
            start = n
            while start > 0 and before[start - 1][1].kind in INSPECTIONS:
                start -= 1
            break
    return before[start:]


def replay_outcome(events: list[SignedEvent], stream: str) -> dict[str, Any]:
    """The round walked through its engine: derived outcome, recorded results, problems."""
    mine = [e for e in events if e.stream == stream]
    recorded = [{"seq": ev.seq, "kind": ev.kind, **ev.payload} for ev in mine
                if ev.kind.endswith((".settle.v1", ".award.v1"))]
    status = next((ev.payload["status"] for ev in mine if ev.kind == "round.close.v1"), None)
    by_ref = {(ev.stream, ev.seq): ev for ev in events}
    rs, refused = walk(mine, lambda s, q: by_ref.get((s, q)))  # the table configuration it cites is in the bundle
    problems = [f"{stream} seq {seq}: {exc.reason}" for seq, exc in refused]
    derived = None
    if rs is not None and rs.engine is not None and rs.engine.close_problem(rs.st) is None:
        derived = rs.engine.outcome(rs.st)
    rulings = [{"seq": ev.seq, "signer": ev.actor, "at": ev.at, **ev.payload} for ev in mine if ev.kind == "ruling.v1"]
    result = None
    if rs is not None and rs.engine is not None and mine and mine[0].kind == "round.open.v1":
        currency = table_currency(events, mine[0].payload["table"])
        result = rs.engine.result(rs.st, lambda amount: show(amount, currency))
    return {"round": stream, "game": rs.game if rs else None, "status": status, "derived": derived,
            "recorded": recorded, "rng": derived_draws(rs) if rs is not None else None, "differences": problems,
            "result": result,
            "rulings": rulings,
            "state_at_ruling": rs.engine.snapshot(rs.st) if rulings and rs is not None and rs.engine else None}


def write_bundle(store: Store, keys: KeyDirectory, public: PublicDir, round_id: str, out: Path,
                 dispute: str | None = None, witnesses: tuple[str, ...] = (), quorum: int = 0) -> dict[str, Any]:
    """Write the bundle (module doc). ``dispute`` is what the player disputes, as support
    recorded it (the reports show it); ``witnesses`` the witness verifier keys (and
    ``quorum``) the page checks the checkpoint's cosignatures against, printed on it.

    The proofs come from the log's published tiles (``SparseIndex``: the round's streams,
    the notification ids and a few hundred hashes, not the whole log) when the tree they
    give has the signed checkpoint's root and every proof checks against it; otherwise
    from one pass over the log (``LeafIndex``), which must match the checkpoint or
    nothing is written."""
    stream = round_id if round_id.startswith("round:") else f"round:{round_id}"
    for fast in (True, False):
        made = _proven_events(store, keys, public, stream, SparseIndex(store, public.path) if fast else None)
        if made is not None:
            break
    assert made is not None  # the full pass raises rather than return None
    sc, located, proofs = made
    events = [ev for _, ev in located]
    note = sc.note
    published = public.checkpoint_file(sc.checkpoint.size)
    if published.is_file():  # the published copy carries any witness cosignatures
        try:
            text = published.read_text(encoding="utf-8")
            if note_parts(text)[0] == note_parts(note)[0]:
                note = text
        except (OSError, UnicodeDecodeError, NoteError):
            pass
    out.mkdir(parents=True, exist_ok=True)
    (out / "proofs").mkdir(exist_ok=True)
    files: dict[str, bytes] = {}
    files["events.jsonl"] = "".join(ev.to_json_line() + "\n" for ev in events).encode()
    for n, ((index, ev), proof) in enumerate(zip(located, proofs), start=1):
        files[PROOF_FILES[FORMAT].format(n=n)] = inclusion_proof_text(ev.to_dict(), index, proof, sc.note).encode()
    files["checkpoint.note"] = note.encode()
    log_key = next((e for e in load_keyring(store).keys.values() if e.role == "ledger" and e.actor == sc.checkpoint.origin
                    and _opens(sc.note, e.actor, e.public_key)), None)
    if log_key is None:
        raise HouseError(f"no ledger key of the key ring signed checkpoint size {sc.checkpoint.size}")
    files["log.vkey"] = (verifier_key(log_key.actor, log_key.public_key) + "\n").encode()
    outcome = replay_outcome(events, stream)
    files["outcome.json"] = (json.dumps(outcome, indent=2, sort_keys=True) + "\n").encode()
    model = report_model(stream, events, outcome, sc.checkpoint.size, dispute)
    files["report.md"] = report_markdown(model).encode()
    files["report.html"] = report_html(model, {
        "round": stream, "events": [ev.to_json_line() for ev in events],
        "proofs": [files[PROOF_FILES[FORMAT].format(n=n)].decode() for n in range(1, len(events) + 1)],
        "note": note, "vkey": files["log.vkey"].decode(), "witnesses": list(witnesses),
        "quorum": quorum or len(witnesses)}).encode()
    for name, data in files.items():
        (out / name).write_bytes(data)
    manifest = {"format": FORMAT, "round": stream, "checkpoint_size": sc.checkpoint.size, "events": len(events),
                "files": {name: _sha(data) for name, data in sorted(files.items())}}
    if dispute:
        manifest["dispute"] = dispute
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def _proven_events(store: Store, keys: KeyDirectory, public: PublicDir, stream: str,
                   sparse: SparseIndex | None) -> tuple[StoredCheckpoint, list[Located], list[list[bytes]]] | None:
    """The checkpoint, the bundle's events with their leaf indexes, and each one's inclusion
    proof, every proof checked against the checkpoint's root. With ``sparse`` (the tiles),
    None when its tree does not give that root or a proof fails; with the full pass, a
    HouseError then (the stored leaves no longer match a signed checkpoint)."""
    leaves: LogIndex = sparse if sparse is not None else LeafIndex.read(store)
    first = round_evidence_events(store, leaves, stream, leaves.size)
    needed = max(i for i, _ in first) + 1
    ring_head = leaves.keyring_head(leaves.size)
    # the checkpoint must cover the round and state the key ring as it is now (every revocation)
    cps = [sc for sc in stored_checkpoints(store) if sc.checkpoint.size >= needed
           and ring_head is not None and sc.checkpoint.keyring_head() == ring_head]
    if not cps:
        if sparse is not None and not sparse.count_rows():
            return None  # ids with a gap: the leaf indexes above were not ranks; the full pass decides
        create_checkpoint(store, keys, public)
        leaves = SparseIndex(store, public.path) if sparse is not None else LeafIndex.read(store)
        cps = [sc for sc in stored_checkpoints(store) if sc.checkpoint.size >= needed]
    sc = cps[-1]
    size, root = sc.checkpoint.size, sc.checkpoint.root
    located = round_evidence_events(store, leaves, stream, size)
    try:
        tree = leaves.tree(size)
        tree_root = tree.root(size)
        proofs = [tree.inclusion_proof(i, size) for i, _ in located]
    except ValueError:  # the rows a missing tile stands for were not all there: one pass over the log instead
        if sparse is not None:
            return None
        raise
    if tree_root != root:
        if sparse is not None:
            return None
        raise HouseError(f"the stored leaves no longer match checkpoint size {size}: run 'pitboss verify'")
    for (i, ev), proof in zip(located, proofs):
        try:
            verify_inclusion(leaf_hash(bytes.fromhex(ev.hash)), i, size, proof, root)
        except ProofError:
            if sparse is not None:
                return None
            raise HouseError(f"{ev.stream} seq {ev.seq} is not the event checkpoint size {size} holds at leaf {i}:"
                             " run 'pitboss verify'") from None
    if sparse is None:  # the leaves gave the signed root: mend any missing or altered tile with them
        write_tiles(public.path, tree.leaves[:size])
    return sc, located, proofs


def _opens(note: str, name: str, public_key: bytes) -> bool:
    try:
        open_checkpoint(note, VerifierKey.parse(verifier_key(name, public_key)))
        return True
    except NoteError:
        return False


MAX_FILE = 64 << 20
"""No file of a bundle is read past this (a manifest naming /dev/zero exhausts nothing)."""
REQUIRED = ("events.jsonl", "checkpoint.note", "log.vkey", "outcome.json")


def _bundle_path(root: Path, name: object) -> tuple[Path | None, str]:
    """The file a manifest entry names, if it is a plain relative path inside the bundle."""
    if not isinstance(name, str) or not name or not name.isprintable() or "\\" in name:
        return None, f"manifest.json: {name!r} is not a file name"
    parts = name.split("/")
    if name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None, f"manifest.json: {name!r} points outside the bundle"
    path = root.joinpath(*parts)
    try:
        real, base = path.resolve(strict=False), root.resolve()
    except OSError as exc:
        return None, f"manifest.json: {name!r}: {exc}"
    if base not in real.parents:
        return None, f"manifest.json: {name!r} points outside the bundle"
    return path, ""


def _read_regular(path: Path, label: str) -> tuple[bytes | None, str]:
    try:
        st = path.lstat()
    except OSError:
        return None, f"{label}: missing"
    if not stat.S_ISREG(st.st_mode):
        return None, f"{label}: not a regular file (a link, device or directory is refused)"
    if st.st_size > MAX_FILE:
        return None, f"{label}: larger than {MAX_FILE} bytes"
    with open(path, "rb") as f:
        data = f.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        return None, f"{label}: larger than {MAX_FILE} bytes"
    return data, ""


@dataclass
class BundleVerdict:
    verdict: str
    problems: list[str]
    unverified: list[str]
    summary: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.verdict == "OK"


def verify_bundle(path: Path, roots: TrustRoots | None = None) -> BundleVerdict:
    """Check a bundle offline against the pinned ``roots``: OK, FAILED (problems) or
    UNVERIFIED (nothing wrong found, but a root was not pinned or the witnesses' quorum
    is missing)."""
    roots = roots or TrustRoots()
    problems: list[str] = []
    unverified = [m for m in roots.missing() if "anchor" in m]
    checks: list[str] = []
    raw, why = _read_regular(path / "manifest.json", "manifest.json")
    try:
        manifest = json.loads(raw) if raw is not None else None
    except ValueError as exc:
        manifest, why = None, f"manifest.json: not JSON ({exc})"
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        return BundleVerdict("FAILED", [why or "manifest.json: no list of files"], unverified,
                             {"trust_roots": roots.describe()})
    if manifest.get("format") not in PROOF_FILES:
        problems.append(f"manifest.json: format is {manifest.get('format')!r}, not one of {', '.join(PROOF_FILES)}")
    proof_file = PROOF_FILES.get(str(manifest.get("format")), PROOF_FILES[FORMAT])
    files: dict[str, bytes] = {}
    listed: set[Path] = set()
    for name, digest in sorted(manifest["files"].items()):
        target, why = _bundle_path(path, name)
        if target is None:
            problems.append(why)
            continue
        listed.add(target.resolve())
        data, why = _read_regular(target, name)
        if data is None:
            problems.append(why)
            continue
        if _sha(data) != digest:
            problems.append(f"{name}: its SHA-256 differs from the manifest (the file was altered)")
        files[name] = data
    for found in sorted(path.rglob("*")):
        if found.is_dir() and not found.is_symlink():
            continue
        if found.resolve() not in listed and found.name != "manifest.json" or found.is_symlink():
            problems.append(f"{found.relative_to(path)}: not in the manifest (a bundle holds only what it lists)")
    for name in REQUIRED:
        if name not in manifest["files"]:
            problems.append(f"{name}: the manifest does not list it")
    checks.append("manifest: exactly the bundle's files, each inside it, each SHA-256")

    def text(name: str) -> str:
        try:
            return files.get(name, b"").decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{name}: not UTF-8")
            return ""

    vkey_text = text("log.vkey").strip()
    note = text("checkpoint.note")
    lines = files.get("events.jsonl", b"").splitlines()
    if not lines:
        problems.append("events.jsonl: the bundle holds no events: there is nothing it proves")
    vkey: VerifierKey | None = None
    cp = None
    try:
        vkey = VerifierKey.parse(vkey_text)
        if roots.log_key is not None and vkey != roots.log_key:
            problems.append(f"log.vkey: {vkey.name} is not the pinned log key {roots.log_key.name}")
        cp = open_checkpoint(note, vkey)
        checks.append(f"checkpoint: signed by {vkey.name}")
    except NoteError as exc:
        problems.append(f"checkpoint.note / log.vkey: {exc}")
    ring = KeyRing()
    heads: dict[str, SignedEvent] = {}
    events: list[tuple[int, SignedEvent]] = []
    anchor = roots.anchor
    stream = manifest.get("round", "")
    for n, line in enumerate(lines, start=1):
        where = f"events.jsonl line {n}"
        try:
            ev = parse_event(parse_json_line(line))
            where += f" ({ev.stream} seq {ev.seq})"
            ev.check_hash()
            prev = heads.get(ev.stream)
            if prev is not None and link((prev.seq, prev.hash), ev.seq, ev.prev) != "ok":
                raise EventError("chain", f"does not follow {ev.stream} seq {prev.seq}")
            if prev is None and ev.stream in (KEYRING_STREAM, stream) and link(None, ev.seq, ev.prev) != "ok":
                raise EventError("chain", f"{ev.stream} must start at seq 1 in the bundle")
            if ev.stream == KEYRING_STREAM:
                entry = ring.authorize(ev)
                if ev.seq == 1 and anchor is not None and entry.public_key != anchor:
                    raise EventError("key", "the key ring's house key is not the pinned trust anchor")
                ev.check_signature(entry.public_key)
                ring.apply(ev)
            heads[ev.stream] = ev
            events.append((n, ev))
        except EventError as exc:
            problems.append(f"{where}: {exc.check}: {exc.reason}")
            continue
        if cp is not None and vkey is not None:
            try:
                proof = text(proof_file.format(n=n))
                verified = verify_inclusion_proof(proof, note, vkey.text())
                if verified.event.get("hash") != ev.hash:
                    raise ProofError("the proof is for another event")
            except (ProofError, NoteError, ValueError) as exc:
                problems.append(f"{proof_file.format(n=n)} ({ev.stream} seq {ev.seq}): {exc}")
    checks.append("key ring: from the pinned anchor" if anchor is not None else "key ring: anchor NOT pinned")
    # the key ring must reach the checkpoint's stated head: no revocation left out
    ring_head = heads.get(KEYRING_STREAM)
    if cp is not None:
        claim = cp.keyring_head()
        if claim is None:
            problems.append("checkpoint.note: it does not state the key ring's head (pitboss/keyring), so the bundle"
                            " cannot show it carries every key-ring event up to it")
        elif ring_head is None or (ring_head.seq, ring_head.hash) != claim:
            problems.append(f"events.jsonl: the key ring stops at seq {ring_head.seq if ring_head else 0} but the"
                            f" checkpoint states it reaches seq {claim[0]}: key-ring events (a revocation?) are missing")
        else:
            checks.append(f"key ring: complete to seq {claim[0]}, as the checkpoint states")
    if vkey is not None and not any(e.role == "ledger" and e.actor == vkey.name and e.public_key == vkey.public_key
                                    for e in ring.keys.values()):
        problems.append(f"log.vkey: {vkey.name} is not a ledger key of the key ring (from the anchor): the bundle's"
                        " log is not the operator's")
    verified_events = 0
    for n, ev in events:  # every key as the whole key ring has it: a later revocation applies
        if ev.stream == KEYRING_STREAM:
            verified_events += 1
            continue
        try:
            entry = ring.authorize(ev)
            ev.check_signature(entry.public_key)
            verified_events += 1
        except EventError as exc:
            problems.append(f"events.jsonl line {n} ({ev.stream} seq {ev.seq}): {exc.check}: untrusted: {exc.reason}")
    checks.append("events: hash, signature, key and role at their time by the whole key ring, chain, inclusion proof")
    if roots.witnesses:
        try:
            names = roots.cosigners(note)
        except NoteError as exc:
            problems.append(f"checkpoint.note: {exc}")
            names = []
        if len(names) < roots.quorum:
            unverified.append(f"the checkpoint carries {len(names)} of the {roots.quorum} witness cosignatures required")
        else:
            checks.append(f"witnesses: cosigned by {', '.join(names)}")
    mine = [ev for _, ev in events]
    if not any(ev.stream == stream for ev in mine):
        problems.append(f"events.jsonl: no event of the round {stream!r} the manifest names")
    derived = replay_outcome(mine, stream)
    try:
        recorded_outcome = json.loads(files.get("outcome.json", b"{}"))
    except ValueError as exc:
        problems.append(f"outcome.json: unreadable ({exc})")
        recorded_outcome = {}
    if derived["derived"] != (recorded_outcome.get("derived") if isinstance(recorded_outcome, dict) else None):
        problems.append("outcome.json: the outcome it states differs from the one the engine derives from the events")
    problems += [f"{stream}: {d}" for d in derived["differences"]]
    checks.append("outcome: the round replayed through its engine")
    summary = {"round": stream, "events": len(lines), "verified_events": verified_events,
               "checkpoint_size": cp.size if cp is not None else None, "outcome": derived["derived"],
               "trust_roots": roots.describe(), "checks": checks, "signatures_checked_with": describe_libsodium()}
    verdict = "FAILED" if problems else ("UNVERIFIED" if unverified else "OK")
    return BundleVerdict(verdict, problems, unverified, summary)

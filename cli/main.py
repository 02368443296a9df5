"""``pitboss`` commands. Each parses, calls the ledger, prints text or ``--json``.

Exit codes (the same for every command):
  0  done (a duplicate batch counts: nothing new needed storing)
  1  refused or failed a check: a batch rejected, verification found a problem,
     a proof that does not verify
  2  usage or setup error: bad option, no ledger, missing key file
  3  conflict: another writer got there first; nothing stored; safe to retry
  4  the database could not be reached or failed mid-operation; nothing half-written
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click
from eventsourcing.persistence import PersistenceError

from ledger.house import HouseError, PublicDir
from ledger.keys import KeyDirectory, KeyFileError
from ledger.refs import parse_ref
from ledger.store import DatabaseURL, Store, StoreError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CONFLICT, EXIT_STORE = 0, 1, 2, 3, 4


@dataclass
class Context:
    db: DatabaseURL
    keys: KeyDirectory
    public: PublicDir

    def open(self, create: bool = False) -> Store:
        return Store.open(self.db, create=create)


def _emit(as_json: bool, data: dict[str, Any], text: str) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True))
    else:
        click.echo(text)


def _fail(as_json: bool, message: str, code: int) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"ok": False, "error": message}, indent=2))
    click.echo(f"pitboss: {message}", err=True)
    sys.exit(code)


class _Guard:
    """Turns the ledger's user-facing errors into a message and an exit code."""

    def __init__(self, as_json: bool):
        self.as_json = as_json

    def __enter__(self) -> _Guard:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            return
        if isinstance(exc, StoreError):
            code = EXIT_USAGE if "run 'pitboss init'" in str(exc) else EXIT_STORE
            _fail(self.as_json, str(exc), code)
        if isinstance(exc, (HouseError, KeyFileError)):
            _fail(self.as_json, str(exc), EXIT_USAGE)
        if isinstance(exc, (PersistenceError, sqlite3.Error)) or type(exc).__module__.startswith(("psycopg", "psycopg_pool")):
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            _fail(self.as_json, f"the database failed mid-operation (nothing half-written): {first}", EXIT_STORE)
        return


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", envvar="PITBOSS_DB", default="pitboss.db", show_default=True,
              help="Ledger store: a SQLite file (sqlite:///PATH or PATH) or postgresql://user@host/db[?schema=S].")
@click.option("--keys", "keys_dir", envvar="PITBOSS_KEYS", default=None,
              help="Private-key directory (PEM files, mode 0600). Default: pitboss-keys/ beside the SQLite file, or ./pitboss-keys.")
@click.option("--public", "public_dir", envvar="PITBOSS_PUBLIC", default=None,
              help="Published material: signed checkpoints, log verifier key, trust anchor. Default: pitboss-public/ beside the keys.")
@click.pass_context
def main(ctx: click.Context, db: str, keys_dir: str | None, public_dir: str | None) -> None:
    """pitboss: a signed, hash-chained game-audit ledger."""
    try:
        url = DatabaseURL.parse(db)
    except StoreError as exc:
        raise click.BadParameter(str(exc), param_hint="--db") from None
    base = url.path.parent if url.backend == "sqlite" and url.path else Path(".")
    keys = Path(keys_dir) if keys_dir else base / "pitboss-keys"
    public = Path(public_dir) if public_dir else base / "pitboss-public"
    ctx.obj = Context(url, KeyDirectory(keys), PublicDir(public))


@main.command()
@click.option("--origin", default=None, help="The log's origin (checkpoint key name). Default: pitboss.local/<random>.")
@click.option("--append-only", is_flag=True, help="PostgreSQL: refuse UPDATE, DELETE, TRUNCATE of events (trigger).")
@click.option("--service-role", default=None, help="PostgreSQL: create a role that may only SELECT and INSERT events.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def init(c: Context, origin: str | None, append_only: bool, service_role: str | None, as_json: bool) -> None:
    """Create the store, the house key (trust anchor) and the ledger's log key.

    On PostgreSQL, --append-only adds a trigger refusing UPDATE, DELETE and TRUNCATE of
    the events table for every role, and --service-role NAME a login role that may only
    SELECT and INSERT it (run ingest as that role). On a ledger that exists already,
    only these protections are applied."""
    from ledger.house import init_ledger
    from ledger.kinds import KEYRING_STREAM
    from ledger.log.note import NoteError, check_key_name
    from ledger.store import setup_append_only

    origin = f"pitboss.local/{os.urandom(4).hex()}" if origin is None else origin
    try:  # before anything is created: a refused origin leaves no empty database behind
        check_key_name(origin)
    except NoteError as exc:
        _fail(as_json, f"--origin: {exc}", EXIT_USAGE)
    out: dict[str, Any] = {"ok": True, "db": c.db.redacted()}
    text = []
    if (append_only or service_role) and c.db.backend != "postgres":
        _fail(as_json, "append-only at the database needs PostgreSQL; on SQLite, protect the file (read-only for"
                       " everyone but the ingest service) and rely on 'pitboss verify'", EXIT_USAGE)
    with _Guard(as_json), c.open(create=True) as store:
        if not ((append_only or service_role) and store.head(KEYRING_STREAM) is not None):
            house, log = init_ledger(store, c.keys, c.public, origin)
            out.update(keys=str(c.keys.path), public=str(c.public.path), house_key=house.key_id, log_key=log.key_id,
                       origin=origin)
            text.append(f"initialised {c.db.redacted()}\n  house key {house.key_id} (trust anchor:"
                        f" {c.public.anchor_file})\n  log key   {log.key_id} origin {origin}\n  private keys in"
                        f" {c.keys.path}")
        if append_only or service_role:
            out["append_only"] = setup_append_only(c.db, service_role)
            text += [f"  {line}" for line in out["append_only"]]
    _emit(as_json, out, "\n".join(text))


# --- keys --------------------------------------------------------------------------

@main.group()
def keys() -> None:
    """Manage the key ring (each change is a signed key-ring event)."""


_SCOPE_HELP = ("Where the key may write, repeatable: table:ID (the table, its chips, rounds and seats), shoe:ID, wheel:ID,"
               " dice:ID, tournament:ID; an ID ending in * is a prefix; '*' is venue-wide (house, ledger, cage, floor"
               " only, and their default). Required for dealer, table, game, rng and importer keys.")


@keys.command("create")
@click.argument("actor")
@click.option("--role", required=True, help="house, ledger, cage, floor, dealer, table, game, rng, importer")
@click.option("--kinds", default=None, help="Comma-separated kinds this key may sign (default: all of its role's).")
@click.option("--valid-from", default=None, help="UTC time the key becomes valid (default: now; not in the past).")
@click.option("--scope", "scope", multiple=True, help=_SCOPE_HELP)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def keys_create(c: Context, actor: str, role: str, kinds: str | None, valid_from: str | None, scope: tuple[str, ...],
                as_json: bool) -> None:
    """Generate a key for ACTOR and register it."""
    from ledger.house import create_key

    with _Guard(as_json), c.open() as store:
        signer = create_key(store, c.keys, actor, role, kinds.split(",") if kinds else None, valid_from,
                            list(scope) or None)
    _emit(as_json, {"ok": True, "key_id": signer.key_id, "actor": actor, "role": role},
          f"registered key {signer.key_id} for {actor} ({role})")


@keys.command("scope")
@click.argument("key_id")
@click.option("--scope", "scope", multiple=True, required=True, help=_SCOPE_HELP)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def keys_scope(c: Context, key_id: str, scope: tuple[str, ...], as_json: bool) -> None:
    """Change where KEY_ID may write (a key-ring event signed by the house)."""
    from ledger.house import rescope_key

    with _Guard(as_json), c.open() as store:
        rescope_key(store, c.keys, key_id, list(scope))
    _emit(as_json, {"ok": True, "key_id": key_id, "scope": list(scope)},
          f"key {key_id} may now write at {', '.join(scope)}")


@keys.command("rotate")
@click.argument("key_id")
@click.option("--effective", default=None, help="UTC time the new key takes over (default: now).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def keys_rotate(c: Context, key_id: str, effective: str | None, as_json: bool) -> None:
    """Replace KEY_ID by a new key for the same actor and role."""
    from ledger.house import rotate_key

    with _Guard(as_json), c.open() as store:
        signer = rotate_key(store, c.keys, key_id, effective)
    _emit(as_json, {"ok": True, "old_key_id": key_id, "key_id": signer.key_id},
          f"rotated {key_id} -> {signer.key_id}")


@keys.command("revoke")
@click.argument("key_id")
@click.option("--from", "revoked_from", required=True, help="UTC time from which KEY_ID's events are untrusted.")
@click.option("--reason", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def keys_revoke(c: Context, key_id: str, revoked_from: str, reason: str, as_json: bool) -> None:
    """Revoke KEY_ID from a time; events it signed before stay valid."""
    from ledger.house import revoke_key

    with _Guard(as_json), c.open() as store:
        revoke_key(store, c.keys, key_id, revoked_from, reason)
    _emit(as_json, {"ok": True, "key_id": key_id, "revoked_from": revoked_from},
          f"revoked {key_id} from {revoked_from}")


@keys.command("list")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def keys_list(c: Context, as_json: bool) -> None:
    """Show the key ring."""
    from ledger.house import describe_key
    from ledger.keyring import load_keyring

    with _Guard(as_json), c.open() as store:
        ring = load_keyring(store)
    rows = [describe_key(e) for e in ring.keys.values()]
    lines = []
    for r in rows:
        state = "revoked from " + str(r["revoked_from"]) if r["revoked_from"] else (
            "rotated at " + str(r["valid_until"]) if r["valid_until"] else "active")
        lines.append(f"{r['key_id']}  {r['role']:<8} {r['actor']:<30} from {r['valid_from']}  {state}"
                     f"  scope {','.join(r['scope'])}")  # type: ignore[arg-type]  # describe_key's scope is a list
    _emit(as_json, {"ok": True, "keys": rows}, "\n".join(lines) or "(no keys)")


# --- ingest, checkpoint, verify ------------------------------------------------------

@main.command()
@click.argument("file", type=click.File("rb"))
@click.option("--batch-size", type=click.IntRange(1, 200_000), default=None,
              help="Split FILE into consecutive atomic batches of this many lines (bulk loads). "
                   "Default: the whole file is one batch.")
@click.option("--retries", type=click.IntRange(0, 100), envvar="PITBOSS_RETRIES", default=3, show_default=True,
              help="Retries of a batch after a database failure (dropped connection, restart).")
@click.option("--backoff", type=click.FloatRange(0, 60), envvar="PITBOSS_BACKOFF", default=0.5, show_default=True,
              help="Seconds before the first retry; doubled each time.")
@click.option("--max-skew", type=click.IntRange(0, None), envvar="PITBOSS_MAX_SKEW", default=300, show_default=True,
              help="Seconds an event's at may differ from the ledger's clock (imported hand histories may be older).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def ingest(c: Context, file: Any, batch_size: int | None, retries: int, backoff: float, max_skew: int,
           as_json: bool) -> None:
    """Check and append a JSONL batch of signed events, all or nothing.

    After each stored batch the ledger writes a receipt signed by its log key (the
    ledger's clock, committed in the log). With --batch-size, each batch is all or nothing; the run stops at the first batch
    that is not stored, and the batches before it stay stored. A database failure
    (dropped connection, server restart) is retried --retries times with a backoff that
    doubles from --backoff seconds (a batch committed just before the failure comes back
    as a duplicate, never twice).
    """
    from datetime import timedelta

    from ledger.clock import Clock
    from ledger.ingest import file_batches, ingest_batches

    with _Guard(as_json), c.open() as store:  # the file is read as it is ingested, never held whole
        log = _log_key(store, c, as_json)
        batches = file_batches(file, batch_size)
        first = next(batches, iter(()))  # an empty file is one empty batch: refused, saying so
        reports = ingest_batches(store, itertools.chain([first], batches), retries, backoff,
                                 Clock(skew=timedelta(seconds=max_skew)), receipts=log)
    last = reports[-1]
    if last.status == "failed":
        tries = f" (after {retries} retries)" if retries else ""
        _fail(as_json, f"{last.message}{tries}; batches stored before it: {sum(r.ok for r in reports[:-1])}",
              EXIT_STORE)
    if batch_size is None:
        _emit(as_json, last.to_json(), "\n".join([last.message] + [f"  {r}" for r in last.rejections]))
    else:
        stored = sum(r.stored for r in reports)
        text = [f"batch {i}: {r.message}" for i, r in enumerate(reports, start=1)]
        text += [f"  {r}" for r in last.rejections]
        _emit(as_json, {"ok": all(r.ok for r in reports), "stored": stored,
                        "batches": [r.to_json() for r in reports]}, "\n".join(text))
    if last.status == "conflict":
        sys.exit(EXIT_CONFLICT)
    if last.status == "failed":
        sys.exit(EXIT_STORE)
    sys.exit(EXIT_OK if all(r.ok for r in reports) else EXIT_FAILED)


def _log_key(store: Store, c: Context, as_json: bool) -> Any:
    """The ledger's log key from --keys: what ingest signs its receipts with (the ledger's
    clock, ``ledger.receipt.v1``); exit 2 without it, before anything is read or stored."""
    from ledger.house import active_signer
    from ledger.keyring import load_keyring

    try:
        return active_signer(load_keyring(store), c.keys, "ledger")
    except HouseError as exc:
        _fail(as_json, f"ingest records the ledger's clock in receipts signed by its log key: {exc}", EXIT_USAGE)


@main.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def checkpoint(c: Context, as_json: bool) -> None:
    """Sign a checkpoint of the whole ledger and publish it."""
    import base64

    from ledger.log.checkpoints import create_checkpoint

    with _Guard(as_json), c.open() as store:
        sc = create_checkpoint(store, c.keys, c.public)
    cp = sc.checkpoint
    _emit(as_json, {
        "ok": True, "origin": cp.origin, "size": cp.size, "root": base64.b64encode(cp.root).decode(),
        "file": str(c.public.checkpoint_file(cp.size)), "note": sc.note,
    }, f"checkpoint {cp.size} events, root {base64.b64encode(cp.root).decode()}\n"
       f"  published {c.public.checkpoint_file(cp.size)}")


def _read_anchor(value: str) -> bytes:
    text = Path(value).read_text().strip() if Path(value).is_file() else value.strip()
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise click.BadParameter("must be a 64-hex-digit Ed25519 public key or a file holding one", param_hint="--anchor")
    return raw


@main.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--anchor", default=None, help="Pinned house public key (hex, or a file). Default: house.pub in the public directory.")
@click.option("--workers", type=click.IntRange(1, 64), default=None, help="Processes for signature checks (default: all cores).")
@click.option("--deep", is_flag=True, help="Also re-run the ingest schema checks on every stored event.")
@click.option("--quiet", is_flag=True, help="No progress output.")
@click.pass_obj
def verify(c: Context, as_json: bool, anchor: str | None, workers: int | None, deep: bool, quiet: bool) -> None:
    """Re-check every signature, chain link, sequence and checkpoint. Exit 1 on any problem."""
    from ledger.verify import verify_ledger

    started = time.monotonic()
    last = [started]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if quiet or now - last[0] < 1.0:
            return
        last[0] = now
        rate = done / max(now - started, 1e-9)
        click.echo(f"verified {done}/{total} events ({rate:,.0f}/s)", err=True)

    with _Guard(as_json):
        pinned = _read_anchor(anchor) if anchor else (
            _read_anchor(str(c.public.anchor_file)) if c.public.anchor_file.is_file() else None)
        with c.open() as store:
            report = verify_ledger(store, public_dir=c.public.path, anchor=pinned, workers=workers, deep=deep,
                                   progress=progress)
    head = (f"{'OK' if report.ok else 'FAILED'}: {report.events} events in {report.streams} streams, "
            f"{report.checkpoints_checked} checkpoint comparisons, tree size {report.tree_size}, "
            f"{report.seconds:.2f}s")
    if not report.anchor_pinned:
        head += "\n  warning: trust anchor not pinned (no --anchor and no house.pub): the key ring was checked against itself"
    lines = [head] + [f"  {p}" for p in report.problems]
    _emit(as_json, report.to_json(), "\n".join(lines))
    sys.exit(EXIT_OK if report.ok else EXIT_FAILED)


# --- proofs ------------------------------------------------------------------------

@main.group()
def proof() -> None:
    """Export and check Merkle inclusion and consistency proofs (checkable offline)."""


@proof.command("inclusion")
@click.argument("stream")
@click.argument("seq", type=int)
@click.option("--size", type=int, default=None, help="Checkpoint size to prove against (default: the latest covering it).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), required=True)
@click.pass_obj
def proof_inclusion(c: Context, stream: str, seq: int, size: int | None, output: str) -> None:
    """Write a c2sp tlog-proof for event STREAM SEQ."""
    from ledger.log.checkpoints import inclusion_proof

    with _Guard(False), c.open() as store:
        text = inclusion_proof(store, stream, seq, size)
    Path(output).write_text(text)
    click.echo(f"wrote {output}")


@proof.command("consistency")
@click.argument("old_size", type=int)
@click.argument("new_size", type=int)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), required=True)
@click.pass_obj
def proof_consistency(c: Context, old_size: int, new_size: int, output: str) -> None:
    """Write a consistency proof between two stored checkpoints (and their notes beside it)."""
    from ledger.log.checkpoints import consistency_proof

    with _Guard(False), c.open() as store:
        text, old_note, new_note = consistency_proof(store, old_size, new_size)
    out = Path(output)
    out.write_text(text)
    out.with_name(f"{out.name}.old.note").write_text(old_note)
    out.with_name(f"{out.name}.new.note").write_text(new_note)
    click.echo(f"wrote {out} with {out.name}.old.note and {out.name}.new.note")


@proof.command("check-inclusion")
@click.argument("proof_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--vkey", required=True, type=click.Path(exists=True, dir_okay=False), help="The log's verifier key file.")
@click.option("--checkpoint", "checkpoint_file", type=click.Path(exists=True, dir_okay=False), default=None)
@click.option("--json", "as_json", is_flag=True)
def proof_check_inclusion(proof_file: str, vkey: str, checkpoint_file: str | None, as_json: bool) -> None:
    """Check an inclusion proof offline (no database)."""
    from ledger.log.merkle import ProofError
    from ledger.log.note import NoteError
    from ledger.log.proofs import verify_inclusion_proof

    try:
        res = verify_inclusion_proof(
            Path(proof_file).read_text(), Path(checkpoint_file).read_text() if checkpoint_file else None,
            Path(vkey).read_text(),
        )
    except (ProofError, NoteError) as exc:
        _fail(as_json, f"proof does not verify: {exc}", EXIT_FAILED)
    ev = res.event
    _emit(as_json, {"ok": True, "stream": ev["stream"], "seq": ev["seq"], "index": res.index,
                    "tree_size": res.checkpoint.size},
          f"OK: {ev['stream']} seq {ev['seq']} is leaf {res.index} of the {res.checkpoint.size}-event log")


@proof.command("check-consistency")
@click.argument("proof_file", type=click.Path(exists=True, dir_okay=False))
@click.argument("old_note", type=click.Path(exists=True, dir_okay=False))
@click.argument("new_note", type=click.Path(exists=True, dir_okay=False))
@click.option("--vkey", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True)
def proof_check_consistency(proof_file: str, old_note: str, new_note: str, vkey: str, as_json: bool) -> None:
    """Check a consistency proof offline (no database)."""
    from ledger.log.merkle import ProofError
    from ledger.log.note import NoteError
    from ledger.log.proofs import verify_consistency_proof

    try:
        old, new = verify_consistency_proof(
            Path(proof_file).read_text(), Path(old_note).read_text(), Path(new_note).read_text(),
            Path(vkey).read_text(),
        )
    except (ProofError, NoteError) as exc:
        _fail(as_json, f"proof does not verify: {exc}", EXIT_FAILED)
    _emit(as_json, {"ok": True, "old_size": old.size, "new_size": new.size},
          f"OK: the {new.size}-event log extends the {old.size}-event log unchanged")


# --- replay ---------------------------------------------------------------------------

@main.command()
@click.argument("round_id")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def replay(c: Context, round_id: str, as_json: bool) -> None:
    """Replay ROUND_ID step by step through its game engine; exit 1 on any difference."""
    from projections.replay import ReplayError, replay_round

    with _Guard(as_json), c.open() as store:
        try:
            rep = replay_round(store, round_id)
        except ReplayError as exc:
            _fail(as_json, str(exc), EXIT_USAGE)
    lines = [f"{rep.round}  {rep.game} at table {rep.table}  rules {json.dumps(rep.rules, sort_keys=True)}"]
    if not rep.engine:
        lines.append(f"  (no {rep.game} engine yet: events are checked for signatures only)")
    for s in rep.steps:
        body = json.dumps(s.payload, sort_keys=True, separators=(",", ":"))
        lines.append(f"  {s.seq:>3} {s.at} {s.actor:<16} {s.kind:<26} {body}")
        if s.state and "to_act" in s.state and "board" in s.state:  # poker: the table after the step
            st = s.state
            stacks = " ".join(f"s{x['seat']}:{x['stack']}" + ("" if x["in_hand"] else "(out)") for x in st["seats"])
            lines.append(f"      board {''.join(st['board']) or '-'}  pot {st['pot']}  stacks {stacks}"
                         f"  to act: {('seat ' + str(st['to_act'])) if st['to_act'] else '-'}")
        if s.problem:
            lines.append(f"      !! {s.problem}")
    if rep.outcome is not None:
        lines.append(f"derived outcome: {json.dumps(rep.outcome, sort_keys=True)}")
    lines.append("OK: the recorded round agrees with the engine" if rep.ok
                 else f"DIFFERS at seq {rep.differences[0]['seq']}: {rep.differences[0]['reason']}")
    _emit(as_json, rep.to_json(), "\n".join(lines))
    sys.exit(EXIT_OK if rep.ok else EXIT_FAILED)


@main.group("import")
def import_() -> None:
    """Bring hand histories written elsewhere into the ledger (signed by an importer key)."""


@import_.command("phh")
@click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def import_phh(c: Context, paths: tuple[str, ...], as_json: bool) -> None:
    """Import PHH (.phh) and PHHS (.phhs) hand histories, one round per hand.

    Each hand is judged by the poker engine; a hand that breaks the rules or stops before
    it is over is refused with the reason, the rest go in. Exit 1 if any hand is refused.
    """
    from ledger.importers.phh_import import import_paths

    def progress(done: int) -> None:
        if not as_json:
            click.echo(f"  ... {done} hands stored", err=True)

    with _Guard(as_json), c.open() as store:
        results = import_paths(store, c.keys, paths, progress, receipts=_log_key(store, c, as_json))
    errors = [r for r in results if "error" in r]
    if as_json:
        click.echo(json.dumps(results, indent=2))
    else:
        for r in results:
            click.echo(f"{r['source']}: " + (f"REFUSED {r['error']}" if "error" in r else
                                             f"{r['round']}" + (" (already imported)" if r.get("already_imported") else "")))
        click.echo(f"{len(results) - len(errors)} hands imported or already present, {len(errors)} refused")
    sys.exit(EXIT_FAILED if errors else EXIT_OK)


@main.group()
def export() -> None:
    """Write ledger rounds in formats other tools read."""


@export.command("phh")
@click.argument("round_id")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write to this file (default: standard output).")
@click.pass_obj
def export_phh(c: Context, round_id: str, output: str | None) -> None:
    """Write poker round ROUND_ID as a PHH hand (TOML) that pokerkit can load."""
    from ledger.importers.phh import PhhError
    from ledger.importers.phh_import import export_round

    stream = round_id if round_id.startswith("round:") else f"round:{round_id}"
    with _Guard(False), c.open() as store:
        events = store.stream_events(stream)
    if not events:
        _fail(False, f"no round {stream} in the ledger", EXIT_USAGE)
    try:
        text = export_round(events)
    except PhhError as exc:
        _fail(False, str(exc), EXIT_FAILED)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


# --- dispute evidence ------------------------------------------------------------------

@main.command()
@click.argument("round_id")
@click.option("-o", "--output", type=click.Path(file_okay=False), required=True, help="Directory to write the bundle to.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def evidence(c: Context, round_id: str, output: str, as_json: bool) -> None:
    """Write ROUND_ID's evidence bundle: signed events, inclusion proofs, outcome, report.

    Signs a new checkpoint first if none covers the round yet.
    """
    from projections.evidence import write_bundle

    with _Guard(as_json), c.open() as store:
        manifest = write_bundle(store, c.keys, c.public, round_id, Path(output))
    _emit(as_json, {"ok": True, "bundle": output, **manifest},
          f"wrote {output}: {manifest['events']} events with inclusion proofs against checkpoint size"
          f" {manifest['checkpoint_size']}; check it with 'pitboss verify-bundle {output}'")


@main.command("verify-bundle")
@click.argument("bundle", type=click.Path(exists=True, file_okay=False))
@click.option("--anchor", default=None, help="The operator's house key (hex or a file): pin it rather than trust the bundle's copy.")
@click.option("--vkey", default=None, help="The log's verifier key (text or a file): pin it rather than trust the bundle's copy.")
@click.option("--json", "as_json", is_flag=True)
def verify_bundle_cmd(bundle: str, anchor: str | None, vkey: str | None, as_json: bool) -> None:
    """Check an evidence bundle offline (no database); exit 1 naming what does not hold."""
    from projections.evidence import verify_bundle

    anchor_hex = _read_anchor(anchor).hex() if anchor else None
    vkey_text = (Path(vkey).read_text().strip() if vkey and Path(vkey).is_file() else vkey)
    problems, summary = verify_bundle(Path(bundle), anchor_hex, vkey_text)
    ok = not problems
    text = ([f"OK: {summary.get('verified_events')} events of {summary.get('round')} verified: signatures, keys,"
             f" chains, inclusion in checkpoint size {summary.get('checkpoint_size')}, and the engine's outcome"]
            if ok else ["NOT VERIFIED:"] + [f"  {p}" for p in problems])
    _emit(as_json, {"ok": ok, "problems": problems, **summary}, "\n".join(text))
    sys.exit(EXIT_OK if ok else EXIT_FAILED)


@main.command()
@click.option("--day", required=True, help="The gaming day, YYYY-MM-DD (UTC).")
@click.option("--anchor", default=None, help="Pin the trust anchor (hex or a file).")
@click.option("--workers", type=click.IntRange(1, 256), default=None)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def reconcile(c: Context, day: str, anchor: str | None, workers: int | None, as_json: bool) -> None:
    """Reconcile a gaming day; exit 0 only when every check holds (1 lists each discrepancy)."""
    import re

    from projections.reconcile import reconcile_day

    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        _fail(as_json, f"--day must be YYYY-MM-DD, not {day!r}", EXIT_USAGE)

    def progress(msg: str) -> None:
        if not as_json:
            click.echo(f"  ... {msg}", err=True)

    with _Guard(as_json), c.open() as store:
        report = reconcile_day(store, day, public_dir=c.public.path,
                               anchor=_read_anchor(anchor) if anchor else None, workers=workers, progress=progress)
    text = [f"{day}: {report['rounds_closed']} rounds closed, {report['events_of_day']} events;"
            f" {report['ledger_events_verified']} ledger events verified"]
    text += [f"  {d['check']}: {d['stream']} seq {d['seq']}: {d['reason']}" for d in report["discrepancies"]]
    text += [f"  not checked: {n}" for n in report["not_checked"]]
    text.append("RECONCILED" if report["ok"] else f"NOT RECONCILED: {len(report['discrepancies'])} discrepancies")
    _emit(as_json, report, "\n".join(text))
    sys.exit(EXIT_OK if report["ok"] else EXIT_FAILED)


@main.command()
@click.argument("table_id")
@click.option("--at", "at", default=None, help="As of this UTC time (YYYY-MM-DDTHH:MM:SS[.ffffff]Z).")
@click.option("--seq", type=click.IntRange(1), default=None, help="As of this seq of the table's own stream.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def table(c: Context, table_id: str, at: str | None, seq: int | None, as_json: bool) -> None:
    """A table as it stood: open or closed, equipment, the round in progress, rounds closed."""
    from ledger.timeutil import parse_utc
    from projections.table_state import TableStateError, table_state

    if at is not None:
        try:
            parse_utc(at)
        except ValueError as exc:
            _fail(as_json, f"--at: {exc}", EXIT_USAGE)
    with _Guard(as_json), c.open() as store:
        try:
            st = table_state(store, table_id, at, seq)
        except TableStateError as exc:
            _fail(as_json, str(exc), EXIT_USAGE)
    text = [f"table {st['table']} as of {st['as_of']}: {'open' if st['open'] else 'closed'}, game {st['game']},"
            f" dealing {st['dealing'] or '-'}, currency {st['currency']}; {st['rounds_closed']} rounds closed"]
    text += [f"  {e['stream']}: {e['stage']}, inspected by {', '.join(e['inspected_by']) or 'nobody'}"
             + (f", last hand {e['last_hand_round']}" if e["last_hand_round"] else "") for e in st["equipment"]]
    for r in st["open_rounds"]:
        text.append(f"  round in progress {r['round']} ({r['game']}): {json.dumps(r['state'], sort_keys=True)}")
    text += [f"  !! {p}" for p in st["problems"]]
    _emit(as_json, st, "\n".join(text))


@main.group()
def aml() -> None:
    """Anti-money-laundering flags (rules and thresholds: projections/aml.py)."""


@aml.command("flags")
@click.option("--day", default=None, help="Only flags of this gaming day (YYYY-MM-DD).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def aml_flags(c: Context, day: str | None, as_json: bool) -> None:
    """Scan the ledger and list every flag (deterministic: the same ledger, the same flags)."""
    from projections.aml import NOT_COVERED, scan_store

    with _Guard(as_json), c.open() as store:
        flags = [f for f in scan_store(store) if day in (None, f.day)]
    text = [f"{f.id}  {f.day}  {f.rule:<20} {','.join(f.players):<24} {f.amount:>12}  {f.reason}" for f in flags]
    _emit(as_json, {"flags": [f.to_json() for f in flags], "count": len(flags), "not_covered": NOT_COVERED},
          "\n".join(text + [f"{len(flags)} flags"]))


@aml.command("show")
@click.argument("flag_id")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def aml_show(c: Context, flag_id: str, as_json: bool) -> None:
    """One flag with the events that raised it."""
    from projections.aml import scan_store

    with _Guard(as_json), c.open() as store:
        found = [f for f in scan_store(store) if f.id == flag_id]
        if not found:
            _fail(as_json, f"no flag {flag_id!r}", EXIT_USAGE)
        flag = found[0]
        events = []
        for ref in flag.events:
            stream, seq = parse_ref(ref)
            ev = store.event_at(stream, int(seq))
            events.append(ev.to_dict() if ev else {"missing": ref})
    text = [f"{flag.id} {flag.rule} {flag.day} players {', '.join(flag.players)} amount {flag.amount}", flag.reason]
    text += [f"  {e.get('stream')} seq {e.get('seq')} {e.get('at')} {e.get('kind')} {json.dumps(e.get('payload'))}"
             for e in events]
    _emit(as_json, {**flag.to_json(), "event_details": events}, "\n".join(text))


# --- projections -------------------------------------------------------------------

@main.group()
def projections() -> None:
    """The read-side views (balances, tables, rounds), kept beside the ledger."""


def _progress(as_json: bool) -> Any:
    last = [0.0]

    def report(done: int, top: int) -> None:
        now = time.monotonic()
        if not as_json and (now - last[0] > 2 or done == top):
            last[0] = now
            click.echo(f"  ... {done}/{top} events applied", err=True)
    return report


@projections.command("status")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def projections_status(c: Context, as_json: bool) -> None:
    """Each view's position (last event applied) and lag behind the ledger."""
    from projections.runner import ViewStore

    with _Guard(as_json), c.open() as store, ViewStore(store.url) as vs:
        top = store.max_notification_id()
        views = [{"view": n, "position": vs.position(n), "lag": top - vs.position(n)} for n in vs.views]
    _emit(as_json, {"ledger_position": top, "views": views},
          "\n".join([f"ledger at {top}"] + [f"  {v['view']:<10} position {v['position']:>8}  lag {v['lag']}"
                                            for v in views]))


@projections.command("run")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def projections_run(c: Context, as_json: bool) -> None:
    """Catch every view up with the ledger (from where each stopped)."""
    from projections.runner import ViewStore, catch_up

    with _Guard(as_json), c.open() as store, ViewStore(store.url) as vs:
        reports = catch_up(store, vs, progress=_progress(as_json))
    _emit(as_json, {"views": [r.__dict__ for r in reports]},
          "\n".join(f"{r.view}: {r.events} events applied, now at {r.position}" for r in reports))


@projections.command("rebuild")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def projections_rebuild(c: Context, name: str | None, as_json: bool) -> None:
    """Rebuild NAME (or every view) from the first event."""
    from projections.runner import ViewStore, rebuild
    from projections.views import VIEWS

    if name is not None and name not in VIEWS:
        _fail(as_json, f"no view {name!r}; views: {', '.join(VIEWS)}", EXIT_USAGE)
    with _Guard(as_json), c.open() as store, ViewStore(store.url) as vs:
        reports = rebuild(store, vs, [name] if name else None, progress=_progress(as_json))
    _emit(as_json, {"views": [r.__dict__ for r in reports]},
          "\n".join(f"{r.view}: rebuilt from zero, {r.events} events, now at {r.position}" for r in reports))


@main.command()
@click.argument("player", required=False)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def balances(c: Context, player: str | None, as_json: bool) -> None:
    """Player balances, chips in play per table, house revenue per table and gaming day,
    and outstanding liabilities (views caught up first; projections/balances.py)."""
    from projections.balances import balances_report
    from projections.runner import ViewStore, catch_up

    with _Guard(as_json), c.open() as store, ViewStore(store.url) as vs:
        catch_up(store, vs, ["accounts", "chips", "tables"])
        report = balances_report(vs.rows("accounts")["accounts"], vs.rows("chips")["chips"],
                                 vs.rows("tables")["tables"], player)
    if player is not None:
        if not report["accounts"]:
            _fail(as_json, f"no account {player!r} in the ledger", EXIT_USAGE)
        report = {"accounts": report["accounts"]}
    text = [f"{x['player']:<20} {x['currency']:<5} balance {x['balance']:>12}  (at the cage {x['at_cage']}, chips"
            f" {x['chips_in_play']}; deposits {x['deposits']}, withdrawals {x['withdrawals']}, transfers"
            f" +{x['transfers_in']}/-{x['transfers_out']}, games {x['game_net']} over {x['rounds']} rounds)"
            for x in report["accounts"]] or ["no accounts"]
    if player is None:
        text += [f"chips in play at {t['table']}: {t['chips']} {t['currency']}" for t in report["chips_in_play"]]
        text += [f"house revenue {r['table']} {r['day']}: net {r['house_net']} {r['currency']} (commission"
                 f" {r['commission']}, rake {r['rake']}, {r['rounds']} rounds)" for r in report["house_revenue"]]
        text += [f"outstanding liabilities: {amount} {cur}" for cur, amount in report["liabilities"].items()]
    _emit(as_json, report, "\n".join(text))


# --- game rules ----------------------------------------------------------------------

@main.group()
def rules() -> None:
    """What the configured game rules imply (computed from the engines)."""


@rules.command("house-edge")
@click.argument("game")
@click.option("--json", "as_json", is_flag=True)
def rules_house_edge(game: str, as_json: bool) -> None:
    """Exact house edge of every bet of GAME, by enumeration over the engine's outcomes.

    GAME is a name one of the game engines offers (baccarat, roulette-european,
    roulette-american, ...); an unknown name is a usage error that lists them all.
    """
    from ledger.games import house_edge_names

    names = house_edge_names()
    if game not in names:
        _fail(as_json, f"no house edge for {game!r}; available: {', '.join(names)}", EXIT_USAGE)
    engine, method = names[game]
    edges = engine.house_edge(game)
    data = {"game": game, "method": method,
            "bets": {b: {**{k: v for k, v in e.items() if k != "edge"}, "edge": float(e["edge"]),
                         "edge_exact": str(e["edge"])} for b, e in edges.items()}}
    text = [f"{game}: house edge by bet ({method})"]
    text += [f"  {b:<12} pays {e['pays']:>4} to 1   edge {float(e['edge']) * 100:.4f}%" for b, e in edges.items()]
    _emit(as_json, data, "\n".join(text))


# --- the casino-night demo ---------------------------------------------------------------

@main.command()
@click.option("--seed", type=int, default=7, show_default=True, help="The night's games, players and patterns.")
@click.option("--hands", type=click.IntRange(7, 1_000_000), default=210, show_default=True, help="Rounds to deal.")
@click.option("-o", "--output", type=click.Path(file_okay=False), default=None,
              help="Where the evidence bundle goes (default: beside the SQLite ledger, or ./).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def demo(c: Context, seed: int, hands: int, output: str | None, as_json: bool) -> None:
    """Simulate a casino night through the real producer path, then run the nightly jobs:
    views, reconciliation of the day, AML flags, and one disputed round's evidence."""
    from ledger.sim.demo import run_demo
    from projections.aml import scan_store
    from projections.evidence import write_bundle
    from projections.reconcile import reconcile_day
    from projections.runner import ViewStore, catch_up

    def say(msg: str) -> None:
        if not as_json:
            click.echo(f"  ... {msg}", err=True)

    out = Path(output) if output else (c.db.path.parent if c.db.backend == "sqlite" and c.db.path else Path("."))
    with _Guard(as_json), c.open() as store:
        summary = run_demo(store, c.keys, c.public, seed=seed, hands=hands, progress=say)
        disputed = summary["disputed_round"]
        say(f"writing the evidence bundle of the disputed round {disputed}")
        bundle = out / f"evidence-{disputed.split(':', 1)[1]}"
        write_bundle(store, c.keys, c.public, disputed, bundle)
        summary["evidence"] = str(bundle)
        say("bringing the views up to date")
        with ViewStore(store.url) as vs:
            catch_up(store, vs)
        day = utc_now_day()
        say(f"reconciling the gaming day {day}")
        report = reconcile_day(store, day, public_dir=c.public.path, progress=say)
        flags = [f for f in scan_store(store) if f.day == day]
    tid = summary.pop("tournament")
    summary.update(gaming_day=day, aml_flags=len(flags), reconciled=report["ok"],
                   aml_rules=sorted({f.rule for f in flags}), discrepancies=len(report["discrepancies"]),
                   tournaments=[{k: t[k] for k in ("id", "prize_pool", "paid", "refunded")}
                                for t in report["tournaments"] if t["id"] == tid])
    text = [f"casino night {day}: {summary['rounds']} rounds at {summary['tables']} tables, {summary['events']} signed"
            f" events ingested",
            f"reconciliation: {'RECONCILED' if report['ok'] else 'NOT RECONCILED'}"
            f" ({report['rounds_closed']} rounds replayed)",
            f"AML flags: {len(flags)} ({', '.join(summary['aml_rules'])}): pitboss aml flags",
            f"rulings: {', '.join(r['effect'] + ' ' + r['round'] for r in summary['rulings'])}",
            *[f"tournament {t['id']}: prize pool {t['prize_pool']}, paid {t['paid']}, refunded {t['refunded']}"
              for t in summary["tournaments"]],
            f"disputed round {summary['disputed_round']}: evidence in {summary['evidence']}"
            f" (pitboss verify-bundle {summary['evidence']})",
            "balances: pitboss balances; tables: pitboss table TABLE_ID; replay: pitboss replay ROUND_ID"]
    _emit(as_json, summary, "\n".join(text))
    sys.exit(EXIT_OK if report["ok"] else EXIT_FAILED)


def utc_now_day() -> str:
    from ledger.timeutil import gaming_day, utc_now

    return gaming_day(utc_now())


# --- sample producer -------------------------------------------------------------------

@main.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), required=True)
@click.option("--rounds", type=click.IntRange(1, 100_000), default=5, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def sample(c: Context, output: str, rounds: int, as_json: bool) -> None:
    """Write a small signed batch (a table, rounds, cash) through the producer SDK.

    Registers a floor, dealer and cage key on first use. The batch is not ingested:
    feed it to 'pitboss ingest'.
    """
    from ledger.sim.sample import write_sample_batch

    with _Guard(as_json), c.open() as store:
        n = write_sample_batch(store, c.keys, Path(output), rounds)
    _emit(as_json, {"ok": True, "file": output, "events": n}, f"wrote {n} signed events to {output}")


if __name__ == "__main__":  # pragma: no cover
    main()

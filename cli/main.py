"""``pitboss`` commands. Each parses, calls the ledger, prints text or ``--json``.

Exit codes: ``EXIT_CODES`` below, the one table for every command (also in ``--help``
and the README).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from cli import EXIT_INTERRUPTED
from cli import interrupted as _interrupted

if TYPE_CHECKING:
    from eventsourcing.persistence import PersistenceError

    from ledger.house import HouseError, PublicDir
    from ledger.keys import KeyDirectory, KeyFileError
    from ledger.log.witness import WitnessError
    from ledger.refs import parse_ref
    from ledger.store import DatabaseURL, Store, StoreError
    from ledger.trust import TrustError, TrustRoots

_RUNTIME = {
    "PersistenceError": "eventsourcing.persistence", "HouseError": "ledger.house", "PublicDir": "ledger.house",
    "KeyDirectory": "ledger.keys", "KeyFileError": "ledger.keys", "WitnessError": "ledger.log.witness",
    "parse_ref": "ledger.refs", "DatabaseURL": "ledger.store", "Store": "ledger.store", "StoreError": "ledger.store",
    "TrustError": "ledger.trust", "TrustRoots": "ledger.trust",
}


def _load_runtime() -> None:
    """Import the ledger when a command runs, not to print help: the ledger (every game
    engine, the event schemas, the database libraries) costs about 20 times a bare Python
    start, which ``pitboss --help`` and shell completion should not pay. The names above
    become this module's globals; every command runs through ``main`` below, which calls
    this first.

    The garbage collector is off while the ledger is imported (class bodies, schemas and
    registries: tens of thousands of objects, none of them garbage, which would set off
    collections that find nothing), as it is while ``ledger.kinds.Registry`` loads a
    game's module: a one-round command such as ``pitboss evidence`` starts about 15 ms
    sooner. What the import made is then frozen out of the collector's way
    (``gc.freeze``) until verification, which freezes its own heap before forking its
    workers, unfreezes everything once they are done."""
    import gc
    import importlib

    g = globals()
    if "Store" not in g:
        # No third-party pydantic plugin: any package installed beside pitboss may declare
        # one (an entry point of the "pydantic" group), which pydantic would import and
        # hook into every validation of an event, code nobody asked pitboss to run: the
        # verdicts are pitboss's and pydantic's alone. (Not for speed: looking for them
        # costs about 1% of importing the ledger, by instruction count.)
        os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
        collecting = gc.isenabled()  # not ledger.collector.paused: importing it imports the ledger, unpaused
        gc.disable()
        try:
            for name, module in _RUNTIME.items():
                g[name] = getattr(importlib.import_module(module), name)
        finally:
            if collecting:
                gc.enable()
        gc.freeze()

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CONFLICT, EXIT_STORE = 0, 1, 2, 3, 4
EXIT_UNVERIFIED, EXIT_NOTHING, EXIT_INTERNAL = 5, 6, 70
EXIT_CODES = (
    (EXIT_OK, "OK / RECONCILED / stored: the check was made, completely, against the roots you pinned"),
    (EXIT_FAILED, "FAILED / NOT RECONCILED / refused: a check found a problem (each one is listed)"),
    (EXIT_USAGE, "usage or setup error: a bad option or date, no ledger, a missing key file"),
    (EXIT_CONFLICT, "conflict: another writer got there first; nothing stored; safe to retry"),
    (EXIT_STORE, "the database could not be reached, failed mid-operation, or its writers' lock stayed taken;"
                 " nothing half-written"),
    (EXIT_UNVERIFIED, "UNVERIFIED / INCOMPLETE: nothing wrong was found, but a trust root was not pinned, no"
                      " accepted checkpoint anchors the ledger, or a check could not be made"),
    (EXIT_NOTHING, "NOTHING TO RECONCILE / nothing to scan: the day holds no events to judge"),
    (EXIT_INTERNAL, "internal error: a bug in pitboss (one line on stderr; please report it)"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C, SIGINT): nothing half-written; under --json, {\"interrupted\": true}"),
)
_EPILOG = "\b\nExit codes (every command):\n" + "\n".join(f"  {c:>3}  {m}" for c, m in EXIT_CODES)
ENVIRONMENT = (
    ("PITBOSS_DB", "the ledger store (--db)"),
    ("PITBOSS_KEYS", "the private-key directory (--keys)"),
    ("PITBOSS_PUBLIC", "the published-material directory (--public)"),
    ("PITBOSS_QUIET", "1: no progress output (-q)"),
    ("PITBOSS_TRUST", "the verifier configuration holding the roots you pin (--trust)"),
    ("PITBOSS_ANCHOR", "the house key you pin (--anchor)"),
    ("PITBOSS_LOG_KEY", "the log verifier key you pin (--log-key)"),
    ("PITBOSS_WITNESSES", "witness verifier keys, ';'-separated (--witness)"),
    ("PITBOSS_WITNESS_QUORUM", "cosignatures required (--witness-quorum)"),
    ("PITBOSS_STATE", "where a verifier keeps the last checkpoint it accepted (--state)"),
    ("PITBOSS_RETRIES, PITBOSS_BACKOFF, PITBOSS_MAX_SKEW", "ingest's --retries, --backoff, --max-skew"),
    ("PITBOSS_LOCK_TIMEOUT", "seconds a writer waits for PostgreSQL's writers' lock (default 30)"),
    ("PITBOSS_SQLITE_LOCK_TIMEOUT", "seconds a writer waits for a locked SQLite file (default 10)"),
    ("PITBOSS_LIBSODIUM", "bundled: check signatures with PyNaCl's copy of libsodium, not the machine's own"),
)
JSON_HELP = "One JSON document on standard output (money in integer minor units)."
_ENV_EPILOG = "\b\nEnvironment:\n" + "\n".join(f"  {n}: {m}" for n, m in ENVIRONMENT)


@dataclass
class Context:
    db: DatabaseURL
    keys: KeyDirectory
    public: PublicDir
    quiet: bool = False

    def open(self, create: bool = False) -> Store:
        return Store.open(self.db, create=create)

    def progress(self, as_json: bool, unit: str = "events", quiet: bool = False) -> Progress:
        """Progress for a person watching: shown only when stderr is a terminal, never
        under --json or -q (``quiet``: a command's own -q; cron mails whatever a job prints)."""
        return Progress(not (self.quiet or quiet) and not as_json and sys.stderr.isatty(), unit)


class Progress:
    """Progress bars on stderr (tqdm: counts, rate and ETA) for long commands, or nothing.

    ``stage(msg)`` starts a step (a line, or a bar once it reports counts);
    ``count(done, total)`` moves the current step's bar (``total`` None: counts and rate
    only). Use as a context manager so the last bar is closed before the verdict prints."""

    def __init__(self, shown: bool, unit: str = "events"):
        self.shown, self.unit = shown, unit
        self.bar: Any = None
        self.step = ""

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def stage(self, msg: str, done: int | None = None, total: int | None = None) -> None:
        if not self.shown:
            return
        if msg != self.step:
            self.close()
            self.step = msg
            if done is None:
                click.echo(f"  ... {msg}", err=True)
        if done is not None:
            self._move(done, total)

    def count(self, done: int, total: int | None = None) -> None:
        if self.shown:
            self._move(done, total)

    def _move(self, done: int, total: int | None) -> None:
        if self.bar is None:
            from tqdm import tqdm

            try:
                width = os.get_terminal_size(sys.stderr.fileno()).columns or 80
            except OSError:
                width = 80
            self.bar = tqdm(total=total, desc=self.step or None, unit=" " + self.unit if self.unit else "", file=sys.stderr,
                            ncols=min(width, 120), mininterval=0.5)
        if total is not None and self.bar.total != total:
            self.bar.total = total
        self.bar.update(done - self.bar.n)


_BIDI = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F}


def safe(text: str, keep_newlines: bool = True) -> str:
    """Text for a terminal: control characters (escape sequences), bidirectional overrides
    and lone surrogates from input are shown escaped, never interpreted (issue 14 point 6)."""
    out = []
    for ch in text:
        o = ord(ch)
        if (ch == "\n" and keep_newlines) or ch == "\t":
            out.append(ch)
        elif o < 0x20 or 0x7F <= o < 0xA0 or o in _BIDI or 0xD800 <= o < 0xE000:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _emit(as_json: bool, data: dict[str, Any], text: str) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True))
    else:
        click.echo(safe(text))


def _fail(as_json: bool, message: str, code: int) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"ok": False, "error": message, "exit_code": code}, indent=2))
    click.echo(f"pitboss: {safe(message, keep_newlines=False)}", err=True)
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
        _load_runtime()
        if isinstance(exc, StoreError):
            code = EXIT_USAGE if "run 'pitboss init'" in str(exc) else EXIT_STORE
            _fail(self.as_json, str(exc), code)
        if isinstance(exc, (HouseError, KeyFileError, TrustError, WitnessError)):
            _fail(self.as_json, str(exc), EXIT_USAGE)
        if isinstance(exc, (PersistenceError, sqlite3.Error)) or type(exc).__module__.startswith(("psycopg", "psycopg_pool")):
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            _fail(self.as_json, f"the database failed mid-operation (nothing half-written): {first}", EXIT_STORE)
        return


def trust_options(f: Any) -> Any:
    """The roots a verifying command pins (``ledger.trust``): never read from the ledger's
    own directories, never from the current directory by default."""
    for decorator in reversed([
        click.option("--anchor", default=None, help="The operator's house key you pin (64 hex digits, or a file)."
                                                    " Env PITBOSS_ANCHOR."),
        click.option("--log-key", default=None, help="The log's verifier key you pin (name+hash+key, or a file)."
                                                     " Env PITBOSS_LOG_KEY."),
        click.option("--trust", "trust_file", default=None, type=click.Path(dir_okay=False),
                     help="A verifier configuration (TOML) holding the roots ('pitboss init --trust-config')."
                          " Env PITBOSS_TRUST."),
        click.option("--witness", "witnesses", multiple=True,
                     help="A witness's verifier key (cosignature/v1), repeatable: checkpoints then need their"
                          " cosignatures. Env PITBOSS_WITNESSES (';'-separated)."),
        click.option("--witness-quorum", type=click.IntRange(1, 64), default=None,
                     help="Cosignatures required (default: every pinned witness). Env PITBOSS_WITNESS_QUORUM."),
        click.option("--state", "state_dir", default=None, type=click.Path(file_okay=False),
                     help="Where this verifier keeps the last checkpoint it accepted. Env PITBOSS_STATE;"
                          " default $XDG_STATE_HOME/pitboss."),
    ]):
        f = decorator(f)
    return f


_TRUST_PARAMS = ("anchor", "log_key", "trust_file", "witnesses", "witness_quorum", "state_dir")


def with_roots(f: Any) -> Any:
    """``trust_options``, resolved (``ledger.trust.resolve``) into one ``roots`` argument."""
    import functools

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ledger.trust import resolve

        given = {k: kwargs.pop(k) for k in _TRUST_PARAMS}
        try:
            kwargs["roots"] = resolve(anchor=given["anchor"], log_key=given["log_key"], witnesses=given["witnesses"],
                                      quorum=given["witness_quorum"], config=given["trust_file"],
                                      state=given["state_dir"])
        except TrustError as exc:
            _fail(bool(kwargs.get("as_json")), str(exc), EXIT_USAGE)
        return f(*args, **kwargs)
    return trust_options(wrapper)


def _output_file(as_json: bool, path: str, what: str = "-o") -> Path | None:
    """Where a command writes a file: None for ``-`` (standard output); a file whose
    directory does not exist is a usage error (nothing is created that was not asked for)."""
    if path == "-":
        return None
    out = Path(path)
    if not out.parent.is_dir():
        _fail(as_json, f"{what} {path}: no directory {out.parent}", EXIT_USAGE)
    return out


def _need_parent(as_json: bool, path: Path, parents: bool, what: str) -> None:
    """Exit 2 when ``path``'s directory does not exist and --parents was not given:
    nothing is created that was not asked for."""
    if not path.parent.is_dir() and not parents:
        _fail(as_json, f"{what} {path}: no directory {path.parent} (--parents to create it)", EXIT_USAGE)


def _output_dir(as_json: bool, path: str, parents: bool, what: str = "-o") -> Path:
    """A directory a command fills: new or empty (a bundle is never mixed into other files);
    its parent must exist unless --parents."""
    out = Path(path)
    if out.exists():
        if not out.is_dir():
            _fail(as_json, f"{what} {path} is a file, not a directory", EXIT_USAGE)
        if any(out.iterdir()):
            _fail(as_json, f"{what} {path} is not empty: give a new or empty directory", EXIT_USAGE)
    else:
        _need_parent(as_json, out, parents, what)
    return out


def _read_text_arg(as_json: bool, path: str, what: str) -> str:
    """A file given on the command line, as UTF-8 text; one line and exit 2 otherwise."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        _fail(as_json, f"{what} {path} is not UTF-8 text", EXIT_USAGE)
    except OSError as exc:
        _fail(as_json, f"{what} {path}: {exc.strerror or exc}", EXIT_USAGE)


class AsciiCount(click.ParamType):  # type: ignore[type-arg]  # click's ParamType is generic only in its stubs
    """A whole number in ASCII decimal digits (not "²", not Arabic-Indic digits)."""

    name = "N"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        from ledger.log.note import is_decimal

        if isinstance(value, int):
            return value
        if not isinstance(value, str) or not is_decimal(value):
            self.fail(f"{safe(repr(value))} is not a whole number in ASCII digits", param, ctx)
        return int(value)


COUNT = AsciiCount()


class DayType(click.ParamType):  # type: ignore[type-arg]
    """A gaming day: YYYY-MM-DD in ASCII digits, a date that exists (``ledger.timeutil.real_day``)."""

    name = "YYYY-MM-DD"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        from ledger.timeutil import real_day

        try:
            return real_day(value)
        except ValueError as exc:
            self.fail(safe(str(exc)), param, ctx)


class UtcTimeType(click.ParamType):  # type: ignore[type-arg]
    """A UTC time as the ledger writes it: YYYY-MM-DDTHH:MM:SS[.ffffff]Z, a real time."""

    name = "UTC-TIME"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        from ledger.timeutil import parse_utc

        try:
            parse_utc(value)
        except ValueError as exc:
            self.fail(safe(str(exc)), param, ctx)
        return str(value)


DAY, UTC_TIME = DayType(), UtcTimeType()
ROLE_NAMES = ("house", "ledger", "cage", "floor", "dealer", "table", "game", "rng", "importer")
"""``ledger.kinds.ROLES`` (a test keeps them equal: the ledger is imported only when a command runs)."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=_EPILOG + "\n\n" + _ENV_EPILOG)
@click.option("--db", envvar="PITBOSS_DB", default="pitboss.db", show_default=True, show_envvar=True,
              help="Ledger store: a SQLite file (sqlite:///PATH or PATH) or postgresql://user@host/db[?schema=S].")
@click.option("--keys", "keys_dir", envvar="PITBOSS_KEYS", default=None, show_envvar=True,
              help="Private-key directory (PEM files, mode 0600). Default: pitboss-keys/ beside the SQLite file, or ./pitboss-keys.")
@click.option("--public", "public_dir", envvar="PITBOSS_PUBLIC", default=None, show_envvar=True,
              help="Published material: signed checkpoints, log verifier key, trust anchor. Default: pitboss-public/ beside the keys.")
@click.option("-q", "--quiet", is_flag=True, envvar="PITBOSS_QUIET", show_envvar=True,
              help="No progress output (progress is shown only when stderr is a terminal, never under --json).")
@click.version_option(None, "--version", package_name="pitboss", message="%(prog)s %(version)s")
@click.pass_context
def main(ctx: click.Context, db: str, keys_dir: str | None, public_dir: str | None, quiet: bool) -> None:
    """pitboss: a signed, hash-chained game-audit ledger."""
    _load_runtime()
    try:
        url = DatabaseURL.parse(db)
    except StoreError as exc:
        raise click.BadParameter(str(exc), param_hint="--db") from None
    base = url.path.parent if url.backend == "sqlite" and url.path else Path(".")
    keys = Path(keys_dir) if keys_dir else base / "pitboss-keys"
    public = Path(public_dir) if public_dir else base / "pitboss-public"
    ctx.obj = Context(url, KeyDirectory(keys), PublicDir(public), quiet)


@main.command()
@click.option("--origin", default=None, help="The log's origin (checkpoint key name). Default: pitboss.local/<random>.")
@click.option("--append-only", is_flag=True, help="PostgreSQL: refuse UPDATE, DELETE, TRUNCATE of events (trigger).")
@click.option("--service-role", default=None, help="PostgreSQL: create a role that may only SELECT and INSERT events.")
@click.option("--trust-config", default=None, type=click.Path(dir_okay=False),
              help="Also write the verifier configuration (the roots to pin) to this file, for 'verify --trust'."
                   " Keep it where the ledger's operator cannot write it.")
@click.option("--parents", is_flag=True, help="Create missing parent directories of the SQLite file and --trust-config.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def init(c: Context, origin: str | None, append_only: bool, service_role: str | None, trust_config: str | None,
         parents: bool, as_json: bool) -> None:
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
    for what, where in (("--db", c.db.path if c.db.backend == "sqlite" else None),
                        ("--trust-config", Path(trust_config) if trust_config else None)):
        if where is not None:
            _need_parent(as_json, where, parents, what)
    out: dict[str, Any] = {"ok": True, "db": c.db.redacted()}
    text = []
    if (append_only or service_role) and c.db.backend != "postgres":
        _fail(as_json, "append-only at the database needs PostgreSQL; on SQLite, protect the file (read-only for"
                       " everyone but the ingest service) and rely on 'pitboss verify'", EXIT_USAGE)
    with _Guard(as_json), c.open(create=True) as store:
        if not ((append_only or service_role) and store.head(KEYRING_STREAM) is not None):
            house, log = init_ledger(store, c.keys, c.public, origin)
            from ledger.log.note import verifier_key
            from ledger.trust import config_text

            vkey = verifier_key(origin, log.public_key)
            out.update(keys=str(c.keys.path), public=str(c.public.path), house_key=house.key_id, log_key=log.key_id,
                       origin=origin, roots={"anchor": house.public_key.hex(), "log_key": vkey})
            text.append(f"initialised {c.db.redacted()}\n  house key {house.key_id}\n  log key   {log.key_id} origin"
                        f" {origin}\n  private keys in {c.keys.path}\n"
                        "The roots a verifier pins (give them to your regulator; keep a copy where this ledger's"
                        f" operator cannot write):\n  anchor  {house.public_key.hex()}\n  log key {vkey}")
            if trust_config:
                Path(trust_config).parent.mkdir(parents=True, exist_ok=True)
                Path(trust_config).write_text(config_text(house.public_key, vkey))
                out["trust_config"] = trust_config
                text.append(f"  written to {trust_config}: pitboss verify --trust {trust_config}")
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
@click.option("--role", required=True, type=click.Choice(ROLE_NAMES), help="The key's role: what kinds it may sign.")
@click.option("--kinds", default=None, help="Comma-separated kinds this key may sign (default: all of its role's).")
@click.option("--valid-from", type=UTC_TIME, default=None, help="When the key becomes valid (default: now; not in the past).")
@click.option("--scope", "scope", multiple=True, help=_SCOPE_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
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
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
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
@click.option("--effective", type=UTC_TIME, default=None, help="When the new key takes over (default: now).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
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
@click.option("--from", "revoked_from", type=UTC_TIME, required=True, help="When KEY_ID's events become untrusted.")
@click.option("--reason", required=True, help="Why (recorded in the signed key-ring event).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def keys_revoke(c: Context, key_id: str, revoked_from: str, reason: str, as_json: bool) -> None:
    """Revoke KEY_ID from a time; events it signed before stay valid."""
    from ledger.house import revoke_key

    with _Guard(as_json), c.open() as store:
        revoke_key(store, c.keys, key_id, revoked_from, reason)
    _emit(as_json, {"ok": True, "key_id": key_id, "revoked_from": revoked_from},
          f"revoked {key_id} from {revoked_from}")


@keys.command("list")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
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
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
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

    with _Guard(as_json), c.open() as store, c.progress(as_json, "B") as bar:  # read as ingested, never held whole
        log = _log_key(store, c, as_json)
        size = _file_size(file)
        bar.stage("ingesting")

        def batches_read() -> Any:
            for batch in file_batches(file, batch_size):
                yield batch
                if size is not None:
                    bar.count(file.tell(), size)
        batches = batches_read()
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


def _file_size(file: Any) -> int | None:
    """The size of a regular file being read (for a progress bar), None for a pipe."""
    import stat

    try:
        st = os.fstat(file.fileno())
        return st.st_size if stat.S_ISREG(st.st_mode) else None
    except (OSError, ValueError, AttributeError):
        return None


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
@click.option("--witness", "witness_urls", multiple=True,
              help="A witness's add-checkpoint URL (c2sp.org/tlog-witness), repeatable: its cosignature is added to"
                   " the published note.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def checkpoint(c: Context, witness_urls: tuple[str, ...], as_json: bool) -> None:
    """Sign a checkpoint of the whole ledger and publish it (with witnesses' cosignatures)."""
    import base64

    from ledger.log.checkpoints import create_checkpoint

    with _Guard(as_json), c.open() as store:
        sc = create_checkpoint(store, c.keys, c.public, witness_urls)
    cp = sc.checkpoint
    _emit(as_json, {
        "ok": True, "origin": cp.origin, "size": cp.size, "root": base64.b64encode(cp.root).decode(),
        "file": str(c.public.checkpoint_file(cp.size)), "note": sc.note,
    }, f"checkpoint {cp.size} events, root {base64.b64encode(cp.root).decode()}\n"
       f"  published {c.public.checkpoint_file(cp.size)}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@with_roots
@click.option("--since", "since_file", default=None, type=click.Path(dir_okay=False),
              help="A checkpoint note you hold: the ledger must still extend it (a one-off rollback check).")
@click.option("--workers", type=click.IntRange(1, 64), default=None, help="Processes for signature checks (default: all cores).")
@click.option("--deep", is_flag=True, help="Also re-run the ingest schema checks on every stored event.")
@click.option("-q", "--quiet", is_flag=True, help="No progress output (as 'pitboss -q').")
@click.pass_obj
def verify(c: Context, as_json: bool, roots: TrustRoots, since_file: str | None, workers: int | None, deep: bool,
           quiet: bool) -> None:
    """Re-check every row, signature, chain link, sequence and checkpoint against the roots you pin.

    OK (exit 0) only when nothing is wrong, the anchor and log key are pinned, and an
    accepted checkpoint anchors the ledger, which must extend the last checkpoint this
    verifier accepted (kept in --state) and --since; FAILED (1) names each problem;
    UNVERIFIED (5) says what was missing."""
    from ledger.verify import verify_ledger

    since = _read_text_arg(as_json, since_file, "--since") if since_file else None
    with _Guard(as_json), c.open() as store, c.progress(as_json, quiet=quiet) as bar:
        bar.stage("verifying")
        report = verify_ledger(store, roots=roots, public_dir=c.public.path, since=since, workers=workers, deep=deep,
                               progress=bar.count)
    head = (f"{report.verdict}: {report.events} events in {report.streams} streams, "
            f"{report.checkpoints_checked} checkpoint comparisons ({report.checkpoints_accepted} accepted, the largest"
            f" {report.accepted_size}), tree size {report.tree_size}, {report.seconds:.2f}s")
    lines = [head] + [f"  {p}" for p in report.problems] + [f"  UNVERIFIED: {u}" for u in report.unverified]
    if report.uncovered:
        lines.append(f"  {report.uncovered} events after checkpoint {report.accepted_size} are signed and chained but"
                     " not yet in an accepted checkpoint ('pitboss checkpoint')")
    lines += [f"  note: {n}" for n in report.notes]
    lines += [f"  {line}" for line in roots.lines()]
    lines.append(f"  signatures checked with {report.signatures_checked_with}")
    if report.state_saved:
        lines.append(f"  accepted checkpoint {report.accepted_size} kept in {report.state_saved}")
    _emit(as_json, report.to_json(), "\n".join(lines))
    sys.exit({"OK": EXIT_OK, "FAILED": EXIT_FAILED}.get(report.verdict, EXIT_UNVERIFIED))


# --- proofs ------------------------------------------------------------------------


@main.group()
def proof() -> None:
    """Export and check Merkle inclusion and consistency proofs (checkable offline)."""


@proof.command("inclusion")
@click.argument("stream")
@click.argument("seq", type=COUNT)
@click.option("--size", type=COUNT, default=None, help="Checkpoint size to prove against (default: the latest covering it).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), required=True,
              help="The proof file to write (name it .tlog-proof; '-': standard output).")
@click.pass_obj
def proof_inclusion(c: Context, stream: str, seq: int, size: int | None, output: str) -> None:
    """Write a c2sp tlog-proof for event STREAM SEQ."""
    from ledger.log.checkpoints import inclusion_proof

    out = _output_file(False, output)
    with _Guard(False), c.open() as store:
        text = inclusion_proof(store, stream, seq, size)
    if out is None:
        click.echo(text, nl=False)
        return
    out.write_text(text)
    click.echo(safe(f"wrote {output}"))


@proof.command("consistency")
@click.argument("old_size", type=COUNT)
@click.argument("new_size", type=COUNT)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), required=True,
              help="The proof file to write; the two checkpoint notes go beside it (.old.note, .new.note).")
@click.pass_obj
def proof_consistency(c: Context, old_size: int, new_size: int, output: str) -> None:
    """Write a consistency proof between two stored checkpoints (and their notes beside it)."""
    from ledger.log.checkpoints import consistency_proof

    if old_size > new_size:
        _fail(False, f"the old size {old_size} is larger than the new size {new_size}", EXIT_USAGE)

    out = _output_file(False, output)
    if out is None:
        _fail(False, "-o: a consistency proof is written with its two notes beside it: give a file name", EXIT_USAGE)
    with _Guard(False), c.open() as store:
        text, old_note, new_note = consistency_proof(store, old_size, new_size)
    out.write_text(text)
    out.with_name(f"{out.name}.old.note").write_text(old_note)
    out.with_name(f"{out.name}.new.note").write_text(new_note)
    click.echo(safe(f"wrote {out} with {out.name}.old.note and {out.name}.new.note"))


@proof.command("check-inclusion")
@click.argument("proof_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--vkey", required=True, type=click.Path(exists=True, dir_okay=False), help="The log's verifier key file.")
@click.option("--checkpoint", "checkpoint_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A checkpoint note you hold, to check the proof's against (default: the proof's own).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def proof_check_inclusion(proof_file: str, vkey: str, checkpoint_file: str | None, as_json: bool) -> None:
    """Check an inclusion proof offline (no database)."""
    from ledger.log.merkle import ProofError
    from ledger.log.note import NoteError
    from ledger.log.proofs import verify_inclusion_proof

    proof_text = _read_text_arg(as_json, proof_file, "proof")
    cp_text = _read_text_arg(as_json, checkpoint_file, "checkpoint") if checkpoint_file else None
    vkey_text = _read_text_arg(as_json, vkey, "--vkey")
    try:
        res = verify_inclusion_proof(proof_text, cp_text, vkey_text)
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
@click.option("--vkey", required=True, type=click.Path(exists=True, dir_okay=False), help="The log's verifier key file.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def proof_check_consistency(proof_file: str, old_note: str, new_note: str, vkey: str, as_json: bool) -> None:
    """Check a consistency proof offline (no database)."""
    from ledger.log.merkle import ProofError
    from ledger.log.note import NoteError
    from ledger.log.proofs import verify_consistency_proof

    texts = [_read_text_arg(as_json, f, what) for f, what in
             ((proof_file, "proof"), (old_note, "old note"), (new_note, "new note"), (vkey, "--vkey"))]
    try:
        old, new = verify_consistency_proof(*texts)
    except (ProofError, NoteError) as exc:
        _fail(as_json, f"proof does not verify: {exc}", EXIT_FAILED)
    _emit(as_json, {"ok": True, "old_size": old.size, "new_size": new.size},
          f"OK: the {new.size}-event log extends the {old.size}-event log unchanged")


# --- witness (a regulator's) -------------------------------------------------------------

@main.group()
def witness() -> None:
    """A small witness for a regulator to run (c2sp.org/tlog-witness, cosignature/v1).

    It keeps the latest checkpoint of each log it follows and cosigns a new one only
    when it is consistent with that one; verifiers then pin it with --witness."""


@witness.command("init")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--name", required=True, help="The witness's name (its key name), e.g. regulator.example/witness.")
@click.option("--parents", is_flag=True, help="Create DIRECTORY's missing parents.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def witness_init(directory: str, name: str, parents: bool, as_json: bool) -> None:
    """Create a witness (its key, mode 0600) in DIRECTORY and print its verifier key."""
    from ledger.log.witness import Witness

    _need_parent(as_json, Path(directory), parents, "DIRECTORY")
    with _Guard(as_json):
        w = Witness.create(Path(directory), name)
    _emit(as_json, {"ok": True, "name": w.name, "vkey": w.vkey},
          f"witness {w.name} in {directory}\n  verifier key (pin it: --witness): {w.vkey}")


@witness.command("follow")
@click.argument("directory", type=click.Path(file_okay=False))
@click.argument("log_key")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def witness_follow(directory: str, log_key: str, as_json: bool) -> None:
    """Follow the log whose verifier key is LOG_KEY (text, or a file holding it)."""
    from ledger.log.witness import Witness

    text = _read_text_arg(as_json, log_key, "log key") if Path(log_key).is_file() else log_key
    with _Guard(as_json):
        key = Witness(Path(directory)).follow(text.strip())
    _emit(as_json, {"ok": True, "log": key.name}, f"following {key.name}")


@witness.command("add-checkpoint")
@click.argument("directory", type=click.Path(file_okay=False))
@click.argument("request", type=click.File("rb"))
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def witness_add_checkpoint(directory: str, request: Any, as_json: bool) -> None:
    """Judge one add-checkpoint request (a file, or - for standard input) and print the
    cosignature line; exit 1 with the witness's answer if it refuses."""
    from ledger.log.witness import MAX_REQUEST, Witness

    data = request.read(MAX_REQUEST + 1)
    if len(data) > MAX_REQUEST:
        _fail(as_json, f"the request is larger than {MAX_REQUEST} bytes", EXIT_USAGE)
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError:
        _fail(as_json, "the request is not UTF-8 text", EXIT_USAGE)
    with _Guard(as_json):
        answer = Witness(Path(directory)).add_checkpoint(body)
    if answer.status != 200:
        _fail(as_json, f"refused ({answer.status}): {answer.body.strip()}", EXIT_FAILED)
    if as_json:
        click.echo(json.dumps({"ok": True, "cosignature": answer.body}))
    else:
        click.echo(safe(answer.body), nl=False)


@witness.command("serve")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=7380, show_default=True, help="Port to listen on.")
def witness_serve(directory: str, host: str, port: int) -> None:
    """Serve POST /add-checkpoint over HTTP (c2sp.org/tlog-witness) until interrupted."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from ledger.log.witness import MAX_REQUEST, Witness

    with _Guard(False):
        w = Witness(Path(directory))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            length = int(self.headers.get("Content-Length") or 0)
            if self.path.rstrip("/").split("/")[-1] != "add-checkpoint":
                self._answer(404, "not found\n", "text/plain")
                return
            if not 0 < length <= MAX_REQUEST:
                self._answer(400, "a request body of 1 byte to 1 MiB is required\n", "text/plain")
                return
            try:
                body = self.rfile.read(length).decode("utf-8")
            except UnicodeDecodeError:
                self._answer(400, "the request is not UTF-8 text\n", "text/plain")
                return
            a = w.add_checkpoint(body)
            self._answer(a.status, a.body, a.content_type)

        def _answer(self, status: int, body: str, content_type: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the http.server API
            click.echo(safe(f"{self.address_string()} {format % args}", keep_newlines=False), err=True)

    server = ThreadingHTTPServer((host, port), Handler)
    click.echo(safe(f"witness {w.name} serving http://{host}:{server.server_port}/add-checkpoint"), err=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


# --- replay ---------------------------------------------------------------------------

@main.command()
@click.argument("round_id")
@click.option("--at", "at_seq", type=click.IntRange(1), default=None,
              help="Stop at this seq of the round: the round as it stood then.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def replay(c: Context, round_id: str, at_seq: int | None, as_json: bool) -> None:
    """Replay ROUND_ID step by step through its game engine; exit 1 on any difference.

    Each event is re-checked (hash, signature, key at its time, chain) and applied by the
    same engine that judged it at ingest; after each step, the game as it stood (cards and
    totals, bets, pot, street, who acts), then the result. Money in the table's currency;
    --json keeps integer minor units. With --at, the round up to that seq only (a round
    shorter than --at is an error, exit 2)."""
    from projections.replay import ReplayError, event_summary, replay_round

    with _Guard(as_json), c.open() as store:
        try:
            rep = replay_round(store, round_id)
        except ReplayError as exc:
            _fail(as_json, str(exc), EXIT_USAGE)
    finished = at_seq is None or at_seq == len(rep.steps)
    if at_seq is not None:
        if at_seq > len(rep.steps):
            _fail(as_json, f"{rep.round} has {len(rep.steps)} events: there is no seq {at_seq}", EXIT_USAGE)
        rep.steps = rep.steps[:at_seq]
        rep.differences = [d for d in rep.differences if d["seq"] <= at_seq]
        if not finished:  # the round as it stood: not yet closed, no result
            rep.status, rep.result, rep.outcome = None, None, None
    lines = [_cut(f"{rep.round}: {rep.game} at table {rep.table}, {rep.currency}", 100)]
    if rep.rules:
        lines += [_cut("  rules " + json.dumps(rep.rules, sort_keys=True, separators=(", ", ": ")), 100)]
    if not rep.engine:
        lines.append(f"  (no {rep.game} engine: events are checked for signatures only)")
    shown: list[str] = []
    for s in rep.steps:
        lines.append(_cut(f"{s.seq:>4}  {s.at[11:23]:<12} {s.actor:<16} {event_summary(s.kind, s.payload, rep.currency)}",
                          100))
        if s.text and s.text != shown:  # the state, when the step changed it
            lines += [_cut("        " + t, 100) for t in s.text]
            shown = s.text
        if s.problem:
            lines += _wrap(f"        !! {s.problem}", "           ")
    if rep.result:
        lines += _wrap(f"result: {rep.result}", "        ")
    if rep.status:
        lines.append(f"closed {rep.status}")
    if not finished:
        lines.append(f"(stopped at seq {at_seq}: the round goes on)")
    lines += (["OK: the recorded round agrees with the engine"] if rep.ok
              else _wrap(f"DIFFERS at seq {rep.differences[0]['seq']}: {rep.differences[0]['reason']}", "    "))
    data = rep.to_json()
    if at_seq is not None:
        data["at"] = at_seq
    _emit(as_json, data, "\n".join(lines))
    sys.exit(EXIT_OK if rep.ok else EXIT_FAILED)


@main.group("import")
def import_() -> None:
    """Bring hand histories written elsewhere into the ledger (signed by an importer key)."""


@import_.command("phh")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def import_phh(c: Context, paths: tuple[str, ...], as_json: bool) -> None:
    """Import PHH hand histories (.phh, .phhs; directories recursively).

    One round per hand, its id derived from the hand's content: a hand already in the
    ledger (from any file or path) is reported as already imported, not stored twice.
    Each round's provenance (file name and SHA-256, the players' names as written, the
    hand's metadata) is recorded beside it. Each hand is judged by the poker engine; a
    hand that breaks the rules or stops before it is over is refused with the reason, the
    rest go in. Exit 1 if any hand is refused."""
    _import_hands(c, paths, as_json, "phh")


@import_.command("ohh")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def import_ohh(c: Context, paths: tuple[str, ...], as_json: bool) -> None:
    """Import OHH hand histories (Open Hand History 1.4 JSON; .ohh, .json; directories).

    Hold'em (NL, FL) and Omaha (PL, hi/lo FL). As 'import phh': one round per hand, by
    content; provenance recorded; each hand judged by the poker engine, and its final
    stacks checked against the pots the file records. Exit 1 if any hand is refused."""
    _import_hands(c, paths, as_json, "ohh")


def _import_hands(c: Context, paths: tuple[str, ...], as_json: bool, fmt: str) -> None:
    from ledger.importers.phh_import import import_paths

    with _Guard(as_json), c.open() as store, c.progress(as_json, "") as bar:
        results = import_paths(store, c.keys, paths, bar.stage, receipts=_log_key(store, c, as_json), fmt=fmt)
    errors = [r for r in results if "error" in r]
    if as_json:
        click.echo(json.dumps(results, indent=2))
    else:
        for r in results:
            click.echo(safe(f"{r['source']}: " + (f"REFUSED {r['error']}" if "error" in r else
                                             f"{r['round']}" + (" (already imported)" if r.get("already_imported") else ""))))
        click.echo(f"{len(results) - len(errors)} hands imported or already present, {len(errors)} refused")
    sys.exit(EXIT_FAILED if errors else EXIT_OK)


@main.group()
def export() -> None:
    """Write ledger rounds in formats other tools read."""


@export.command("phh")
@click.argument("round_id")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              help="Write to this file (default '-': standard output).")
@click.pass_obj
def export_phh(c: Context, round_id: str, output: str) -> None:
    """Write poker round ROUND_ID as a PHH hand (TOML) that pokerkit can load.

    An imported round gets back its players' names and the hand's metadata (event,
    year, currency...) from its recorded provenance."""
    from ledger.importers.phh_import import export_round

    _export(c, round_id, output, lambda events, rules, provenance: export_round(events, {"rules": rules}, provenance))


@export.command("ohh")
@click.argument("round_id")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              help="Write to this file (default '-': standard output).")
@click.pass_obj
def export_ohh(c: Context, round_id: str, output: str) -> None:
    """Write a hold'em or Omaha round as an OHH 1.4 hand (JSON).

    An imported round gets back its players' names and the source's fields (site, table,
    game number...) from its recorded provenance."""
    from ledger.importers.ohh import round_to_ohh

    _export(c, round_id, output, lambda events, rules, provenance:
            json.dumps(round_to_ohh(events, rules, provenance), indent=2, ensure_ascii=False) + "\n")


def _export(c: Context, round_id: str, output: str, render: Any) -> None:
    """A stored poker round written by ``render(events, rules as played, provenance)``
    to ``output`` ('-': standard output); exit 2 for no such round, 1 for one the format
    cannot hold."""
    from ledger.events import EventError, check_payload
    from ledger.importers.phh import PhhError
    from ledger.importers.phh_import import provenance_of
    from ledger.judges.round import config_of, played_rules

    stream = round_id if round_id.startswith("round:") else f"round:{round_id}"
    out = _output_file(False, output)
    with _Guard(False), c.open() as store:
        events = store.stream_events(stream)
        for ev in events:  # a row never through ingest may carry anything (ledger.judges.round.walk)
            try:
                check_payload(ev.kind, ev.payload)
            except EventError as exc:
                _fail(False, f"{stream} seq {ev.seq}: {exc.reason} (ingest refuses such an event)", EXIT_FAILED)
        if not events or events[0].kind != "round.open.v1" or events[0].payload["game"] != "poker":
            _fail(False, f"no poker round {stream} in the ledger", EXIT_USAGE)
        try:
            rules = played_rules(config_of(events[0], store.event_at), events[0].payload["rules"])
        except EventError as exc:
            _fail(False, f"{stream}: {exc.reason}", EXIT_FAILED)
        provenance = provenance_of(store, stream)
    try:
        text = render(events, rules, provenance)
    except PhhError as exc:
        _fail(False, str(exc), EXIT_FAILED)
    if out is not None:
        out.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


# --- dispute evidence ------------------------------------------------------------------

@main.command()
@click.argument("round_id")
@click.option("-o", "--output", type=click.Path(file_okay=False), required=True,
              help="A new or empty directory to write the bundle to.")
@click.option("--parents", is_flag=True, help="Create the output directory's missing parents.")
@click.option("--dispute", default=None, help="What the player disputes, in plain words (shown at the top of the reports).")
@with_roots
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def evidence(c: Context, round_id: str, output: str, parents: bool, dispute: str | None, roots: TrustRoots,
             as_json: bool) -> None:
    """Write ROUND_ID's evidence bundle: signed events, inclusion proofs, outcome, reports;
    then check it as a player would, against the roots you pin.

    report.html is one page a player opens in any browser, offline: the round in plain
    language, and a re-check of the bundle's hashes, signatures, proofs and checkpoint
    in the browser itself (the game's rules are re-derived by 'pitboss verify-bundle').

    Signs a new checkpoint first if none covers the round and the key ring as it is now.
    The bundle is written either way; the exit code is the check's (0 OK, 1 FAILED, 5
    UNVERIFIED)."""
    from projections.evidence import verify_bundle, write_bundle

    out = _output_dir(as_json, output, parents)
    with _Guard(as_json), c.open() as store:
        manifest = write_bundle(store, c.keys, c.public, round_id, out, dispute=dispute,
                                witnesses=tuple(w.text() for w in roots.witnesses), quorum=roots.quorum)
    result = verify_bundle(Path(output), roots)
    _emit(as_json, {"ok": result.ok, "bundle": output, **manifest, "verdict": result.verdict,
                    "problems": result.problems, "unverified": result.unverified, **result.summary},
          "\n".join([f"wrote {output}: {manifest['events']} events with inclusion proofs against checkpoint size"
                     f" {manifest['checkpoint_size']}", *_bundle_lines(output, result)]))
    sys.exit({"OK": EXIT_OK, "FAILED": EXIT_FAILED}.get(result.verdict, EXIT_UNVERIFIED))


def _bundle_lines(bundle: str, result: Any) -> list[str]:
    s = result.summary
    if result.verdict == "OK":
        lines = [f"OK: {s.get('verified_events')} events of {s.get('round')} verified against checkpoint size"
                 f" {s.get('checkpoint_size')} (from its signed note)"]
    elif result.verdict == "UNVERIFIED":
        lines = [f"UNVERIFIED: nothing wrong found in {bundle}, but:"] + [f"  {u}" for u in result.unverified]
    else:
        lines = [f"FAILED: {bundle} does not prove what it claims:"] + [f"  {p}" for p in result.problems]
    lines += [f"  checked: {c}" for c in s.get("checks", [])]
    roots = s.get("trust_roots", {})
    lines += [f"  trust anchor {roots.get('anchor') or 'NOT PINNED'}"
              + (f" (from {roots.get('anchor_from')})" if roots.get("anchor") else ""),
              f"  log key {roots.get('log_key') or 'the bundle s own, checked against its key ring'}"]
    if s.get("signatures_checked_with"):
        lines.append(f"  signatures checked with {s['signatures_checked_with']}")
    return lines


@main.command("verify-bundle")
@click.argument("bundle", type=click.Path(exists=True, file_okay=False))
@with_roots
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def verify_bundle_cmd(bundle: str, roots: TrustRoots, as_json: bool) -> None:
    """Check an evidence bundle offline (no database) against the roots you pin.

    The house key must be pinned (--anchor, PITBOSS_ANCHOR or --trust): a bundle's own
    copy proves nothing. The bundle's log key must be a ledger key of its key ring, which
    must reach the checkpoint's stated head. OK (0), FAILED (1, naming what does not
    hold), UNVERIFIED (5, nothing wrong but a root or the witnesses' quorum missing)."""
    from projections.evidence import verify_bundle

    result = verify_bundle(Path(bundle), roots)
    _emit(as_json, {"ok": result.ok, "verdict": result.verdict, "problems": result.problems,
                    "unverified": result.unverified, **result.summary}, "\n".join(_bundle_lines(bundle, result)))
    sys.exit({"OK": EXIT_OK, "FAILED": EXIT_FAILED}.get(result.verdict, EXIT_UNVERIFIED))


_RECONCILE_EXIT = {"RECONCILED": EXIT_OK, "NOT RECONCILED": EXIT_FAILED, "UNVERIFIED": EXIT_UNVERIFIED,
                   "INCOMPLETE": EXIT_UNVERIFIED, "NOTHING TO RECONCILE": EXIT_NOTHING}


@main.command()
@click.option("--day", type=DAY, required=True, help="The gaming day (the UTC date).")
@with_roots
@click.option("--since", "since_file", default=None, type=click.Path(dir_okay=False),
              help="A checkpoint note you hold: the ledger must still extend it.")
@click.option("--accept-unchecked", is_flag=True,
              help="Reconcile even if some checks could not be made (a table with chips but no count, events with"
                   " no receipt); they are still listed under not_checked.")
@click.option("--workers", type=click.IntRange(1, 256), default=None,
              help="Processes for signature checks (default: all cores).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def reconcile(c: Context, day: str, roots: TrustRoots, since_file: str | None, accept_unchecked: bool,
              workers: int | None, as_json: bool) -> None:
    """Reconcile a gaming day against the roots you pin.

    RECONCILED (0) only when every check was made and holds; NOT RECONCILED (1) lists
    each discrepancy; UNVERIFIED or INCOMPLETE (5) when a root, a checkpoint or a check
    is missing; NOTHING TO RECONCILE (6) for a day without events."""
    from projections.reconcile import reconcile_day

    since = _read_text_arg(as_json, since_file, "--since") if since_file else None

    with _Guard(as_json), c.open() as store, c.progress(as_json) as bar:
        report = reconcile_day(store, day, roots=roots, public_dir=c.public.path, since=since,
                               accept_unchecked=accept_unchecked, workers=workers, progress=bar.stage)
    _emit(as_json, report, "\n".join(_reconcile_lines(report, roots)))
    sys.exit(_RECONCILE_EXIT[report["verdict"]])


def _reconcile_lines(report: dict[str, Any], roots: TrustRoots) -> list[str]:
    day = report["day"]
    text = [f"{day}: {report['rounds_closed']} rounds closed, {report['events_of_day']} events;"
            f" {report['ledger_events_verified']} ledger events verified ({report['verification']['verdict']})"]
    text += [f"  {d['check']}: {d['stream']} seq {d['seq']}: {d['reason']}" for d in report["discrepancies"]]
    text += [f"  UNVERIFIED: {u}" for u in report["verification"]["unverified"]]
    text += [f"  not checked: {n}" for n in report["not_checked"]]
    text += [f"  {line}" for line in roots.lines()]
    if report["verification"].get("signatures_checked_with"):
        text.append(f"  signatures checked with {report['verification']['signatures_checked_with']}")
    verdict = report["verdict"]
    if verdict == "NOT RECONCILED":
        verdict += f": {len(report['discrepancies'])} discrepancies"
    elif verdict == "INCOMPLETE":
        verdict += f": {len(report['not_checked'])} checks not made (--accept-unchecked to accept them)"
    elif verdict == "RECONCILED" and report["accepted_unchecked"]:
        verdict += f" (accepting {len(report['not_checked'])} checks not made)"
    text.append(verdict)
    return text


@main.command()
@click.option("--day", type=DAY, default=None, help="Rounds closed on this gaming day.")
@click.option("--table", "table_id", default=None, help="Rounds at this table.")
@click.option("--player", default=None, help="Rounds this player was in.")
@click.option("--game", default=None, help="Rounds of this game (baccarat, poker, ...).")
@click.option("--status", type=click.Choice(("complete", "void")), default=None, help="Rounds closed so.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True, help="Rounds per page.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True,
              help="Matching rounds to skip (the next page starts at offset + limit).")
@click.option("--ids", is_flag=True, help="Only the round ids, one per line (for scripts).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the page, the total and the next offset.")
@click.pass_obj
def rounds(c: Context, day: str | None, table_id: str | None, player: str | None, game: str | None,
           status: str | None, limit: int, offset: int, ids: bool, as_json: bool) -> None:
    """Find closed rounds by gaming day, table, player, game or status, a page at a time.

    From the views (caught up first), in the order the rounds closed. Money is shown in
    major units with its currency; --json keeps integer minor units. Exit 0 with rounds
    found, 6 when none match."""
    from projections.finder import find_rounds
    from projections.money import show
    from projections.runner import ViewStore, catch_up

    with _Guard(as_json), c.open() as store, ViewStore(store.url) as vs, c.progress(as_json) as bar:
        bar.stage("bringing the views up to date")
        catch_up(store, vs, ["rounds", "round_index"], progress=bar.count)
        bar.close()
        page, total = find_rounds(vs, day=day, table=table_id, player=player, game=game, status=status,
                                  limit=limit, offset=offset)
    nxt = offset + len(page) if offset + len(page) < total else None
    if ids and not as_json:
        click.echo("\n".join(r["round"] for r in page), nl=bool(page))
        sys.exit(EXIT_OK if page else EXIT_NOTHING)
    text = [f"{'round':<28} {'table':<12} {'game':<12} {'status':<8} {'closed (UTC)':<19} {'staked':>15}"]
    for r in page:
        cur = r["currency"] or "?"
        text.append(f"{_cut(r['round'], 28):<28} {_cut(r['table_id'], 12):<12} {_cut(r['game'], 12):<12}"
                    f" {r['status']:<8} {r['closed_at'][:19]:<19} {show(r['staked'], cur):>15}")
        if r["players"]:
            text.append("    " + _cut(", ".join(f"{p['player']} {show(p['net'], cur)}"
                                                for p in r["players"]), 95))
    shown = f"rounds {offset + 1}-{offset + len(page)} of {total}" if page else f"no rounds of {total} match"
    text.append(shown + (f"; next page: --offset {nxt}" if nxt is not None else ""))
    _emit(as_json, {"rounds": page, "total": total, "offset": offset, "limit": limit, "next_offset": nxt},
          "\n".join(text))
    sys.exit(EXIT_OK if page else EXIT_NOTHING)


def _wrap(text: str, indent: str = "    ", width: int = 100) -> list[str]:
    """Text a person must read whole (a result, a difference): wrapped at ``width``, never cut."""
    import textwrap

    return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=True) or [""]


def _cut(text: str, width: int) -> str:
    """Text that fits ``width`` columns, cut with an ellipsis."""
    return text if len(text) <= width else text[:width - 1] + "…"


@main.command()
@click.argument("table_id")
@click.option("--at", "at", type=UTC_TIME, default=None, help="As of this time.")
@click.option("--seq", type=click.IntRange(1), default=None, help="As of this seq of the table's own stream.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def table(c: Context, table_id: str, at: str | None, seq: int | None, as_json: bool) -> None:
    """A table as it stood: open or closed, equipment, the round in progress, rounds closed.

    --seq past the end of the table's stream is an error (exit 2), not the table as it is now."""
    from projections.table_state import TableStateError, table_state

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
        text.append(f"  round in progress {r['round']} ({r['game']}):")
        text += [_cut("    " + line, 100) for line in r["text"]]
    text += [f"  !! {p}" for p in st["problems"]]
    _emit(as_json, st, "\n".join(text))


@main.group()
def aml() -> None:
    """Anti-money-laundering flags (rules and thresholds: projections/aml.py)."""


@aml.command("flags")
@click.option("--day", type=DAY, default=None, help="Only flags of this gaming day.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def aml_flags(c: Context, day: str | None, as_json: bool) -> None:
    """Scan the ledger and list every flag (deterministic: the same ledger, the same flags)."""
    from ledger.timeutil import gaming_day
    from ledger.verify import RowJudge
    from projections.aml import NOT_COVERED, scan_store

    scanned = 0

    def accept(nid: int, stream: str, seq: int, kind: str, state: bytes) -> bool:
        """The judge, counting the rows of the day on the scan's own pass (no second read)."""
        nonlocal scanned
        scanned += day is None or gaming_day(orjson_at(state)) == day
        return judge(nid, stream, seq, kind, state)

    with _Guard(as_json), c.open() as store:
        judge = RowJudge(store)
        flags = [f for f in scan_store(store, accept=accept) if day in (None, f.day)]
    from projections.money import show

    text = [f"{f.id}  {f.day}  {f.rule:<23} {_cut(','.join(f.players), 24):<24} {show(f.amount, f.currency):>14}\n"
            f"    {f.reason}" for f in flags]
    text += [f"  not counted (its own checks fail): row {nid}: {why}" for nid, why in judge.refused]
    nothing = scanned == 0
    summary = (f"NOTHING TO SCAN: no events on {day}" if nothing else
               f"{len(flags)} flags from the events that passed their own checks"
               + (f" ({len(judge.refused)} events not counted: run 'pitboss verify')" if judge.refused else ""))
    _emit(as_json, {"flags": [f.to_json() for f in flags], "count": len(flags), "not_covered": NOT_COVERED,
                    "day": day, "events": scanned, "nothing_to_scan": nothing,
                    "not_counted": [{"row": nid, "reason": why} for nid, why in judge.refused]},
          "\n".join(text + [summary]))
    sys.exit(EXIT_NOTHING if nothing else EXIT_OK)


def orjson_at(state: bytes) -> str:
    import orjson

    try:
        at = orjson.loads(state).get("at")
    except (ValueError, AttributeError):
        return ""
    return at if isinstance(at, str) else ""


@aml.command("show")
@click.argument("flag_id")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def aml_show(c: Context, flag_id: str, as_json: bool) -> None:
    """One flag with the events that raised it."""
    from projections.aml import scan_store

    with _Guard(as_json), c.open() as store:
        found = [f for f in scan_store(store) if f.id == flag_id]
        if not found:
            _fail(as_json, f"no flag {flag_id!r}", EXIT_USAGE)
        flag = found[0]
        events: list[dict[str, Any]] = []
        for ref in flag.events:
            stream, seq = parse_ref(ref)
            ev = store.event_at(stream, int(seq))
            events.append(ev.to_dict() if ev else {"missing": ref})
    from projections.money import show
    from projections.replay import event_summary

    text = [f"{flag.id} {flag.rule} {flag.day} players {', '.join(flag.players)} amount"
            f" {show(flag.amount, flag.currency)}", *_wrap(flag.reason, "  ")]
    text += [_cut(f"  {e.get('stream')} #{e.get('seq')} {str(e.get('at'))[:19]} "
                  + event_summary(str(e.get("kind")), e.get("payload") or {}, flag.currency), 100) for e in events]
    _emit(as_json, {**flag.to_json(), "event_details": events}, "\n".join(text))


# --- projections -------------------------------------------------------------------

@main.group()
def projections() -> None:
    """The read-side views (balances, tables, rounds), kept beside the ledger."""


@projections.command("status")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
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
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def projections_run(c: Context, as_json: bool) -> None:
    """Catch every view up with the ledger (from where each stopped)."""
    from projections.runner import ViewStore, catch_up

    with _Guard(as_json), c.open() as store, ViewStore(store.url) as vs, c.progress(as_json) as bar:
        bar.stage("applying")
        reports = catch_up(store, vs, progress=bar.count)
    _emit(as_json, {"views": [r.__dict__ for r in reports]},
          "\n".join(f"{r.view}: {r.events} events applied, now at {r.position}" for r in reports))


@projections.command("rebuild")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def projections_rebuild(c: Context, name: str | None, as_json: bool) -> None:
    """Rebuild NAME (or every view) from the first event."""
    from projections.runner import ViewStore, rebuild
    from projections.views import VIEWS

    if name is not None and name not in VIEWS:
        _fail(as_json, f"no view {name!r}; views: {', '.join(VIEWS)}", EXIT_USAGE)
    with _Guard(as_json), c.open() as store, ViewStore(store.url) as vs, c.progress(as_json) as bar:
        bar.stage("rebuilding")
        reports = rebuild(store, vs, [name] if name else None, progress=bar.count)
    _emit(as_json, {"views": [r.__dict__ for r in reports]},
          "\n".join(f"{r.view}: rebuilt from zero, {r.events} events, now at {r.position}" for r in reports))


@main.command()
@click.argument("player", required=False)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
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
    from projections.money import show as m

    text = [f"{_cut(x['player'], 24):<24} balance {m(x['balance'], x['currency']):>14}  (cage"
            f" {m(x['at_cage'], x['currency'])}, chips {m(x['chips_in_play'], x['currency'])})\n"
            f"    deposits {m(x['deposits'], x['currency'])}, withdrawals {m(x['withdrawals'], x['currency'])},"
            f" transfers in {m(x['transfers_in'], x['currency'])} out {m(x['transfers_out'], x['currency'])},"
            f" games {m(x['game_net'], x['currency'])} over {x['rounds']} rounds"
            for x in report["accounts"]] or ["no accounts"]
    if player is None:
        text += [f"chips in play at {t['table']}: {m(t['chips'], t['currency'])}" for t in report["chips_in_play"]]
        text += [f"house revenue {r['table']} {r['day']}: net {m(r['house_net'], r['currency'])} (commission"
                 f" {m(r['commission'], r['currency'])}, rake {m(r['rake'], r['currency'])}, {r['rounds']} rounds)"
                 for r in report["house_revenue"]]
        text += [f"outstanding liabilities: {m(amount, cur)}" for cur, amount in report["liabilities"].items()]
    _emit(as_json, report, "\n".join(text))


# --- game rules ----------------------------------------------------------------------

@main.group()
def rules() -> None:
    """What the configured game rules imply (computed from the engines)."""


@rules.command("house-edge")
@click.argument("game")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
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
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
@with_roots
def demo(c: Context, seed: int, hands: int, output: str | None, as_json: bool, roots: TrustRoots) -> None:
    """Simulate a casino night through the real producer path, then run the nightly jobs:
    views, reconciliation of the day, AML flags, and one disputed round's evidence.

    The jobs check against the roots you pin; pinned nothing, the demo (which is the
    operator, holding the private keys) pins the public keys of its own house and log keys."""
    from ledger.sim.demo import run_demo
    from projections.evidence import write_bundle
    from projections.money import show
    from projections.reconcile import reconcile_day
    from projections.runner import ViewStore, catch_up

    out = Path(output) if output else (c.db.path.parent if c.db.backend == "sqlite" and c.db.path else Path("."))
    with _Guard(as_json), c.open() as store, c.progress(as_json) as bar:
        say = bar.stage
        summary = run_demo(store, c.keys, c.public, seed=seed, hands=hands, progress=say)
        if not roots.pinned:
            roots = _operator_roots(store, c, roots)
        disputed = summary["disputed_round"]
        say(f"writing the evidence bundle of the disputed round {disputed}")
        bundle = _output_dir(as_json, str(out / f"evidence-{disputed.split(':', 1)[1]}"), parents=True)
        write_bundle(store, c.keys, c.public, disputed, bundle,
                     dispute="the player says the coup was settled wrongly",
                     witnesses=tuple(w.text() for w in roots.witnesses), quorum=roots.quorum)
        summary["evidence"] = str(bundle)
        say("bringing the views up to date")
        with ViewStore(store.url) as vs:
            catch_up(store, vs)
        day = utc_now_day()
        say(f"reconciling the gaming day {day}")
        report = reconcile_day(store, day, roots=roots, public_dir=c.public.path, progress=say)
        flags = report["aml_flags"]  # the day's flags, from the scan reconciliation just made
    tid = summary.pop("tournament")
    summary.update(gaming_day=day, aml_flags=len(flags), reconciled=report["ok"],
                   aml_rules=sorted({f["rule"] for f in flags}), discrepancies=len(report["discrepancies"]),
                   tournaments=[{k: t[k] for k in ("id", "currency", "prize_pool", "paid", "refunded")}
                                for t in report["tournaments"] if t["id"] == tid])
    text = [f"casino night {day}: {summary['rounds']} rounds at {summary['tables']} tables, {summary['events']} signed"
            f" events ingested",
            f"reconciliation: {report['verdict']} ({report['rounds_closed']} rounds replayed) against"
            f" {roots.sources.get('anchor')}",
            f"AML flags: {len(flags)} ({', '.join(summary['aml_rules'])}): pitboss aml flags",
            f"rulings: {', '.join(r['effect'] + ' ' + r['round'] for r in summary['rulings'])}",
            *[f"tournament {t['id']}: prize pool {show(t['prize_pool'], t['currency'])}, paid"
              f" {show(t['paid'], t['currency'])}, refunded {show(t['refunded'], t['currency'])}"
              for t in summary["tournaments"]],
            f"disputed round {summary['disputed_round']}: evidence in {summary['evidence']}"
            f" (pitboss verify-bundle --anchor {roots.anchor.hex() if roots.anchor else 'HOUSE_KEY'}"
            f" {summary['evidence']})",
            "balances: pitboss balances; tables: pitboss table TABLE_ID; replay: pitboss replay ROUND_ID"]
    summary["verdict"] = report["verdict"]
    _emit(as_json, summary, "\n".join(text))
    sys.exit(_RECONCILE_EXIT[report["verdict"]])


def _operator_roots(store: Store, c: Context, roots: TrustRoots) -> TrustRoots:
    """The roots of the operator who holds the private keys: the public halves of its own
    house and log keys (the demo's jobs, run by the operator itself)."""
    from dataclasses import replace

    from ledger.house import active_signer
    from ledger.keyring import load_keyring
    from ledger.log.note import VerifierKey, verifier_key

    ring = load_keyring(store)
    log = active_signer(ring, c.keys, "ledger")
    if ring.anchor is None or not c.keys.has(ring.anchor.key_id):
        raise HouseError(f"the house key that anchors the key ring is not in {c.keys.path}: pin the roots (--trust)")
    where = f"the operator's own private keys in {c.keys.path}"
    return replace(roots, anchor=ring.anchor.public_key, log_key=VerifierKey.parse(verifier_key(log.actor, log.public_key)),
                   sources={**roots.sources, "anchor": where, "log_key": where})


def utc_now_day() -> str:
    from ledger.timeutil import gaming_day, utc_now

    return gaming_day(utc_now())


# --- sample producer -------------------------------------------------------------------

@main.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), required=True,
              help="The JSONL file to write ('-': standard output).")
@click.option("--rounds", type=click.IntRange(1, 100_000), default=5, show_default=True, help="Rounds to deal.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_obj
def sample(c: Context, output: str, rounds: int, as_json: bool) -> None:
    """Write a small signed batch (a table, rounds, cash) through the producer SDK.

    Registers a floor, dealer and cage key on first use. The batch is not ingested:
    feed it to 'pitboss ingest'.
    """
    from ledger.sim.sample import write_sample_batch

    out = _output_file(as_json, output)
    with _Guard(as_json), c.open() as store:
        n, text = write_sample_batch(store, c.keys, out, rounds)
    if out is None:
        click.echo(text, nl=False)
        return
    _emit(as_json, {"ok": True, "file": output, "events": n}, f"wrote {n} signed events to {output}")


SUMMARIES = {
    "aml": "Anti-money-laundering flags, from the ledger.",
    "aml flags": "Scan the ledger and list every AML flag.",
    "balances": "Player balances, chips at tables, house revenue.",
    "checkpoint": "Sign and publish a checkpoint of the whole ledger.",
    "demo": "Simulate a casino night, then run the nightly jobs.",
    "evidence": "Write a round's evidence bundle, then check it.",
    "import": "Import hand histories written elsewhere.",
    "import ohh": "Import OHH hand histories (JSON).",
    "ingest": "Check and append a JSONL batch, all or nothing.",
    "init": "Create the store, the house key and the log key.",
    "keys scope": "Change where KEY_ID may write.",
    "projections": "The read-side views, kept beside the ledger.",
    "projections status": "Each view's position and lag behind the ledger.",
    "proof": "Export and check Merkle proofs (offline).",
    "proof consistency": "Write a consistency proof between two checkpoints.",
    "replay": "Replay a round step by step through its engine.",
    "rounds": "Find rounds by day, table, player, game or status.",
    "rules": "What the configured game rules imply.",
    "rules house-edge": "Exact house edge of every bet of GAME.",
    "sample": "Write a small signed batch for 'pitboss ingest'.",
    "table": "A table as it stood at a time or seq.",
    "verify": "Re-check the whole ledger against pinned roots.",
    "verify-bundle": "Check an evidence bundle offline.",
    "witness": "A small witness for a regulator to run.",
    "witness add-checkpoint": "Judge one add-checkpoint request.",
    "witness follow": "Follow the log whose verifier key is LOG_KEY.",
    "witness init": "Create a witness (its key) in DIRECTORY.",
    "witness serve": "Serve POST /add-checkpoint over HTTP.",
}
"""The one-line summary each command shows in its group's --help (its docstring's first
sentence where that fits; tests/cli check every summary fits 80 columns)."""


def _by_path(group: click.Group, prefix: str = "") -> Any:
    """(path, command) of every command under ``group``, groups included."""
    for name, cmd in group.commands.items():
        yield prefix + name, cmd
        if isinstance(cmd, click.Group):
            yield from _by_path(cmd, prefix + name + " ")


for _path, _cmd in _by_path(main):
    if _path in SUMMARIES:
        _cmd.short_help = SUMMARIES[_path]
    _cmd.epilog = _cmd.epilog or _EPILOG + "\n\n" + _ENV_EPILOG  # the one exit-code table, in every --help


def run() -> None:
    """The ``pitboss`` program: the commands, with Ctrl-C and unexpected failures turned
    into one line and their exit code, never a traceback (issue 14 points 5 and 6)."""
    as_json = "--json" in sys.argv[1:]
    try:
        _command(as_json)
    finally:
        # the command is done and its verdict written: a Ctrl-C during the interpreter's
        # teardown changes nothing (and must not print a traceback after the verdict)
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _command(as_json: bool) -> None:
    try:
        main.main(standalone_mode=False)
    except click.exceptions.Abort:
        _interrupted(as_json)
    except KeyboardInterrupt:
        _interrupted(as_json)
    except click.UsageError as exc:  # one line, naming the command and what was wrong
        path = exc.ctx.command_path if exc.ctx is not None else "pitboss"
        sub = path.split(" ", 1)[1] + ": " if " " in path else ""
        _fail(as_json, f"{sub}{exc.format_message()} (see '{path} --help')", EXIT_USAGE)
    except click.ClickException as exc:
        _fail(as_json, exc.format_message(), exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except BrokenPipeError:
        sys.exit(EXIT_OK)
    except Exception as exc:  # a bug: one line, its own code
        where = exc.__traceback__
        while where is not None and where.tb_next is not None:
            where = where.tb_next
        at = f" at {Path(where.tb_frame.f_code.co_filename).name}:{where.tb_lineno}" if where else ""
        _fail(as_json, f"internal error{at}: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
    sys.exit(EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    run()

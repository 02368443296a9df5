"""Where events live: an eventsourcing application on SQLite (default) or PostgreSQL.

The ledger's ``SignedEvent`` is stored through an eventsourcing application's event
store (``Application.events``) with a ``Mapper`` that writes, per event: ``originator_id`` = stream name,
``originator_version`` = seq, ``topic`` = kind and ``state`` = the canonical JSON of the
whole signed envelope. The state holds the signature, so the stored bytes alone prove
themselves. The primary key (stream, seq) makes forks impossible, and one ``put`` of
a batch is one transaction, so a batch is stored whole or not at all.

Database URLs: ``sqlite:///path/to/file.db`` (or a bare path) and
``postgresql://user[:password]@host[:port]/dbname[?schema=name]``. On PostgreSQL the
events table is ``<schema>.pitboss_events``; on SQLite it is ``stored_events``.
"""

from __future__ import annotations

import atexit
import gc
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qs, unquote, urlparse

from eventsourcing.application import Application
from eventsourcing.persistence import (
    IntegrityError,
    InterfaceError,
    Mapper,
    OperationalError,
    PersistenceError,
    StoredEvent,
)
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.utils import retry

from ledger.events import SignedEvent, event_from_stored

# eventsourcing 9.5's PostgresDatastore.__del__ calls close() again, which fails during
# interpreter teardown (module globals are gone) for a datastore kept alive by the
# application's reference cycles. Collect them while the interpreter is still whole.
atexit.register(gc.collect)

APP_NAME = "pitboss"
SQLITE_TABLE = "stored_events"
PG_TABLE = "pitboss_events"


class StoreError(Exception):
    """The store cannot be reached or is not a pitboss ledger."""


class ConflictError(StoreError):
    """Another writer stored an event at a (stream, seq) this batch wanted."""


class AlreadyStoredError(ConflictError):
    """The batch's (stream, seq) places are taken by exactly its events (same hashes).

    Happens when a commit succeeded but its acknowledgement was lost (the connection
    dropped after COMMIT reached the server) and eventsourcing's recorder retried the
    insert on its own; or another writer sent the very same signed events. Either way
    the batch is in the store once, as sent."""


@dataclass(frozen=True)
class DatabaseURL:
    backend: str  # "sqlite" | "postgres"
    path: Path | None = None
    dbname: str = ""
    host: str = ""
    port: str = "5432"
    user: str = ""
    password: str = ""
    schema: str = ""

    @classmethod
    def parse(cls, url: str) -> DatabaseURL:
        if url.startswith(("postgresql://", "postgres://")):
            u = urlparse(url)
            query = parse_qs(u.query)
            schema = query.get("schema", [""])[0]
            if schema and not schema.replace("_", "").isalnum():
                raise StoreError(f"schema name {schema!r} must be letters, digits and _")
            dbname = unquote(u.path.lstrip("/"))
            if not dbname:
                raise StoreError("a PostgreSQL URL must name the database: postgresql://user@host/dbname")
            return cls(
                backend="postgres", dbname=dbname, host=u.hostname or "127.0.0.1",
                port=str(u.port or 5432), user=unquote(u.username or ""),
                password=unquote(u.password or ""), schema=schema,
            )
        if url.startswith("sqlite:///"):
            return cls(backend="sqlite", path=Path(url[len("sqlite:///"):]))
        if "://" in url:
            raise StoreError(f"unsupported database URL {_redact(url)!r}: use sqlite:///PATH or postgresql://...")
        return cls(backend="sqlite", path=Path(url))

    def redacted(self) -> str:
        if self.backend == "sqlite":
            return f"sqlite:///{self.path}"
        who = f"{self.user}@" if self.user else ""
        schema = f"?schema={self.schema}" if self.schema else ""
        return f"postgresql://{who}{self.host}:{self.port}/{self.dbname}{schema}"

    def env(self) -> dict[str, str]:
        if self.backend == "sqlite":
            return {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": str(self.path),
                "SQLITE_LOCK_TIMEOUT": os.environ.get("PITBOSS_SQLITE_LOCK_TIMEOUT", "10"),
                "ORIGINATOR_ID_TYPE": "text",
            }
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": self.dbname,
            "POSTGRES_HOST": self.host,
            "POSTGRES_PORT": self.port,
            "POSTGRES_USER": self.user,
            "POSTGRES_PASSWORD": self.password,
            "POSTGRES_SCHEMA": self.schema,
            "POSTGRES_CONNECT_TIMEOUT": "5",
            "POSTGRES_PRE_PING": "y",  # a connection the server dropped (restart) is replaced, not reused
            "POSTGRES_LOCK_TIMEOUT": "30",
            "ORIGINATOR_ID_TYPE": "text",
            "POSTGRES_ENABLE_DB_FUNCTIONS": "no",
            "APPLICATION_RECORDER_TOPIC": "ledger.store:LedgerPostgresRecorder",
        }

    def connect_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"dbname": self.dbname, "host": self.host, "port": self.port, "connect_timeout": 5}
        if self.user:
            kw["user"] = self.user
        if self.password:
            kw["password"] = self.password
        return kw


def _redact(url: str) -> str:
    u = urlparse(url)
    if u.password:
        return url.replace(f":{u.password}@", ":***@")
    return url


class LedgerMapper(Mapper[str]):
    """Stores a SignedEvent as its canonical JSON; no transcoder, cipher or compressor,
    so a regulator can read the rows with any SQL client."""

    def __init__(self) -> None:
        super().__init__(transcoder=None)  # type: ignore[arg-type]

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        ev: SignedEvent = domain_event
        return StoredEvent(
            originator_id=ev.stream,
            originator_version=ev.seq,
            topic=ev.kind,
            state=ev.encoded(),
        )

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        return event_from_stored(stored_event.state)


class LedgerPostgresRecorder(PostgresApplicationRecorder):
    """eventsourcing's PostgreSQL recorder, sending the batch's rows in binary format.

    The library dumps its ``unnest(%s::stored_event[])`` array as text, escaping every
    ``state`` byte into hex; signed events are several hundred bytes each, so that
    escaping was a large part of ingest. Same statement, same transaction, same table
    lock and notification: only the wire format differs. Installed through the
    library's APPLICATION_RECORDER_TOPIC setting.
    """

    def _lock_table(self, curs: Any) -> None:
        """Serialize writers as the library's EXCLUSIVE table lock does (each batch gets
        its notification ids and commits before the next one gets any, so readers never
        pass a gap that fills later), with a transaction-scoped advisory lock instead:
        LOCK TABLE in EXCLUSIVE mode needs UPDATE, DELETE or TRUNCATE privilege, which an
        append-only service role must not have (``setup_append_only``). Every pitboss
        writer takes this lock, so the order is the same."""
        curs.execute(f"SET LOCAL lock_timeout = '{int(self.datastore.lock_timeout)}s'")
        curs.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                     (f"pitboss:{self.datastore.schema}.{self.events_table_name}",))

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        """The library's insert, same statements and transaction, without pipeline mode.

        With psycopg 3.3 the pipeline can hang on a large batch: a 10,000-event batch
        (several MB of binary rows) stayed in libpq's output buffer while psycopg waited
        in ``Pipeline.sync`` for results, and the server waited in ClientRead for the rest
        of the message; both socket queues empty, forever (seen in a CI run under load).
        Statement by statement, each waits for its reply: four round trips per batch,
        nothing for a batch to hang on. The library's retry of a dropped connection is
        kept as it was (``AlreadyStoredError`` covers its replay of a committed batch)."""
        with self.datastore.get_connection() as conn, conn.transaction(), conn.cursor() as curs:
            self._insert_events(curs, stored_events, **kwargs)
            if not stored_events:
                return []
            self._insert_stored_events(curs, stored_events, **kwargs)
            return self._fetch_ids_after_insert_events(curs, stored_events, **kwargs)

    def _insert_stored_events(self, curs: Any, stored_events: Sequence[StoredEvent], **kwargs: Any) -> None:
        self._lock_table(curs)
        self._notify_channel(curs)
        rows = [self.construct_pg_stored_event(s.originator_id, s.originator_version, s.topic, s.state)
                for s in stored_events]
        curs.execute(self.insert_events_statement, (rows,), binary=True)


class LedgerApplication(Application[str]):
    name = APP_NAME

    def construct_mapper(self) -> Mapper[str]:
        return LedgerMapper()


class Row(NamedTuple):
    """One stored event as the database holds it, in notification order."""

    notification_id: int
    stream: str
    seq: int
    kind: str
    state: bytes


class Store:
    """The ledger's event store. Open with ``Store.open(url)``; close when done."""

    def __init__(self, url: DatabaseURL, app: LedgerApplication):
        self.url = url
        self.app = app
        self.recorder = app.recorder

    @classmethod
    def open(cls, url: str | DatabaseURL, *, create: bool = False) -> Store:
        db = url if isinstance(url, DatabaseURL) else DatabaseURL.parse(url)
        if db.backend == "sqlite":
            assert db.path is not None
            if not create and not db.path.exists():
                raise StoreError(f"no ledger at {db.path}: run 'pitboss init' first")
            if create:
                db.path.parent.mkdir(parents=True, exist_ok=True)
        elif create and db.schema:
            _ensure_pg_schema(db)
        env = db.env()
        if db.backend == "postgres" and not create:
            # Only 'init' runs DDL: concurrent CREATE ... IF NOT EXISTS / CREATE FUNCTION
            # from producers starting together fail with "tuple concurrently updated".
            env["CREATE_TABLE"] = "no"
            _require_pg_ledger(db)
        try:
            app = LedgerApplication(env=env)
        except PersistenceError as exc:
            raise StoreError(f"cannot open {db.redacted()}: {_first_line(exc)}") from None
        except Exception as exc:  # psycopg pool / driver errors at connect time
            raise StoreError(f"cannot open {db.redacted()}: {_first_line(exc)}") from None
        return cls(db, app)

    def close(self) -> None:
        self.app.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -------------------------------------------------------------------
    def append(self, events: Sequence[SignedEvent]) -> list[int]:
        """Store events in one transaction; ConflictError if any (stream, seq) is taken.

        Goes to the application's event store (``app.events.put``, where
        ``Application.save`` ends up) directly: ``save`` would first run a runtime
        Protocol isinstance check on every event to sort aggregates from events, about
        10 us an event here, for nothing, since these are all events.
        """
        try:
            recordings = self.app.events.put(list(events))
        except IntegrityError as exc:
            if self._all_stored_as_sent(events):
                raise AlreadyStoredError(
                    "every event of this batch is already stored with the same hash (an earlier"
                    " attempt committed before its connection dropped); nothing stored twice"
                ) from None
            raise ConflictError(
                "another writer stored an event at a (stream, seq) of this batch while it"
                " was being checked; nothing of this batch was stored; re-read and retry"
            ) from exc
        except PersistenceError as exc:
            raise StoreError(f"storing the batch failed, nothing was stored: {_first_line(exc)}") from None
        return [r.notification.id for r in recordings]

    def _all_stored_as_sent(self, events: Sequence[SignedEvent]) -> bool:
        try:
            return all((got := self.event_at(ev.stream, ev.seq)) is not None and got.hash == ev.hash
                       for ev in events)
        except PersistenceError:
            return False

    # --- reading -------------------------------------------------------------------
    def head(self, stream: str) -> SignedEvent | None:
        rows = self.recorder.select_events(stream, desc=True, limit=1)
        return event_from_stored(rows[0].state) if rows else None

    def heads(self, streams: Sequence[str]) -> dict[str, SignedEvent]:
        """The last stored event of each given stream that has any, in few queries."""
        out: dict[str, SignedEvent] = {}
        unique = list(dict.fromkeys(streams))
        ds = self.recorder.datastore  # type: ignore[attr-defined]
        for i in range(0, len(unique), 500):
            part = unique[i:i + 500]
            if self.url.backend == "sqlite":
                marks = ",".join("?" * len(part))
                sql = (f"SELECT e.state FROM {SQLITE_TABLE} e JOIN (SELECT originator_id, MAX(originator_version) v"
                       f" FROM {SQLITE_TABLE} WHERE originator_id IN ({marks}) GROUP BY originator_id) m"
                       " ON e.originator_id = m.originator_id AND e.originator_version = m.v")
                with ds.transaction(commit=False) as c:
                    c.execute(sql, part)
                    rows = [r[0] for r in c.fetchall()]
            else:
                sql = (f"SELECT DISTINCT ON (originator_id) state FROM {self.events_table}"
                       " WHERE originator_id = ANY(%s) ORDER BY originator_id, originator_version DESC")
                with ds.get_connection() as conn, conn.cursor() as curs:
                    curs.execute(sql, (part,))
                    rows = [r["state"] for r in curs.fetchall()]
            for state in rows:
                ev = event_from_stored(bytes(state))
                out[ev.stream] = ev
        return out

    def event_at(self, stream: str, seq: int) -> SignedEvent | None:
        rows = self.recorder.select_events(stream, gt=seq - 1, lte=seq)
        return event_from_stored(rows[0].state) if rows else None

    def stream_events(self, stream: str) -> list[SignedEvent]:
        return [event_from_stored(r.state) for r in self.recorder.select_events(stream)]

    def max_notification_id(self) -> int:
        return self.recorder.max_notification_id() or 0

    def count(self) -> int:
        return int(self.sql_scalar(f"SELECT count(*) FROM {self.events_table}"))

    def row_range(self, lo: int, hi: int) -> list[Row]:
        """Stored events with notification ids lo..hi (inclusive), in notification order.

        Plain SQL returning tuples: this is the bulk read of verify and checkpoints.
        """
        ds = self.recorder.datastore  # type: ignore[attr-defined]
        if self.url.backend == "sqlite":
            sql = (f"SELECT rowid, originator_id, originator_version, topic, state FROM {SQLITE_TABLE}"
                   " WHERE rowid BETWEEN ? AND ? ORDER BY rowid")
            with ds.transaction(commit=False) as c:
                c.execute(sql, (lo, hi))
                return [Row(*r) for r in c.fetchall()]
        from psycopg.rows import tuple_row

        sql = (f"SELECT notification_id, originator_id, originator_version, topic, state FROM {self.events_table}"
               " WHERE notification_id BETWEEN %s AND %s ORDER BY notification_id")
        with ds.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(sql, (lo, hi))
            return [Row(i, s, v, t, bytes(b)) for i, s, v, t, b in curs.fetchall()]

    def rows_of_kind(self, kind: str) -> list[Row]:
        """Every stored event of one kind, in notification order (a scan in the database)."""
        ds = self.recorder.datastore  # type: ignore[attr-defined]
        if self.url.backend == "sqlite":
            with ds.transaction(commit=False) as c:
                c.execute(f"SELECT rowid, originator_id, originator_version, topic, state FROM {SQLITE_TABLE}"
                          " WHERE topic = ? ORDER BY rowid", (kind,))
                return [Row(*r) for r in c.fetchall()]
        from psycopg.rows import tuple_row

        with ds.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(f"SELECT notification_id, originator_id, originator_version, topic, state FROM"
                         f" {self.events_table} WHERE topic = %s ORDER BY notification_id", (kind,))
            return [Row(i, s, v, t, bytes(b)) for i, s, v, t, b in curs.fetchall()]

    def rows(self, start: int = 1, page: int = 5000) -> Iterator[Row]:
        """Every stored event in notification order, read page by page."""
        stop = self.max_notification_id()
        for lo in range(start, stop + 1, page):
            yield from self.row_range(lo, min(lo + page - 1, stop))

    def sql_scalar(self, statement: str) -> Any:
        """Run one read-only SQL statement returning one value (tests, counts)."""
        ds = self.recorder.datastore  # type: ignore[attr-defined]
        if self.url.backend == "sqlite":
            with ds.transaction(commit=False) as c:
                c.execute(statement)
                return c.fetchone()[0]
        with ds.get_connection() as conn, conn.cursor() as curs:
            curs.execute(statement)
            row = curs.fetchone()
            return next(iter(row.values())) if isinstance(row, dict) else row[0]

    @property
    def events_table(self) -> str:
        if self.url.backend == "sqlite":
            return SQLITE_TABLE
        return f'"{self.url.schema or "public"}".{PG_TABLE}'


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _require_pg_ledger(db: DatabaseURL) -> None:
    import psycopg

    table = f'"{db.schema or "public"}".{PG_TABLE}'
    try:
        with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
            row = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
    except psycopg.Error as exc:
        raise StoreError(f"cannot open {db.redacted()}: {_first_line(exc)}") from None
    if row is None or row[0] is None:
        raise StoreError(f"no ledger at {db.redacted()}: run 'pitboss init' first")


def _ensure_pg_schema(db: DatabaseURL) -> None:
    import psycopg

    try:
        with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{db.schema}"')
    except psycopg.Error as exc:
        raise StoreError(f"cannot open {db.redacted()}: {_first_line(exc)}") from None



def setup_append_only(db: DatabaseURL, service_role: str | None = None) -> list[str]:
    """Make the ledger's events table append-only at the database (PostgreSQL; issue #7):

    - a trigger refusing UPDATE and DELETE of any row, and TRUNCATE, for every role
      (the table owner and superusers included: they would have to drop the trigger
      first, which is itself a logged DDL statement);
    - with ``service_role``, a login role for the ingest service that may SELECT and
      INSERT the events table (and use its notification-id sequence) and nothing else:
      no UPDATE, DELETE or TRUNCATE, no DDL.

    Idempotent. Returns what was done, one line each."""
    import psycopg
    from psycopg import sql

    if db.backend != "postgres":
        raise StoreError("append-only at the database needs PostgreSQL; on SQLite, protect the file"
                         " (read-only for everyone but the ingest service) and rely on 'pitboss verify'")
    schema = db.schema or "public"
    table = sql.Identifier(schema, PG_TABLE)
    func = sql.Identifier(schema, "pitboss_refuse_change")
    done = []
    try:
        with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
            conn.execute(sql.SQL(
                "CREATE OR REPLACE FUNCTION {} () RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                " RAISE EXCEPTION 'pitboss: the ledger is append-only: % of % refused', TG_OP, TG_TABLE_NAME;"
                " END $$").format(func))
            for name, when in (("pitboss_append_only", "BEFORE UPDATE OR DELETE ON {} FOR EACH ROW"),
                               ("pitboss_no_truncate", "BEFORE TRUNCATE ON {} FOR EACH STATEMENT")):
                conn.execute(sql.SQL("DROP TRIGGER IF EXISTS {} ON {}").format(sql.Identifier(name), table))
                conn.execute(sql.SQL("CREATE TRIGGER {} " + when + " EXECUTE FUNCTION {} ()").format(
                    sql.Identifier(name), table, func))
            done.append(f"trigger: UPDATE, DELETE and TRUNCATE of {schema}.{PG_TABLE} refused for every role")
            if service_role:
                role = sql.Identifier(service_role)
                exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (service_role,)).fetchone()
                if not exists:
                    conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(role))
                conn.execute(sql.SQL("REVOKE ALL ON {} FROM {}").format(table, role))
                conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), role))
                conn.execute(sql.SQL("GRANT SELECT, INSERT ON {} TO {}").format(table, role))
                conn.execute(sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}").format(
                    sql.Identifier(schema), role))
                done.append(f"role {service_role}: SELECT and INSERT on {schema}.{PG_TABLE} only"
                            " (no UPDATE, DELETE, TRUNCATE)")
    except psycopg.Error as exc:
        raise StoreError(f"cannot make {db.redacted()} append-only: {_first_line(exc)}") from None
    return done

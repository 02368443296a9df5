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
import contextlib
import gc
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, overload

from eventsourcing.application import Application
from eventsourcing.persistence import (
    IntegrityError,
    Mapper,
    PersistenceError,
    StoredEvent,
)

from ledger.events import PackedEvent, SignedEvent, StoredHead, event_from_stored
from ledger.store.admin import ensure_pg_schema, require_pg_ledger, setup_append_only
from ledger.store.errors import (
    AlreadyStoredError,
    ConflictError,
    StoreError,
    first_line,
)
from ledger.store.urls import PG_TABLE, SQLITE_TABLE, DatabaseURL

# eventsourcing 9.5's PostgresDatastore.__del__ calls close() again, which fails during
# interpreter teardown (module globals are gone) for a datastore kept alive by the
# application's reference cycles. Collect them while the interpreter is still whole.
atexit.register(gc.collect)

APP_NAME = "pitboss"

SQLITE_CACHE_KIB = 2000
"""SQLite's own default page cache a connection (``PRAGMA cache_size = -2000``: 2,000 KiB)."""
SQLITE_WRITE_CACHE_KIB = 512
"""The page cache of a connection while it appends a batch (``Store.append``), then
``SQLITE_CACHE_KIB`` again: a batch's pages go to the write-ahead log as the cache fills,
and SQLite's default let 2 MB of them stay in the process, a fifth of a 10 MB batch's
size on top of the batch (issue 13 point 8: a batch's peak at most twice its size;
``benchmarks/ingest_memory.py``, with the rest of 23076aa: 1.80 times a 10 MB batch,
1.93 with 1,024 KiB). Alternated 40,000-event ingests of 1,000-event batches were within
2% with either (docs/benchmarks.md, the twenty-fourth machine)."""


def pg_heads_sql(table: str) -> str:
    """PostgreSQL's query for the last event of each stream named in its one parameter (a
    list of names; ``Store.heads``): one backward probe of the primary key (stream, seq)
    a name, whatever the planner knows of the table. Its first form, ``DISTINCT ON
    (originator_id) ... WHERE originator_id = ANY(%s)``, was planned as a scan of the whole
    table and a sort while the table's statistics were not yet gathered (a new ledger, a
    large batch just stored): 3.4 to 5.4 ms a query where this takes 1.5 to 2.5, 12% of a
    40,000-event ingest where this is 5 to 6% (docs/benchmarks.md, the fifteenth machine)."""
    return ("SELECT e.originator_id, e.originator_version, e.topic, e.state FROM unnest(%s::text[]) AS s(id)"
            " CROSS JOIN LATERAL (SELECT originator_id, originator_version, topic, state FROM"
            f" {table} WHERE originator_id = s.id ORDER BY originator_version DESC LIMIT 1) e")


class LedgerMapper(Mapper[str]):
    """Stores a SignedEvent as its canonical JSON; no transcoder, cipher or compressor,
    so a regulator can read the rows with any SQL client."""

    def __init__(self) -> None:
        super().__init__(transcoder=None)  # type: ignore[arg-type]  # no transcoder: states are our canonical JSON

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        ev: SignedEvent = domain_event
        return StoredEvent(ev.stream, ev.seq, ev.kind, ev.encoded())  # (originator_id, originator_version, topic, state)

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        return event_from_stored(stored_event.state)


class LedgerApplication(Application[str]):
    name = APP_NAME

    def construct_mapper(self) -> Mapper[str]:
        return LedgerMapper()


class _Mapped(Sequence[StoredEvent]):
    """A batch's events as the recorder's stored events, each mapped when the recorder
    reaches it (both recorders go row by row or chunk by chunk), so a batch is never held
    twice over (issue 13 point 8)."""

    def __init__(self, events: Sequence[SignedEvent | PackedEvent], mapper: Mapper[str]):
        self.events, self.mapper = events, mapper

    def __len__(self) -> int:
        return len(self.events)

    @overload
    def __getitem__(self, index: int) -> StoredEvent: ...

    @overload
    def __getitem__(self, index: slice) -> list[StoredEvent]: ...

    def __getitem__(self, index: int | slice) -> StoredEvent | list[StoredEvent]:
        if isinstance(index, slice):
            return [self.mapper.to_stored_event(ev) for ev in self.events[index]]
        return self.mapper.to_stored_event(self.events[index])


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
            ensure_pg_schema(db)
        env = db.env()
        if db.backend == "postgres" and not create:
            # Only 'init' runs DDL: concurrent CREATE ... IF NOT EXISTS / CREATE FUNCTION
            # from producers starting together fail with "tuple concurrently updated".
            env["CREATE_TABLE"] = "no"
            require_pg_ledger(db)
        try:
            app = LedgerApplication(env=env)
        except PersistenceError as exc:
            raise StoreError(f"cannot open {db.redacted()}: {first_line(exc)}") from None
        except Exception as exc:  # psycopg pool / driver errors at connect time
            raise StoreError(f"cannot open {db.redacted()}: {first_line(exc)}") from None
        return cls(db, app)

    def close(self) -> None:
        self.app.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -------------------------------------------------------------------
    def append(self, events: Sequence[SignedEvent | PackedEvent],
               before_commit: Callable[[], None] | None = None) -> list[int]:
        """Store events in one transaction; ConflictError if any (stream, seq) is taken.
        ``before_commit``: called inside the transaction once every row is written; what it
        raises rolls the whole batch back and is raised here as it is (ingest: the batch's
        last signature verdicts, read while the database writes the rows).

        Goes to the application's mapper and recorder directly (what ``app.events.put``,
        where ``Application.save`` ends up, does): ``save`` would first run a runtime
        Protocol isinstance check on every event to sort aggregates from events, about
        10 us an event here, for nothing, and ``put`` builds a Recording for every event,
        where only the notification ids are wanted.
        """
        try:
            # the mapper and recorder that ``app.events.put`` uses, without the Recording and
            # Notification objects it builds for every event (only the ids are wanted)
            mapped = _Mapped(events, self.app.mapper)
            if self.url.backend == "sqlite":  # the library's insert_events, with the hook before its commit
                with self.recorder.datastore.transaction(commit=True) as c:  # type: ignore[attr-defined]  # the SQLite recorder has one
                    c.execute(f"PRAGMA cache_size = -{SQLITE_WRITE_CACHE_KIB}")
                    try:
                        ids = self.recorder._insert_events(c, mapped)  # type: ignore[attr-defined]  # the SQLite recorder's own
                        if before_commit is not None:
                            before_commit()
                    finally:
                        with contextlib.suppress(sqlite3.Error):  # a connection that failed keeps its error, not this
                            c.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
            elif before_commit is None:
                ids = self.recorder.insert_events(mapped)
            else:
                ids = self.recorder.insert_events(mapped, before_commit=before_commit)
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
            raise StoreError(f"storing the batch failed, nothing was stored: {first_line(exc)}") from None
        return list(ids or [])

    def _all_stored_as_sent(self, events: Sequence[SignedEvent | PackedEvent]) -> bool:
        try:
            return all((got := self.event_at(ev.stream, ev.seq)) is not None and got.hash == ev.hash
                       for ev in events)
        except PersistenceError:
            return False

    # --- reading -------------------------------------------------------------------
    def head(self, stream: str) -> SignedEvent | None:
        rows = self.recorder.select_events(stream, desc=True, limit=1)
        return event_from_stored(rows[0].state) if rows else None

    def heads(self, streams: Sequence[str], packed: bool = False) -> dict[str, Any]:
        """The last stored event of each given stream that has any, in few queries: a
        ``SignedEvent``, or with ``packed`` a ``StoredHead`` (what ingest holds)."""
        out: dict[str, Any] = {}
        load = self.event_at  # one bound method for every head
        unique = list(dict.fromkeys(streams))
        ds = self.recorder.datastore  # type: ignore[attr-defined]  # both recorders have one; the base class does not declare it
        for i in range(0, len(unique), 500):
            part = unique[i:i + 500]
            if self.url.backend == "sqlite":
                marks = ",".join("?" * len(part))
                sql = (f"SELECT e.originator_id, e.originator_version, e.topic, e.state FROM {SQLITE_TABLE} e"
                       " JOIN (SELECT originator_id, MAX(originator_version) v"
                       f" FROM {SQLITE_TABLE} WHERE originator_id IN ({marks}) GROUP BY originator_id) m"
                       " ON e.originator_id = m.originator_id AND e.originator_version = m.v")
                with ds.transaction(commit=False) as c:
                    c.execute(sql, part)
                    rows = [tuple(r) for r in c.fetchall()]
            else:
                sql = pg_heads_sql(self.events_table)
                with ds.get_connection() as conn, conn.cursor() as curs:
                    curs.execute(sql, (part,))
                    rows = [(r["originator_id"], r["originator_version"], r["topic"], r["state"])
                            for r in curs.fetchall()]
            for stream, seq, kind, state in rows:
                out[stream] = (StoredHead(stream, seq, kind, bytes(state), load) if packed
                               else event_from_stored(bytes(state)))
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

    def _rows_where(self, condition: str = "", params: tuple[object, ...] = (), limit: int | None = None,
                    raw: bool = False) -> list[Row]:
        """Stored rows matching ``condition`` (SQL with ``{id}`` for the notification-id
        column and ``?`` for parameters), in notification order: the plain-SQL bulk read
        of verify, checkpoints and the jobs (tuples, not eventsourcing's objects). ``raw``:
        SQLite's own tuples, in the same order, where the caller unpacks them (verify:
        building a ``Row`` costs as much as fetching it)."""
        ds = self.recorder.datastore  # type: ignore[attr-defined]  # both recorders have one; the base class does not declare it
        sqlite = self.url.backend == "sqlite"
        id_col = "rowid" if sqlite else "notification_id"
        where = f" WHERE {condition.format(id=id_col)}" if condition else ""
        tail = f" LIMIT {int(limit)}" if limit is not None else ""
        sql = (f"SELECT {id_col}, originator_id, originator_version, topic, state FROM"
               f" {SQLITE_TABLE if sqlite else self.events_table}{where} ORDER BY {id_col}{tail}")
        if sqlite:
            with ds.transaction(commit=False) as c:
                c.execute(sql, params)
                return c.fetchall() if raw else [Row(*r) for r in c.fetchall()]  # raw: tuples of Row's fields
        from psycopg.rows import tuple_row

        with ds.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(sql.replace("?", "%s"), params)
            return [Row(i, s, v, t, bytes(b)) for i, s, v, t, b in curs.fetchall()]

    def row_range(self, lo: int, hi: int, raw: bool = False) -> list[Row]:
        """Stored events with notification ids lo..hi (inclusive), in notification order
        (``raw``: see ``_rows_where``)."""
        return self._rows_where("{id} BETWEEN ? AND ?", (lo, hi), raw=raw)

    def rows_of_kind(self, kind: str) -> list[Row]:
        """Every stored event of one kind, in notification order (a scan in the database)."""
        return self._rows_where("topic = ?", (kind,))

    def rows_of_kind_after(self, kind: str, after: int) -> list[Row]:
        """Stored events of one kind with notification ids above ``after``, in order."""
        return self._rows_where("topic = ? AND {id} > ?", (kind, after))

    def rows_of_kinds(self, kinds: Sequence[str], after: int | None = None) -> list[Row]:
        """Stored events of any of ``kinds`` (with notification ids above ``after``, when
        given), in notification order: one scan."""
        marks = ", ".join("?" * len(kinds))
        if after is None:
            return self._rows_where(f"topic IN ({marks})", tuple(kinds))
        return self._rows_where(f"topic IN ({marks}) AND {{id}} > ?", (*kinds, after))

    def stream_rows(self, stream: str) -> list[Row]:
        """One stream's rows with their notification ids, in notification order."""
        return self._rows_where("originator_id = ?", (stream,))

    def id_bounds(self) -> tuple[int, int] | None:
        """The lowest and highest notification ids stored (two index lookups), or None."""
        id_col = "rowid" if self.url.backend == "sqlite" else "notification_id"
        low = self.sql_scalar(f"SELECT min({id_col}) FROM {self.events_table}")
        high = self.sql_scalar(f"SELECT max({id_col}) FROM {self.events_table}")
        return None if low is None or high is None else (int(low), int(high))

    def row_at(self, stream: str, seq: int) -> list[Row]:
        """The row of one event (none when it is not stored), with its notification id."""
        return self._rows_where("originator_id = ? AND originator_version = ?", (stream, seq))

    def notification_ids(self) -> list[int]:
        """Every stored row's notification id, in order: all rows, not an id range, so a row
        written around the ledger at id 0 or -1 is read too (issue 14 point 3)."""
        id_col = "rowid" if self.url.backend == "sqlite" else "notification_id"
        ds = self.recorder.datastore  # type: ignore[attr-defined]  # both recorders have one; the base class does not declare it
        if self.url.backend == "sqlite":
            with ds.transaction(commit=False) as c:
                c.execute(f"SELECT {id_col} FROM {SQLITE_TABLE} ORDER BY {id_col}")
                return [int(r[0]) for r in c.fetchall()]
        from psycopg.rows import tuple_row

        with ds.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(f"SELECT {id_col} FROM {self.events_table} ORDER BY {id_col}")
            return [int(r[0]) for r in curs.fetchall()]

    def iter_notification_ids(self, page: int = 50_000) -> Iterator[int]:
        """Every stored row's notification id, in order, read a page at a time after the
        last seen (keyset): all rows, like ``notification_ids``, without holding them."""
        id_col = "rowid" if self.url.backend == "sqlite" else "notification_id"
        ds = self.recorder.datastore  # type: ignore[attr-defined]  # both recorders have one; the base class does not declare it
        after: int | None = None
        while True:
            where = "" if after is None else f" WHERE {id_col} > {int(after)}"
            sql = f"SELECT {id_col} FROM {self.events_table}{where} ORDER BY {id_col} LIMIT {int(page)}"
            if self.url.backend == "sqlite":
                with ds.transaction(commit=False) as c:
                    c.execute(sql)
                    batch = [int(r[0]) for r in c.fetchall()]
            else:
                from psycopg.rows import tuple_row

                with ds.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
                    curs.execute(sql)
                    batch = [int(r[0]) for r in curs.fetchall()]
            yield from batch
            if len(batch) < page:
                return
            after = batch[-1]

    def rows(self, page: int = 5000) -> Iterator[Row]:
        """Every stored event in notification order, read page by page after the last id
        seen (keyset): every row, whatever its id, not the ids 1..max (issue 14 point 3)."""
        batch = self._rows_where(limit=page)
        while batch:
            yield from batch
            if len(batch) < page:
                return
            batch = self._rows_where("{id} > ?", (batch[-1].notification_id,), limit=page)

    def sql_scalar(self, statement: str) -> Any:
        """Run one read-only SQL statement returning one value (tests, counts)."""
        ds = self.recorder.datastore  # type: ignore[attr-defined]  # both recorders have one; the base class does not declare it
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




__all__ = ["AlreadyStoredError", "ConflictError", "DatabaseURL", "Row", "Store", "StoreError", "setup_append_only"]

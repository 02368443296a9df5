"""Running the views: their rows and tracking positions, written together.

Storage is eventsourcing's projection support: a ``TrackingRecorder`` (SQLite or
PostgreSQL) keeps each view's position (the last notification id it has applied); the
view's own tables live beside it, and every chunk of events is written as the view's row
changes plus its new position in ONE database transaction. A crash (or SIGKILL) between
chunks loses nothing and counts nothing twice: the next run starts after the last
committed position.

- SQLite: the views live in their own file beside the ledger (``<ledger>.views.db``),
  because eventsourcing's SQLite tables are not prefixed per application.
- PostgreSQL: the views live in the ledger's schema as ``view_<table>`` tables, with the
  tracking table ``pitboss_view_tracking``.

Subscriptions do not work on SQLite (eventsourcing 9.5), so the runner polls the ledger
in notification order, on both backends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eventsourcing.persistence import Tracking

from ledger.events import SignedEvent
from ledger.judges.round import CONFIG_KINDS, walk
from ledger.store import DatabaseURL, Store
from projections.views import VIEWS, Add, Context, Put, View

CHUNK = 2000


class ViewStore:
    """The views' tables and tracking positions in one database."""

    def __init__(self, url: DatabaseURL, views: dict[str, View] | None = None):
        self.url = url
        self.views = views or VIEWS
        self.postgres = url.backend == "postgres"
        self.prefix = "view_" if self.postgres else ""
        self._statements: dict[tuple[str, str, bool], str] = {}  # (view, table, an Add?) -> its INSERT
        if self.postgres:
            from eventsourcing.postgres import (
                PostgresDatastore,
                PostgresTrackingRecorder,
            )

            self.datastore: Any = PostgresDatastore(
                dbname=url.dbname, host=url.host, port=url.port, user=url.user, password=url.password,
                schema=url.schema, connect_timeout=5, pool_size=1, max_overflow=1)
            self.recorder: Any = PostgresTrackingRecorder(self.datastore, tracking_table_name="pitboss_view_tracking")
        else:
            from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder

            assert url.path is not None
            self.path = Path(str(url.path) + ".views.db")
            self.datastore = SQLiteDatastore(db_name=str(self.path))
            self.recorder = SQLiteTrackingRecorder(self.datastore)
        self.recorder.create_table()
        with self.datastore.transaction(commit=True) as c:
            for view in self.views.values():
                for t in view.tables:
                    c.execute(self._ddl(t))

    def close(self) -> None:
        self.datastore.close()

    def __enter__(self) -> ViewStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- SQL ----------------------------------------------------------------------------

    def table_name(self, name: str) -> str:
        if self.postgres:
            return f'"{self.url.schema or "public"}".{self.prefix}{name}'
        return name

    def _ddl(self, t: Any) -> str:
        cols = [f"{k} TEXT NOT NULL" for k in t.keys]
        cols += [f"{c} {'TEXT' if c in t.text_columns else 'BIGINT'} NOT NULL" for c in t.columns]
        return (f"CREATE TABLE IF NOT EXISTS {self.table_name(t.name)} ({', '.join(cols)},"
                f" PRIMARY KEY ({', '.join(t.keys)}))")

    def _statement(self, view: View, table: str, add: bool) -> str:
        """The INSERT of one of ``view``'s tables for an ``Add`` (an upsert that adds to the
        row's counters) or a ``Put``, built once and kept."""
        sql = self._statements.get((view.name, table, add))
        if sql is None:
            t = next(t for t in view.tables if t.name == table)
            ph = "%s" if self.postgres else "?"
            names = list(t.keys) + list(t.columns)
            placeholders = ", ".join([ph] * len(names))
            if add:
                updates = ", ".join(f"{c} = cur.{c} + excluded.{c}" for c in t.columns)
                sql = (f"INSERT INTO {self.table_name(t.name)} AS cur ({', '.join(names)}) VALUES ({placeholders})"
                       f" ON CONFLICT ({', '.join(t.keys)}) DO UPDATE SET {updates}")
            else:
                sql = f"INSERT INTO {self.table_name(t.name)} ({', '.join(names)}) VALUES ({placeholders})"
            self._statements[(view.name, table, add)] = sql
        return sql

    def write(self, view: View, position: int, ops: list[Add | Put]) -> None:
        """The view's row changes and its new position, in one transaction. A table's
        ``Add``s to one row are summed first (addition is exact in Python's integers and the
        order of additions does not change a sum), so a row a chunk adds to many times is
        written once; each table's rows go in one ``executemany``. Tables are independent
        (no constraint spans two); a table given both kinds of operation in one chunk has
        them written one by one, in order."""
        sums: dict[str, dict[tuple[Any, ...], list[int]]] = {}
        puts: dict[str, list[tuple[Any, ...]]] = {}
        mixed: dict[str, list[Add | Put]] = {}
        for op in ops:
            if isinstance(op, Add):
                rows = sums.setdefault(op.table, {})
                total = rows.get(op.key)
                if total is None:
                    rows[op.key] = list(op.amounts)
                else:
                    for i, amount in enumerate(op.amounts):
                        total[i] += amount
            else:
                puts.setdefault(op.table, []).append(op.key + op.values)
        for table in sums.keys() & puts.keys():
            mixed[table] = [op for op in ops if op.table == table]
        with self.datastore.transaction(commit=True) as c:
            self.recorder._insert_tracking(c, Tracking(view.name, position))
            for table, rows in sums.items():
                if table not in mixed:
                    c.executemany(self._statement(view, table, True), [key + tuple(v) for key, v in rows.items()])
            for table, values in puts.items():
                if table not in mixed:
                    c.executemany(self._statement(view, table, False), values)
            for table, table_ops in mixed.items():
                for op in table_ops:
                    if isinstance(op, Add):
                        c.execute(self._statement(view, table, True), op.key + op.amounts)
                    else:
                        c.execute(self._statement(view, table, False), op.key + op.values)

    def position(self, name: str) -> int:
        return self.recorder.max_tracking_id(name) or 0

    def reset(self, name: str) -> None:
        """Forget a view: its rows and its position (for a rebuild from zero)."""
        view = self.views[name]
        tracking = "pitboss_view_tracking" if self.postgres else "tracking"
        schema = f'"{self.url.schema or "public"}".' if self.postgres else ""
        ph = "%s" if self.postgres else "?"
        with self.datastore.transaction(commit=True) as c:
            for t in view.tables:
                c.execute(f"DELETE FROM {self.table_name(t.name)}")
            c.execute(f"DELETE FROM {schema}{tracking} WHERE application_name = {ph}", (name,))

    def _fetch(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.datastore.transaction(commit=False) as c:
            c.execute(sql, params)
            return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in c.fetchall()]

    def table_pages(self, name: str, table: str, page: int = 5000) -> Iterator[list[tuple[Any, ...]]]:
        """One table of a view, a page of rows at a time in key order (keyset paging, as
        this database orders its keys): what a comparison streams, holding one page."""
        t = next(t for t in self.views[name].tables if t.name == table)
        ph = "%s" if self.postgres else "?"
        cols, keys = ", ".join(list(t.keys) + list(t.columns)), ", ".join(t.keys)
        after: tuple[Any, ...] = ()
        while True:
            where = f" WHERE ({keys}) > ({', '.join([ph] * len(t.keys))})" if after else ""
            rows = self._fetch(f"SELECT {cols} FROM {self.table_name(table)}{where} ORDER BY {keys} LIMIT {page}", after)
            if rows:
                yield rows
            if len(rows) < page:
                return
            after = rows[-1][:len(t.keys)]

    LOOKUP = 300
    """Keys asked for in one query by ``rows_at`` (at most 3 key columns: 900 parameters,
    under SQLite's oldest limit of 999)."""

    def rows_at(self, name: str, table: str, keys: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
        """The rows of a view's table with these keys (key -> row; a key with no row is
        absent), a few hundred keys a query: what a comparison asks of a page of rows."""
        t = next(t for t in self.views[name].tables if t.name == table)
        ph = "%s" if self.postgres else "?"
        n = len(t.keys)
        one = "(" + ", ".join([ph] * n) + ")"
        cols = ", ".join(list(t.keys) + list(t.columns))
        out: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        for i in range(0, len(keys), self.LOOKUP):
            part = keys[i:i + self.LOOKUP]
            rows = self._fetch(f"SELECT {cols} FROM {self.table_name(table)} WHERE ({', '.join(t.keys)}) IN"
                               f" (VALUES {', '.join([one] * len(part))})", tuple(v for k in part for v in k))
            out.update((r[:n], r) for r in rows)
        return out

    def row_count(self, name: str, table: str) -> int:
        return int(self._fetch(f"SELECT count(*) FROM {self.table_name(table)}")[0][0])

    def rows(self, name: str) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of a view's tables, sorted (tests and reconciliation compare these)."""
        out: dict[str, list[tuple[Any, ...]]] = {}
        with self.datastore.transaction(commit=False) as c:
            for t in self.views[name].tables:
                c.execute(f"SELECT {', '.join(list(t.keys) + list(t.columns))} FROM {self.table_name(t.name)}")
                out[t.name] = sorted(tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in c.fetchall())
        return out


@dataclass
class RunReport:
    view: str
    start: int
    position: int
    events: int


class TableConfigs:
    """``event_at`` for walking rounds in a pass over the log (``walk``'s table
    configuration): the configuration events the pass has fed (``see``), else the store.
    A round's ``round.open`` cites a configuration stored before it, so a pass in log order
    makes no query per round."""

    def __init__(self, store: Store | None):
        self.store = store
        self.seen: dict[tuple[str, int], SignedEvent] = {}

    def see(self, ev: SignedEvent) -> None:
        if ev.kind in CONFIG_KINDS:
            self.seen[(ev.stream, ev.seq)] = ev

    def __call__(self, stream: str, seq: int) -> SignedEvent | None:
        ev = self.seen.get((stream, seq))
        if ev is None and self.store is not None:
            ev = self.store.event_at(stream, seq)
        return ev


Accept = Callable[[int, str, int, str, bytes], bool]
"""(notification id, stream, seq, kind, stored bytes) -> whether the row counts."""


class Applier:
    """Events applied to views in ledger order, written chunk by chunk: each view's row
    changes for the chunk and its new position in one transaction (``ViewStore.write``).
    ``catch_up`` drives one over the rows it reads; reconciliation drives one from its own
    pass over the log, so each row is read and decoded once and each closed round is
    derived once for its checks and the views (``Context.remember``)."""

    def __init__(self, vstore: ViewStore, names: Iterable[str] | None = None, ctx: Context | None = None,
                 observe: Callable[[SignedEvent, dict[str, list[Add | Put]]], None] | None = None,
                 store: Store | None = None, hold_rounds: bool = True, checked: bool = False):
        self.vstore = vstore
        self.store = store
        self.checked = checked
        """Every event fed has had its payload checked as ingest checks it (``check_payload``),
        as ``ledger.verify.RowJudge`` does before it hands an event back: the rounds held are
        then walked without checking them again (``catch_up`` says so)."""
        self.held: dict[str, list[SignedEvent]] | None = {} if hold_rounds and store is not None else None
        """Each open round's events as they are fed: at its close the round is walked from
        these (``Context.remember``) rather than read again, when they are all of it (from
        seq 1, none skipped); memory holds the rounds open at once. Off when the caller
        walks the rounds itself (reconciliation)."""
        self.configs = TableConfigs(store)  # the table configurations those walks cite, as fed
        self.views = [vstore.views[n] for n in (names or vstore.views)]
        self.starts = {v.name: vstore.position(v.name) for v in self.views}
        self.positions = dict(self.starts)
        self.counts = dict.fromkeys(self.positions, 0)
        self.ctx = ctx or Context(store)
        self.observe = observe
        self.ops: dict[str, list[Add | Put]] = {v.name: [] for v in self.views}

    @property
    def low(self) -> int:
        """The lowest position of the views: rows after it are due."""
        return min(self.positions.values(), default=0)

    def feed(self, notification_id: int, ev: SignedEvent) -> None:
        """Apply one event (stored at ``notification_id``) to every view not past it."""
        if self.held is not None:
            if ev.stream.startswith("round:"):
                self._hold(ev)
            else:
                self.configs.see(ev)
        seen: dict[str, list[Add | Put]] = {}
        kind = ev.kind
        for v in self.views:
            if notification_id > self.positions[v.name]:
                self.counts[v.name] += 1
                if v.kinds is not None and kind not in v.kinds:
                    continue  # nothing of this view changes (``View.kinds``)
                ops = seen[v.name] = v.handle(ev, self.ctx)
                if ops:
                    self.ops[v.name].extend(ops)
        if self.observe is not None:
            self.observe(ev, seen)

    def _hold(self, ev: SignedEvent) -> None:
        assert self.held is not None and self.store is not None
        events = self.held.setdefault(ev.stream, [])
        events.append(ev)
        if ev.kind != "round.close.v1":
            return
        del self.held[ev.stream]
        if [e.seq for e in events] == list(range(1, ev.seq + 1)):  # the whole round, as stored: walk it once here
            rs, refused = walk(events, self.configs, self.checked)
            if rs is not None:
                self.ctx.remember(ev.stream, events, rs, bool(refused))

    def flush(self, position: int) -> None:
        """Write what was fed, with every view's position moved to ``position``."""
        for v in self.views:
            if position > self.positions[v.name]:
                self.vstore.write(v, position, self.ops[v.name])
                self.positions[v.name] = position
            self.ops[v.name] = []

    def reports(self) -> list[RunReport]:
        return [RunReport(v.name, self.starts[v.name], self.positions[v.name], self.counts[v.name]) for v in self.views]


def catch_up(store: Store, vstore: ViewStore, names: Iterable[str] | None = None, chunk: int = CHUNK,
             progress: Callable[[int, int], None] | None = None, stop_after: int | None = None,
             observe: Callable[[SignedEvent, dict[str, list[Add | Put]]], None] | None = None,
             accept: Accept | None = None, ctx: Context | None = None) -> list[RunReport]:
    """Apply every stored event after each view's position, chunk by chunk.

    ``stop_after``: stop once this many chunks are written (tests of an interrupted run).
    ``observe(event, {view: its row operations for the event})`` (the views whose ``kinds``
    hold the event's): called for each event
    in ledger order (reconciliation follows the cage money with it, ``projections.cage``).
    ``accept``: which rows count (issue 14 point 3); by default each row's own signature,
    hash and key are checked (``ledger.verify.RowJudge``) and a row that fails is skipped.
    ``ctx``: the views' context, to share its derivation of each closed round with ``observe``.
    """
    from ledger.verify import RowJudge, counted

    if accept is None:
        accept = RowJudge(store)
    # RowJudge hands back only events whose payload it checked
    applier = Applier(vstore, names, ctx, observe, store, checked=isinstance(accept, RowJudge))
    top = store.max_notification_id()
    lo = (applier.low if applier.views else top) + 1
    written = 0
    while lo <= top:
        hi = min(lo + chunk - 1, top)
        rows = store.row_range(lo, hi)
        prepare = getattr(accept, "prepare", None)
        if prepare is not None:  # the chunk's signatures checked on all cores while it is applied
            prepare(rows)
        for nid, ev in counted(rows, accept):
            applier.feed(nid, ev)
        applier.flush(hi)
        written += 1
        if progress:
            progress(hi, top)
        if stop_after is not None and written >= stop_after:
            break
        lo = hi + 1
    return applier.reports()


def rebuild(store: Store, vstore: ViewStore, names: Iterable[str] | None = None,
            progress: Callable[[int, int], None] | None = None, accept: Accept | None = None) -> list[RunReport]:
    names = list(names or vstore.views)
    for n in names:
        vstore.reset(n)
    return catch_up(store, vstore, names, progress=progress, accept=accept)

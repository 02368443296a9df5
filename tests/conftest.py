"""Fixtures: every storage test runs on a SQLite file and on PostgreSQL.

PostgreSQL tests use a fresh schema in the ``test`` database (``PITBOSS_TEST_PG`` to
point elsewhere) and drop it afterwards. Where no server answers they are skipped,
saying so, unless ``PITBOSS_REQUIRE_PG=1`` (set by .ci/run), which makes them fail.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ledger.house import PublicDir, init_ledger
from ledger.keys import KeyDirectory
from ledger.store import DatabaseURL, Store
from ledger.trust import TrustRoots

PG_BASE = os.environ.get("PITBOSS_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the tests whoever started the run. A run started in the background
    of a shell without job control (``pytest &`` in a script, a CI job, cron) inherits
    SIGINT ignored (POSIX: such a shell's asynchronous commands ignore it), and Python then
    installs no handler of its own: the tests of what Ctrl-C does (``ledger.forking``, the
    commands' exit 130) would send it to processes that ignore it, as pitboss rightly does
    when started so. The run takes Python's own handler back; the commands the tests start
    then begin with SIGINT at its default (an exec keeps an ignored signal ignored, and
    resets a handled one)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _pg_available() -> str | None:
    import psycopg

    try:
        with psycopg.connect(**DatabaseURL.parse(PG_BASE).connect_kwargs()):
            return None
    except psycopg.Error as exc:
        return str(exc).splitlines()[0]


_PG_PROBLEM: list[str | None] = []


def pg_url_or_skip() -> str:
    if not _PG_PROBLEM:
        _PG_PROBLEM.append(_pg_available())
    problem = _PG_PROBLEM[0]
    if problem is not None:
        if os.environ.get("PITBOSS_REQUIRE_PG") == "1":
            pytest.fail(f"PostgreSQL is required (PITBOSS_REQUIRE_PG=1) but unreachable: {problem}")
        pytest.skip(f"PostgreSQL not reachable at {PG_BASE}: {problem}")
    return f"{PG_BASE}?schema=t_{uuid.uuid4().hex[:12]}"


def drop_pg_schema(url: str) -> None:
    import psycopg

    db = DatabaseURL.parse(url)
    with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{db.schema}" CASCADE')


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'ledger.db'}"
    else:
        url = pg_url_or_skip()
        try:
            yield url
        finally:
            drop_pg_schema(url)


@dataclass
class Ledger:
    url: str
    store: Store
    keys: KeyDirectory
    public: PublicDir
    tmp: Path

    def cli_args(self) -> list[str]:
        return ["--db", self.url, "--keys", str(self.keys.path), "--public", str(self.public.path)]

    @property
    def roots(self) -> TrustRoots:
        """The roots a regulator pins for this ledger (``ledger.trust``), as ``init`` printed
        them, with the verifier's own state in the test's directory."""
        return roots_of(self.public, self.tmp / "verifier-state")

    def trust_args(self) -> list[str]:
        return ["--anchor", self.public.anchor_file.read_text().strip(),
                "--log-key", self.public.vkey_file.read_text().strip(),
                "--state", str(self.tmp / "verifier-state")]


def roots_of(public: PublicDir, state: Path) -> TrustRoots:
    from ledger.log.note import VerifierKey

    return TrustRoots(anchor=bytes.fromhex(public.anchor_file.read_text().strip()),
                      log_key=VerifierKey.parse(public.vkey_file.read_text()), state_dir=state,
                      sources={"anchor": "the test's pin", "log_key": "the test's pin", "state": "the test's"})


@pytest.fixture(autouse=True)
def verifier_state_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A verifier keeps its last accepted checkpoint in $XDG_STATE_HOME/pitboss: in tests,
    the test's own directory, never the home of whoever runs them."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))


@pytest.fixture
def ledger(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ledger]:
    """A ledger just initialised; the test's commands pin its roots through the environment,
    as a regulator's cron job does (PITBOSS_ANCHOR, PITBOSS_LOG_KEY: ``ledger.trust``)."""
    keys = KeyDirectory(tmp_path / "keys")
    public = PublicDir(tmp_path / "public")
    store = Store.open(db_url, create=True)
    init_ledger(store, keys, public, "test.pitboss/ledger")
    from ledger.house import active_signer
    from ledger.keyring import load_keyring
    from tests.helpers import RECEIPTS

    RECEIPTS[id(store)] = active_signer(load_keyring(store), keys, "ledger")
    monkeypatch.setenv("PITBOSS_ANCHOR", public.anchor_file.read_text().strip())
    monkeypatch.setenv("PITBOSS_LOG_KEY", public.vkey_file.read_text().strip())
    try:
        yield Ledger(db_url, store, keys, public, tmp_path)
    finally:
        RECEIPTS.pop(id(store), None)
        store.close()


@pytest.fixture
def past_dated(monkeypatch: pytest.MonkeyPatch) -> None:
    """For tests that record nights on fixed past dates (tournament clocks, 12-hour seat
    windows, two gaming days): the ledger's clock allows them (``PITBOSS_MAX_SKEW``,
    ``ledger.clock``). The time rules themselves are tested with the real clock."""
    monkeypatch.setenv("PITBOSS_MAX_SKEW", str(20 * 365 * 86400))


def produced(store: Store) -> int:
    """Events stored from producers: every row but the ledger's own receipts
    (``ledger.receipt.v1``, which ``pitboss ingest`` writes after each stored batch)."""
    return int(store.sql_scalar(f"SELECT count(*) FROM {store.events_table} WHERE originator_id <> 'ledger:receipts'"))


def dump_rows(store: Store) -> list[tuple[object, ...]]:
    """Every stored column of every row: equal dumps mean a byte-for-byte equal store."""
    table = store.events_table
    id_col = "rowid" if store.url.backend == "sqlite" else "notification_id"
    sql = f"SELECT {id_col}, originator_id, originator_version, topic, state FROM {table} ORDER BY {id_col}"
    ds = store.recorder.datastore  # type: ignore[attr-defined]
    if store.url.backend == "sqlite":
        with ds.transaction(commit=False) as c:
            c.execute(sql)
            return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in c.fetchall()]
    with ds.get_connection() as conn, conn.cursor() as curs:
        curs.execute(sql)
        return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r.values()) for r in curs.fetchall()]


def execute_sql(store: Store, statement: str, params: tuple[object, ...] = ()) -> None:
    """Write to the store behind the ledger's back (tamper tests)."""
    ds = store.recorder.datastore  # type: ignore[attr-defined]
    if store.url.backend == "sqlite":
        with ds.transaction(commit=True) as c:
            c.execute(statement, params)
        return
    with ds.get_connection() as conn, conn.transaction(), conn.cursor() as curs:
        curs.execute(statement.replace("?", "%s"), params)

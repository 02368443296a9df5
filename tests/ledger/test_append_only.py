"""Append-only at the database (issue #7 point 4, PostgreSQL): `pitboss init
--append-only --service-role NAME` installs a trigger that refuses UPDATE, DELETE and
TRUNCATE of the events table for every role, and a role that may only SELECT and INSERT
it. The service role ingests; its UPDATE fails on privileges, the owner's on the trigger;
the ledger still verifies."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.store import DatabaseURL, Store
from tests.conftest import drop_pg_schema, pg_url_or_skip
from tests.helpers import ingest, make_producers, night_batch

pytestmark = pytest.mark.postgres


@pytest.fixture
def protected(tmp_path: Path) -> Iterator[tuple[str, str, list[str]]]:
    url = pg_url_or_skip()
    role = f"pitboss_svc_{uuid.uuid4().hex[:8]}"
    args = ["--db", url, "--keys", str(tmp_path / "keys"), "--public", str(tmp_path / "public")]
    try:
        res = CliRunner().invoke(main, args + ["init", "--append-only", "--service-role", role, "--json"])
        assert res.exit_code == 0, res.output
        assert len(json.loads(res.stdout)["append_only"]) == 2
        yield url, role, args
    finally:
        drop_pg_schema(url)
        db = DatabaseURL.parse(url)
        with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
            conn.execute(f'DROP OWNED BY "{role}"')
            conn.execute(f'DROP ROLE IF EXISTS "{role}"')


def _as(url: str, role: str) -> str:
    db = DatabaseURL.parse(url)
    return f"postgresql://{role}@{db.host}:{db.port}/{db.dbname}?schema={db.schema}"


def _execute(url: str, statement: str) -> str:
    """Run one statement over its own connection; the error's first line, or ''."""
    try:
        with psycopg.connect(**DatabaseURL.parse(url).connect_kwargs(), autocommit=True) as conn:
            conn.execute(statement)
    except psycopg.Error as exc:
        return str(exc).splitlines()[0]
    return ""


def test_the_service_role_ingests_but_cannot_update_delete_or_truncate(protected, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url, role, args = protected
    owner = Store.open(url)
    try:
        from ledger.house import PublicDir
        from ledger.keys import KeyDirectory
        from tests.conftest import Ledger

        producers = make_producers(Ledger(url, owner, KeyDirectory(tmp_path / "keys"), PublicDir(tmp_path / "public"),
                                          tmp_path))
        lines = night_batch(owner, producers, rounds=3).lines()
    finally:
        owner.close()
    service = Store.open(_as(url, role))  # the ingest service connects as the role
    try:
        assert ingest(service, lines).status == "stored"
    finally:
        service.close()
    schema = DatabaseURL.parse(url).schema
    table = f'"{schema}".pitboss_events'
    for statement in (f"UPDATE {table} SET topic = topic", f"DELETE FROM {table}", f"TRUNCATE {table}"):
        assert "permission denied" in _execute(_as(url, role), statement)
        assert "append-only" in _execute(url, statement)  # the owner (a superuser here) too: the trigger
    assert CliRunner().invoke(main, args + ["checkpoint"]).exit_code == 0
    pins = ["--anchor", (tmp_path / "public" / "house.pub").read_text().strip(),
            "--log-key", (tmp_path / "public" / "log.vkey").read_text().strip()]
    res = CliRunner().invoke(main, args + ["verify", *pins, "--json"])
    assert res.exit_code == 0, res.output


def test_append_only_on_sqlite_is_refused_with_a_reason(tmp_path: Path) -> None:
    args = ["--db", f"sqlite:///{tmp_path}/l.db", "--keys", str(tmp_path / "k"), "--public", str(tmp_path / "p")]
    res = CliRunner().invoke(main, args + ["init", "--append-only"])
    assert res.exit_code != 0 and "needs PostgreSQL" in res.output
    assert not (tmp_path / "l.db").exists()  # refused before anything was created

"""Database faults (issue #7 point 2), PostgreSQL: the ingest process's connections are
dropped by the server (pg_terminate_backend) while it stores batches, and the server is
restarted mid-ingest. Without retries: a clear error and exit code, no traceback, whole
batches only; the next attempt succeeds. With retries (the default, with backoff): the
run completes, every event stored exactly once. (A locked SQLite file is
tests/test_cli.py::test_locked_sqlite_file_is_a_clear_error.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from ledger.sim.sample import write_sample_batch
from ledger.store import DatabaseURL
from ledger.verify import verify_ledger
from tests.conftest import produced
from tests.helpers import ROOT

pytestmark = pytest.mark.postgres
CHILD = "import sys; from cli.main import main; sys.argv[0] = 'pitboss'; main()"
APP = "pitboss-fault-test"
BATCH = 40
DROPS = 10  # connection drops injected into one retried run



def _skip_unless_pg(ledger) -> None:  # type: ignore[no-untyped-def]
    if ledger.store.url.backend != "postgres":
        pytest.skip("database faults are injected on PostgreSQL; SQLite's lock timeout is tested in test_cli")


def _terminate(url: str) -> int:
    """Drop the ingest process's connections (libpq's PGAPPNAME names them)."""
    db = DatabaseURL.parse(url)
    with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
        rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
                            (APP,)).fetchall()
    return len(rows)


def _child(ledger, path: Path, *extra: str) -> subprocess.Popen:  # type: ignore[no-untyped-def,type-arg]
    env = dict(os.environ, PYTHONPATH=str(ROOT), PGAPPNAME=APP)
    return subprocess.Popen([sys.executable, "-c", CHILD, *ledger.cli_args(), "ingest", str(path), "--batch-size",
                             str(BATCH), *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _night(ledger, tmp_path: Path, rounds: int = 120) -> tuple[Path, int]:  # type: ignore[no-untyped-def]
    path = tmp_path / "night.jsonl"
    write_sample_batch(ledger.store, ledger.keys, path, rounds)
    return path, len(path.read_text().splitlines())


def test_dropped_connections_without_retries_fail_clearly_then_the_next_attempt_succeeds(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _skip_unless_pg(ledger)
    path, n = _night(ledger, tmp_path)
    base = produced(ledger.store)
    proc = _child(ledger, path, "--retries", "0")
    dropped = 0
    while proc.poll() is None and not dropped:
        time.sleep(0.05)
        if produced(ledger.store) > base:  # storing has begun: drop its connection
            dropped = _terminate(ledger.url)
    out, err = proc.communicate(timeout=120)
    if dropped and proc.returncode != 0:
        assert proc.returncode == 4, (out, err)  # the store failed
        assert "Traceback" not in err + out and ("database" in err or "connection" in err), err
    stored = produced(ledger.store) - base
    assert stored == n or stored % BATCH == 0  # whole batches only
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean
    again = _child(ledger, path, "--retries", "0")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, (out, err)
    assert produced(ledger.store) - base == n  # the rest, each event once


def test_dropped_connections_are_retried_with_backoff(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _skip_unless_pg(ledger)
    path, n = _night(ledger, tmp_path, rounds=300)
    base = produced(ledger.store)
    proc = _child(ledger, path, "--retries", "5", "--backoff", "0.1", "--json")
    faults = 0
    while proc.poll() is None and faults < DROPS:  # each drop once storing has moved on since the last
        seen = produced(ledger.store)
        while proc.poll() is None and produced(ledger.store) == seen:
            time.sleep(0.05)
        faults += _terminate(ledger.url) > 0
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (out, err)
    print(f"connections dropped mid-ingest: {faults}")
    assert faults >= DROPS // 2, f"only {faults} connection drops landed while storing"
    assert produced(ledger.store) - base == n  # exactly once
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean


@pytest.fixture
def own_cluster(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A PostgreSQL cluster of this test's own (port 5544), so restarting it disturbs no
    other test or process; dropped afterwards."""
    ctl = shutil.which("pg_ctlcluster")
    versions = sorted(os.listdir("/etc/postgresql")) if os.path.isdir("/etc/postgresql") else []
    if not ctl or not shutil.which("pg_createcluster") or not versions or os.geteuid() != 0:
        pytest.skip("restarting a PostgreSQL cluster needs postgresql-common (pg_createcluster) and root (CI has both)")
    version, name = versions[-1], "pitbossfaults"
    subprocess.run(["pg_dropcluster", "--stop", version, name], capture_output=True)
    made = subprocess.run(["pg_createcluster", "--port", "5544", "--start", version, name, "--", "--auth=trust"],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    try:
        yield version, name, "postgresql://postgres@127.0.0.1:5544/postgres?schema=faults"
    finally:
        subprocess.run(["pg_dropcluster", "--stop", version, name], capture_output=True, timeout=120)


def test_a_server_restart_mid_ingest_is_retried(own_cluster, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from click.testing import CliRunner

    from cli.main import main
    from ledger.house import PublicDir
    from ledger.keys import KeyDirectory
    from ledger.store import Store

    version, name, url = own_cluster
    args = ["--db", url, "--keys", str(tmp_path / "keys"), "--public", str(tmp_path / "public")]
    assert CliRunner().invoke(main, args + ["init"]).exit_code == 0
    store = Store.open(url)
    try:
        ledger = SimpleNamespace(url=url, store=store, keys=KeyDirectory(tmp_path / "keys"),
                                 public=PublicDir(tmp_path / "public"), cli_args=lambda: args)
        path, n = _night(ledger, tmp_path, rounds=300)
        base = produced(store)
        proc = _child(ledger, path, "--retries", "8", "--backoff", "0.5", "--json")
        while proc.poll() is None and produced(store) == base:
            time.sleep(0.05)
        restart = subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, name, "restart"],
                                 capture_output=True, text=True, timeout=120)
        assert restart.returncode == 0, restart.stderr
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, (out, err)
    finally:
        store.close()
    with Store.open(url) as after:  # a fresh process's view of the ledger
        assert produced(after) - base == n  # exactly once, across the restart
        assert verify_ledger(after, public_dir=ledger.public.path).clean

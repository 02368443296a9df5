"""The pitboss CLI contract: README flow, --json, exit codes, no tracebacks for user errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("pitboss")
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_readme_flow_on_the_default_sqlite_store(tmp_path: Path) -> None:
    assert _run(["init", "--trust-config", "trust.toml"], tmp_path).returncode == 0
    assert (tmp_path / "pitboss.db").exists() and (tmp_path / "pitboss-keys").is_dir()
    assert _run(["sample", "-o", "batch.jsonl"], tmp_path).returncode == 0
    ing = _run(["ingest", "--json", "batch.jsonl"], tmp_path)
    assert ing.returncode == 0 and json.loads(ing.stdout)["status"] == "stored"
    again = _run(["ingest", "batch.jsonl"], tmp_path)
    assert again.returncode == 0 and "already stored" in again.stdout
    assert _run(["checkpoint"], tmp_path).returncode == 0
    unpinned = _run(["verify", "--json"], tmp_path)  # house.pub beside the ledger is not a root
    assert unpinned.returncode == 5 and json.loads(unpinned.stdout)["verdict"] == "UNVERIFIED"
    ver = _run(["verify", "--trust", "trust.toml", "--json"], tmp_path)
    assert ver.returncode == 0, ver.stdout
    assert json.loads(ver.stdout)["ok"] is True and json.loads(ver.stdout)["trust_roots"]["anchor_from"].endswith(
        "trust.toml")


def test_environment_variables_name_the_store_and_keys(tmp_path: Path) -> None:
    env = {"PITBOSS_DB": f"sqlite:///{tmp_path}/x/ledger.db", "PITBOSS_KEYS": str(tmp_path / "k")}
    assert _run(["init", "--parents", "--json"], tmp_path, env).returncode == 0
    assert (tmp_path / "x" / "ledger.db").exists() and any((tmp_path / "k").glob("*.pem"))


def test_user_errors_have_messages_and_codes_not_tracebacks(tmp_path: Path) -> None:
    missing = _run(["--db", str(tmp_path / "nope.db"), "verify"], tmp_path)
    assert missing.returncode == 2 and "run 'pitboss init' first" in missing.stderr
    assert "Traceback" not in missing.stderr
    assert _run(["init"], tmp_path).returncode == 0
    twice = _run(["init"], tmp_path)
    assert twice.returncode == 2 and "already holds a ledger" in twice.stderr and "Traceback" not in twice.stderr
    bad_url = _run(["--db", "mysql://x/y", "verify"], tmp_path)
    assert bad_url.returncode == 2 and "unsupported database URL" in bad_url.stderr
    (tmp_path / "bad.jsonl").write_text('{"stream": "x"\nnot json\n')
    rej = _run(["ingest", "--json", "bad.jsonl"], tmp_path)
    assert rej.returncode == 1 and "Traceback" not in rej.stderr
    body = json.loads(rej.stdout)
    assert body["status"] == "rejected" and [r["line"] for r in body["rejections"]] == [1, 2]
    role = _run(["keys", "create", "x", "--role", "croupier"], tmp_path)
    assert role.returncode == 2 and "'croupier' is not one of" in role.stderr


def test_unreachable_postgres_is_a_clear_error(tmp_path: Path) -> None:
    res = _run(["--db", "postgresql://nobody@127.0.0.1:1/none", "verify", "--json"], tmp_path)
    assert res.returncode == 4, res.stderr
    assert "cannot open postgresql://nobody@127.0.0.1:1/none" in res.stderr and "Traceback" not in res.stderr
    assert json.loads(res.stdout)["ok"] is False


def test_password_never_printed(tmp_path: Path) -> None:
    res = _run(["--db", "postgresql://u:s3cret@127.0.0.1:1/none", "verify"], tmp_path)
    assert "s3cret" not in res.stderr + res.stdout


@pytest.mark.postgres
def test_cli_on_postgres(tmp_path: Path) -> None:
    from tests.conftest import drop_pg_schema, pg_url_or_skip

    url = pg_url_or_skip()
    try:
        args = ["--db", url, "--keys", str(tmp_path / "keys"), "--public", str(tmp_path / "public")]
        run = CliRunner()
        empty = run.invoke(main, args + ["verify"])
        assert empty.exit_code == 2 and "run 'pitboss init' first" in empty.stderr
        assert run.invoke(main, args + ["init", "--trust-config", str(tmp_path / "trust.toml")]).exit_code == 0
        r = run.invoke(main, args + ["sample", "-o", str(tmp_path / "b.jsonl"), "--rounds", "4", "--json"])
        assert r.exit_code == 0, r.output
        sampled = json.loads(r.stdout)["events"]
        assert run.invoke(main, args + ["ingest", str(tmp_path / "b.jsonl")]).exit_code == 0
        assert run.invoke(main, args + ["checkpoint"]).exit_code == 0
        v = run.invoke(main, args + ["verify", "--trust", str(tmp_path / "trust.toml"), "--json"])
        # key ring, sample batch, the ledger's receipt for it, checkpoint
        assert v.exit_code == 0 and json.loads(v.stdout)["events"] == 5 + sampled + 1 + 1
    finally:
        drop_pg_schema(url)


def test_locked_sqlite_file_is_a_clear_error(tmp_path: Path) -> None:
    """Another process holds the write lock: a message and exit 4 after the lock timeout."""
    import sqlite3

    assert _run(["init"], tmp_path).returncode == 0
    assert _run(["sample", "-o", "b.jsonl"], tmp_path).returncode == 0
    holder = sqlite3.connect(tmp_path / "pitboss.db")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        res = _run(["ingest", "b.jsonl"], tmp_path, {"PITBOSS_SQLITE_LOCK_TIMEOUT": "1"})
    finally:
        holder.rollback()
        holder.close()
    assert res.returncode == 4, (res.returncode, res.stderr)
    assert "database" in res.stderr and "locked" in res.stderr and "Traceback" not in res.stderr
    assert _run(["ingest", "b.jsonl"], tmp_path).returncode == 0  # the next attempt succeeds


@pytest.mark.parametrize("origin", ["example.com/a+b", "example.com/a b", "example.com/\x1b[2Jx", ""])
def test_init_with_an_origin_no_checkpoint_can_carry_is_a_usage_error_and_creates_nothing(
        db_url: str, tmp_path: Path, origin: str) -> None:
    """Issue 14 point 6: a '+' or a space in the origin printed a NoteError traceback and left
    an empty database. One line, the usage code, and nothing created (SQLite file or
    PostgreSQL schema)."""
    args = ["--db", db_url, "--keys", str(tmp_path / "k"), "--public", str(tmp_path / "p")]
    res = CliRunner().invoke(main, args + ["init", "--origin", origin])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "--origin" in res.stderr
    assert "Traceback" not in res.output and not (tmp_path / "k").exists() and not (tmp_path / "p").exists()
    if db_url.startswith("sqlite"):
        assert not (tmp_path / "ledger.db").exists()
    else:
        import psycopg

        from ledger.store import DatabaseURL

        db = DatabaseURL.parse(db_url)
        with psycopg.connect(**db.connect_kwargs()) as conn:
            row = conn.execute("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (db.schema,))
            assert row.fetchone() is None

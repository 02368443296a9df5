"""PostgreSQL administration of a ledger: its schema, the check that a ledger exists,
and the append-only trigger and service role (``pitboss init --append-only``)."""

from __future__ import annotations

from ledger.store.errors import StoreError, first_line
from ledger.store.urls import PG_TABLE, DatabaseURL


def require_pg_ledger(db: DatabaseURL) -> None:
    import psycopg

    table = f'"{db.schema or "public"}".{PG_TABLE}'
    try:
        with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
            row = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
    except psycopg.Error as exc:
        raise StoreError(f"cannot open {db.redacted()}: {first_line(exc)}") from None
    if row is None or row[0] is None:
        raise StoreError(f"no ledger at {db.redacted()}: run 'pitboss init' first")


def ensure_pg_schema(db: DatabaseURL) -> None:
    import psycopg

    try:
        with psycopg.connect(**db.connect_kwargs(), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{db.schema}"')
    except psycopg.Error as exc:
        raise StoreError(f"cannot open {db.redacted()}: {first_line(exc)}") from None



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
        raise StoreError(f"cannot make {db.redacted()} append-only: {first_line(exc)}") from None
    return done

"""Database URLs: ``sqlite:///path/to/file.db`` (or a bare path) and
``postgresql://user[:password]@host[:port]/dbname[?schema=name]``, and the eventsourcing
settings each one means."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from ledger.store.errors import StoreError

PG_TABLE = "pitboss_events"
SQLITE_TABLE = "stored_events"


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
            "POSTGRES_LOCK_TIMEOUT": lock_timeout(),
            "ORIGINATOR_ID_TYPE": "text",
            "POSTGRES_ENABLE_DB_FUNCTIONS": "no",
            "APPLICATION_RECORDER_TOPIC": "ledger.store.postgres:LedgerPostgresRecorder",
        }

    def connect_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"dbname": self.dbname, "host": self.host, "port": self.port, "connect_timeout": 5}
        if self.user:
            kw["user"] = self.user
        if self.password:
            kw["password"] = self.password
        return kw


def lock_timeout() -> str:
    """Seconds a writer waits for the writers' lock (``PITBOSS_LOCK_TIMEOUT``, default 30)."""
    value = os.environ.get("PITBOSS_LOCK_TIMEOUT", "30")
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= 86400:
        from ledger.store.errors import StoreError

        raise StoreError(f"PITBOSS_LOCK_TIMEOUT must be whole seconds from 1 to 86400, not {value!r}")
    return str(int(value))


def _redact(url: str) -> str:
    u = urlparse(url)
    if u.password:
        return url.replace(f":{u.password}@", ":***@")
    return url

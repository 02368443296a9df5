"""Producers and batches for tests, built through the real producer SDK; the benchmark
scripts as modules (``benchmark``)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger.house import create_key
from ledger.ingest import IngestReport, ingest_lines
from ledger.keys import Signer
from ledger.producer import BatchBuilder
from ledger.store import Store

ROOT = Path(__file__).resolve().parents[1]
"""The repository's top folder."""


def benchmark(name: str) -> Any:
    """``benchmarks/<name>.py`` as a module of its own (the folder is not a package, and
    ``projections`` would otherwise name ours), for tests of what a benchmark measures with."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EVERY_TABLE = ["table:*", "shoe:*", "wheel:*", "dice:*", "tournament:*", "account:*"]
"""A producer key's scope (``ledger.scope``) for tests that are not about scope: every
table, piece of equipment, tournament and account (its role still limits its kinds), but
no venue-level stream."""


def scope_for(role: str) -> list[str] | None:
    """The venue roles' default scope, or ``EVERY_TABLE`` for a producer role."""
    return None if role in ("house", "ledger", "cage", "floor") else EVERY_TABLE


@dataclass
class Producers:
    floor: Signer
    dealer: Signer
    cage: Signer


def make_producers(ledger) -> Producers:  # type: ignore[no-untyped-def]
    return Producers(
        floor=create_key(ledger.store, ledger.keys, "floor:ana", "floor"),
        dealer=create_key(ledger.store, ledger.keys, "dealer:bo", "dealer", scope=EVERY_TABLE),
        cage=create_key(ledger.store, ledger.keys, "cage:main", "cage"),
    )


def night_batch(store: Store, p: Producers, rounds: int = 3, table: str = "bac-1") -> BatchBuilder:
    """A table, a deposit and rounds that only open and close: the game is fan-tan, which
    has no engine, so these rounds exercise the ledger itself (chains, keys, lifecycle),
    not game rules."""
    b = BatchBuilder.for_store(store)
    head = store.head(f"table:{table}")
    if head is None or head.kind != "table.open.v1":
        b.add(p.floor, f"table:{table}", "table.open.v1", {"game": "fan-tan", "seats": 7, "currency": "EUR"})
    b.add(p.cage, "account:P1", "cash.deposit.v1", {"amount": 10_000, "currency": "EUR", "method": "card", "reference": "d1"})
    start = store.max_notification_id()
    for i in range(rounds):
        rid = f"round:{table}-{start + i:06d}"
        b.add(p.dealer, rid, "round.open.v1", {"table": table, "game": "fan-tan", "rules": {"decks": 8}})
        b.add(p.dealer, rid, "round.close.v1", {"status": "complete"})
    return b


def add_round(b: BatchBuilder, signer: Signer, rid: str, table: str, game: str, events: list, *,  # type: ignore[type-arg]
              rules: dict | None = None, close: bool = True, config: int | None = None) -> BatchBuilder:  # type: ignore[type-arg]
    """A round of ``game`` at ``table`` into ``b``: its round.open (citing the table's
    configuration event ``config``, the seq of its table.open or table.config, when the
    table has one), the (kind, payload) events, and a complete round.close unless
    ``close`` is False."""
    opening = {"table": table, "game": game, "rules": rules or {}}
    if config is not None:
        opening["config"] = config
    b.add(signer, rid, "round.open.v1", opening)
    for kind, payload in events:
        b.add(signer, rid, kind, payload)
    if close:
        b.add(signer, rid, "round.close.v1", {"status": "complete"})
    return b


RECEIPTS: dict[int, Signer] = {}
"""id(store) -> the ledger's log key, for the ``ledger`` fixture's stores: ``ingest`` then
writes the ledger's receipt after a stored batch, as ``pitboss ingest`` does."""


def ingest(store: Store, lines: list[str]) -> IngestReport:
    """Ingest a batch as the service does: checked, stored whole, and (for the ``ledger``
    fixture's store) followed by the ledger's signed receipt (``ledger.receipt.v1``)."""
    signer = RECEIPTS.get(id(store))
    if signer is None:
        return ingest_lines(store, lines)
    from ledger.ingest import IngestSession

    return IngestSession(store, receipts=signer).send(lines)


def open_table(ledger, table: str, game: str, seats: int = 8, seated: tuple[str, ...] = ()) -> Signer:  # type: ignore[no-untyped-def]
    """Register a floor and a dealer key, open ``table`` for ``game`` with ``seated``
    players in their seats (``seat.join``, signed by the floor); return the dealer."""
    floor = create_key(ledger.store, ledger.keys, "floor:ana", "floor")
    dealer = create_key(ledger.store, ledger.keys, "dealer:bo", "dealer", scope=EVERY_TABLE)
    b = BatchBuilder.for_store(ledger.store)
    b.add(floor, f"table:{table}", "table.open.v1", {"game": game, "seats": seats, "currency": "EUR"})
    for player in seated:
        b.add(floor, f"seat:{player}", "seat.join.v1", {"table": table, "blind_level": "-"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    return dealer


def stored(store: Store, b: BatchBuilder) -> None:
    """Ingest ``b``; it must be stored."""
    report = ingest(store, b.lines())
    assert report.status == "stored", [str(r) for r in report.rejections]


def refused(store: Store, b: BatchBuilder) -> str:
    """Ingest ``b``; it must be refused with nothing stored. Returns the first reason."""
    from tests.conftest import dump_rows

    before = dump_rows(store)
    report = ingest(store, b.lines())
    assert report.status == "rejected" and dump_rows(store) == before
    return report.rejections[0].reason


def checkpointed(cli_args: list[str]) -> list[str]:
    """Sign a checkpoint of the ledger the arguments name, as the operator does before the
    nightly job (reconcile and verify are OK only against an accepted checkpoint, issue 14
    point 2); returns the arguments."""
    from click.testing import CliRunner

    from cli.main import main

    res = CliRunner().invoke(main, cli_args + ["checkpoint"])
    assert res.exit_code == 0, res.output
    return cli_args

"""Bulk ingest in consecutive atomic batches, checking overlapped with storing
(SQLite file and PostgreSQL)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from cli.main import main
from ledger.ingest import ingest_batches
from ledger.verify import verify_ledger
from tests.conftest import dump_rows
from tests.helpers import ingest, make_producers, night_batch


def _chunks(lines: list[str], n: int) -> list[list[str]]:
    return [lines[i:i + n] for i in range(0, len(lines), n)]


def test_split_load_stores_what_one_batch_would(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=40).lines()
    reports = ingest_batches(ledger.store, _chunks(lines, 7))
    assert [r.status for r in reports] == ["stored"] * len(_chunks(lines, 7))
    assert sum(r.stored for r in reports) == len(lines)
    stored = [r[4] for r in dump_rows(ledger.store)][-len(lines):]
    assert stored == [line.encode() for line in lines]
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).ok
    again = ingest_batches(ledger.store, _chunks(lines, 7))
    assert {r.status for r in again} == {"duplicate"}


def test_a_refused_batch_stops_the_run_earlier_batches_stay(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=20).lines()
    d = json.loads(lines[17])
    d["sig"] = "00" * 64
    lines[17] = json.dumps(d)
    before = len(dump_rows(ledger.store))
    reports = ingest_batches(ledger.store, _chunks(lines, 5))
    assert [r.status for r in reports] == ["stored", "stored", "stored", "rejected"]
    assert reports[-1].rejections[0].line == 3 and reports[-1].rejections[0].check == "signature"
    assert len(dump_rows(ledger.store)) == before + 15
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).ok


def test_cli_batch_size(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    lines = night_batch(ledger.store, p, rounds=12).lines()
    f = tmp_path / "day.jsonl"
    f.write_text("\n".join(lines) + "\n")
    res = CliRunner().invoke(main, ledger.cli_args() + ["ingest", "--batch-size", "10", "--json", str(f)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["ok"] and data["stored"] == len(lines) and len(data["batches"]) == 3
    assert ingest(ledger.store, lines).status == "duplicate"

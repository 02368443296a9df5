"""Dispute evidence bundles (issue #5 point 5): written from the ledger (SQLite and
PostgreSQL), checked offline by `pitboss verify-bundle`, and any altered byte is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.sim.sample import write_sample_batch
from tests.helpers import ingest


@pytest.fixture
def bundle(ledger, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    batch = tmp_path / "b.jsonl"
    write_sample_batch(ledger.store, ledger.keys, batch, 6)
    assert ingest(ledger.store, batch.read_text().splitlines()).status == "stored"
    rounds = sorted({r.stream for r in ledger.store.rows() if r.stream.startswith("round:")})
    out = tmp_path / "bundle"
    res = CliRunner().invoke(main, ledger.cli_args() + ["evidence", rounds[2], "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["round"] == rounds[2]
    return out


def check(path: Path, *extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    res = CliRunner().invoke(main, ["--db", "/nonexistent/none.db", "verify-bundle", str(path), "--json", *extra])
    return res.exit_code, json.loads(res.stdout)


def test_a_bundle_verifies_offline_and_holds_what_a_dispute_needs(bundle: Path) -> None:
    code, out = check(bundle)
    assert code == 0 and out["ok"] and out["verified_events"] == out["events"]
    kinds = [json.loads(line)["kind"] for line in (bundle / "events.jsonl").read_text().splitlines()]
    assert kinds[0] == "key.register.v2" and "table.open.v1" in kinds and "shoe.inspect.v1" in kinds
    assert kinds[-1] == "round.close.v1" and "baccarat.settle.v1" in kinds
    report = (bundle / "report.md").read_text()
    assert "## Video references" in report and "footage SHA-256" in report
    outcome = json.loads((bundle / "outcome.json").read_text())
    assert outcome["derived"]["settlements"] and not outcome["differences"]
    assert len(list((bundle / "proofs").iterdir())) == len(kinds)


def _flip(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))


def test_one_altered_byte_in_the_events_is_named(bundle: Path) -> None:
    events = bundle / "events.jsonl"
    line = [ln for ln in events.read_text().splitlines() if '"kind":"baccarat.settle.v1"' in ln][0]
    paid = json.loads(line)["payload"]["paid"]
    _flip(events, f'"paid":{paid}'.encode(), f'"paid":{paid + 1}'.encode())
    code, out = check(bundle)
    assert code == 1
    assert any(p.startswith("events.jsonl: its SHA-256 differs") for p in out["problems"])
    assert any(p.startswith("events.jsonl line") and ": hash:" in p for p in out["problems"])  # the event named


def test_an_altered_proof_or_outcome_is_named(bundle: Path) -> None:
    proof = bundle / "proofs" / "3.proof"
    text = proof.read_text().split("\n")
    text[3] = ("A" if text[3][0] != "A" else "B") + text[3][1:]  # a hash line of the Merkle path
    proof.write_text("\n".join(text))
    outcome = bundle / "outcome.json"
    data = json.loads(outcome.read_text())
    data["derived"]["winner"] = "tie" if data["derived"]["winner"] != "tie" else "player"
    outcome.write_text(json.dumps(data))
    code, out = check(bundle)
    assert code == 1
    assert any(p.startswith("proofs/3.proof") for p in out["problems"])
    assert any(p.startswith("outcome.json: the outcome it states differs") for p in out["problems"])


def test_a_bundle_from_another_operator_fails_the_pinned_anchor(bundle: Path) -> None:
    code, out = check(bundle, "--anchor", "11" * 32)
    assert code == 1 and any("not the pinned trust anchor" in p for p in out["problems"])

"""The generated documentation matches the code (issue 17 point 1): ``docs/cli.md`` from the
click commands, ``docs/schemas/`` from the pydantic models ingest enforces; and the schemas
describe real events: every event of a demo night validates against the envelope schema
and its kind's schema (jsonschema, Draft 2020-12), and payloads ingest refuses are refused
by the schemas too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from cli.docs import DOCS, differences
from cli.main import main
from ledger.kinds import KINDS
from ledger.store import Store

jsonschema = pytest.importorskip("jsonschema")


def test_docs_cli_md_and_the_schemas_are_generated_from_the_code() -> None:
    assert differences() == [], "run 'python -m cli.docs' and commit the result"


def test_there_is_a_schema_file_for_every_kind() -> None:
    files = {p.name[:-5] for p in (DOCS / "schemas" / "kinds").glob("*.json")}
    assert files == set(KINDS)


def _validator(rel: str) -> Any:
    schema = json.loads((DOCS / "schemas" / rel).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("schemas")
    args = ["--db", f"sqlite:///{tmp}/d.db", "--keys", str(tmp / "k"), "--public", str(tmp / "p")]
    assert CliRunner().invoke(main, args + ["init"]).exit_code == 0
    assert CliRunner().invoke(main, args + ["demo", "--hands", "14", "-o", str(tmp / "o")]).exit_code == 0
    with Store.open(f"sqlite:///{tmp}/d.db") as store:
        return [orjson.loads(row.state) for row in store.rows()]


def test_every_stored_event_validates_against_the_published_schemas(night: list[dict[str, Any]]) -> None:
    envelope = _validator("event.json")
    kinds: dict[str, Any] = {}
    for ev in night:
        envelope.validate(ev)
        if ev["kind"] not in kinds:
            kinds[ev["kind"]] = _validator(f"kinds/{ev['kind']}.json")
        kinds[ev["kind"]].validate(ev["payload"])
    assert len(kinds) >= 40  # the night covers most kinds; the others: tests/ledger/test_roles_matrix.py


@pytest.mark.parametrize("kind, payload", [
    ("cash.deposit.v1", {"amount": 10.5, "currency": "EUR", "method": "cash", "reference": "r1"}),   # a float for money
    ("cash.deposit.v1", {"amount": 100, "currency": "eur", "method": "cash", "reference": "r1"}),    # not a currency code
    ("round.close.v1", {"status": "done"}),                                      # not one of the statuses
    ("round.open.v1", {"table": "T", "game": "poker", "rules": {}, "extra": 1}),   # an unknown field
    ("import.source.v1", {"round": "round:x", "table": "T", "format": "phh", "file": "f", "sha256": "00"}),
])
def test_what_the_models_refuse_the_schemas_refuse(kind: str, payload: dict[str, Any]) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        KINDS[kind].model.model_validate(payload, strict=True)
    assert not _validator(f"kinds/{kind}.json").is_valid(payload)


def test_the_spec_names_every_section_a_verifier_needs() -> None:
    spec = (DOCS / "spec.md").read_text()
    for heading in ("## Events", "## Canonical JSON", "## The key ring", "## Streams and chains",
                    "## The Merkle tree", "## Checkpoints", "## Proofs", "## Evidence bundles",
                    "## RNG", "## Ed25519 acceptance rules", "## Verdicts"):
        assert heading in spec, heading
    assert Path(DOCS / "cli.md").exists()

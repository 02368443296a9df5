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


def test_the_specs_worked_example_recomputes_from_its_own_text() -> None:
    """docs/spec.md's worked example, checked the way an implementer would: hashlib,
    json and libsodium (PyNaCl) only, no pitboss code."""
    import base64
    import hashlib
    import re

    from nacl.bindings import crypto_sign_open, crypto_sign_seed_keypair

    spec = (DOCS / "spec.md").read_text()
    example = spec[spec.index("## Worked example"):]
    line = re.search(r"```json\n(.*?)\n```", example, re.S).group(1)  # type: ignore[union-attr]
    ev = json.loads(line)
    assert json.dumps(ev, sort_keys=True, separators=(",", ":"), ensure_ascii=False) == line  # stored as JCS
    body = {k: v for k, v in ev.items() if k not in ("hash", "sig")}
    jcs = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    digest = hashlib.sha256(b"pitboss.event.v2\x00" + jcs).digest()
    assert digest.hex() == ev["hash"] and ev["hash"] in example
    pk, _ = crypto_sign_seed_keypair(bytes.fromhex(re.search(r"secret\s+`([0-9a-f]{64})`", example).group(1)))  # type: ignore[union-attr]
    assert pk.hex() == ev["payload"]["public_key"] and hashlib.sha256(pk).hexdigest()[:16] == ev["key_id"]
    assert crypto_sign_open(bytes.fromhex(ev["sig"]) + digest, pk) == digest
    leaf = hashlib.sha256(b"\x00" + digest).digest()
    assert f"`{leaf.hex()}`" in example
    vkey = re.search(r"verifier key is `([^`]+)`", example).group(1)  # type: ignore[union-attr]
    name, khash, b64 = vkey.split("+")
    raw = base64.b64decode(b64)
    log_seed = re.findall(r"secret\s+`([0-9a-f]{64})`", example)[1]
    assert raw == b"\x01" + crypto_sign_seed_keypair(bytes.fromhex(log_seed))[0]
    assert hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4].hex() == khash
    note = re.search(r"```text\n(.*?)```", example, re.S).group(1)  # type: ignore[union-attr]
    text, sigline = note.split("\n\n")
    text += "\n"
    assert text.split("\n")[:4] == [name, "1", base64.b64encode(leaf).decode(), f"pitboss/keyring 1 {ev['hash']}"]
    dash, signer, blob64 = sigline.strip().split(" ")
    blob = base64.b64decode(blob64)
    assert dash == "\u2014" and signer == name and blob[:4].hex() == khash
    assert crypto_sign_open(blob[4:] + text.encode(), raw[1:]) == text.encode()

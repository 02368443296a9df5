"""Key ring semantics (DESIGN.md "Trust model") and private-key hygiene."""

from __future__ import annotations

import stat

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.house import HouseError, create_key, rotate_key
from ledger.keyring import load_keyring
from ledger.producer import BatchBuilder
from ledger.verify import verify_ledger
from tests.conftest import dump_rows
from tests.helpers import ingest, make_producers, night_batch


def test_private_keys_are_0600_files_and_never_in_the_database(ledger) -> None:  # type: ignore[no-untyped-def]
    make_producers(ledger)
    pems = list(ledger.keys.path.glob("*.pem"))
    assert len(pems) == 5
    assert stat.S_IMODE(ledger.keys.path.stat().st_mode) == 0o700
    stored = b"".join(row[4] for row in dump_rows(ledger.store))
    for pem in pems:
        assert stat.S_IMODE(pem.stat().st_mode) == 0o600
        body = b"".join(pem.read_bytes().splitlines()[1:-1])
        import base64

        raw_private = base64.b64decode(body)[-32:]
        assert raw_private not in stored and raw_private.hex().encode() not in stored
        assert body not in stored


def test_signer_repr_hides_the_private_key(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    assert "private" not in repr(p.cage) and p.cage.key_id in repr(p.cage)


def test_group_readable_key_file_is_refused(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    path = ledger.keys.file_for(p.cage.key_id)
    path.chmod(0o644)
    from ledger.keys import KeyFileError

    with pytest.raises(KeyFileError, match="readable by others"):
        ledger.keys.load(p.cage.key_id, "cage:main")


def test_rotation_hands_over_at_effective_time(ledger) -> None:  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    ingest(ledger.store, night_batch(ledger.store, p).lines())
    new = rotate_key(ledger.store, ledger.keys, p.cage.key_id)
    ring = load_keyring(ledger.store)
    assert ring.keys[p.cage.key_id].valid_until is not None
    assert ring.keys[new.key_id].actor == "cage:main" and ring.keys[new.key_id].role == "cage"
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.cage, "account:P1", "cash.deposit.v1", {"amount": 5, "currency": "EUR", "method": "cash", "reference": "r"})
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and "rotated out" in report.rejections[0].reason
    b = BatchBuilder.for_store(ledger.store)
    b.add(new, "account:P1", "cash.deposit.v1", {"amount": 5, "currency": "EUR", "method": "cash", "reference": "r"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean


def test_only_a_house_key_changes_the_key_ring(ledger) -> None:  # type: ignore[no-untyped-def]
    from ledger.keys import Signer

    p = make_producers(ledger)
    rogue = Signer.generate("rogue")
    b = BatchBuilder.for_store(ledger.store)
    b.add(p.floor, "keyring", "key.register.v2", {
        "key_id": rogue.key_id, "actor": "rogue", "role": "cage", "public_key": rogue.public_key.hex(),
        "kinds": ["cash.deposit.v1"], "valid_from": "2026-01-01T00:00:00Z", "scope": ["*"]})
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected"
    assert report.rejections[0].check == "role" and "may not sign kind key.register.v2" in report.rejections[0].reason


def test_a_key_cannot_be_granted_kinds_outside_its_role(ledger) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(HouseError, match="role 'dealer' may not sign kinds \\['cash.deposit.v1'\\]"):
        create_key(ledger.store, ledger.keys, "dealer:x", "dealer", kinds=["cash.deposit.v1"], scope=["table:T1"])


def test_key_restricted_to_some_kinds_of_its_role(ledger) -> None:  # type: ignore[no-untyped-def]
    floor = create_key(ledger.store, ledger.keys, "floor:z", "floor", kinds=["table.open.v1"])
    b = BatchBuilder.for_store(ledger.store)
    b.add(floor, "table:t9", "table.open.v1", {"game": "roulette", "seats": 8, "currency": "EUR"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    b = BatchBuilder.for_store(ledger.store)
    b.add(floor, "table:t9", "table.close.v1", {"reason": "end of shift"})
    report = ingest(ledger.store, b.lines())
    assert report.rejections[0].reason == f"key {floor.key_id} is not allowed to sign kind table.close.v1"


def test_revoking_afterwards_makes_verify_flag_later_events_only(ledger) -> None:  # type: ignore[no-untyped-def]
    """Key compromise found later: events at or after --from become untrusted at verify."""
    p = make_producers(ledger)
    early = BatchBuilder.for_store(ledger.store)
    early.add(p.cage, "account:P1", "cash.deposit.v1", {"amount": 5, "currency": "EUR", "method": "cash", "reference": "a"})
    assert ingest(ledger.store, early.lines()).status == "stored"
    late = BatchBuilder.for_store(ledger.store)
    ev = late.add(p.cage, "account:P1", "cash.deposit.v1", {"amount": 6, "currency": "EUR", "method": "cash", "reference": "b"})
    assert ingest(ledger.store, late.lines()).status == "stored"
    res = CliRunner().invoke(main, ledger.cli_args() + ["keys", "revoke", p.cage.key_id, "--from", ev.at, "--reason", "leaked"])
    assert res.exit_code == 0, res.output
    report = verify_ledger(ledger.store, public_dir=ledger.public.path)
    assert not report.ok
    flagged = [(x.stream, x.seq) for x in report.problems]
    assert flagged == [("account:P1", 2)]
    assert "untrusted" in report.problems[0].reason and "leaked" in report.problems[0].reason


def test_keyring_listing_shows_states(ledger) -> None:  # type: ignore[no-untyped-def]
    import json

    make_producers(ledger)
    res = CliRunner().invoke(main, ledger.cli_args() + ["keys", "list", "--json"])
    assert res.exit_code == 0
    roles = sorted(k["role"] for k in json.loads(res.stdout)["keys"])
    assert roles == ["cage", "dealer", "floor", "house", "ledger"]

"""The key ring itself (ledger/keyring.py), pure, without storage: the house key
registers itself first (the trust anchor), then registers keys with a role and kinds; a
rotated key hands over at ``effective`` and the new key inherits actor, role and kinds; a
revoked key is untrusted from ``revoked_from`` (DESIGN.md "Trust model")."""

from __future__ import annotations

import pytest

from ledger.events import EventError
from ledger.keyring import KeyRing
from ledger.keys import Signer
from ledger.kinds import kinds_for_role
from ledger.producer import BatchBuilder
from ledger.timeutil import parse_utc

T0, T1, T2, T3 = "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"


def register(b: BatchBuilder, house: Signer, key: Signer, role: str, at: str = T0, kinds: list[str] | None = None):  # type: ignore[no-untyped-def]
    return b.add(house, "keyring", "key.register.v2", {
        "key_id": key.key_id, "actor": key.actor, "role": role, "public_key": key.public_key.hex(),
        "kinds": kinds or kinds_for_role(role), "valid_from": at,
        "scope": ["*"] if role in ("house", "ledger", "cage", "floor") else ["table:T1"]}, at=at)


def ring_with(*events) -> KeyRing:  # type: ignore[no-untyped-def]
    ring = KeyRing()
    for ev in events:
        ring.authorize(ev)
        ring.apply(ev)
    return ring


def test_the_house_key_registers_itself_first_and_then_the_keys_it_vouches_for() -> None:
    house, cage = Signer.generate("house:op"), Signer.generate("cage:main")
    b = BatchBuilder(ledger="test.pitboss/keyring")
    ring = ring_with(register(b, house, house, "house"), register(b, house, cage, "cage"))
    assert ring.anchor is not None and ring.anchor.key_id == house.key_id
    entry = ring.authorize_fields(cage.key_id, "cage:main", "cash.deposit.v1", T1)
    assert entry.role == "cage"
    with pytest.raises(EventError, match="role 'cage' may not sign kind round.open.v1"):
        ring.authorize_fields(cage.key_id, "cage:main", "round.open.v1", T1)
    with pytest.raises(EventError, match="belongs to actor 'cage:main'"):
        ring.authorize_fields(cage.key_id, "cage:other", "cash.deposit.v1", T1)
    with pytest.raises(EventError, match="unknown key"):
        ring.authorize_fields("00" * 8, "cage:main", "cash.deposit.v1", T1)


def test_a_role_registers_only_kinds_it_may_sign_and_a_key_only_once() -> None:
    house, dealer = Signer.generate("house:op"), Signer.generate("dealer:bo")
    b = BatchBuilder(ledger="test.pitboss/keyring")
    ring = ring_with(register(b, house, house, "house"))
    with pytest.raises(EventError, match="may not sign kinds"):
        ring.apply(register(b, house, dealer, "dealer", kinds=["cash.deposit.v1"]))
    ring.apply(register(b, house, dealer, "dealer"))
    with pytest.raises(EventError, match="already registered"):
        ring.apply(register(b, house, dealer, "dealer"))


def test_rotation_hands_over_at_its_time_and_the_new_key_inherits_actor_role_and_kinds() -> None:
    house, old, new = Signer.generate("house:op"), Signer.generate("floor:ana"), Signer.generate("floor:ana")
    b = BatchBuilder(ledger="test.pitboss/keyring")
    ring = ring_with(register(b, house, house, "house"), register(b, house, old, "floor"))
    ring.apply(b.add(house, "keyring", "key.rotate.v1", {"key_id": old.key_id, "new_key_id": new.key_id,
                                                          "new_public_key": new.public_key.hex(), "effective": T2}))
    assert ring.keys[old.key_id].status_at(parse_utc(T1)) is None
    assert "rotated out" in (ring.keys[old.key_id].status_at(parse_utc(T2)) or "")
    fresh = ring.keys[new.key_id]
    assert (fresh.actor, fresh.role, fresh.kinds) == ("floor:ana", "floor", ring.keys[old.key_id].kinds)
    assert fresh.status_at(parse_utc(T2)) is None and fresh.status_at(parse_utc(T1)) is not None


def test_revocation_makes_a_key_untrusted_from_its_time_and_earlier_events_stay_valid() -> None:
    house, cage = Signer.generate("house:op"), Signer.generate("cage:main")
    b = BatchBuilder(ledger="test.pitboss/keyring")
    ring = ring_with(register(b, house, house, "house"), register(b, house, cage, "cage"))
    ring.apply(b.add(house, "keyring", "key.revoke.v1", {"key_id": cage.key_id, "revoked_from": T2,
                                                          "reason": "leaked"}))
    ring.authorize_fields(cage.key_id, "cage:main", "cash.deposit.v1", T1)
    with pytest.raises(EventError, match="revoked from .*leaked"):
        ring.authorize_fields(cage.key_id, "cage:main", "cash.deposit.v1", T3)


def test_an_authorization_remembered_for_speed_still_judges_every_event_at_its_own_time() -> None:
    """``KeyRing.authorize_fields`` remembers (key, actor, kind) that passed the checks that
    do not depend on time (DESIGN.md "Trust model": actor, role, kinds); validity is judged
    for every event at its ``at``, and a revocation recorded after the first check applies."""
    house, cage = Signer.generate("house:op"), Signer.generate("cage:main")
    b = BatchBuilder(ledger="test.pitboss/keyring")
    ring = ring_with(register(b, house, house, "house"), register(b, house, cage, "cage", at=T1))
    for _ in range(2):
        ring.authorize_fields(cage.key_id, "cage:main", "cash.deposit.v1", T2)
        with pytest.raises(EventError, match="not yet valid"):
            ring.authorize_fields(cage.key_id, "cage:main", "cash.deposit.v1", T0)
        with pytest.raises(EventError, match="belongs to actor 'cage:main'"):
            ring.authorize_fields(cage.key_id, "cage:other", "cash.deposit.v1", T2)
        with pytest.raises(EventError, match="may not sign kind round.open.v1"):
            ring.authorize_fields(cage.key_id, "cage:main", "round.open.v1", T2)
    ring.apply(b.add(house, "keyring", "key.revoke.v1", {"key_id": cage.key_id, "revoked_from": T2,
                                                          "reason": "leaked"}))
    ring.authorize_fields(cage.key_id, "cage:main", "cash.deposit.v1", T1)
    with pytest.raises(EventError, match="revoked from .*leaked"):
        ring.authorize_fields(cage.key_id, "cage:main", "cash.deposit.v1", T2)

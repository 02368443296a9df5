"""The operator's own operations: create a ledger, and manage the key ring.

``init`` makes two keys: the house key (role ``house``, the trust anchor; it signs the
key ring and registers itself at keyring seq 1) and the ledger's log key (role
``ledger``; its actor is the log's origin, the key name of its signed checkpoints).
Every key-ring change is an event signed by a house key valid now and goes through
the same ingest checks as any producer's event.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ledger.ingest import IngestReport, ingest_signed
from ledger.keyring import KeyEntry, KeyRing, load_keyring
from ledger.keys import KeyDirectory, Signer
from ledger.kinds import KEYRING_STREAM, ROLES, kinds_for_role
from ledger.log.note import verifier_key
from ledger.producer import BatchBuilder
from ledger.scope import default_scope, scope_problem
from ledger.store import Store
from ledger.timeutil import format_utc, parse_utc, utc_now


class HouseError(Exception):
    """An operator action that cannot be done; the message says why."""


@dataclass(frozen=True)
class PublicDir:
    """Published material beside the ledger: signed checkpoints, the log's verifier key
    and the house key (the trust anchor). Copies outside the database are what reveal
    a truncated log."""

    path: Path

    @property
    def anchor_file(self) -> Path:
        return self.path / "house.pub"

    @property
    def vkey_file(self) -> Path:
        return self.path / "log.vkey"

    def checkpoint_file(self, size: int) -> Path:
        return self.path / f"checkpoint-{size:012d}.note"


def _raise_unless_stored(report: IngestReport) -> None:
    if report.status != "stored":
        detail = "; ".join(str(r) for r in report.rejections) or report.message
        raise HouseError(detail)


def init_ledger(store: Store, keys: KeyDirectory, public: PublicDir, origin: str) -> tuple[Signer, Signer]:
    if store.head(KEYRING_STREAM) is not None:
        raise HouseError(f"{store.url.redacted()} already holds a ledger (its key ring exists)")
    house = Signer.generate("house")
    log = Signer.generate(origin)
    verifier_key(origin, log.public_key)  # refuses an origin that cannot name a note key
    now = utc_now()
    batch = BatchBuilder(store.head, ledger=origin)
    for signer, role in ((house, "house"), (log, "ledger")):
        batch.add(house, KEYRING_STREAM, "key.register.v2", {
            "key_id": signer.key_id, "actor": signer.actor, "role": role,
            "public_key": signer.public_key.hex(), "kinds": kinds_for_role(role),
            "valid_from": now, "scope": ["*"],
        }, at=now)
    keys.save(house)
    keys.save(log)
    _raise_unless_stored(ingest_signed(store, batch.events))
    public.path.mkdir(parents=True, exist_ok=True)
    public.anchor_file.write_text(house.public_key.hex() + "\n")
    public.vkey_file.write_text(verifier_key(origin, log.public_key) + "\n")
    return house, log


def active_signer(ring: KeyRing, keys: KeyDirectory, role: str, at: datetime | None = None) -> Signer:
    at = at or datetime.now(UTC)
    for entry in ring.keys.values():
        if entry.role == role and entry.status_at(at) is None and keys.has(entry.key_id):
            return keys.load(entry.key_id, entry.actor)
    raise HouseError(f"no valid {role} key with its private key in {keys.path}")


def _house(store: Store, keys: KeyDirectory) -> tuple[KeyRing, Signer]:
    ring = load_keyring(store)
    if not ring.keys:
        raise HouseError("the ledger has no key ring: run 'pitboss init' first")
    return ring, active_signer(ring, keys, "house")


def _scope_for(role: str, scope: list[str] | None) -> list[str]:
    if scope is None:
        scope = default_scope(role)
        if scope is None:
            raise HouseError(f"a {role} key needs a scope: the tables, equipment or tournaments it writes"
                             " (e.g. --scope table:bac-1 --scope shoe:bac-1; ledger.scope)")
    problem = scope_problem(role, scope)
    if problem:
        raise HouseError(f"--scope: {problem}")
    return scope


def create_key(
    store: Store, keys: KeyDirectory, actor: str, role: str,
    kinds: list[str] | None = None, valid_from: str | None = None, scope: list[str] | None = None,
) -> Signer:
    """Register a new key for ``actor``. ``scope`` (``ledger.scope``) defaults to
    venue-wide for the venue's roles; a producer role must be given one."""
    if role not in ROLES:
        raise HouseError(f"unknown role {role!r} (roles: {', '.join(ROLES)})")
    scope = _scope_for(role, scope)
    ring, house = _house(store, keys)
    signer = Signer.generate(actor)
    now = utc_now()
    batch = BatchBuilder.for_store(store)
    batch.add(house, KEYRING_STREAM, "key.register.v2", {
        "key_id": signer.key_id, "actor": actor, "role": role,
        "public_key": signer.public_key.hex(),
        "kinds": sorted(kinds) if kinds else kinds_for_role(role),
        "valid_from": valid_from or now, "scope": scope,
    }, at=now)
    report = ingest_signed(store, batch.events)
    _raise_unless_stored(report)
    keys.save(signer)
    return signer


def rotate_key(store: Store, keys: KeyDirectory, key_id: str, effective: str | None = None) -> Signer:
    ring, house = _house(store, keys)
    old = ring.keys.get(key_id)
    if old is None:
        raise HouseError(f"key {key_id} is not in the key ring")
    signer = Signer.generate(old.actor)
    now = utc_now()
    batch = BatchBuilder.for_store(store)
    batch.add(house, KEYRING_STREAM, "key.rotate.v1", {
        "key_id": key_id, "new_key_id": signer.key_id,
        "new_public_key": signer.public_key.hex(), "effective": effective or now,
    }, at=now)
    _raise_unless_stored(ingest_signed(store, batch.events))
    keys.save(signer)
    return signer


def rescope_key(store: Store, keys: KeyDirectory, key_id: str, scope: list[str]) -> None:
    """Change what ``key_id`` may write (``key.scope.v1``), signed by the house."""
    ring, house = _house(store, keys)
    entry = ring.keys.get(key_id)
    if entry is None:
        raise HouseError(f"key {key_id} is not in the key ring")
    scope = _scope_for(entry.role, scope)
    batch = BatchBuilder.for_store(store)
    batch.add(house, KEYRING_STREAM, "key.scope.v1", {"key_id": key_id, "scope": scope})
    _raise_unless_stored(ingest_signed(store, batch.events))


def revoke_key(store: Store, keys: KeyDirectory, key_id: str, revoked_from: str, reason: str) -> None:
    try:
        parse_utc(revoked_from)
    except ValueError as exc:
        raise HouseError(f"--from: {exc}") from None
    ring, house = _house(store, keys)
    if key_id not in ring.keys:
        raise HouseError(f"key {key_id} is not in the key ring")
    batch = BatchBuilder.for_store(store)
    batch.add(house, KEYRING_STREAM, "key.revoke.v1", {
        "key_id": key_id, "revoked_from": revoked_from, "reason": reason,
    })
    _raise_unless_stored(ingest_signed(store, batch.events))


def describe_key(entry: KeyEntry) -> dict[str, object]:
    return {
        "key_id": entry.key_id, "actor": entry.actor, "role": entry.role,
        "public_key": entry.public_key.hex(), "kinds": sorted(entry.kinds),
        "valid_from": format_utc(entry.valid_from),
        "valid_until": format_utc(entry.valid_until) if entry.valid_until else None,
        "revoked_from": format_utc(entry.revoked_from) if entry.revoked_from else None,
        "revoke_reason": entry.revoke_reason or None,
        "scope": list(entry.scope),
    }

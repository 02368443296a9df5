"""The key ring as a pure state machine over the ``keyring`` stream.

DESIGN.md "Trust model": register (actor, role, public key, allowed kinds, valid from,
scope), rotate, rescope, revoke from a time. Seq 1 of the key ring is the operator's house key
registering itself (the trust anchor, which regulators pin out of band); every later
key-ring event is signed by a house key valid at its time.

A key may sign an event only if, at the event's ``at``: the key is registered to the
event's actor, ``valid_from <= at``, ``at`` is before its rotation (``effective``) and
before its revocation (``revoked_from``), and the kind is both allowed for the key's
role (``ledger.kinds``) and listed in the key's ``kinds``. Events signed before a
revocation time stay valid. What the key may write is its scope (``ledger.scope``):
given at registration (``key.register.v2``), kept by rotation, changed only by a
house-signed ``key.scope.v1`` (in force from that event's time).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import orjson

from ledger.events import EventError, SignedEvent
from ledger.keys import key_id_for, public_key_problem
from ledger.kinds import KEYRING_STREAM, KINDS, roles_of
from ledger.scope import describe, scope_problem
from ledger.timeutil import parse_utc, parse_utc_trusted

if TYPE_CHECKING:
    from ledger.store import Store


@dataclass
class KeyEntry:
    key_id: str
    actor: str
    role: str
    public_key: bytes
    kinds: frozenset[str]
    valid_from: datetime
    valid_until: datetime | None = None
    revoked_from: datetime | None = None
    revoke_reason: str = ""
    registered_by: str = ""
    scopes: list[tuple[datetime | None, tuple[str, ...]]] = field(default_factory=list)
    """The key's scope over time: (from when, entries); the first holds from the start."""
    revoked_at_seq: int | None = None
    """The key-ring seq that recorded the revocation: from then on the ledger takes
    nothing more from the key, whatever its ``at`` (``ledger.clock``)."""
    revoked_at_row: int | None = None
    """Verify's: the notification id of that key-ring event (``ledger.verify``)."""
    @property
    def scoped(self) -> bool:
        """Whether the key was ever less than venue-wide (only then is its scope checked)."""
        scopes = self.scopes
        if len(scopes) == 1:  # most keys: asked of every event verify checks
            return scopes[0][1] != ("*",)
        return any(entries != ("*",) for _, entries in scopes)

    @property
    def scope(self) -> tuple[str, ...]:
        """The scope in force now (for ingest)."""
        return self.scopes[-1][1] if self.scopes else ()

    def scope_at(self, at: datetime) -> tuple[str, ...]:
        """The scope in force at ``at`` (for verify, which judges each event at its time)."""
        if len(self.scopes) == 1:
            return self.scopes[0][1]
        current = self.scopes[0][1] if self.scopes else ()
        for since, entries in self.scopes:
            if since is None or since <= at:
                current = entries
        return current

    def status_at(self, at: datetime) -> str | None:
        """None if the key may sign at ``at``, else why not. An importer key's events carry
        the time of the imported hand, not of their signing, so its ``valid_from`` is not
        compared with them; the ledger's clock judges them instead (``ledger.clock``: a
        revoked importer key signs nothing more, and verify names any row stored after)."""
        if at < self.valid_from and self.role != "importer":
            return f"key {self.key_id} is not yet valid at {_fmt(at)} (valid from {_fmt(self.valid_from)})"
        if self.valid_until is not None and at >= self.valid_until:
            return f"key {self.key_id} was rotated out at {_fmt(self.valid_until)}"
        if self.revoked_from is not None and at >= self.revoked_from:
            return (
                f"key {self.key_id} is revoked from {_fmt(self.revoked_from)}"
                f" ({self.revoke_reason})"
            )
        return None


def _fmt(moment: datetime) -> str:
    from ledger.timeutil import format_utc

    return format_utc(moment)


class KeyRing:
    def __init__(self) -> None:
        self.keys: dict[str, KeyEntry] = {}
        self._allowed: set[tuple[str, str, str]] = set()
        """(key id, actor, kind) that passed ``authorize_fields``'s checks that do not depend
        on time: a key's actor, role and kinds never change (rotation makes a new key), nor
        does a kind's roles, so only the key's validity at each event's time is judged
        again (verify asks this of every event)."""
        self.events = 0
        self.origin: str | None = None
        """The ledger's identity: the ``ledger`` of the key ring's first event. Every later
        event must be signed for it (issue 13 point 5: no cross-ledger replay)."""

    @property
    def anchor(self) -> KeyEntry | None:
        """The self-registered house key at seq 1 of the key ring."""
        for entry in self.keys.values():
            if entry.registered_by == entry.key_id:
                return entry
        return None

    def signature_job(self, data: bytes) -> tuple[bytes, bytes, bytes] | None:
        """(public key, signature, hash bytes) of an event's JSON whose key this ring knows,
        to check ahead on all cores (``ledger.keys.verify_signatures``: a key id names one
        public key); None when the key is unknown or the bytes are not such an event, which
        is then checked in its turn, where the reason is named."""
        try:
            d = orjson.loads(data)
            return self.job_for(d["key_id"], d["sig"], d["hash"])
        except (KeyError, TypeError):
            return None

    def job_for(self, key_id: str, sig: str, digest: str) -> tuple[bytes, bytes, bytes] | None:
        """``signature_job`` of an event's fields already parsed."""
        entry = self.keys.get(key_id)
        try:
            return (entry.public_key, bytes.fromhex(sig), bytes.fromhex(digest)) if entry else None
        except (ValueError, TypeError, AttributeError):
            return None

    def authorize(self, ev: SignedEvent) -> KeyEntry:
        """The key entry that may sign ``ev``; EventError("key"|"role") otherwise."""
        if ev.stream == KEYRING_STREAM and self.events == 0:
            return self._bootstrap_entry(ev)
        self.check_ledger(ev.ledger)
        return self.authorize_fields(ev.key_id, ev.actor, ev.kind, ev.at)

    def check_ledger(self, ledger: str) -> None:
        """EventError("ledger") unless an event names this ledger."""
        if self.origin is not None and ledger != self.origin:
            raise EventError("ledger", f"signed for the ledger {ledger!r}, not this one ({self.origin!r}): an event"
                                       " is bound to the one ledger its signer named")

    def authorize_fields(self, key_id: str, actor: str, kind: str, at: str, when: datetime | None = None) -> KeyEntry:
        """The key's entry if it may sign ``kind`` as ``actor`` at ``at`` (``when``: that
        time already parsed, by a caller that needs it too), else EventError."""
        entry = self.keys.get(key_id)
        known = entry is not None and (key_id, actor, kind) in self._allowed
        if entry is None:
            raise EventError("key", f"unknown key {key_id} (not in the key ring)")
        if not known and entry.actor != actor:
            raise EventError("key", f"key {key_id} belongs to actor {entry.actor!r}, not {actor!r}")
        if when is None:
            try:
                when = parse_utc_trusted(at)
            except (ValueError, TypeError) as exc:
                raise EventError("schema", f"at: {exc}") from None
        reason = entry.status_at(when)
        if reason:
            raise EventError("key", reason)
        if known:
            return entry
        spec = KINDS.get(kind)
        if spec is None:
            raise EventError("schema", f"unknown kind {kind!r}")
        if entry.role not in spec.roles:
            raise EventError(
                "role",
                f"role {entry.role!r} may not sign kind {kind}"
                f" (allowed: {', '.join(sorted(spec.roles))})",
            )
        if kind not in entry.kinds:
            raise EventError("role", f"key {key_id} is not allowed to sign kind {kind}")
        self._allowed.add((key_id, actor, kind))
        return entry

    def _bootstrap_entry(self, ev: SignedEvent) -> KeyEntry:
        p = ev.payload
        if ev.seq != 1 or ev.kind != "key.register.v2" or p.get("role") != "house" or p.get("key_id") != ev.key_id:
            raise EventError(
                "key", "the key ring must start with the house key registering itself (self-signed)"
            )
        return self._entry_from_register(ev)

    def _entry_from_register(self, ev: SignedEvent) -> KeyEntry:
        p = ev.payload
        pub = bytes.fromhex(p["public_key"])
        problem = public_key_problem(pub)
        if problem:
            raise EventError("rule", f"public_key: {problem}")
        if key_id_for(pub) != p["key_id"]:
            raise EventError("rule", f"key_id {p['key_id']} is not the id of the given public key")
        if p["actor"] != ev.actor and p["key_id"] == ev.key_id:
            raise EventError("rule", "a self-registered key must name its signer as actor")
        extra = sorted({k for k in p["kinds"] if (roles := roles_of(k)) is None or p["role"] not in roles})
        if extra:
            raise EventError("rule", f"role {p['role']!r} may not sign kinds {extra}")
        problem = scope_problem(p["role"], p["scope"])
        if problem:
            raise EventError("rule", f"scope: {problem}")
        return KeyEntry(
            key_id=p["key_id"], actor=p["actor"], role=p["role"], public_key=pub,
            kinds=frozenset(p["kinds"]), valid_from=parse_utc(p["valid_from"]),
            registered_by=ev.key_id, scopes=[(None, tuple(p["scope"]))],
        )

    def apply(self, ev: SignedEvent) -> None:
        """Apply an authorised key-ring event; EventError("rule") if it makes no sense."""
        p = ev.payload
        origin = ev.ledger if self.events == 0 else self.origin
        if ev.kind == "key.register.v2":
            if p["key_id"] in self.keys:
                raise EventError("rule", f"key {p['key_id']} is already registered")
            self.keys[p["key_id"]] = self._entry_from_register(ev)
        elif ev.kind == "key.rotate.v1":
            old = self._existing(p["key_id"])
            if old.valid_until is not None:
                raise EventError("rule", f"key {old.key_id} was already rotated")
            if p["new_key_id"] in self.keys:
                raise EventError("rule", f"key {p['new_key_id']} is already registered")
            pub = bytes.fromhex(p["new_public_key"])
            problem = public_key_problem(pub)
            if problem:
                raise EventError("rule", f"new_public_key: {problem}")
            if key_id_for(pub) != p["new_key_id"]:
                raise EventError("rule", "new_key_id is not the id of new_public_key")
            effective = parse_utc(p["effective"])
            if effective < old.valid_from:
                raise EventError("rule", "rotation takes effect before the old key was valid")
            old.valid_until = effective
            self.keys[p["new_key_id"]] = KeyEntry(  # rotation keeps actor, role, kinds and scope
                key_id=p["new_key_id"], actor=old.actor, role=old.role, public_key=pub,
                kinds=old.kinds, valid_from=effective, registered_by=ev.key_id, scopes=[(None, old.scope)],
            )
        elif ev.kind == "key.scope.v1":
            entry = self._existing(p["key_id"])
            problem = scope_problem(entry.role, p["scope"])
            if problem:
                raise EventError("rule", f"scope: {problem}")
            if tuple(p["scope"]) == entry.scope:
                raise EventError("rule", f"key {entry.key_id} already has the scope {describe(p['scope'])}")
            entry.scopes.append((parse_utc(ev.at), tuple(p["scope"])))
        elif ev.kind == "key.revoke.v1":
            entry = self._existing(p["key_id"])
            revoked_from = parse_utc(p["revoked_from"])
            if entry.revoked_from is not None and revoked_from >= entry.revoked_from:
                raise EventError(
                    "rule", f"key {entry.key_id} is already revoked from {_fmt(entry.revoked_from)}"
                )
            entry.revoked_from = revoked_from
            entry.revoke_reason = p["reason"]
            if entry.revoked_at_seq is None:
                entry.revoked_at_seq = ev.seq
        else:  # pragma: no cover - kinds.py binds only key.* kinds to the keyring stream
            raise EventError("rule", f"{ev.kind} is not a key-ring event")
        self.origin = origin
        self.events += 1

    def _existing(self, key_id: str) -> KeyEntry:
        entry = self.keys.get(key_id)
        if entry is None:
            raise EventError("rule", f"key {key_id} is not registered")
        return entry


def load_keyring(store: Store) -> KeyRing:
    """The key ring as the ledger holds it: every ``keyring`` event, authorized and
    applied in order."""
    ring = KeyRing()
    for ev in store.stream_events(KEYRING_STREAM):
        ring.authorize(ev)
        ring.apply(ev)
    return ring

"""What a key may write: its scope (issue 13 point 1), pure.

A key is registered with a scope (``key.register.v2``), kept through rotation and
changed only by the house (``key.scope.v1``). A scope is a list of entries:

- ``*``: venue-wide. Every stream, including the venue's own: player accounts
  (``account:``), penalties, key-compromise rulings, incidents. Only the roles that act
  for the whole venue hold it: ``house``, ``ledger``, ``cage``, ``floor``.
- ``table:<id>``: that table's own stream, its chip book (``chips:<id>``), every round
  dealt at it (the ``table`` its ``round.open`` names) and the seat events that name it;
- ``shoe:<id>``, ``wheel:<id>``, ``dice:<id>``: that piece of live equipment;
- ``tournament:<id>``: that tournament's stream;
- ``account:<id>``: that player's account stream. What a key may write there is still
  bound by its role: only the cage moves money (``ledger.kinds``); an online game server
  given ``account:*`` may record a session's geolocation (``account.location.v1``) and
  nothing else.

An id ending in ``*`` is a prefix (``table:online-*`` is every table whose id starts
with ``online-``); ``table:*`` is every table. A producer key (``dealer``, ``table``,
``game``, ``rng``, ``importer``) must name what it writes: ``*`` is refused for it, so a
stolen dealer key cannot reach an account, another table or another shoe.

``place_of`` says where an event is written; ``covers`` whether a scope reaches it. An
event on a venue-level stream has no place, and only ``*`` covers it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

VENUE = "*"
PLACE_TYPES = ("table", "shoe", "wheel", "dice", "tournament", "account")
VENUE_ROLES = frozenset({"house", "ledger", "cage", "floor"})
"""Roles that may hold the venue-wide scope."""
PRODUCER_ROLES = frozenset({"dealer", "table", "game", "rng", "importer"})
"""Roles that must be scoped to named tables, equipment or tournaments."""

ENTRY_RE = re.compile(r"^(\*|(table|shoe|wheel|dice|tournament|account):([A-Za-z0-9._~@/+-]{1,160}|[A-Za-z0-9._~@/+-]{0,159}\*))$")


def scope_problem(role: str, scope: Iterable[str]) -> str | None:
    """Why ``scope`` cannot be given to a key of ``role``, or None."""
    entries = list(scope)
    if not entries:
        return "a scope names at least one table, piece of equipment or tournament, or '*' (venue-wide)"
    for entry in entries:
        if not ENTRY_RE.match(entry):
            return (f"scope entry {entry!r} is not '*' or <type>:<id> with type one of {', '.join(PLACE_TYPES)}"
                    " (an id may end in '*' for a prefix)")
    if len(set(entries)) != len(entries):
        return "a scope lists each entry once"
    if VENUE in entries:
        if role not in VENUE_ROLES:
            return (f"a {role} key cannot be venue-wide ('*'): name the tables, equipment or tournaments it writes"
                    f" (venue-wide roles: {', '.join(sorted(VENUE_ROLES))})")
        if len(entries) > 1:
            return "'*' (venue-wide) already covers every other entry"
    elif role in ("house", "ledger"):
        return f"a {role} key acts for the whole ledger: its scope is '*'"
    return None


def default_scope(role: str) -> list[str] | None:
    """The scope a key of ``role`` gets when none is given: venue-wide for the venue's own
    roles; none for a producer, which must be given one."""
    return [VENUE] if role in VENUE_ROLES else None


def place_of(stream: str, payload: Mapping[str, Any], round_table: str | None = None) -> str | None:
    """Where an event on ``stream`` is written: ``table:<id>``, an equipment, tournament
    or account stream, or None for a venue-level stream (penalties, rulings, incidents,
    the key ring, checkpoints). A round event's place is its round's table
    (``round_table``: from the round's ``round.open``; for the open itself its payload)."""
    stype, _, ident = stream.partition(":")
    if stype in ("table", "chips"):
        return f"table:{ident}"
    if stype == "round":
        table = payload.get("table") if round_table is None else round_table
        return f"table:{table}" if isinstance(table, str) else None
    if stype in ("seat", "import"):  # a seat, an imported round's provenance: at their table
        table = payload.get("table")
        return f"table:{table}" if isinstance(table, str) else None
    if stype in ("shoe", "wheel", "dice", "tournament", "account"):
        return stream
    return None


def covers(scope: Iterable[str], place: str | None) -> bool:
    """Whether a key of ``scope`` may write at ``place`` (None: a venue-level stream)."""
    for entry in scope:
        if entry == VENUE:
            return True
        if place is None:
            continue
        if entry.endswith("*"):
            if place.startswith(entry[:-1]):
                return True
        elif place == entry:
            return True
    return False


def describe(scope: Iterable[str]) -> str:
    entries = list(scope)
    return "venue-wide ('*')" if entries == [VENUE] else ", ".join(entries)

"""Canonical encoding and the domain-separated event hash.

The event hash is what every signature, chain link and Merkle leaf stands on, so a
regulator must be able to recompute it in any language:

    hash = SHA-256( b"pitboss.event.v2\\x00" || JCS(body) )

where ``body`` is the envelope without ``hash`` and ``sig`` and JCS is the JSON
Canonicalization Scheme of RFC 8785. Version 2 of the event binds every event to one
ledger: the body carries ``ledger``, the ledger's origin (the name of its checkpoint key),
so an event signed for one ledger is refused by every other (issue 13 point 5).

The ledger's schema keeps every value inside the subset of JSON where RFC 8785 and
``orjson.dumps(value, option=OPT_SORT_KEYS)`` produce the same bytes: no floats
(amounts are integers), integers within +-(2**53 - 1) (RFC 8785 section 3.2.2.3
serialises numbers as IEEE 754 doubles), object keys in ASCII (so key order equals RFC
8785's UTF-16 code-unit order), and strings of valid Unicode scalar values.
``tests/test_canonical.py`` checks this equivalence against the independent ``rfc8785``
implementation on generated data. orjson is used because canonical encoding is on the
hot path of ingest and verify (about 0.3 us an event against 3.6 us for ``json``).
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

EVENT_HASH_DOMAIN = b"pitboss.event.v2\x00"
MAX_SAFE_INT = 2**53 - 1
GENESIS_PREV = "0" * 64
"""``prev`` of the first event (seq 1) of every stream."""

_dumps = orjson.dumps
_SORT = orjson.OPT_SORT_KEYS


def canonical_json(value: Any) -> bytes:
    """RFC 8785 bytes of ``value`` (within the ledger's JSON subset, see module doc).

    Raises ``ValueError`` for what has no canonical form here: text that is not valid
    Unicode (lone surrogates), integers beyond 64 bits, non-JSON types.
    """
    try:
        return _dumps(value, option=_SORT)
    except TypeError as exc:
        if "surrogates" in str(exc):
            raise ValueError("text is not valid Unicode (lone surrogate)") from None
        raise ValueError(f"no canonical JSON for this value: {exc}") from None


def event_hash(body: dict[str, Any]) -> bytes:
    """The 32-byte domain-separated SHA-256 of an event body (no ``hash``/``sig``)."""
    return hashlib.sha256(EVENT_HASH_DOMAIN + canonical_json(body)).digest()

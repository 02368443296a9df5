"""Our canonical encoding equals RFC 8785 (checked against the independent rfc8785
package) on everything the schema admits; the event hash is domain separated."""

from __future__ import annotations

import hashlib

import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.canonical import EVENT_HASH_DOMAIN, MAX_SAFE_INT, canonical_json, event_hash

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_keys = st.text(st.characters(min_codepoint=0, max_codepoint=127), min_size=1, max_size=12)
_scalars = st.none() | st.booleans() | st.integers(-MAX_SAFE_INT, MAX_SAFE_INT) | _text
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_keys, inner, max_size=5), max_leaves=30)


@settings(max_examples=3000, deadline=None)
@given(_values)
def test_canonical_json_equals_rfc8785_within_the_schema_subset(value: object) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


def test_known_encoding() -> None:
    assert canonical_json({"b": [1, True, None], "a": "é\n\"x\"\u2028"}) == \
        b'{"a":"\xc3\xa9\\n\\"x\\"\xe2\x80\xa8","b":[1,true,null]}'


def test_event_hash_is_domain_separated_sha256() -> None:
    body = {"stream": "account:P1", "seq": 1}
    assert event_hash(body) == hashlib.sha256(EVENT_HASH_DOMAIN + canonical_json(body)).digest()
    assert event_hash(body) != hashlib.sha256(canonical_json(body)).digest()


def test_lone_surrogate_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="lone surrogate"):
        canonical_json({"a": "\ud800"})

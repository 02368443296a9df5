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


def test_signed_event_builds_what_the_dataclass_init_builds() -> None:
    """``ledger.events.signed_event`` (the parse and read paths' constructor) sets every
    field the dataclass declares, to the mapping's values, and is the same frozen event."""
    import dataclasses

    import pytest

    from ledger.events import ENVELOPE_FIELDS, SignedEvent, signed_event

    assert tuple(f.name for f in dataclasses.fields(SignedEvent)) == (*ENVELOPE_FIELDS, "_encoded")
    d = {name: f"v-{name}" for name in ENVELOPE_FIELDS} | {"seq": 3, "payload": {"a": 1}, "extra": "ignored"}
    fast, slow = signed_event(d), SignedEvent(**{k: d[k] for k in ENVELOPE_FIELDS})
    assert fast == slow and repr(fast) == repr(slow) and fast._encoded == [] and fast._encoded is not slow._encoded
    assert fast.to_dict() == slow.to_dict() and fast.encoded() == slow.encoded()
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.seq = 4  # type: ignore[misc]
    with pytest.raises(KeyError):
        signed_event({k: d[k] for k in ENVELOPE_FIELDS if k != "sig"})


def _nested(depth: int) -> dict:  # type: ignore[type-arg]
    value: object = 1
    for _ in range(depth):
        value = {"k": value}
    return value  # type: ignore[return-value]


def test_free_form_objects_stay_inside_the_canonical_subset() -> None:
    """A rules or configuration object (``ledger.kinds.JsonObject``) holds only what has one
    canonical encoding here (module doc of ``ledger.canonical``), each refusal naming where."""
    import pytest
    from pydantic import TypeAdapter, ValidationError

    from ledger.kinds import JsonObject

    check = TypeAdapter(JsonObject).validate_python
    for good in ({}, {"decks": 8, "commission_bp": 500, "name": "x"}, {"a": -MAX_SAFE_INT, "b": MAX_SAFE_INT},
                 {"on": True, "none": None, "list": [1, "a", [None]], "sub": {"x": 1}}, _nested(16), {"k" * 64: 1}):
        assert check(good) == good
    for bad, reason in (({"commission": 0.05}, "commission: floats are not allowed"),
                        ({"a": 1, "big": MAX_SAFE_INT + 1}, "big: integer"), ({"a": -MAX_SAFE_INT - 1}, "a: integer"),
                        ({"é": 1}, "keys must be 1-64 ASCII"), ({"": 1}, "keys must be 1-64 ASCII"),
                        ({"k" * 65: 1}, "keys must be 1-64 ASCII"), ({"x": [0.5]}, r"x\[0\]: floats"),
                        (_nested(18), "nested more than 16 deep"), ({"x": {"y": 1.0}}, "x.y: floats")):
        with pytest.raises(ValidationError, match=reason):
            check(bad)

"""JSON Schemas of the signed event and of every kind's payload, generated from the
pydantic models that ingest enforces (``ledger.events._Envelope``, ``ledger.kinds.KINDS``).

``docs/schemas/`` holds them as files for implementers in other languages
(``docs/spec.md``); ``tests/test_docs.py`` regenerates them and fails when the files
differ from the models, so they cannot drift. Regenerate with ``python -m cli.docs``.

The schemas say what the models check structurally. A few checks are code, not schema,
and are stated in the spec: timestamps are real UTC times, integers within +-(2**53-1),
free-form objects (``rules``, ``meta``) hold only the canonical JSON subset (no floats).
"""

from __future__ import annotations

import inspect
from typing import Any

from ledger.events import _Envelope
from ledger.kinds import KINDS

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://pitboss.invalid/schemas/"
"""The schemas' ``$id`` base: a name, not a place to fetch from (``.invalid``, RFC 2606)."""


def envelope_schema() -> dict[str, Any]:
    schema = _Envelope.model_json_schema()
    schema["properties"]["at"].update(
        pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$",
        description="UTC, RFC 3339 with a Z and 0 to 6 fraction digits, a real time. One instant may be"
                    " spelled several ways (12:00:00Z, 12:00:00.0Z, 12:00:00.000000Z): the hash covers the"
                    " bytes as written, every comparison is by instant (docs/spec.md 'Time').")
    return {"$schema": SCHEMA_DIALECT, "$id": BASE_ID + "event.json", **schema,
            "title": "pitboss signed event (one JSONL line)",
            "description": "The envelope of every event; its payload is checked against the schema of its kind"
                           " (kinds/<kind>.json)."}


def kind_schema(name: str) -> dict[str, Any]:
    spec = KINDS[name]
    schema = spec.model.model_json_schema()
    doc = inspect.getdoc(spec.model) or ""
    out: dict[str, Any] = {"$schema": SCHEMA_DIALECT, "$id": f"{BASE_ID}kinds/{name}.json", **schema,
                           "title": f"{name} payload"}
    if doc and doc != inspect.getdoc(spec.model.__mro__[1]):
        out["description"] = doc
    out["x-pitboss-stream-type"] = spec.stream_type
    out["x-pitboss-roles"] = sorted(spec.roles)
    return out


def all_schemas() -> dict[str, dict[str, Any]]:
    """Relative file name -> schema, for every file of ``docs/schemas``."""
    files = {"event.json": envelope_schema()}
    for name in sorted(KINDS):
        files[f"kinds/{name}.json"] = kind_schema(name)
    return files

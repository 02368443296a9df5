"""Where an imported round came from: ``import.source.v1`` on ``import:<round id>``.

A hand history written elsewhere (PHH, OHH) becomes a round signed by an ``importer``
key (``ledger.importers``). Beside it, on its own one-event stream, the importer records
the round's provenance: the format, the file's name and SHA-256 as read, the section of a
multi-hand file, the players' names as the source spells them (the round's ``players``
are ledger identifiers: ``Phil Ivey`` is ``Phil_Ivey`` there), and the hand's fields
beyond the game (event, venue, date, currency...), so an export gives them back.

The judge: the stream is named after the round, the round exists (stored, or earlier in
the same batch) and is at the table the record names (where the importer's key may
write, ``ledger.scope``); one record per round.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ledger.events import SignedEvent
from ledger.games import RuleViolation
from ledger.judges import BaseJudge, World, register_judge
from ledger.kinds import Ident, JsonObject, Strict, Text, register_kind

STREAM_TYPE = "import"


class ImportSource(Strict):
    """``import.source.v1``: one imported round's provenance."""

    round: Annotated[str, Field(pattern=r"^round:[A-Za-z0-9._~@/+-]{1,160}$")]
    table: Ident
    format: Literal["phh", "ohh"]
    file: Text
    """The file's name as read (its last path component: the same file given by another
    path is the same source)."""
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    """SHA-256 of the file's bytes."""
    section: Text | None = None
    """The hand's place in a multi-hand file (a ``.phhs`` table name, an OHH line number)."""
    names: Annotated[list[Text], Field(max_length=10)] = Field(default_factory=list)
    """The players' names as the source spells them, in seat order of the round's ``players``."""
    meta: JsonObject = Field(default_factory=dict)
    """The hand's fields beyond the game, as the source has them (strings and integers)."""


def stream_for(round_stream: str) -> str:
    return f"{STREAM_TYPE}:{round_stream.split(':', 1)[1]}"


class ProvenanceJudge(BaseJudge):
    stream_types = (STREAM_TYPE,)

    def admit(self, state: Any, ev: SignedEvent, world: World) -> None:
        p = ev.payload
        if ev.stream != stream_for(p["round"]):
            raise RuleViolation(f"the provenance of {p['round']} is recorded on {stream_for(p['round'])}, not {ev.stream}")
        if ev.seq != 1:
            raise RuleViolation(f"{p['round']} already has its provenance")
        opening = world.event_at(p["round"], 1)
        if opening is None or opening.kind != "round.open.v1":
            raise RuleViolation(f"no round {p['round']} in the ledger")
        if opening.payload["table"] != p["table"]:
            raise RuleViolation(f"{p['round']} is at table {opening.payload['table']}, not {p['table']}")


register_kind("import.source.v1", ImportSource, STREAM_TYPE, ("importer",))
register_judge(ProvenanceJudge())

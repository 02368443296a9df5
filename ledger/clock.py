"""Time at ingest: the producer's ``at`` against the ledger's clock (issue 13 point 3), pure.

``at`` is what the signer asserts; the ledger's clock is when ingest receives the event.
A stolen key can write any ``at``, so ingest judges it against its own clock:

1. skew: ``at`` lies within ``skew`` (default 5 minutes; ``PITBOSS_MAX_SKEW`` seconds,
   or ``pitboss ingest --max-skew``) of the ledger's clock. The documented exception
   is an imported hand history (signed by an ``importer`` key, at the importer's own
   tables: ``ledger.scope``): its events happened before the import, so its ``at`` may
   lie in the past, never in the future. Its money stays in the imported hand's own
   unit (``projections.views``);
2. order: ``at`` never goes back within a stream;
3. revocation: once the key ring records a key's revocation, the ledger takes nothing
   more from that key, whatever its ``at`` says. Events received before the revocation
   are judged by its ``revoked_from`` as before (``ledger.keyring``, ``ledger.verify``);
4. no registration into the past: a key's ``valid_from`` (``key.register.v2``) and a
   rotation's ``effective`` (``key.rotate.v1``) are not earlier than the key-ring event's
   own time less the skew.

What ingest receives late, a day's reconciliation reports by the ledger's order, not by
``at``; verify re-proves what was signed, not when it arrived.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ledger.events import EventError, SignedEvent
from ledger.keyring import KeyEntry
from ledger.timeutil import earlier_utc, format_utc, parse_utc, parse_utc_trusted

DEFAULT_MAX_SKEW = timedelta(minutes=5)
SKEW_ENV = "PITBOSS_MAX_SKEW"


def _now() -> datetime:
    return datetime.now(UTC)


def configured_skew() -> timedelta:
    """The allowed skew: ``PITBOSS_MAX_SKEW`` (whole seconds, >= 0) or the default."""
    text = os.environ.get(SKEW_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_SKEW
    if not text.isdigit():
        raise ValueError(f"{SKEW_ENV}={text!r}: give the allowed clock skew in whole seconds")
    return timedelta(seconds=int(text))


@dataclass(frozen=True)
class Clock:
    """The ledger's clock at ingest and the skew it allows producers."""

    skew: timedelta = field(default_factory=configured_skew)
    now: Callable[[], datetime] = _now


def _span(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds % 86400 == 0 and seconds:
        return f"{seconds // 86400} d"
    if seconds % 60 == 0 and seconds:
        return f"{seconds // 60} min"
    return f"{seconds} s"


_KEY_TIMES = {"key.register.v2": "valid_from", "key.rotate.v1": "effective"}
"""Key-ring kinds and the payload time from which their key counts."""


def check_time(ev: SignedEvent, entry: KeyEntry, before: SignedEvent | None, clock: Clock) -> None:
    """Stage "time" of ingest: EventError naming the rule above that ``ev`` breaks.
    ``before`` is the stream's previous event (None for seq 1)."""
    if entry.revoked_at_seq is not None:
        raise EventError("key", f"key {entry.key_id} was revoked (key ring seq {entry.revoked_at_seq}, untrusted from"
                                f" {format_utc(entry.revoked_from) if entry.revoked_from else '?'}): the ledger takes"
                                " nothing more from it, whatever the event's at says")
    at = parse_utc_trusted(ev.at)
    now = clock.now()
    if at > now + clock.skew:
        raise EventError("time", f"at {ev.at} is ahead of the ledger's clock ({format_utc(now)}) by more than the"
                                 f" allowed skew of {_span(clock.skew)}")
    if at < now - clock.skew and entry.role != "importer":
        raise EventError("time", f"at {ev.at} is behind the ledger's clock ({format_utc(now)}) by more than the allowed"
                                 f" skew of {_span(clock.skew)}: events are recorded as they happen (only an"
                                 " imported hand history carries earlier times)")
    if before is not None and earlier_utc(ev.at, before.at):
        raise EventError("time", f"at {ev.at} goes back in time: {ev.stream} seq {before.seq} is at {before.at}")
    field_name = _KEY_TIMES.get(ev.kind)
    if field_name is not None and parse_utc((p := ev.payload)[field_name]) < at - clock.skew:
        raise EventError("time", f"{field_name} {p[field_name]} is before this key-ring event ({ev.at}) by more than"
                                 f" the allowed skew of {_span(clock.skew)}: a key is not registered into the past")

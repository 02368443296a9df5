"""The signed event: envelope fields, hashing, signing and strict parsing.

Envelope (DESIGN.md "The event"): ``stream``, ``seq``, ``at``, ``kind``, ``actor``,
``key_id``, ``prev``, ``payload``, ``hash``, ``sig``. ``hash`` is the domain-separated
SHA-256 of the canonical body (everything but ``hash`` and ``sig``, see
``ledger.canonical``); ``sig`` is Ed25519 over those 32 bytes. Both are lowercase hex.

``SignedEvent`` is also the eventsourcing domain event the ledger stores: its
``originator_id`` is the stream name and its ``originator_version`` the seq.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ledger.canonical import EVENT_HASH_DOMAIN, GENESIS_PREV, MAX_SAFE_INT, canonical_json, event_hash
from ledger.keys import Signer, verify_signature
from ledger.kinds import KINDS, KindSpec, stream_type_of
from ledger.timeutil import parse_utc_once

ENVELOPE_FIELDS = ("ledger", "stream", "seq", "at", "kind", "actor", "key_id", "prev", "payload", "hash", "sig")
BODY_FIELDS = ENVELOPE_FIELDS[:-2]

MAX_LINE_BYTES = 64 * 1024
"""Largest accepted JSONL line; a longer one is refused before it is parsed."""


HASH_MISMATCH = ("hash does not match the event's content (altered after signing, or hashed"
                 " differently from RFC 8785 canonical JSON)")


class EventError(ValueError):
    """Why one event is refused: a short machine-readable ``check`` and the reason."""

    def __init__(self, check: str, reason: str):
        super().__init__(reason)
        self.check = check
        self.reason = reason


_Hex64 = Field(pattern=r"^[0-9a-f]{64}$")


class _Envelope(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    ledger: str = Field(pattern=r"^[^\s+]{1,200}$")
    """The origin of the ledger the event is signed for (its checkpoint key name)."""
    stream: str = Field(pattern=r"^(keyring|[a-z]+:[A-Za-z0-9._~@/+-]{1,160})$")
    """``type:id`` (``account:P1``, ``round:B1-7``); the key ring is the one stream without
    an id. Every reader can split a stream name (issue 13 point 7)."""
    seq: int = Field(ge=1, le=MAX_SAFE_INT)
    at: str
    kind: str = Field(max_length=80)
    actor: str = Field(pattern=r"^[A-Za-z0-9._@:/+-]{1,100}$")
    key_id: str = Field(pattern=r"^[0-9a-f]{16}$")
    prev: str = _Hex64
    payload: dict[str, Any]
    hash: str = _Hex64
    sig: str = Field(pattern=r"^[0-9a-f]{128}$")


_ENVELOPE = _Envelope.__pydantic_validator__


def describe_validation_error(exc: ValidationError, prefix: str = "") -> str:
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(event)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field (not in the schema)"
        elif err["type"] == "missing":
            msg = "missing field"
        got = err.get("input")
        if err["type"] not in ("missing", "extra_forbidden") and not isinstance(got, (dict, list)):
            msg += f", got {type(got).__name__} {got!r}"[:200]
        parts.append(f"{prefix}{loc}: {msg}")
    return "; ".join(parts)


class _Originated:
    """eventsourcing's DomainEventProtocol: the stream is the originator, the seq its version."""

    __slots__ = ()
    stream: str
    seq: int

    @property
    def originator_id(self) -> str:
        return self.stream

    @property
    def originator_version(self) -> int:
        return self.seq


@dataclass(frozen=True, slots=True)
class SignedEvent(_Originated):
    ledger: str
    stream: str
    seq: int
    at: str
    kind: str
    actor: str
    key_id: str
    prev: str
    payload: dict[str, Any]
    hash: str
    sig: str
    _encoded: list[bytes] = field(default_factory=list, repr=False, compare=False)

    def body(self) -> dict[str, Any]:
        return {
            "ledger": self.ledger, "stream": self.stream, "seq": self.seq, "at": self.at, "kind": self.kind,
            "actor": self.actor, "key_id": self.key_id, "prev": self.prev,
            "payload": self.payload,
        }

    def to_dict(self) -> dict[str, Any]:
        d = self.body()
        d["hash"] = self.hash
        d["sig"] = self.sig
        return d

    def encoded(self) -> bytes:
        """Canonical JSON of the whole signed envelope: the bytes the store keeps."""
        if not self._encoded:
            self._encoded.append(canonical_json(self.to_dict()))
        return self._encoded[0]

    def to_json_line(self) -> str:
        return self.encoded().decode("utf-8")

    def check_hash(self) -> None:
        try:
            computed = event_hash(self.body())
        except ValueError as exc:
            raise EventError("schema", str(exc)) from None
        if computed.hex() != self.hash:
            raise EventError("hash", HASH_MISMATCH)

    def check_signature(self, public_key: bytes, verdict: bool | None = None) -> None:
        """Stage 6: the signature over the event's 32 hash bytes (``ledger.keys.verify_signature``);
        ``verdict`` when it was already checked (ingest checks a batch's on all cores)."""
        ok = verdict
        if ok is None:
            try:
                ok = verify_signature(public_key, bytes.fromhex(self.sig), bytes.fromhex(self.hash))
            except ValueError:  # not hex (the schema refuses it before this)
                ok = False
        if not ok:
            raise EventError("signature", f"bad signature: not made by key {self.key_id} over this event's hash") from None


_new = object.__new__
(_set_ledger, _set_stream, _set_seq, _set_at, _set_kind, _set_actor, _set_key_id, _set_prev, _set_payload, _set_hash,
 _set_sig, _set_encoded) = (SignedEvent.__dict__[name].__set__ for name in (*ENVELOPE_FIELDS, "_encoded"))


def signed_event(d: Mapping[str, Any]) -> SignedEvent:
    """``SignedEvent(**{k: d[k] for k in ENVELOPE_FIELDS})`` at half its cost, for the
    paths that build one an event (parse, every stored row read): a frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__``, a call of its own a field
    (1.4 µs an event here), where the slots' own descriptors set them directly (0.7 µs).
    ``__init__`` checks nothing, so neither does this. KeyError when ``d`` lacks a field."""
    ev = _new(SignedEvent)
    _set_ledger(ev, d["ledger"])
    _set_stream(ev, d["stream"])
    _set_seq(ev, d["seq"])
    _set_at(ev, d["at"])
    _set_kind(ev, d["kind"])
    _set_actor(ev, d["actor"])
    _set_key_id(ev, d["key_id"])
    _set_prev(ev, d["prev"])
    _set_payload(ev, d["payload"])
    _set_hash(ev, d["hash"])
    _set_sig(ev, d["sig"])
    _set_encoded(ev, [])
    return ev


def sign_event(
    signer: Signer,
    *,
    ledger: str,
    stream: str,
    seq: int,
    kind: str,
    payload: dict[str, Any],
    prev: str,
    at: str,
) -> SignedEvent:
    """Producer side: build the body, hash it and sign it (validation happens at ingest)."""
    body = {
        "ledger": ledger, "stream": stream, "seq": seq, "at": at, "kind": kind, "actor": signer.actor,
        "key_id": signer.key_id, "prev": prev, "payload": payload,
    }
    digest = event_hash(body)
    return SignedEvent(ledger=ledger, stream=stream, seq=seq, at=at, kind=kind, actor=signer.actor, key_id=signer.key_id, prev=prev,
                       payload=payload, hash=digest.hex(), sig=signer.sign(digest).hex())


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"duplicate key {k!r} in a JSON object")
            seen.add(k)
    return d


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


class StoredHead:
    """A stream's last stored event as ingest holds it between batches: what the chain
    and the clock read (seq, hash, at, kind), the rest read from the store once, when a
    judge asks (``load``). A long run touching many streams holds a few hundred bytes for
    each, not the event (issue 13 point 8)."""

    __slots__ = ("stream", "seq", "kind", "_hash", "at", "_load", "_event")

    def __init__(self, stream: str, seq: int, kind: str, state: bytes, load: Any):
        d = orjson.loads(state)
        self.stream, self.seq, self.kind = stream, seq, sys.intern(kind)
        self._hash, self.at = bytes.fromhex(d["hash"]), d["at"]
        self._load = load
        self._event: SignedEvent | None = None

    @property
    def hash(self) -> str:
        return self._hash.hex()

    def event(self) -> SignedEvent:
        if self._event is None:
            self._event = self._load(self.stream, self.seq)
        event: SignedEvent = self._event
        return event

    def __getattr__(self, name: str) -> Any:  # payload, key_id, ...: read from the store once
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.event(), name)


def parse_json_line(line: str | bytes) -> Any:
    """Parse one JSONL line, refusing duplicate keys, NaN/Infinity and oversize lines
    (``read_json_line``)."""
    return read_json_line(line)[0]


def read_json_line(line: str | bytes) -> tuple[Any, bytes | None]:
    """Parse one JSONL line, refusing duplicate keys, NaN/Infinity and oversize lines;
    with the value, the line's bytes when they are its canonical encoding, else None.

    A line that is already canonical JSON (RFC 8785, as producers write events) is
    parsed by orjson and accepted when its canonical re-encoding gives back the line's
    own bytes: a duplicate key would have lost a member, a number beyond 64 bits, a
    ``-0`` or an escape would read back differently, so equal bytes prove the standard
    library's strict parse would give this same value. Any other line takes that strict
    parse, which names what is wrong. (Issue 16: the strict parse was 8% of ingest.)"""
    if len(line) > MAX_LINE_BYTES:
        raise EventError("size", f"line is {len(line)} bytes; the limit is {MAX_LINE_BYTES}")
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    else:
        try:
            raw = raw.rstrip(b"\r\n")
            if type(value) is dict and canonical_json(value) == raw:
                return value, raw
        except ValueError:
            pass
    try:
        return json.loads(line, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant), None
    except (ValueError, RecursionError) as exc:
        raise EventError("json", f"malformed JSON: {exc}") from None


def parse_event(obj: Any) -> SignedEvent:
    """Strictly validate a decoded JSON object as a signed event (schema only).

    Checks the envelope, the kind, the payload against the kind's model and the stream
    type the kind belongs to. Hash, signature, key and chain are checked by the ingest.
    """
    if not isinstance(obj, dict):
        raise EventError("schema", f"an event must be a JSON object, got {type(obj).__name__}")
    try:
        env = _ENVELOPE.validate_python(obj)  # model_validate without its Python wrapper (once an event)
    except ValidationError as exc:
        raise EventError("schema", describe_validation_error(exc)) from None
    try:
        parse_utc_once(env.at)
    except ValueError as exc:
        raise EventError("schema", f"at: {exc}") from None
    spec = KINDS.get(env.kind)
    if spec is None:
        raise EventError("schema", f"unknown kind {env.kind!r}")
    if stream_type_of(env.stream) != spec.stream_type:
        raise EventError(
            "schema",
            f"kind {env.kind} belongs on a '{spec.stream_type}' stream, not {env.stream!r}",
        )
    single = spec.single_stream
    if single is not None and env.stream != single:
        raise EventError("schema", f"kind {env.kind} belongs on the one stream {single!r}, not {env.stream!r}")
    _check_payload(spec, env.payload)
    if env.seq == 1 and env.prev != GENESIS_PREV:
        raise EventError("chain", f"seq 1 must have the genesis prev ({GENESIS_PREV[:8]}...)")
    return signed_event(env.__dict__)


def check_payload(kind: str, payload: Any) -> None:
    """Stage 2's payload check (the kind's strict model), EventError("schema") naming the
    field: at ingest (``parse_event``), and for readers that judge stored rows again by
    their rules (``ledger.judges.round.walk``), where a row signed by a key allowed to
    write it but never through ingest may carry anything."""
    spec = KINDS.get(kind)
    if spec is None:
        raise EventError("schema", f"unknown kind {kind!r}")
    _check_payload(spec, payload)


def _check_payload(spec: KindSpec, payload: Any) -> None:
    try:
        spec.model.__pydantic_validator__.validate_python(payload)
    except ValidationError as exc:
        raise EventError("schema", describe_validation_error(exc, "payload.")) from None


def decode_stored(state: bytes) -> dict[str, Any]:
    """A stored row's JSON: orjson (several times the standard library's speed), or, for the
    rare row it refuses and ``json`` reads (a lone surrogate escape, an integer beyond 64
    bits: only a row written behind the ledger's back, which verify names), ``json``."""
    try:
        d: dict[str, Any] = orjson.loads(state)
    except orjson.JSONDecodeError:
        d = json.loads(state)
    return d


def event_from_stored(state: bytes) -> SignedEvent:
    """Rebuild an event from the bytes the store holds (no checks: verify does those)."""
    d = decode_stored(state)
    return signed_event(d)


class PackedEvent(_Originated):
    """A parsed event held as its canonical bytes (what the store will keep) and the few
    fields the chain reads, the rest parsed again on demand: what ingest holds of a
    batch's events between their checks and their commit, so a batch costs about its own
    size in memory (issue 13 point 8), not the several times that parsed JSON objects do.
    It reads like a ``SignedEvent`` (``payload``, ``key_id``, ... parse the bytes)."""

    __slots__ = ("stream", "seq", "kind", "data", "before", "_parsed")

    def __init__(self, ev: SignedEvent, canonical: bytes | None = None, keep: bool = False):
        """``canonical``: the event's canonical encoding when the caller has it already
        (``read_json_line`` proved a line is, and ``parse_event`` keeps exactly the line's
        fields and values), so it is not encoded again. ``keep``: hold ``ev`` as well until
        ``take`` (ingest keeps a bounded number of a batch's events parsed for its judges,
        ``ledger.ingest.KEPT_PARSED``)."""
        self.stream, self.seq, self.kind = ev.stream, ev.seq, sys.intern(ev.kind)
        self.before: PackedEvent | None = None
        """The previous event of the same stream accepted in the same run and not yet
        stored (``ledger.judges.World``): the run's events are found through their heads."""
        # an exact-size copy: orjson's output buffer keeps its over-allocation (4 KiB for a 600-byte event)
        self.data = canonical if canonical is not None else memoryview(ev.encoded()).tobytes()
        self._parsed: SignedEvent | None = ev if keep else None

    # ``hash`` and ``at`` are what the chain and the clock read of a stream's previous event,
    # once for each event after it: sliced from the bytes rather than parsing the whole
    # event. They are the canonical encoding (RFC 8785: members in key order) of an event
    # that passed ``parse_event``, so the members before them, "actor" and "at", hold no
    # quote (the actor's pattern; a UTC time): the first '","at":"' and '","hash":"' are
    # those members'. Anything else falls back to the parse.

    @property
    def hash(self) -> str:
        data = self.data
        i = data.find(b'","hash":"')
        if i > 0 and data[i + 74:i + 75] == b'"':
            return data[i + 10:i + 74].decode()
        digest: str = orjson.loads(data)["hash"]
        return digest

    @property
    def at(self) -> str:
        data = self.data
        i = data.find(b'","at":"')
        j = data.find(b'"', i + 8) if i > 0 else -1
        if j > 0:
            return data[i + 8:j].decode()
        at: str = orjson.loads(data)["at"]
        return at

    def event(self) -> SignedEvent:
        d = orjson.loads(self.data)  # canonical bytes this process encoded: orjson reads them exactly
        return signed_event(d)

    def take(self) -> SignedEvent:
        """The event, parsed: the one kept since parsing (then no longer held: judged
        events stay packed), else parsed again from the bytes."""
        ev = self._parsed
        if ev is None:
            return self.event()
        self._parsed = None
        return ev

    def check_hash(self) -> None:
        """``SignedEvent.check_hash`` on the bytes held: the body's canonical encoding is
        the event's with its ``hash`` and ``sig`` members cut out (RFC 8785 encodes each
        member on its own, in key order), so it is not encoded again. The members are found
        as ``hash`` finds its own: after "actor" and "at", which hold no quote, and, for
        ``sig``, the last one, followed only by "stream", whose name holds none. Bytes of
        any other shape take ``SignedEvent.check_hash``."""
        data = self.data
        i = data.find(b'","hash":"')
        j = data.rfind(b',"sig":"')
        if (i > 0 and data.startswith(b'{"actor":"') and data[i + 74:i + 85] == b'","key_id":'
                and j > i and data[j + 136:j + 148] == b'","stream":"'):
            body = data[:i + 1] + data[i + 75:j] + data[j + 137:]
            if hashlib.sha256(EVENT_HASH_DOMAIN + body).hexdigest() != data[i + 10:i + 74].decode():
                raise EventError("hash", HASH_MISMATCH)
            return
        self.event().check_hash()

    def let_go(self) -> None:
        """Hold the event as its bytes only from now on (a large batch's events kept parsed,
        ``ledger.ingest.KEPT_PARSED_BATCH_BYTES``): ``take`` parses it again."""
        self._parsed = None

    def encoded(self) -> bytes:
        return self.data

    @property
    def payload(self) -> dict[str, Any]:
        if self._parsed is not None:
            return self._parsed.payload
        payload: dict[str, Any] = orjson.loads(self.data)["payload"]
        return payload

    def __getattr__(self, name: str) -> Any:  # ledger, actor, key_id, prev, sig, body(), ...: parsed when asked
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.event(), name)

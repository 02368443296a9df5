"""Event kinds: each kind's payload model, the stream type it lives on, and the roles
that may sign it (DESIGN.md "Trust model": a role may sign only its kinds).

Kinds are versioned names (``<family>.<action>.v<N>``); a schema change is a new kind,
never an edit of an old one, because an audit log is read for years. Payload models
are strict pydantic models: unknown fields, wrong types, floats for money and naive
timestamps are refused. Game issues add their kinds with ``register_kind``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from ledger.canonical import MAX_SAFE_INT
from ledger.collector import paused
from ledger.timeutil import parse_utc

ROLES = (
    "house",     # the operator's root key: signs the key ring
    "ledger",    # the ledger service itself: signs checkpoints only
    "cage",      # moves cash in and out of player accounts
    "floor",     # floor supervisor / pit boss: opens and closes tables, rulings
    "dealer",    # live dealer
    "table",     # table device (shoe scanner, wheel reader, card table controller)
    "game",      # online game server
    "rng",       # RNG service
    "importer",  # imports hand histories written elsewhere
)


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)


def _utc(value: str) -> str:
    parse_utc(value)
    return value


UtcTime = Annotated[str, AfterValidator(_utc)]
Amount = Annotated[int, Field(gt=0, le=MAX_SAFE_INT)]
"""A positive amount in integer minor units (cents, chips); never a float."""
Count = Annotated[int, Field(ge=0, le=MAX_SAFE_INT)]
Currency = Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9]{2,11}$")]
"""ISO 4217 code (``EUR``) or a named chip unit (``CHIP``, ``TDOLLAR``)."""
Ident = Annotated[str, Field(pattern=r"^[A-Za-z0-9._~@/+-]{1,160}$")]
Text = Annotated[str, Field(max_length=2000)]
HexKey = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
KeyId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
Role = Literal[ROLES]  # type: ignore[valid-type]  # a Literal built from the ROLES tuple, which pydantic reads at run time


def _check_json_value(value: Any, path: str = "", depth: int = 0) -> None:
    """Keep free-form configuration inside the canonical JSON subset (ledger.canonical)."""
    if depth > 16:
        raise ValueError(f"{path or 'value'} is nested more than 16 deep")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INT:
            raise ValueError(f"{path or 'value'}: integer {value} is beyond +-(2**53-1)")
        return
    if isinstance(value, float):
        raise ValueError(f"{path or 'value'}: floats are not allowed (use integers)")
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_json_value(item, f"{path}[{i}]", depth + 1)
        return
    if isinstance(value, dict):
        for k, item in value.items():
            if not (isinstance(k, str) and k.isascii() and 0 < len(k) <= 64):
                raise ValueError(f"{path or 'value'}: keys must be 1-64 ASCII characters")
            _check_json_value(item, f"{path}.{k}" if path else k, depth + 1)
        return
    raise ValueError(f"{path or 'value'}: {type(value).__name__} is not a JSON value")


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    _check_json_value(value)
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]


# --- key ring (stream "keyring") ---------------------------------------------------

ScopeEntry = Annotated[str, Field(max_length=170)]
Scope = Annotated[list[ScopeEntry], Field(min_length=1, max_length=200)]
"""What a key may write (``ledger.scope``): ``*`` (venue-wide) or ``table:``, ``shoe:``,
``wheel:``, ``dice:``, ``tournament:`` ids, an id ending in ``*`` being a prefix."""


class KeyRegister(Strict):
    """``key.register.v2``: a key, its role, the kinds it may sign and its scope."""
    key_id: KeyId
    actor: Annotated[str, Field(pattern=r"^[A-Za-z0-9._@:/+-]{1,100}$")]
    role: Role
    public_key: HexKey
    kinds: Annotated[list[Annotated[str, Field(max_length=80)]], Field(min_length=1, max_length=200)]
    valid_from: UtcTime
    """Not before the registration's own time less the allowed clock skew
    (``ledger.clock``): a key cannot be registered into the past."""
    scope: Scope


class KeyScope(Strict):
    """``key.scope.v1``: the house changes what a key may write, from this event on."""
    key_id: KeyId
    scope: Scope


class KeyRotate(Strict):
    key_id: KeyId
    new_key_id: KeyId
    new_public_key: HexKey
    effective: UtcTime
    """The old key signs nothing at or after this time; the new one from it on."""


class KeyRevoke(Strict):
    key_id: KeyId
    revoked_from: UtcTime
    """Events this key signed at or after this time are untrusted; earlier ones stay valid."""
    reason: Text


# --- cash (stream "account:<player>") ----------------------------------------------

class CashMovement(Strict):
    amount: Amount
    currency: Currency
    method: Literal["cash", "card", "bank", "chips", "voucher"]
    reference: Ident


class CashTransfer(Strict):
    """Money leaving this account for someone else: another player's account
    (``beneficiary_type`` "account", credited there) or an outside party ("external":
    a bank account or person not the account holder). Both are the "transfers to third
    parties" AML looks at (``projections.aml``)."""
    amount: Amount
    currency: Currency
    beneficiary: Ident
    beneficiary_type: Literal["account", "external"]
    reference: Ident


class AccountLocation(Strict):
    """Where the account holder is, as established by ``source``: the KYC residence, a
    document, or the online session's geolocation; in force from this event on."""
    country: Annotated[str, Field(pattern=r"^[A-Z]{2}$")]
    """ISO 3166-1 alpha-2."""
    source: Literal["kyc", "document", "geolocation"]


# --- chips at a table (stream "chips:<table>") --------------------------------------

class ChipsMovement(Strict):
    """The cage issues chips to a player at a table from the player's account
    (``chips.buy_in``) or redeems them back into it (``chips.cash_out``). Both move the
    player's money at the cage, so only the cage signs them (issue 13 point 2)."""
    player: Ident
    amount: Amount


class ChipsCount(Strict):
    """The chips in front of each player at the table, counted (at a table's close, a
    shift change, a fill). Players not listed have none."""
    stacks: Annotated[dict[Ident, Count], Field(max_length=200)]


# --- tables and rounds -------------------------------------------------------------

BetType = Annotated[str, Field(pattern=r"^(\*|[A-Za-z0-9._~@/+-]{1,160})$")]
"""A bet type's name in the game's own terms (``banker``, ``straight``, ``main``), or
``*`` for every type the configuration does not name."""


class Limit(Strict):
    """A table's minimum and maximum for one bet type, in minor units (000 II 2.1.7,
    III 1.3(a), IV 2.1.4-5: bets within the table's posted limits)."""

    min: Amount
    max: Amount

    @model_validator(mode="after")
    def _ordered(self) -> Limit:
        if self.max < self.min:
            raise ValueError(f"the maximum {self.max} is below the minimum {self.min}")
        return self


class TableConfig(Strict):
    """A table's configuration, set by the floor or the house (issue 15 point 1): what
    every round at the table is played by. ``rules`` are the game's house options (its
    engine's rules model: decks, paytables, commission and its rounding, rake, odd-chip
    rule, bring-in...), fixed for every round; ``round_options`` names the options a
    round may set itself (a tournament's level, say); ``limits`` maps a bet type (the
    game's own names; ``"*"`` for any other) to its minimum and maximum; ``blinds``
    ([small, big]) and ``ante`` are a poker table's forced bets."""

    rules: JsonObject = Field(default_factory=dict)
    round_options: Annotated[list[Ident], Field(max_length=64)] = Field(default_factory=list)
    limits: Annotated[dict[BetType, Limit], Field(max_length=64)] = Field(default_factory=dict)
    blinds: Annotated[list[Amount], Field(min_length=2, max_length=2)] | None = None
    ante: Amount | None = None


class TableOpen(Strict):
    game: Ident
    seats: Annotated[int, Field(ge=1, le=10)]
    currency: Currency
    config: TableConfig | None = None
    """The table's configuration, signed by the floor or the house (absent: the game's
    defaults, which are the seed texts' rules)."""
    dealing: Literal["live", "rng"] | None = None
    """How the table's rounds are dealt, and so which procedure the ledger enforces:
    "live" (from inspected equipment, ``ledger.judges.equipment``), "rng" (from a committed
    seed, ``ledger.rng``); absent for tables whose procedure is not recorded (imported
    hand histories), where rounds name no source."""


class TableClose(Strict):
    reason: Text


class TableConfigChange(Strict):
    """``table.config.v1``: the floor or the house sets an open table's whole configuration;
    rounds opened after it cite it (``RoundOpen.config``)."""

    config: TableConfig
    reason: Text = ""


class RoundOpen(Strict):
    table: Ident
    game: Ident
    rules: JsonObject
    """House options in force for this round (DESIGN.md "Games"), recorded so a replay
    years later uses the rules that applied."""
    source: Annotated[str, Field(pattern=r"^(rng|(shoe|wheel|dice):[A-Za-z0-9._~@/+-]{1,160})$")] | None = None
    """Where the draws come from: "rng", or the equipment stream (``shoe:S1``) of a
    live table."""
    config: Annotated[int, Field(ge=1)] | None = None
    """The seq of the table's event whose configuration the round is played by (its
    ``table.open`` or latest ``table.config``): required when the table has one, so a
    replay uses the configuration in force when the round opened."""


class RoundClose(Strict):
    status: Literal["complete", "void"]


class EmptyPayload(Strict):
    """For events whose kind says everything (e.g. "no more bets")."""


ROUND_PRODUCERS = ("dealer", "table", "game", "importer")
"""Who records what happens in a round: live dealer, table device, game server, importer."""


# --- the ledger's own checkpoints (stream "ledger:checkpoints") --------------------

class LedgerCheckpoint(Strict):
    origin: Annotated[str, Field(pattern=r"^[^\s+]{1,200}$")]
    size: Count
    root: Annotated[str, Field(pattern=r"^[A-Za-z0-9+/]{43}=$")]
    note: Annotated[str, Field(max_length=4000)]


class LedgerReceipt(Strict):
    """The ledger's clock (issue 13 point 3): written by ingest, signed by the ledger's
    log key, after each batch it stores. Every event before it in the log was received by
    the ledger at or before ``received`` (and after the previous receipt's); it is a leaf
    of the log like any event, so every later checkpoint commits to it. The producer's
    ``at`` is its own assertion; this is the ledger's."""
    received: UtcTime


@dataclass(frozen=True)
class KindSpec:
    name: str
    model: type[BaseModel]
    stream_type: str
    roles: frozenset[str]
    single_stream: str | None = field(init=False)
    """The one stream the kind lives on (``single_stream_of``), else None: derived from the
    name once, when the spec is made, not for every event parsed."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "single_stream", single_stream_of(self.name))  # frozen: set once, here


V = TypeVar("V")


class Registry(Mapping[str, V]):
    """Names to what registers under them (event kinds here, game engines in
    ``ledger.games``), read like a dict, filled on first use (issue 16 point 7): a module
    that registers many names nobody may need (a game's) is imported on the first lookup
    of one of them, through the loaders given to ``add_source``. Iterating, counting, or
    looking up a name the loaders do not find where it points imports everything they
    hold first, so the registry never answers "no such name" for a name a module of this
    ledger would register. Loading happens under a lock: a miss in one thread waits for
    another's load (``pitboss serve`` answers in threads)."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._items: dict[str, V] = {}
        self._sources: list[Callable[[str | None], None]] = []
        self._complete = True  # every source loaded whole: a miss is then a name nobody registers
        self._busy = False
        self._loading = threading.RLock()

    def add_source(self, load: Callable[[str | None], None]) -> None:
        """``load(name)`` imports what registers ``name``, at least; ``load(None)`` imports
        all it knows. It may import more than asked, never less."""
        with self._loading:
            self._sources.append(load)
            self._complete = False

    def _load(self, name: str | None) -> None:
        with self._loading:
            if self._complete or self._busy:  # busy: a lookup made by a module being loaded loads nothing
                return
            self._busy = True
            try:
                with paused():  # a module's classes and schemas are no garbage: no collection while they are made
                    for load in list(self._sources):
                        load(name)
            finally:
                self._busy = False
            if name is None:  # everything is registered: nothing more to load, ever
                self._complete = True

    def loaded(self) -> Mapping[str, V]:
        """What is registered so far, loading nothing (``ledger.games._index``)."""
        return self._items

    def register(self, name: str, item: V) -> None:
        if name in self._items:
            raise ValueError(f"{self._what} {name} is already registered")
        self._items[name] = item

    def get(self, name: str, default: V | None = None) -> V | None:  # type: ignore[override]  # one signature
        item = self._items.get(name)  # the hot path: one dict lookup
        if item is None and not self._complete:
            with self._loading:
                self._load(name)
                item = self._items.get(name)
                if item is None:  # not where its name points: everything, once
                    self._load(None)
                    item = self._items.get(name)
        return default if item is None else item

    def __getitem__(self, name: str) -> V:
        item = self.get(name)
        if item is None:
            raise KeyError(name)
        return item

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        if not self._complete:
            self._load(None)
        return iter(list(self._items))

    def __len__(self) -> int:
        if not self._complete:
            self._load(None)
        return len(self._items)


KINDS: Registry[KindSpec] = Registry("kind")


def register_kind(name: str, model: type[BaseModel], stream_type: str, roles: tuple[str, ...]) -> None:
    unknown = set(roles) - set(ROLES)
    if unknown:
        raise ValueError(f"unknown roles {sorted(unknown)}")
    KINDS.register(name, KindSpec(name, model, stream_type, frozenset(roles)))


def stream_type_of(stream: str) -> str:
    return stream.split(":", 1)[0]


_ROLE_INDEXES: list[Callable[[str], frozenset[str] | None]] = []


def add_roles_index(lookup: Callable[[str], frozenset[str] | None]) -> None:
    """``lookup(kind)``: the roles that may sign a kind whose module is not loaded yet, from
    an index that is right whenever it answers (``ledger.games._index``), else None."""
    _ROLE_INDEXES.append(lookup)


def roles_of(kind: str) -> frozenset[str] | None:
    """The roles that may sign ``kind``, or None for a kind nobody registers: from its spec
    when its module is loaded, else from an index (``add_roles_index``), else by loading
    it. A key ring's check of the kinds a key lists (``ledger.keyring``) asks this for
    every game's kinds and needs none of their models."""
    spec = KINDS.loaded().get(kind)
    if spec is None:
        for lookup in _ROLE_INDEXES:
            roles = lookup(kind)
            if roles is not None:
                return roles
        spec = KINDS.get(kind)
    return None if spec is None else spec.roles


def kinds_for_role(role: str) -> list[str]:
    return sorted(k for k, spec in KINDS.items() if role in spec.roles)


KEYRING_STREAM = "keyring"
CHECKPOINT_STREAM = "ledger:checkpoints"
RECEIPT_STREAM = "ledger:receipts"
SINGLE_STREAMS = {"key.": KEYRING_STREAM, "ledger.checkpoint.": CHECKPOINT_STREAM,
                  "ledger.receipt.": RECEIPT_STREAM}
"""Kinds (by prefix) that live on exactly one stream: a key-ring, checkpoint or receipt
event anywhere else would be a second key ring or log that no reader follows."""


def single_stream_of(kind: str) -> str | None:
    for prefix, stream in SINGLE_STREAMS.items():
        if kind.startswith(prefix):
            return stream
    return None

register_kind("key.register.v2", KeyRegister, "keyring", ("house",))
register_kind("key.scope.v1", KeyScope, "keyring", ("house",))
register_kind("key.rotate.v1", KeyRotate, "keyring", ("house",))
register_kind("key.revoke.v1", KeyRevoke, "keyring", ("house",))
register_kind("cash.deposit.v1", CashMovement, "account", ("cage",))
register_kind("cash.withdrawal.v1", CashMovement, "account", ("cage",))
register_kind("cash.transfer.v1", CashTransfer, "account", ("cage",))
register_kind("account.location.v1", AccountLocation, "account", ("cage", "game"))
register_kind("chips.buy_in.v1", ChipsMovement, "chips", ("cage",))
register_kind("chips.cash_out.v1", ChipsMovement, "chips", ("cage",))
register_kind("chips.count.v1", ChipsCount, "chips", ("floor", "dealer", "table", "game"))
register_kind("table.open.v1", TableOpen, "table", ("floor", "table", "game", "importer"))
register_kind("table.close.v1", TableClose, "table", ("floor", "table", "game", "importer"))
register_kind("table.config.v1", TableConfigChange, "table", ("floor", "house"))
register_kind("round.open.v1", RoundOpen, "round", ROUND_PRODUCERS)
register_kind("round.close.v1", RoundClose, "round", ROUND_PRODUCERS)
register_kind("ledger.checkpoint.v1", LedgerCheckpoint, "ledger", ("ledger",))
register_kind("ledger.receipt.v1", LedgerReceipt, "ledger", ("ledger",))

"""The judges: one per stream type, each in its own module, behind one registry (as the
game engines are, ``ledger.games``).

Ingest is a pipeline (``ledger.ingest``): parse -> schema -> hash -> chain -> key and
role -> signature -> the judge of the event's stream type. A judge sees the event, the
state of its stream as of the accepted events, and the ``World`` (every other stream, as
stored plus what the run accepted before), and either refuses the event with an
``EventError`` naming the rule, or gives the stream's next state::

    judge.admit(state, ev, world)        # the rules that look at other streams (ingest)
    state = judge.step(state, ev, world)  # the stream's own transition (ingest and readers)

``step`` alone folds a stored stream (``World.state``), so the state a judge keeps is
rebuilt the same way for ingest and for the readers (``fold``). A stream type without a
judge (``incident``, ``ledger``) has no rule beyond its chain and its kinds' schemas.

The judges and their stream types: ``keyring`` (``ledger.judges.keyring``), ``table``,
``round`` (the game's engine, the RNG protocol, rulings), ``shoe``/``wheel``/``dice``
(``ledger.judges.equipment``), ``seat``, ``account`` and ``chips``
(``ledger.judges.cash``), ``tournament``, ``penalty``, ``ruling`` (key-compromise
rulings).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from typing import Any

from ledger.clock import Clock
from ledger.events import EventError, PackedEvent, SignedEvent, event_from_stored
from ledger.keyring import KeyEntry, KeyRing, load_keyring
from ledger.kinds import stream_type_of
from ledger.refs import parse_ref
from ledger.scope import covers, describe, place_of
from ledger.store import Store


class BaseJudge:
    """A judge: ``stream_types`` it judges, ``step`` and ``admit`` (above). This base keeps
    no state and needs no other stream; each judge overrides what its streams need."""

    stream_types: tuple[str, ...] = ()
    keeps_state = False  # True where ``step`` keeps something: only then is a stored stream folded

    def step(self, state: Any, ev: SignedEvent, world: World) -> Any:
        return state

    def admit(self, state: Any, ev: SignedEvent, world: World) -> None:
        return None

    def settle(self, before: Any, after: Any, ev: SignedEvent, world: World) -> None:
        """At ingest only, once ``ev`` is admitted and stepped: what the event changes
        beyond its stream (a shoe's card count, ``ledger.judges.shoe``); may refuse it."""
        return None


JUDGES: dict[str, BaseJudge] = {}


def register_judge(judge: BaseJudge) -> None:
    for stype in judge.stream_types:
        if stype in JUDGES:
            raise ValueError(f"a judge for {stype} streams is already registered")
        JUDGES[stype] = judge


def judge_of(stream: str) -> BaseJudge | None:
    return JUDGES.get(stream_type_of(stream))


def fold(stream: str, events: Iterable[SignedEvent], world: Any = None) -> Any:
    """The state a stream's judge keeps after ``events`` (a stored stream, in seq order)."""
    judge = judge_of(stream)
    state = None
    if judge is None:
        return state
    for ev in events:
        state = judge.step(state, ev, world)
    return state


def players_named(kind: str, payload: dict[str, Any]) -> Any:
    """The players a round event names, whom the round judge asks whether a penalty sent
    them away from the table (001 反則行為): a hand's ``rules.players`` on its round.open,
    the ``player`` of any other event (a bet), else none."""
    if kind == "round.open.v1":
        return payload["rules"].get("players", ())
    named = payload.get("player")
    return (named,) if isinstance(named, str) else ()


def _penalty_streams(events: list[PackedEvent]) -> set[str]:
    """The penalty streams of the players a batch's round events name (``players_named``):
    most do not exist; with their heads read in the batch's few queries, a missing one
    costs no query of its own (``state``). Only events whose bytes hold such a key are
    parsed (one search for '"player', which both keys begin with)."""
    out: set[str] = set()
    for ev in events:
        if not ev.stream.startswith("round:") or b'"player' not in ev.data:
            continue
        named = players_named(ev.kind, ev.payload)
        if isinstance(named, (list, tuple)):  # the judge refuses anything else in its turn
            out.update(f"penalty:{p}" for p in named if isinstance(p, str))
    return out


class World:
    """The store plus what the run accepted before this event: stream heads, events by
    (stream, seq), the key ring, and each stream's state as its judge keeps it (folded
    from the store once, then advanced with every accepted event). One per ingest run
    (``ledger.ingest.IngestSession``): a long run holds one batch's events at a time."""

    def __init__(self, store: Store, ring: KeyRing, clock: Clock | None = None):
        self.store = store
        self.ring = ring
        self.clock = clock or Clock()
        self.heads: dict[str, Any] = {}
        """stream -> its last event, or None: a ``SignedEvent`` read from the store, or the
        run's own ``PackedEvent``, which links back (``before``) to the run's earlier events
        of the stream not yet stored. No other index of the run's events is kept."""
        self.states: dict[str, Any] = {}
        self.tallies: dict[str, Any] = {}
        """shoe stream -> its ``ledger.judges.shoe.Tally`` since it was loaded (built from the
        store on first use, then advanced by every accepted card)."""
        self.hands: dict[tuple[str, str], int] = {}
        """(player, table) -> the hands the player was dealt in there since taking the seat
        (``hands_at``), for the table-leaving policy (``ledger.judges.seat``)."""
        self.books: dict[str, Any] = {}
        """table -> what it carries from round to round (``Engine.table_book``: a poker
        table's seats, stacks, button and blinds), or None; built from the store on first
        use (``table_book``), then advanced by the judges' ``settle``."""

    def restart(self) -> None:
        """Forget what the run added: the world as the store holds it, the key ring read
        again into the same ``KeyRing`` (its holders see the store's ring, not one a
        refused batch advanced)."""
        vars(self.ring).update(vars(load_keyring(self.store)))
        self.heads.clear()
        self.states.clear()
        self.tallies.clear()
        self.hands.clear()
        self.books.clear()

    def prefetch(self, events: list[PackedEvent]) -> None:
        """Read the heads of every stream the batch touches (and tables its rounds name)."""
        wanted = {ev.stream for ev in events}
        wanted |= {f"table:{ev.payload['table']}" for ev in events if ev.kind == "round.open.v1"}
        wanted |= {f"table:{ev.stream[6:]}" for ev in events if ev.stream.startswith("chips:")}
        wanted |= _penalty_streams(events)  # each player named is asked whether a penalty sent them away
        wanted -= self.heads.keys()
        found = self.store.heads(sorted(wanted), packed=True)
        for stream in wanted:
            head = found.get(stream)
            if head is not None:
                head.stream = stream  # one string for the key and the head
            self.heads[stream] = head

    def head(self, stream: str) -> Any:
        """The stream's last event as the run knows it (``SignedEvent`` or ``PackedEvent``:
        read both alike), or None."""
        if stream not in self.heads:
            self.heads[stream] = self.store.head(stream)
        return self.heads[stream]

    def event_at(self, stream: str, seq: int) -> Any:
        h = self.heads.get(stream)
        while isinstance(h, PackedEvent) and h.seq >= seq:
            if h.seq == seq:
                return h
            h = h.before
        return self.store.event_at(stream, seq)

    def cited(self, ref: str) -> Any:
        """The event a ``stream#seq`` reference names, if the ledger (or the run) has it."""
        stream, seq = parse_ref(ref)
        return self.event_at(stream, seq)

    def check_scope(self, ev: SignedEvent, entry: KeyEntry) -> None:
        """Stage "scope" of ingest (``ledger.scope``): the key may write where ``ev`` is
        written; a round event is at its round's table, as its accepted round.open says."""
        if entry.scope == ("*",):
            return
        round_table = None
        if ev.stream.startswith("round:") and ev.kind != "round.open.v1":
            rs = self.state(ev.stream, before=ev.seq)
            round_table = getattr(rs, "table", None) or ""
        place = place_of(ev.stream, ev.payload, round_table)
        if covers(entry.scope, place):
            return
        where = ("a venue-level stream" if place is None else
                 f"round {ev.stream} of an unknown table (no accepted round.open)" if place == "table:" else place)
        raise EventError("scope", f"key {entry.key_id} ({entry.role}) may write only at {describe(entry.scope)};"
                                  f" {ev.kind} on {ev.stream} is at {where}")

    def role_of(self, ev: SignedEvent) -> str:
        return self.ring.keys[ev.key_id].role

    def state(self, stream: str, before: int | None = None) -> Any:
        """The stream's state as its judge keeps it, as of the accepted events: folded from
        the stored events the run has seen (those before ``before``, the seq being judged,
        or up to the stream's head as the run knows it), then kept."""
        if stream not in self.states:
            judge = judge_of(stream)
            if before is None and stream in self.heads:
                head = self.heads[stream]
                before = head.seq + 1 if head is not None else 1
            if judge is None or not judge.keeps_state or before == 1:
                return None  # nothing to fold: no query (a new round, a deposit, a stateless stream)
            stored = self.store.stream_events(stream)
            self.states[stream] = fold(stream, (e for e in stored if before is None or e.seq < before), self)
        return self.states[stream]

    def shoe_tally(self, source: str) -> Any:
        """The cards dealt from live shoe ``source`` since its last load
        (``ledger.judges.shoe.Tally``), or None when it is not a loaded shoe: built from
        the store on first use, then kept (``RoundJudge.settle`` advances it)."""
        if source in self.tallies:
            return self.tallies[source]
        eq = self.state(source)
        if not source.startswith("shoe:") or eq is None or eq.stage not in ("loaded", "last-hand"):
            return None
        from ledger.judges.round import dealt_cards
        from ledger.judges.shoe import Tally

        tally = Tally(eq.decks, eq.cut_from_back)
        loads = [r.notification_id for r in self.store.stream_rows(source) if r.kind == "shoe.load.v1"]
        for row in self.store.rows_of_kind_after("round.open.v1", loads[-1] if loads else 0):
            opening = event_from_stored(row.state)
            if opening.payload.get("source") == source:
                tally.add(opening.stream, dealt_cards(self.store.stream_events(opening.stream), self.store.event_at))
        self.tallies[source] = tally
        return tally

    def hands_at(self, player: str, table: str) -> int:
        """The hands ``player`` was dealt in at ``table`` (rounds whose ``round.open`` names
        the player) since their latest ``seat.join`` there, counted from the ledger: from
        the store on first use, then advanced by the rounds ingest accepts."""
        key = (player, table)
        if key not in self.hands:
            joins = [r.notification_id for r in self.store.stream_rows(f"seat:{player}")
                     if r.kind == "seat.join.v1" and event_from_stored(r.state).payload["table"] == table]
            count = 0
            if joins:
                for row in self.store.rows_of_kind_after("round.open.v1", joins[-1]):
                    p = event_from_stored(row.state).payload
                    count += p["table"] == table and player in (p["rules"].get("players") or ())
            self.hands[key] = count
        return self.hands[key]

    def new_book(self, ts: Any) -> Any:
        """An empty book for the open table whose state is ``ts`` (``TableState``), or None."""
        from ledger.games import ENGINES

        engine = ENGINES.get(ts.opening.payload["game"]) if ts is not None and ts.open else None
        if engine is None:
            return None
        book = engine.table_book(ts.opening.payload["seats"], ts.opening.payload.get("config"))
        if book is not None:  # a table the floor configured when opening it; its rounds use the latest
            book.configure(ts.config)
        return book

    BOOK_KINDS = ("seat.join.v1", "seat.leave.v1", "seat.sit_out.v1", "seat.return.v1", "chips.buy_in.v1",
                  "chips.cash_out.v1", "round.open.v1", "round.close.v1")

    def table_book(self, table: str) -> Any:
        """The book of ``table`` (``Engine.table_book``) as of the accepted events, or None:
        on first use, the table's events since its latest stored ``table.open`` are read
        from the store in log order (seats, chips, and each hand: its opening, and at its
        close the stacks its engine derives), then kept; the judges advance it."""
        if table in self.books:
            return self.books[table]
        ts = self.state(f"table:{table}")
        book = self.new_book(ts)
        self.books[table] = book
        if book is None:
            return None
        opens = [r.notification_id for r in self.store.stream_rows(f"table:{table}") if r.kind == "table.open.v1"]
        if not opens:
            return book
        from ledger.judges.round import walk

        def final(stream: str) -> dict[str, int]:
            rs, _ = walk(self.store.stream_events(stream), self.store.event_at)
            return rs.engine.final_chips(rs.st) if rs is not None and rs.engine is not None else {}

        for row in self.store.rows_of_kinds(self.BOOK_KINDS, opens[-1]):
            ev = event_from_stored(row.state)
            at_table = (row.stream == f"chips:{table}" if row.kind.startswith("chips.") else
                        row.stream == book.hand if row.kind == "round.close.v1" else ev.payload["table"] == table)
            if at_table:
                self._feed(book, ev, lambda: final(row.stream))
        return book

    def advance_book(self, table: str, ev: SignedEvent, final: Callable[[], dict[str, int]] | None = None) -> None:
        """At ingest: an accepted event of ``table`` advances its book, if it keeps one
        (``final()``: a closing hand's final stacks, from its engine)."""
        book = self.table_book(table)
        if book is not None:
            self._feed(book, ev, final)

    def _feed(self, book: Any, ev: SignedEvent, final: Callable[[], dict[str, int]] | None) -> None:
        """One event of the book's table advances it, alike at ingest and when the book is
        rebuilt from the store: seats, chips issued and redeemed, a hand dealt (not an
        imported one), a hand over (void: as it started)."""
        kind, p = ev.kind, ev.payload
        if kind.startswith("seat."):
            book.seat(kind, ev.stream.partition(":")[2], p)
        elif kind in ("chips.buy_in.v1", "chips.cash_out.v1"):
            book.chips(kind, p["player"], p["amount"])
        elif kind == "round.open.v1":
            if self.role_of(ev) != "importer":
                book.open_hand(ev.stream, p["rules"])
        elif kind == "round.close.v1" and ev.stream == book.hand:
            book.close_hand(ev.stream, final() if p["status"] == "complete" and final is not None else None)

    def accept(self, ev: PackedEvent) -> None:
        """The chain holds: ``ev`` is the stream's new head (judged after, on its merits)."""
        prior = self.heads.get(ev.stream)
        ev.before = prior if isinstance(prior, PackedEvent) else None
        self.heads[ev.stream] = ev

    def judge(self, ev: SignedEvent) -> None:
        """The judge of the event's stream type admits it and advances the stream's state,
        or raises EventError naming the rule."""
        judge = judge_of(ev.stream)
        if judge is None:
            return
        before = self.state(ev.stream, before=ev.seq)
        judge.admit(before, ev, self)
        state = judge.step(before, ev, self)
        judge.settle(before, state, ev, self)
        if judge.keeps_state:  # a stateless judge's streams take no room (a long run touches many accounts)
            self.states[ev.stream] = state

    def forget_stored(self) -> None:
        """After a batch is stored: its events are in the store. A stream whose judge keeps
        state keeps its state and its head (the head is what the state was advanced to: if
        another writer appends to the stream meanwhile, the next event's chain check
        refuses it against that head and the session starts afresh, never judging against
        a stale state); every other head goes (the next batch reads those it needs again,
        in a few queries: ``prefetch``), so a long run holds no event of a stored batch but
        the last of each open stateful stream. A closed round's state goes too: it would
        only be read again to refuse an event."""
        for stream, h in list(self.heads.items()):
            if h is not None and h.kind == "round.close.v1":
                self.states.pop(stream, None)
            if stream not in self.states:
                del self.heads[stream]
            elif isinstance(h, PackedEvent):
                h.before = None  # the run's earlier events of the stream are in the store now


def _register_all() -> None:
    """Import every judge module in this package: each registers its judge and kinds."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_register_all()

__all__ = ["JUDGES", "BaseJudge", "World", "fold", "judge_of", "register_judge"]

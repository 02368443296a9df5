"""A table as it stood at a moment (issue #5 point 2): ``pitboss table TABLE_ID [--at T|--seq N]``.

Read from the ledger in notification order up to the moment: ``--at`` a UTC time (every
event recorded at or before it), ``--seq`` the table stream's own seq (everything stored
up to that event). The state: open or closed, game, dealing procedure, currency; the
equipment (shoe, wheel, dice) the table's rounds were dealt from and where it stood
(inspected, shuffled, cut, loaded, last hand); the round in progress with its engine
snapshot (seats, stacks, button, cards, who is to act, for poker); and the rounds
closed so far.
"""

from __future__ import annotations

from typing import Any

from ledger.events import EventError
from ledger.games import described
from ledger.judges import JUDGES, World
from ledger.judges.equipment import EQUIPMENT_TYPES, Equipment
from ledger.judges.round import RoundState
from ledger.keyring import load_keyring
from ledger.store import Store
from ledger.timeutil import parse_utc
from ledger.verify import RowJudge
from projections.money import show


class TableStateError(Exception):
    pass


def table_state(store: Store, table: str, at: str | None = None, seq: int | None = None) -> dict[str, Any]:
    stream = f"table:{table}"
    head = store.head(stream)
    if head is None:
        raise TableStateError(f"no table {table} in the ledger")
    if seq is not None and seq > head.seq:
        raise TableStateError(f"{stream} has {head.seq} events: there is no seq {seq}")
    until = parse_utc(at) if at is not None else None
    world = World(store, load_keyring(store))  # the judges' own step reads each stream (ledger.judges)
    state: dict[str, Any] = {"table": table, "open": False, "game": None, "dealing": None, "currency": None,
                             "as_of": at or (f"{stream} seq {seq}" if seq else "now")}
    rounds: dict[str, RoundState] = {}
    closed: list[dict[str, Any]] = []
    equipment: dict[str, Equipment] = {}
    problems: list[str] = []
    stop_after_row: int | None = None
    judge = RowJudge(store)  # a row that fails its own checks counts for nothing (issue 14 point 3)
    for row in store.rows():
        if stop_after_row is not None and row.notification_id > stop_after_row:
            break
        ev = judge.event(*row)
        if ev is None:
            problems.append(f"not counted (its own checks fail): {judge.refused[-1][1]}")
            continue
        if until is not None and parse_utc(ev.at) > until:  # by instant: one time has several spellings
            continue
        if ev.stream == stream:
            if ev.kind == "table.open.v1":
                state.update(open=True, game=ev.payload["game"], dealing=ev.payload.get("dealing"),
                             currency=ev.payload["currency"], opened_at=ev.at, seats=ev.payload["seats"],
                             config=ev.payload.get("config"))
            elif ev.kind == "table.config.v1":
                state.update(config=ev.payload["config"], configured_at=ev.at)
            elif ev.kind == "table.close.v1":
                state.update(open=False, closed_at=ev.at)
            if seq is not None and ev.seq == seq:
                stop_after_row = row.notification_id
            continue
        stype = ev.stream.split(":", 1)[0]
        if stype in EQUIPMENT_TYPES and (ev.payload.get("table") == table or ev.stream in equipment):
            try:
                equipment[ev.stream] = JUDGES[stype].step(equipment.get(ev.stream), ev, world)
            except (EventError, KeyError) as exc:
                problems.append(f"{ev.stream} seq {ev.seq}: {exc}")
            continue
        if stype != "round":
            continue
        if ev.kind == "round.open.v1":
            if ev.payload["table"] != table:
                continue
            rounds[ev.stream] = JUDGES["round"].step(None, ev, world)
            continue
        if ev.stream not in rounds:
            continue
        rs = rounds[ev.stream]
        if ev.kind == "round.close.v1":
            closed.append({"round": ev.stream, "status": ev.payload["status"], "closed_at": ev.at})
            del rounds[ev.stream]
            continue
        try:
            rounds[ev.stream] = JUDGES["round"].step(rs, ev, world)
        except EventError as exc:
            problems.append(f"{ev.stream} seq {ev.seq}: {exc.reason}")
    state["equipment"] = [{"stream": e.stream, "stage": e.stage, "inspected_by": sorted(e.inspected_by),
                           "defective": e.defective, "last_hand_round": e.last_round} for e in equipment.values()]
    cur = state["currency"] or "?"
    state["open_rounds"] = [{"round": s, "game": r.game,
                             "state": r.engine.snapshot(r.st) if r.engine is not None else None,
                             "text": described(r.engine, r.st, lambda n: show(n, cur)) if r.engine is not None else []}
                            for s, r in rounds.items()]
    state["rounds_closed"] = len(closed)
    state["last_rounds"] = closed[-5:]
    state["problems"] = problems
    return state

"""Penalties, the table-leaving policy and tournament table moves (issue #6; rules in
ledger/penalties.py and ledger/tournaments.py), on SQLite and PostgreSQL; refusals leave
the store as it was."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.house import create_key
from ledger.importers.phh import hand_events
from ledger.judges.tournament import finishing_order, fold
from ledger.producer import BatchBuilder
from tests.helpers import EVERY_TABLE, refused, stored

pytestmark = pytest.mark.usefixtures("past_dated")  # nights on fixed dates (tests/conftest.py)

DAY = "2026-11-20"
SINCE = "2026-11-01T00:00:00Z"


class Floor:
    def __init__(self, ledger: Any) -> None:
        self.ledger = ledger
        self.floor = create_key(ledger.store, ledger.keys, "floor:pen", "floor", valid_from=SINCE)
        self.dealer = create_key(ledger.store, ledger.keys, "dealer:pen", "dealer", valid_from=SINCE, scope=EVERY_TABLE)
        self.game = create_key(ledger.store, ledger.keys, "game:pen", "game", valid_from=SINCE, scope=EVERY_TABLE)
        self.cage = create_key(ledger.store, ledger.keys, "cage:pen", "cage", valid_from=SINCE)

    def batch(self, at: str = f"{DAY}T20:00:00Z") -> BatchBuilder:
        return BatchBuilder.for_store(self.ledger.store, clock=lambda: at)

    def stored(self, b: BatchBuilder) -> None:
        stored(self.ledger.store, b)

    def refused(self, b: BatchBuilder) -> str:
        return refused(self.ledger.store, b)

    def evidence(self, b: BatchBuilder) -> str:
        """An event for penalties to act on: the player's seat at the table."""
        b.add(self.game, "seat:ANN", "seat.join.v1", {"table": "PK", "blind_level": "50/100"})
        return "seat:ANN#1"

    def penalty(self, b: BatchBuilder, offence: str, rule: str, acts_on: str, signer: Any = None, **extra: Any
                ) -> None:
        b.add(signer or self.floor, "penalty:ANN", "penalty.v1",
              {"offence": offence, "rule": rule, "acts_on": [acts_on], "reason": offence, **extra})


def test_a_warning_is_recorded_TDA_58_B(ledger) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch()
    f.penalty(b, "warning", "002 TDA 58 B", f.evidence(b))
    f.stored(b)


def test_a_penalty_signed_by_a_dealer_key_is_refused(ledger) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch()
    f.penalty(b, "warning", "002 TDA 58 B", f.evidence(b), signer=f.dealer)
    assert "penalty.v1" in f.refused(b)


@pytest.mark.parametrize("players, rounds, hands, ok", [
    (9, 1, 9, True),  # one round at a full table: a hand for each of the nine players
    (6, 2, 12, True),
    (9, 0, 1, True),  # the one-hand penalty
    (9, 1, 8, False),
    (6, 3, 6, False),
])
def test_missed_hand_penalties_scale_with_the_players_at_the_table_TDA_58_B(ledger, players: int, rounds: int,
                                                                             hands: int, ok: bool) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch()
    f.penalty(b, "missed_hands", "002 TDA 58 B", f.evidence(b), players_at_table=players, rounds=rounds, hands=hands)
    if ok:
        f.stored(b)
    else:
        assert "TDA 2013 rule 58 B" in f.refused(b)


@pytest.mark.parametrize("offence, amount", [("exposure", 1_000), ("interference", 5_000)])
def test_exposure_and_interference_fines_001(ledger, offence: str, amount: int) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch()
    f.penalty(b, offence, "001 fouls", f.evidence(b), amount=amount - 1, currency="PTS", table="PK")
    assert f"{amount} points" in f.refused(b)
    b = f.batch()
    f.penalty(b, offence, "001 fouls", f.evidence(b), amount=amount, currency="PTS", table="PK")
    b.add(f.game, "seat:ANN", "seat.leave.v1", {"table": "PK", "blind_level": "50/100", "hands_played": 0,
                                                "others_seated": 5})  # forced to leave
    f.stored(b)
    b = f.batch(f"{DAY}T23:00:00Z")
    b.add(f.game, "seat:ANN", "seat.join.v1", {"table": "PK", "blind_level": "50/100"})
    assert "forced to leave PK" in f.refused(b)
    b = f.batch(f"{DAY}T23:00:00Z")
    b.add(f.game, "seat:ANN", "seat.join.v1", {"table": "PK2", "blind_level": "50/100"})
    f.stored(b)  # another table is fine
    res = CliRunner().invoke(main, ledger.cli_args() + ["balances", "ANN", "--json"])
    (ann,) = json.loads(res.stdout)["accounts"]
    assert ann["penalties"] == amount and ann["balance"] == -amount  # to the house, not the pot


def test_disqualification_removes_the_player_and_their_chips_TDA_58_D(ledger) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch()
    t = "tournament:T"
    b.add(f.game, t, "tournament.open.v1", {"currency": "EUR", "buy_in": 1_000, "fee": 100, "starting_chips": 5_000,
                                            "payouts_bp": [7_000, 3_000]})
    for p in ["ANN", "BOB", "CAT"]:
        b.add(f.cage, t, "tournament.register.v1", {"player": p, "entry": "register"})
    b.add(f.game, t, "tournament.start.v1", {"seating": [{"player": p, "table": 1, "seat": k + 1}
                                                         for k, p in enumerate(["ANN", "BOB", "CAT"])]})
    f.stored(b)
    b = f.batch()
    b.add(f.floor, t, "tournament.disqualify.v1", {"player": "ANN", "penalty": "penalty:ANN#1"})
    assert "not a disqualification" in f.refused(b)  # no such penalty yet
    b = f.batch()
    f.penalty(b, "disqualification", "002 TDA 58 D", f"{t}#5", tournament="T")
    b.add(f.floor, t, "tournament.disqualify.v1", {"player": "ANN", "penalty": "penalty:ANN#1"})
    b.add(f.game, t, "tournament.eliminate.v1", {"hand": "h1", "busted": [{"player": "CAT", "start_stack": 4_000,
                                                                           "seat_from_button": 1}], "won_by": ["BOB"]})
    b.add(f.game, t, "tournament.finish.v1", {"paid": {"BOB": 2_100, "CAT": 900}})
    f.stored(b)
    state = fold(t, ledger.store.stream_events(t))
    assert finishing_order(state) == ["BOB", "CAT"]  # ANN finishes nowhere; her chips left the tournament


# --- 000 leaving-table policy ---------------------------------------------------------------

def _leave(f: Floor, b: BatchBuilder, table: str, hands: int, others: int = 5) -> None:
    """ANN plays ``hands`` hands at ``table`` against ZED, then leaves: the ledger counts
    the hands (000 leaving table policy; issue 15 point 5)."""
    for n in range(hands):
        hand = {"variant": "NT", "antes": [0, 0], "blinds_or_straddles": [50, 100], "min_bet": 100,
                "starting_stacks": [10_000, 10_000], "players": ["ANN", "ZED"],
                "actions": ["d dh p1 ????", "d dh p2 ????", "p2 f"]}
        rules, events, _ = hand_events(hand)
        rid = f"round:{table}-{len(b.events)}-{n}"
        b.add(f.game, rid, "round.open.v1", {"table": table, "game": "poker", "rules": rules})
        for kind, payload in events:
            b.add(f.game, rid, kind, payload)
        b.add(f.game, rid, "round.close.v1", {"status": "complete"})
    b.add(f.game, "seat:ANN", "seat.leave.v1", {"table": table, "blind_level": "50/100", "hands_played": hands,
                                                "others_seated": others})


def _join(f: Floor, b: BatchBuilder, table: str) -> None:
    """ANN sits down at ``table`` (opened for poker, ZED seated there, the first time)."""
    head = f.ledger.store.head(f"table:{table}")
    if head is None and not any(ev.stream == f"table:{table}" for ev in b.events):
        b.add(f.floor, f"table:{table}", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
        b.add(f.game, "seat:ZED", "seat.join.v1", {"table": table, "blind_level": "50/100"})
    b.add(f.game, "seat:ANN", "seat.join.v1", {"table": table, "blind_level": "50/100"})


def test_refusing_to_play_blocks_new_seats_5_15_30_60_minutes_000_leaving_table(ledger) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch(f"{DAY}T10:00:00Z")
    _join(f, b, "A")
    _leave(f, b, "A", 3)  # 1st refusal: no penalty
    _join(f, b, "B")
    _leave(f, b, "B", 2)  # 2nd refusal at 10:00: 5 minutes
    f.stored(b)
    b = f.batch(f"{DAY}T10:04:00Z")
    _join(f, b, "C")
    reason = f.refused(b)
    assert "until 2026-11-20T10:05:00" in reason and "refusal 2" in reason and "5-minute block" in reason
    b = f.batch(f"{DAY}T10:06:00Z")
    _join(f, b, "C")
    _leave(f, b, "C", 9)  # 3rd refusal: 15 minutes
    f.stored(b)
    b = f.batch(f"{DAY}T10:20:00Z")
    _join(f, b, "D")
    assert "15-minute block" in f.refused(b)
    b = f.batch(f"{DAY}T10:21:00Z")
    _join(f, b, "D")
    f.stored(b)


def test_leaving_after_ten_hands_or_from_an_empty_table_is_no_refusal_000(ledger) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch(f"{DAY}T10:00:00Z")
    for k, (hands, others) in enumerate([(10, 5), (3, 0), (0, 5), (12, 1)]):
        _join(f, b, f"T{k}")
        _leave(f, b, f"T{k}", hands, others)
    _join(f, b, "LAST")
    f.stored(b)


def test_refusals_older_than_12_hours_do_not_count_000(ledger) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch(f"{DAY}T00:00:00Z")
    for t in ("A", "B"):
        _join(f, b, t)
        _leave(f, b, t, 1)
    f.stored(b)
    b = f.batch(f"{DAY}T12:00:01Z")
    _join(f, b, "C")
    f.stored(b)


# --- tournament table moves ---------------------------------------------------------------

def _tournament(f: Floor, b: BatchBuilder, players: int = 12) -> list[str]:
    names = [f"N{k:02d}" for k in range(players)]
    b.add(f.game, "tournament:M", "tournament.open.v1", {"currency": "EUR", "buy_in": 1_000, "fee": 100,
                                                          "starting_chips": 5_000, "payouts_bp": [10_000]})
    for p in names:
        b.add(f.cage, "tournament:M", "tournament.register.v1", {"player": p, "entry": "register"})
    b.add(f.game, "tournament:M", "tournament.start.v1", {"seating": [
        {"player": p, "table": 1 + k // 6, "seat": 1 + k % 6} for k, p in enumerate(names)]})
    return names


def test_balancing_moves_must_leave_no_table_three_short_TDA(ledger) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch()
    names = _tournament(f, b)
    for k, p in enumerate(names[:3]):  # three knocked out at table 1: 3 against 6
        b.add(f.game, "tournament:M", "tournament.eliminate.v1", {
            "hand": f"h{k}", "busted": [{"player": p, "start_stack": 100, "seat_from_button": 1}], "won_by": [names[3]]})
    f.stored(b)
    b = f.batch()
    b.add(f.game, "tournament:M", "tournament.move.v1", {"reason": "balance", "moves": [
        {"player": names[6], "table": 1, "seat": 1}]})
    f.stored(b)  # 4 against 5
    b = f.batch()
    b.add(f.game, "tournament:M", "tournament.move.v1", {"reason": "balance", "moves": [
        {"player": names[3], "table": 2, "seat": 1}, {"player": names[4], "table": 2, "seat": 7}]})
    assert "three or more short of the fullest" in f.refused(b)  # 2 against 7


def test_a_table_break_empties_a_table_and_seats_are_not_shared(ledger) -> None:  # type: ignore[no-untyped-def]
    f = Floor(ledger)
    b = f.batch()
    names = _tournament(f, b, players=8)  # 6 at table 1, 2 at table 2
    f.stored(b)
    b = f.batch()
    b.add(f.game, "tournament:M", "tournament.move.v1", {"reason": "break", "moves": [
        {"player": names[6], "table": 1, "seat": 1}, {"player": names[7], "table": 1, "seat": 8}]})
    assert "share a seat" in f.refused(b)
    b = f.batch()
    b.add(f.game, "tournament:M", "tournament.move.v1", {"reason": "break", "moves": [
        {"player": names[6], "table": 1, "seat": 7}, {"player": names[7], "table": 1, "seat": 8}]})
    f.stored(b)

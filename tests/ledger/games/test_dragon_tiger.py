"""Dragon Tiger (ledger/games/dragon_tiger.py): the commonly published rules (000 names the
game among its live casino games without its rules), on the engine, through ingest from a
live shoe on SQLite and PostgreSQL, and its exact house edge."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games import ENGINES, RuleViolation, play_events
from ledger.games.dragon_tiger import house_edge, payout
from ledger.house import create_key
from ledger.producer import BatchBuilder
from projections.money import round_money
from tests.helpers import EVERY_TABLE, refused, stored

DT = ENGINES["dragon-tiger"]
VIDEO = {"camera": "cam-dt", "start": "2026-11-22T10:00:00Z", "end": "2026-11-22T10:01:00Z", "sha256": "cd" * 32}


def coup(dragon: str, tiger: str, bets: list[tuple[str, str, int]], rules: dict[str, Any] | None = None
         ) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = [("dragon_tiger.bet.v1", {"player": p, "spot": s, "amount": a})
                                                for p, s, a in bets]
    events += [("dragon_tiger.no_more_bets.v1", {}), ("dragon_tiger.card.v1", {"hand": "dragon", "card": dragon}),
               ("dragon_tiger.card.v1", {"hand": "tiger", "card": tiger})]
    st = play_events(DT, rules or {}, events)
    for row in DT.outcome(st)["settlements"]:
        events.append(("dragon_tiger.settle.v1", {"bet": row["bet"], "outcome": row["outcome"], "paid": row["paid"]}))
    return events


def test_published_rules_higher_card_wins_even_money_ace_low_suits_ignored() -> None:
    st = play_events(DT, {}, coup("Kc", "As", [("P1", "dragon", 1000), ("P2", "tiger", 500), ("P3", "tie", 100)]))
    out = DT.outcome(st)
    assert out["winner"] == "dragon" and DT.close_problem(st) is None
    assert [(r["outcome"], r["paid"]) for r in out["settlements"]] == [("win", 2000), ("lose", 0), ("lose", 0)]
    money = round_money("dragon-tiger", out, "complete")
    assert money.nets == {"P1": 1000, "P2": -500, "P3": -100} and money.house_net == -400
    assert sum(money.nets.values()) + money.house_net == 0  # conservation
    assert DT.outcome(play_events(DT, {}, coup("7h", "7s", [])))["winner"] == "tie"  # suits do not count


def test_tie_pays_as_configured_and_dragon_tiger_lose_by_default_or_half_as_house_option() -> None:
    bets = [("P1", "dragon", 1001), ("P2", "tie", 100)]
    lose = DT.outcome(play_events(DT, {}, coup("9d", "9c", bets)))["settlements"]
    assert [(r["outcome"], r["paid"]) for r in lose] == [("lose", 0), ("win", 900)]
    half = DT.outcome(play_events(DT, {"tie_dragon_tiger": "half", "tie_pays": 11},
                                  coup("9d", "9c", bets, {"tie_dragon_tiger": "half", "tie_pays": 11})))
    # half of 1,001 lost, rounded down for the house: the player keeps the odd unit
    assert [(r["outcome"], r["paid"]) for r in half["settlements"]] == [("half", 501), ("win", 1200)]


@pytest.mark.parametrize("events, reason", [
    ([("dragon_tiger.no_more_bets.v1", {}), ("dragon_tiger.bet.v1", {"player": "P", "spot": "tie", "amount": 5})],
     "bet after 'no more bets'"),
    ([("dragon_tiger.card.v1", {"hand": "dragon", "card": "2c"})], "before 'no more bets'"),
    ([("dragon_tiger.no_more_bets.v1", {}), ("dragon_tiger.card.v1", {"hand": "tiger", "card": "2c"})],
     "goes to the dragon"),
    ([("dragon_tiger.no_more_bets.v1", {}), ("dragon_tiger.card.v1", {"hand": "dragon", "card": "2c"}),
      ("dragon_tiger.card.v1", {"hand": "tiger", "card": "3c"}), ("dragon_tiger.card.v1", {"hand": "tiger",
                                                                                           "card": "4c"})],
     "no further card"),
    ([("dragon_tiger.bet.v1", {"player": "P", "spot": "dragon", "amount": 10}), ("dragon_tiger.no_more_bets.v1", {}),
      ("dragon_tiger.card.v1", {"hand": "dragon", "card": "2c"}), ("dragon_tiger.card.v1", {"hand": "tiger",
                                                                                            "card": "3c"}),
      ("dragon_tiger.settle.v1", {"bet": 1, "outcome": "win", "paid": 20})], "wrong settlement of bet 1"),
])
def test_illegal_events_are_refused_with_the_rule(events: list[tuple[str, dict[str, Any]]], reason: str) -> None:
    with pytest.raises(RuleViolation, match=reason):
        play_events(DT, {}, events)


def test_exact_house_edge_for_eight_decks() -> None:
    tie = Fraction(13 * 32 * 31, 416 * 415)  # both cards of one rank, from 416
    edges = house_edge()
    assert edges["dragon"]["edge"] == edges["tiger"]["edge"] == tie  # a tie takes the stake
    assert edges["tie"]["edge"] == 1 - 9 * tie and edges["tie"]["pays"] == 8
    assert house_edge({"tie_dragon_tiger": "half"})["dragon"]["edge"] == tie / 2
    assert payout("tie", 10, "tie", DT.start({"tie_pays": 11}).rules) == ("win", 120)
    res = CliRunner().invoke(main, ["rules", "house-edge", "dragon-tiger", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["game"] == "dragon-tiger" and data["bets"]["dragon"]["edge_exact"] == str(tie)
    assert round(data["bets"]["tie"]["edge"], 6) == 0.327711 and round(data["bets"]["dragon"]["edge"], 6) == 0.074699


def test_dealt_from_an_inspected_cut_and_loaded_shoe_at_a_live_table(ledger) -> None:  # type: ignore[no-untyped-def]
    floor = create_key(ledger.store, ledger.keys, "floor:ana", "floor")
    dealer = create_key(ledger.store, ledger.keys, "dealer:bo", "dealer", scope=EVERY_TABLE)
    b = BatchBuilder.for_store(ledger.store)
    b.add(floor, "table:DT1", "table.open.v1", {"game": "dragon-tiger", "seats": 7, "currency": "EUR",
                                                "dealing": "live"})
    for signer in (dealer, floor):
        b.add(signer, "shoe:DT1", "shoe.inspect.v1", {"table": "DT1", "game": "dragon-tiger", "decks": 8,
                                                      "result": "pass", "video": VIDEO})
    b.add(dealer, "shoe:DT1", "shoe.shuffle.v1", {"video": VIDEO})
    b.add(dealer, "shoe:DT1", "shoe.cut.v1", {"cut_card_from_back": 52, "video": VIDEO})
    stored(ledger.store, b)
    b = BatchBuilder.for_store(ledger.store)
    b.add(dealer, "round:DT1-1", "round.open.v1", {"table": "DT1", "game": "dragon-tiger", "rules": {},
                                                   "source": "shoe:DT1"})
    assert "not loaded" in refused(ledger.store, b)  # the shoe is not loaded yet
    b = BatchBuilder.for_store(ledger.store)
    b.add(dealer, "shoe:DT1", "shoe.load.v1", {"video": VIDEO})
    b.add(dealer, "round:DT1-1", "round.open.v1", {"table": "DT1", "game": "dragon-tiger", "rules": {},
                                                   "source": "shoe:DT1"})
    for kind, payload in coup("Qh", "Jd", [("P1", "tiger", 1000)]):
        b.add(dealer, "round:DT1-1", kind, payload)
    b.add(dealer, "round:DT1-1", "round.close.v1", {"status": "complete"})
    stored(ledger.store, b)
    b = BatchBuilder.for_store(ledger.store)
    b.add(dealer, "round:DT1-2", "round.open.v1", {"table": "DT1", "game": "dragon-tiger", "rules": {},
                                                   "source": "shoe:DT1"})
    events = coup("2c", "3c", [("P1", "dragon", 1000)])
    events[-1] = ("dragon_tiger.settle.v1", {"bet": 1, "outcome": "win", "paid": 2000})
    for kind, payload in events:
        b.add(dealer, "round:DT1-2", kind, payload)
    assert "wrong settlement of bet 1" in refused(ledger.store, b)

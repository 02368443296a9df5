"""Roulette engine and its rules at ingest.

Sources: 000_c28081091adb3e2e.txt live casino IV (European roulette: 1.1 corner 0-1-2-3,
2.1.1 no more bets, 2.1.3 settlement by layout position, 2.2 payouts, 3.1.1 three
revolutions) and 004_9f9b7621214e86da.txt ■ルーレット (American wheel, five-number
bet 7倍 = 6:1, 0-00 split).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from ledger.games import RuleViolation
from ledger.games.roulette import (
    WHEELS,
    RouletteEngine,
    house_edge,
    inside_combinations,
    outside_cover,
    settlement,
)
from ledger.house import create_key
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import ingest, open_table

ENGINE = RouletteEngine()


def test_house_edge_european_is_2_7027_percent_on_every_bet_000_IV_2_2() -> None:
    edges = house_edge("european")
    assert set(edges) == {"straight", "split", "street", "corner", "six_line", "dozen", "column",
                          "red", "black", "odd", "even", "low", "high"}
    for bet, e in edges.items():
        assert e["edge"] == Fraction(1, 37), bet
        assert round(float(e["edge"]) * 100, 4) == 2.7027


def test_house_edge_american_5_2632_percent_five_number_7_8947_percent_004() -> None:
    edges = house_edge("american")
    assert edges["five_number"] == {"pays": 6, "edge": Fraction(3, 38)}
    assert round(float(edges["five_number"]["edge"]) * 100, 4) == 7.8947
    for bet, e in edges.items():
        if bet != "five_number":
            assert e["edge"] == Fraction(2, 38), bet
            assert round(float(e["edge"]) * 100, 4) == 5.2632


def test_every_placement_of_a_bet_type_covers_the_same_count() -> None:
    size = {"straight": 1, "split": 2, "street": 3, "corner": 4, "five_number": 5, "six_line": 6}
    for wheel in WHEELS:
        for bet, combos in inside_combinations(wheel).items():
            assert all(len(c) == size[bet] for c in combos), (wheel, bet)
    assert len(inside_combinations("european")["corner"]) == 22 + 1  # 22 squares + 0-1-2-3 (000 IV 1.1)
    assert len(inside_combinations("european")["split"]) == 57 + 3
    assert len(inside_combinations("european")["six_line"]) == 11


def test_outside_bets_partition_1_to_36_and_lose_on_zeros_004_J_K_L() -> None:
    for group in (("red", "black"), ("odd", "even"), ("low", "high"),
                  ("dozen_1", "dozen_2", "dozen_3"), ("column_1", "column_2", "column_3")):
        covers = [outside_cover(b) for b in group]
        assert sum(len(c) for c in covers) == 36
        assert frozenset().union(*covers) == frozenset(str(n) for n in range(1, 37))
        assert all("0" not in c and "00" not in c for c in covers)


def _round(wheel: str = "european"):  # type: ignore[no-untyped-def]
    return ENGINE.start({"wheel": wheel})


def test_engine_settles_each_bet_type_by_the_paytable() -> None:
    st = _round("american")
    bets = [("straight", ["00"], 10), ("split", ["0", "00"], 10), ("street", ["1", "2", "3"], 10),
            ("corner", ["1", "2", "4", "5"], 10), ("five_number", ["0", "00", "1", "2", "3"], 10),
            ("six_line", ["1", "2", "3", "4", "5", "6"], 10), ("dozen_1", [], 10), ("red", [], 10)]
    for bet, pockets, amount in bets:
        st = ENGINE.apply(st, "roulette.bet.v1", {"player": "p", "bet": bet, "pockets": pockets, "amount": amount})
    st = ENGINE.apply(st, "roulette.no_more_bets.v1", {})
    st = ENGINE.apply(st, "roulette.result.v1", {"pocket": "00", "revolutions": 5})
    got = [settlement(st, i) for i in range(1, len(bets) + 1)]
    assert got == [("win", 360), ("win", 180), ("lose", 0), ("lose", 0), ("win", 70), ("lose", 0),
                   ("lose", 0), ("lose", 0)]


@pytest.mark.parametrize("bet,pockets,wheel", [
    ("split", ["1", "5"], "european"), ("street", ["2", "3", "4"], "european"),
    ("corner", ["3", "4", "6", "7"], "european"), ("five_number", ["0", "1", "2", "3", "4"], "european"),
    ("straight", ["00"], "european"), ("split", ["1", "1"], "european"), ("red", ["1"], "european"),
])
def test_bets_that_are_not_on_the_layout_are_refused(bet: str, pockets: list[str], wheel: str) -> None:
    with pytest.raises(RuleViolation):
        ENGINE.apply(_round(wheel), "roulette.bet.v1", {"player": "p", "bet": bet, "pockets": pockets, "amount": 1})


def test_bet_after_no_more_bets_is_refused_000_IV_2_1_1() -> None:
    st = ENGINE.apply(_round(), "roulette.no_more_bets.v1", {})
    with pytest.raises(RuleViolation, match="no more bets"):
        ENGINE.apply(st, "roulette.bet.v1", {"player": "p", "bet": "red", "pockets": [], "amount": 1})


def test_spin_of_fewer_than_three_revolutions_is_invalid_000_IV_3_1_1() -> None:
    st = ENGINE.apply(_round(), "roulette.no_more_bets.v1", {})
    with pytest.raises(RuleViolation, match="at least 3"):
        ENGINE.apply(st, "roulette.result.v1", {"pocket": "7", "revolutions": 2})


def test_settlement_matches_exhaustively_on_every_pocket() -> None:
    """Every bet type against every pocket of both wheels: the engine pays pays+1 on a cover."""
    for wheel in WHEELS:
        combos = inside_combinations(wheel)
        placements = [(b, sorted(c)) for b in combos for c in itertools.islice(iter(combos[b]), 3)]
        placements += [(b, []) for b in ("dozen_2", "column_3", "black", "odd", "even", "low", "high")]
        for pocket in WHEELS[wheel]:
            st = _round(wheel)
            for bet, pockets in placements:
                st = ENGINE.apply(st, "roulette.bet.v1", {"player": "p", "bet": bet, "pockets": pockets, "amount": 3})
            st = ENGINE.apply(ENGINE.apply(st, "roulette.no_more_bets.v1", {}), "roulette.result.v1",
                              {"pocket": pocket, "revolutions": 4})
            for i, w in enumerate(st.wagers, start=1):
                expected = 3 * (st.pays_for(w.bet) + 1) if pocket in w.covers else 0
                assert settlement(st, i)[1] == expected


# --- at ingest, on SQLite and PostgreSQL ----------------------------------------------

@pytest.fixture
def wheel_table(ledger):  # type: ignore[no-untyped-def]
    return open_table(ledger, "R1", "roulette")


def _spin(ledger, dealer, pocket: str = "17", paid_straight: int = 3600, rid: str = "round:R1-1"):  # type: ignore[no-untyped-def]
    b = BatchBuilder.for_store(ledger.store)
    b.add(dealer, rid, "round.open.v1", {"table": "R1", "game": "roulette", "rules": {"wheel": "european"}})
    b.add(dealer, rid, "roulette.bet.v1", {"player": "P1", "bet": "straight", "pockets": ["17"], "amount": 100})
    b.add(dealer, rid, "roulette.bet.v1", {"player": "P2", "bet": "red", "pockets": [], "amount": 500})
    b.add(dealer, rid, "roulette.no_more_bets.v1", {})
    b.add(dealer, rid, "roulette.result.v1", {"pocket": pocket, "revolutions": 6})
    b.add(dealer, rid, "roulette.settle.v1", {"bet": 1, "outcome": "win" if paid_straight else "lose", "paid": paid_straight})
    b.add(dealer, rid, "roulette.settle.v1", {"bet": 2, "outcome": "lose", "paid": 0})  # 17 is black
    b.add(dealer, rid, "round.close.v1", {"status": "complete"})
    return b


def test_a_full_round_is_stored(ledger, wheel_table) -> None:  # type: ignore[no-untyped-def]
    report = ingest(ledger.store, _spin(ledger, wheel_table).lines())
    assert report.status == "stored", [str(r) for r in report.rejections]


def test_wrong_payout_is_refused_and_nothing_stored(ledger, wheel_table) -> None:  # type: ignore[no-untyped-def]
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, _spin(ledger, wheel_table, paid_straight=3500).lines())
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    r = report.rejections[0]
    assert (r.check, r.seq) == ("rule", 6)
    assert "the engine pays win 3600, the event says win 3500" in r.reason


def test_settlement_without_result_is_refused(ledger, wheel_table) -> None:  # type: ignore[no-untyped-def]
    b = BatchBuilder.for_store(ledger.store)
    rid = "round:R1-2"
    b.add(wheel_table, rid, "round.open.v1", {"table": "R1", "game": "roulette", "rules": {"wheel": "european"}})
    b.add(wheel_table, rid, "roulette.bet.v1", {"player": "P1", "bet": "even", "pockets": [], "amount": 10})
    b.add(wheel_table, rid, "roulette.settle.v1", {"bet": 1, "outcome": "lose", "paid": 0})
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and "settlement without a result" in report.rejections[0].reason
    assert dump_rows(ledger.store) == before


def test_bet_after_no_more_bets_is_refused_and_nothing_stored_000_IV_2_1_1(ledger, wheel_table) -> None:  # type: ignore[no-untyped-def]
    b = BatchBuilder.for_store(ledger.store)
    rid = "round:R1-3"
    b.add(wheel_table, rid, "round.open.v1", {"table": "R1", "game": "roulette", "rules": {"wheel": "european"}})
    b.add(wheel_table, rid, "roulette.no_more_bets.v1", {})
    b.add(wheel_table, rid, "roulette.bet.v1", {"player": "P1", "bet": "red", "pockets": [], "amount": 10})
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    assert (report.rejections[0].seq, report.rejections[0].reason) == (3, "bet after 'no more bets' (000 IV 2.1.1)")


def test_round_cannot_close_complete_with_unsettled_bets(ledger, wheel_table) -> None:  # type: ignore[no-untyped-def]
    lines = _spin(ledger, wheel_table).lines()
    del lines[6]  # drop the settlement of bet 2 (the close is then seq 7)
    import json

    from tests.ledger.test_ingest_bad_input import _resign  # re-chain the close after the deletion

    d = json.loads(lines[6])
    d["seq"], d["prev"] = 7, json.loads(lines[5])["hash"]
    lines[6] = _resign(wheel_table, d)
    report = ingest(ledger.store, lines)
    assert report.status == "rejected"
    assert "cannot close complete: bets [2] are not settled" in report.rejections[0].reason


def test_round_spread_over_two_batches_is_judged_from_the_stored_part(ledger, wheel_table) -> None:  # type: ignore[no-untyped-def]
    lines = _spin(ledger, wheel_table).lines()
    assert ingest(ledger.store, lines[:3]).status == "stored"
    assert ingest(ledger.store, lines[3:]).status == "stored"
    b = BatchBuilder.for_store(ledger.store)
    b.add(wheel_table, "round:R1-1", "roulette.bet.v1", {"player": "P3", "bet": "odd", "pockets": [], "amount": 5})
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and "nothing may follow round.close" in report.rejections[0].reason


def test_roulette_events_on_another_game_are_refused(ledger) -> None:  # type: ignore[no-untyped-def]
    dealer = open_table(ledger, "B1", "baccarat", seats=7)
    b = BatchBuilder.for_store(ledger.store)
    b.add(dealer, "round:B1-1", "round.open.v1", {"table": "B1", "game": "baccarat", "rules": {}})
    b.add(dealer, "round:B1-1", "roulette.bet.v1", {"player": "P1", "bet": "red", "pockets": [], "amount": 1})
    report = ingest(ledger.store, b.lines())
    assert report.rejections[0].reason == "roulette.bet.v1 is not an event of a baccarat round"


def test_cage_cannot_record_a_wheel_result(ledger, wheel_table) -> None:  # type: ignore[no-untyped-def]
    cage = create_key(ledger.store, ledger.keys, "cage:main", "cage")
    lines = _spin(ledger, wheel_table).lines()
    assert ingest(ledger.store, lines[:4]).status == "stored"
    b = BatchBuilder.for_store(ledger.store)
    b.add(cage, "round:R1-1", "roulette.result.v1", {"pocket": "1", "revolutions": 5})
    report = ingest(ledger.store, b.lines())
    assert report.rejections[0].check == "role"


def test_cli_house_edge_json_matches_the_published_values() -> None:
    import json

    from click.testing import CliRunner

    from cli.main import main

    res = CliRunner().invoke(main, ["rules", "house-edge", "roulette-american", "--json"])
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["game"] == "roulette-american"
    assert data["bets"]["five_number"]["pays"] == 6 and round(data["bets"]["five_number"]["edge"], 6) == 0.078947
    assert round(data["bets"]["straight"]["edge"], 6) == 0.052632
    missing = CliRunner().invoke(main, ["rules", "house-edge", "craps"])
    assert missing.exit_code == 2 and "no house edge for 'craps'" in missing.stderr


def test_replay_rederives_the_round_and_names_a_changed_payout(ledger, wheel_table) -> None:  # type: ignore[no-untyped-def]
    """Replay walks the stored round through the engine; a payout the engine disagrees
    with (a rules change, or a row rewritten and re-signed by a compromised dealer key)
    is named with its seq and replay exits 1."""
    import json

    from click.testing import CliRunner

    from cli.main import main
    from ledger.events import sign_event
    from tests.conftest import execute_sql

    assert ingest(ledger.store, _spin(ledger, wheel_table).lines()).status == "stored"
    res = CliRunner().invoke(main, ledger.cli_args() + ["replay", "R1-1", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [s["kind"] for s in data["steps"]][:2] == ["round.open.v1", "roulette.bet.v1"]
    assert data["outcome"]["pocket"] == "17"
    assert [(x["bet"], x["outcome"], x["paid"]) for x in data["outcome"]["settlements"]] == [(1, "win", 3600), (2, "lose", 0)]
    assert data["steps"][4]["state"]["betting_open"] is False

    old = ledger.store.event_at("round:R1-1", 6)
    forged = sign_event(wheel_table, ledger=old.ledger, stream=old.stream, seq=6, kind=old.kind,
                        payload={"bet": 1, "outcome": "win", "paid": 36000}, prev=old.prev, at=old.at)
    col = "rowid" if ledger.store.url.backend == "sqlite" else "notification_id"
    nid = next(r.notification_id for r in ledger.store.rows() if (r.stream, r.seq) == ("round:R1-1", 6))
    execute_sql(ledger.store, f"UPDATE {ledger.store.events_table} SET state=? WHERE {col}=?", (forged.encoded(), nid))
    res = CliRunner().invoke(main, ledger.cli_args() + ["replay", "round:R1-1"])
    assert res.exit_code == 1
    flat = " ".join(res.output.split())  # the text wraps long reasons at 100 columns
    assert "DIFFERS at seq 6" in flat and "the engine pays win 3600, the event says win 36000" in flat
    missing = CliRunner().invoke(main, ledger.cli_args() + ["replay", "nope"])
    assert missing.exit_code == 2 and "no round round:nope" in missing.stderr

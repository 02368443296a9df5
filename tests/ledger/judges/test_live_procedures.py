"""Live-dealer procedures (ledger/equipment.py): inspection, shuffle, cut, shoe, cut card,
wheel and dice inspection, from 000_c28081091adb3e2e.txt II 3.1-3.5, III 3.1-3.3, IV 3.2."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.house import create_key
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import EVERY_TABLE, ingest

VIDEO = {"camera": "cam-07", "start": "2026-11-22T10:00:00Z", "end": "2026-11-22T10:04:30Z", "sha256": "ab" * 32}


@pytest.fixture
def live(ledger):  # type: ignore[no-untyped-def]
    keys = {
        "floor": create_key(ledger.store, ledger.keys, "floor:ana", "floor"),
        "dealer": create_key(ledger.store, ledger.keys, "dealer:bo", "dealer", scope=EVERY_TABLE),
        "cage": create_key(ledger.store, ledger.keys, "cage:main", "cage"),
    }
    b = BatchBuilder.for_store(ledger.store)
    for table, game in (("LB", "baccarat"), ("LJ", "blackjack"), ("LR", "roulette"), ("LS", "sicbo")):
        b.add(keys["floor"], f"table:{table}", "table.open.v1",
              {"game": game, "seats": 7, "currency": "EUR", "dealing": "live"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    return keys


def _send(ledger, steps: list[tuple[str, str, str, dict[str, Any]]]):  # type: ignore[no-untyped-def]
    """steps: (signer role, stream, kind, payload), in a fresh batch."""
    b = BatchBuilder.for_store(ledger.store)
    for role, stream, kind, payload in steps:
        b.add(ledger.keyset[role], stream, kind, payload)
    return ingest(ledger.store, b.lines()), b


def _ok(ledger, keys, steps) -> None:  # type: ignore[no-untyped-def]
    ledger.keyset = keys
    report, _ = _send(ledger, steps)
    assert report.status == "stored", report.rejections


def _refused(ledger, keys, steps, reason: str) -> None:  # type: ignore[no-untyped-def]
    ledger.keyset = keys
    before = dump_rows(ledger.store)
    report, _ = _send(ledger, steps)
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    assert any(reason in r.reason for r in report.rejections), report.rejections


def inspect(shoe: str = "shoe:S1", table: str = "LB", game: str = "baccarat", decks: int = 8,
            by: tuple[str, ...] = ("dealer", "floor"), result: str = "pass") -> list[tuple[str, str, str, dict[str, Any]]]:
    return [(role, shoe, "shoe.inspect.v1", {"table": table, "game": game, "decks": decks, "result": result,
                                             "video": VIDEO}) for role in by]


def prepare(shoe: str = "shoe:S1", cut: int = 7) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [("dealer", shoe, "shoe.shuffle.v1", {"video": VIDEO}),
            ("dealer", shoe, "shoe.cut.v1", {"cut_card_from_back": cut, "video": VIDEO}),
            ("dealer", shoe, "shoe.load.v1", {"video": VIDEO})]


def coup(rid: str, source: str | None = "shoe:S1", table: str = "LB", cards: Any = None
         ) -> list[tuple[str, str, str, dict[str, Any]]]:
    opening: dict[str, Any] = {"table": table, "game": "baccarat", "rules": {}}
    if source is not None:
        opening["source"] = source
    out = [("dealer", rid, "round.open.v1", opening)]
    out += [("dealer", rid, k, p) for k, p in coup_events([("p1", "player", 100)], cards or iter(deck() * 8))]
    return out + [("dealer", rid, "round.close.v1", {"status": "complete"})]


def test_a_round_from_an_inspected_shuffled_cut_loaded_shoe_is_stored(ledger, live) -> None:  # type: ignore[no-untyped-def]
    _ok(ledger, live, inspect() + prepare() + coup("round:LB-1"))


def test_round_from_a_shoe_without_the_pit_boss_inspection_is_refused_000_II_3_1_2(ledger, live) -> None:  # type: ignore[no-untyped-def]
    _refused(ledger, live, inspect(by=("dealer",)) + prepare(), "after a passing inspection by the dealer and the pit boss")
    _ok(ledger, live, inspect(by=("dealer",)))
    _refused(ledger, live, coup("round:LB-1"), "no passing inspection by the dealer and the pit boss")


def test_round_without_a_shoe_on_a_live_table_is_refused(ledger, live) -> None:  # type: ignore[no-untyped-def]
    _refused(ledger, live, coup("round:LB-1", source=None), "names the shoe it is dealt from")
    _refused(ledger, live, coup("round:LB-1", source="shoe:none"), "shoe:none has no recorded inspection")


def test_cut_card_7_from_the_back_in_baccarat_000_II_3_3_4(ledger, live) -> None:  # type: ignore[no-untyped-def]
    _refused(ledger, live, inspect() + prepare(cut=8), "7 cards from the back in baccarat, not 8")


def test_cut_card_in_the_4th_deck_from_the_back_in_blackjack_000_III_3_3_1(ledger, live) -> None:  # type: ignore[no-untyped-def]
    steps = inspect("shoe:J1", "LJ", "blackjack", 6)
    _refused(ledger, live, steps + prepare("shoe:J1", cut=100), "4th deck from the back in blackjack")
    _ok(ledger, live, steps + prepare("shoe:J1", cut=180))


def test_no_round_after_the_cut_cards_last_hand_until_reshuffled_000_II_3_5_4(ledger, live) -> None:  # type: ignore[no-untyped-def]
    _ok(ledger, live, inspect() + prepare())
    stack = [c for _ in range(8) for c in deck()]
    random.Random(3).shuffle(stack)
    cards, dealt, n, steps = iter(stack), 0, 0, []
    while True:  # coups until the one that deals the last card in front of the cut card (409 of 416)
        n += 1
        r = coup(f"round:LB-{n}", cards=cards)
        dealt += sum(1 for step in r if step[2] == "baccarat.card.v1")
        if dealt >= 8 * 52 - 7:
            break
        steps += r
    _ok(ledger, live, steps + r[:-1] + [("dealer", "shoe:S1", "shoe.cut_card.v1", {"round": f"LB-{n}"})] + r[-1:])
    _refused(ledger, live, coup("round:LB-next"), f"past its cut card: round LB-{n} was the last hand before the"
                                                  " shuffle")
    _ok(ledger, live, prepare() + coup("round:LB-next"))  # 000 II 3.2.2: reshuffle, cut, load


def test_cut_card_names_an_open_round_of_this_shoe(ledger, live) -> None:  # type: ignore[no-untyped-def]
    _ok(ledger, live, inspect() + prepare() + coup("round:LB-1"))
    _refused(ledger, live, [("dealer", "shoe:S1", "shoe.cut_card.v1", {"round": "LB-1"})], "is closed")
    _refused(ledger, live, [("dealer", "shoe:S1", "shoe.cut_card.v1", {"round": "LB-9"})], "not a round dealt from shoe:S1")


def test_defective_deck_is_replaced_by_the_pit_boss_then_inspected_again_000_II_3_1_3(ledger, live) -> None:  # type: ignore[no-untyped-def]
    _ok(ledger, live, inspect(by=("dealer",), result="defective"))
    _refused(ledger, live, inspect(by=("floor",)), "replaces the deck before it is inspected again")
    replace = [("floor", "shoe:S1", "shoe.deck_replaced.v1", {"deck": 3, "reason": "marked back", "video": VIDEO})]
    _refused(ledger, live, [("dealer",) + replace[0][1:]], "may not sign kind shoe.deck_replaced.v1")
    _ok(ledger, live, replace + inspect() + prepare() + coup("round:LB-1"))


def test_inspection_needs_a_well_formed_video_reference(ledger, live) -> None:  # type: ignore[no-untyped-def]
    bad = dict(VIDEO, end="2026-11-22T09:00:00Z")
    step = ("dealer", "shoe:S1", "shoe.inspect.v1",
            {"table": "LB", "game": "baccarat", "decks": 8, "result": "pass", "video": bad})
    _refused(ledger, live, [step], "video end is before its start")
    _refused(ledger, live, [("cage",) + inspect(by=("dealer",))[0][1:]], "may not sign kind shoe.inspect.v1")


WHEEL_OK = {"table": "LR", "tampering": "pass", "level": "pass", "spin": "pass", "ball": "pass", "result": "pass",
            "video": VIDEO}


def _spin(rid: str, source: str | None) -> list[tuple[str, str, str, dict[str, Any]]]:
    opening: dict[str, Any] = {"table": "LR", "game": "roulette", "rules": {"wheel": "european"}}
    if source:
        opening["source"] = source
    return [("dealer", rid, "round.open.v1", opening),
            ("dealer", rid, "roulette.bet.v1", {"player": "p1", "bet": "red", "pockets": [], "amount": 100}),
            ("dealer", rid, "roulette.no_more_bets.v1", {}),
            ("dealer", rid, "roulette.result.v1", {"pocket": "1", "revolutions": 5}),
            ("dealer", rid, "roulette.settle.v1", {"bet": 1, "outcome": "win", "paid": 200}),
            ("dealer", rid, "round.close.v1", {"status": "complete"})]


def test_roulette_needs_a_pit_boss_wheel_inspection_000_IV_3_2(ledger, live) -> None:  # type: ignore[no-untyped-def]
    _refused(ledger, live, _spin("round:LR-1", "wheel:W1"), "wheel:W1 has no recorded inspection")
    check = ("floor", "wheel:W1", "wheel.inspect.v1", WHEEL_OK)
    _refused(ledger, live, [("dealer",) + check[1:]], "may not sign kind wheel.inspect.v1")
    _refused(ledger, live, _spin("round:LR-1", "shoe:S1"), "dealt from a wheel, not from shoe:S1")
    bad_ball = ("floor", "wheel:W1", "wheel.inspect.v1", dict(WHEEL_OK, ball="defective"))
    _refused(ledger, live, [bad_ball], "result is 'pass' exactly when tampering, level, spin and ball all pass")
    failed = ("floor", "wheel:W1", "wheel.inspect.v1", dict(WHEEL_OK, ball="defective", result="defective"))
    _refused(ledger, live, [failed] + _spin("round:LR-1", "wheel:W1"), "wheel:W1 has no passing inspection")
    _ok(ledger, live, [check] + _spin("round:LR-1", "wheel:W1"))


def test_wheel_inspected_before_the_table_opened_is_stale_000_IV_3_2_1(ledger, live) -> None:  # type: ignore[no-untyped-def]
    check = ("floor", "wheel:W1", "wheel.inspect.v1", WHEEL_OK)
    _ok(ledger, live, [check])
    b = BatchBuilder.for_store(ledger.store)
    b.add(live["floor"], "table:LR", "table.close.v1", {"reason": "end of shift"})
    b.add(live["floor"], "table:LR", "table.open.v1", {"game": "roulette", "seats": 7, "currency": "EUR",
                                                        "dealing": "live"})  # reopened after the inspection
    assert ingest(ledger.store, b.lines()).status == "stored"
    _refused(ledger, live, _spin("round:LR-1", "wheel:W1"), "before table LR opened")


def test_sic_bo_needs_a_dice_inspection(ledger, live) -> None:  # type: ignore[no-untyped-def]
    rid = "round:LS-1"
    throw = [("dealer", rid, "round.open.v1", {"table": "LS", "game": "sicbo", "rules": {}, "source": "dice:D1"}),
             ("dealer", rid, "sicbo.no_more_bets.v1", {}),
             ("dealer", rid, "sicbo.result.v1", {"dice": [1, 2, 3]}),
             ("dealer", rid, "round.close.v1", {"status": "complete"})]
    _refused(ledger, live, throw, "dice:D1 has no recorded inspection")
    bad = ("dealer", "dice:D1", "dice.inspect.v1", {"table": "LS", "result": "defective", "video": VIDEO})
    _refused(ledger, live, [bad] + throw, "dice:D1 has no passing inspection")
    _ok(ledger, live, [bad[:3] + ({"table": "LS", "result": "pass", "video": VIDEO},)] + throw)

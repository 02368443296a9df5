"""Tournaments (issue #6 point 3; rules and sources in ledger/tournaments.py): from
registration to payouts, with re-entry, rebuys, an add-on, staking, a bounty chop and a
deal, and the four cancellation cases of 000's refund policy, each reconciled to the cent
(fees + prize pool + bounties = money in; prizes + refunds + breakage = prize pool). The
expected figures are worked out by hand in the tests. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.house import create_key
from ledger.judges.tournament import chip_race, finishing_order, fold, settle
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import EVERY_TABLE, checkpointed, ingest

pytestmark = pytest.mark.usefixtures("past_dated")  # nights on fixed dates (tests/conftest.py)

DAY = "2026-11-20"
SINCE = "2026-11-01T00:00:00Z"


class Director:
    """Records a tournament through the producer SDK, as the game server would."""

    def __init__(self, ledger: Any, tid: str = "T1") -> None:
        self.ledger, self.stream = ledger, f"tournament:{tid}"
        self.key = create_key(ledger.store, ledger.keys, f"game:{tid}", "game", valid_from=SINCE, scope=EVERY_TABLE)
        self.cage = create_key(ledger.store, ledger.keys, f"cage:{tid}", "cage", valid_from=SINCE)
        self.b = BatchBuilder.for_store(ledger.store, clock=lambda: f"{DAY}T20:00:00Z")

    def __call__(self, kind: str, **payload: Any) -> Director:
        """A tournament event; who pays cash in (an entry, a stake) deposits at the cage
        first: 000 tournament rules, entries need funds in the account (projections.cage)."""
        if (kind == "register" and payload.get("payment", "cash") == "cash") or kind == "stake":
            payer = payload["backer"] if kind == "stake" else payload["player"]
            self.b.add(self.cage, f"account:{payer}", "cash.deposit.v1",
                       {"amount": 20_000, "currency": "EUR", "method": "cash",
                        "reference": f"{self.stream[11:]}-{payer}-{len(self.b.events)}"})
        signer = self.cage if kind in ("register", "stake") else self.key  # money at the cage: the cage signs
        self.b.add(signer, self.stream, f"tournament.{kind}.v1", payload)
        return self

    def seat(self, players: list[str]) -> Director:
        return self("start", seating=[{"player": p, "table": 1 + i // 9, "seat": 1 + i % 9}
                                      for i, p in enumerate(players)])

    def bust(self, busted: list[tuple[str, int, int]], won_by: list[str], hand: str = "h") -> Director:
        return self("eliminate", hand=hand, busted=[{"player": p, "start_stack": s, "seat_from_button": seat}
                                                   for p, s, seat in busted], won_by=won_by)

    def state(self) -> Any:
        return fold(self.stream, [ev for ev in self.b.events if ev.stream == self.stream])

    def end(self, kind: str = "finish", stacks: dict[str, int] | None = None) -> dict[str, Any]:
        """Close it with what the rules pay (the producer computes it with the ledger's own function)."""
        end = settle(self.state(), kind == "cancel", stacks or {})
        payload: dict[str, Any] = {"paid": end["paid"]}
        if stacks is not None:
            payload["stacks"] = stacks
        self(kind, **payload)
        return end

    def store(self) -> None:
        report = ingest(self.ledger.store, self.b.lines())
        assert report.status == "stored", [str(r) for r in report.rejections]
        self.b = BatchBuilder.for_store(self.ledger.store, clock=lambda: f"{DAY}T21:00:00Z")


def reconcile(ledger: Any) -> tuple[int, dict[str, Any]]:
    res = CliRunner().invoke(main, checkpointed(ledger.cli_args()) + ["reconcile", "--day", DAY, "--json"])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def tournament_money(ledger: Any) -> dict[str, int]:
    res = CliRunner().invoke(main, ledger.cli_args() + ["balances", "--json"])
    return {a["player"]: a["tournaments"] for a in json.loads(res.stdout)["accounts"]}


BOUNTY = {"currency": "EUR", "buy_in": 9_200, "fee": 800, "bounty": 1_000, "starting_chips": 10_000,
          "payouts_bp": [5_000, 3_000, 2_000], "max_entries": 2, "rebuys": True}


def test_a_bounty_tournament_from_registration_to_a_deal_reconciles_to_the_cent(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    d("open", **BOUNTY)
    for p in ["P1", "P2", "P3", "P4", "P5", "P6"]:
        d("register", player=p, entry="register")
    d("stake", player="P1", backer="BACKER", share_bp=2_000, price=2_000)  # 20% of P1's action
    d.seat(["P1", "P2", "P3", "P4", "P5", "P6"])
    d("register", player="P7", entry="late", table=1, seat=7)
    d("register", player="P2", entry="rebuy")("register", player="P3", entry="addon")
    d.bust([("P4", 4_000, 3)], ["P1"])
    d("register", player="P4", entry="reentry", table=1, seat=4)
    d.bust([("P5", 3_000, 1), ("P6", 5_000, 2)], ["P1", "P2"])  # a chopped pot knocks two out
    d("registration_closed", reason="scheduled")
    d.bust([("P4", 6_000, 1)], ["P3"]).bust([("P7", 9_000, 4)], ["P1"])
    assert finishing_order(d.state())[3:] == ["P7", "P4", "P6", "P5"]  # P6 began the hand with more chips
    d("deal", shares={"P1": 40_000, "P2": 30_000, "P3": 22_000})
    end = d.end()
    d.store()
    # 10 entries: 8 heads (6 + late + re-entry) at 11,000 and a rebuy and an add-on at 10,000
    assert end["prize_pool"] == 92_000 and end["bounty_pool"] == 8_000 and end["breakage"] == 0
    assert end["paid"] == {"P1": 40_000 - 8_000 + 4_000, "BACKER": 8_000, "P2": 30_000 + 2_000, "P3": 22_000 + 2_000}
    assert end["bounties"] == {"P1": 4_000, "P2": 2_000, "P3": 2_000}  # the chop split P5's and P6's bounties
    money = tournament_money(ledger)
    assert money["P1"] == -11_000 + 2_000 + 36_000 and money["BACKER"] == -2_000 + 8_000
    assert money["P4"] == -22_000 and sum(money.values()) == -8_000  # what the house kept: the fees
    code, report = reconcile(ledger)
    assert code == 0, report["discrepancies"]
    assert report["tournaments"] == [{"id": "T1", "status": "finished", "currency": "EUR", "money_in": 108_000, "fees": 8_000,
                                      "prize_pool": 92_000, "paid": 92_000, "refunded": 0, "bounties": 8_000,
                                      "breakage": 0}]


def test_same_hand_knockouts_with_equal_stacks_finish_by_seat_000_elimination_rules(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    d("open", **{**BOUNTY, "bounty": 0})
    for p in ["A", "B", "C", "D"]:
        d("register", player=p, entry="register")
    d.seat(["A", "B", "C", "D"])
    d.bust([("C", 2_000, 3), ("B", 2_000, 1)], ["A"])  # B sits nearer the button's left: finishes higher
    assert finishing_order(d.state())[2:] == ["B", "C"]


def test_prizes_are_rounded_down_to_the_cent_000_prize_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    d("open", currency="EUR", buy_in=333, fee=0, starting_chips=1_000, payouts_bp=[6_500, 3_500])
    for p in ["A", "B", "C"]:
        d("register", player=p, entry="register")
    d.seat(["A", "B", "C"]).bust([("C", 500, 1)], ["A"]).bust([("B", 900, 1)], ["A"])
    end = d.end()
    d.store()
    # pool 999: 649.35 -> 649, 349.65 -> 349; the 1 cent left is breakage, listed
    assert end["prizes"] == {"A": 649, "B": 349} and end["breakage"] == 1
    assert reconcile(ledger)[0] == 0


def test_a_wrong_payout_is_refused_nothing_stored(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    d("open", **{**BOUNTY, "bounty": 0})
    for p in ["A", "B"]:
        d("register", player=p, entry="register")
    d.seat(["A", "B"]).bust([("B", 10_000, 1)], ["A"])
    d.store()
    before = dump_rows(ledger.store)
    d("finish", paid={"A": 18_400, "B": 1})
    report = ingest(ledger.store, d.b.lines())
    assert report.status == "rejected" and "differs from its rules" in report.rejections[0].reason
    assert dump_rows(ledger.store) == before


def test_unregistering_returns_the_stake_to_the_backer_000_staking_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    d("open", **BOUNTY)
    d("register", player="P1", entry="register")("stake", player="P1", backer="BK", share_bp=5_000, price=5_000)
    d("unregister", player="P1")
    d.store()
    assert tournament_money(ledger) == {"P1": 0, "BK": 0}


def test_refused_entries_name_the_rule(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    d("open", **{**BOUNTY, "max_entries": 1})
    for p in ["A", "B", "C"]:
        d("register", player=p, entry="register")
    d.seat(["A", "B", "C"]).bust([("C", 500, 1)], ["A"])
    d.store()
    d("register", player="C", entry="reentry", table=1, seat=3)
    report = ingest(ledger.store, d.b.lines())
    assert report.status == "rejected" and "every entry allowed" in report.rejections[0].reason


# --- the four cancellation cases of 000's refund policy ---------------------------------

def _four(d: Director, payouts: list[int], guarantee: int = 0) -> None:
    d("open", currency="EUR", buy_in=10_000, fee=1_000, starting_chips=10_000, payouts_bp=payouts,
      guarantee=guarantee)
    for p in ["A", "B", "C", "D"]:
        d("register", player=p, entry="register")


def test_cancel_case_A_not_started_refunds_everything_pro_rata_to_backers(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    _four(d, [10_000])
    d("stake", player="A", backer="BK", share_bp=2_500, price=2_500)
    end = d.end("cancel")
    d.store()
    assert end["case"] == "A" and end["paid"] == {"A": 8_250, "BK": 2_750, "B": 11_000, "C": 11_000, "D": 11_000}
    assert tournament_money(ledger) == {"A": -11_000 + 2_500 + 8_250, "BK": -2_500 + 2_750, "B": 0, "C": 0, "D": 0}
    code, report = reconcile(ledger)
    assert code == 0 and report["tournaments"][0]["refunded"] == 44_000


def test_cancel_case_B_before_the_money_splits_half_equally_half_by_chips(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    _four(d, [6_000, 4_000], guarantee=100_000)  # the guarantee is not paid on a cancellation before the money
    d.seat(["A", "B", "C", "D"]).bust([("D", 10_000, 1)], ["A"])
    end = d.end("cancel", stacks={"A": 20_000, "B": 10_000, "C": 10_000})
    d.store()
    # pool 40,000: 20,000 equally (6,666 each), 20,000 by chips (10,000 / 5,000 / 5,000); fees back
    assert end["case"] == "B" and end["prize_pool"] == 40_000
    assert end["refunds"] == {"A": 16_666, "B": 11_666, "C": 11_666} and end["breakage"] == 2
    assert end["paid"] == {"A": 17_666, "B": 12_666, "C": 12_666}
    assert reconcile(ledger)[0] == 0


def test_cancel_case_C_in_the_money_pays_the_next_prize_then_by_chips(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    _four(d, [5_000, 3_000, 2_000], guarantee=50_000)
    d.seat(["A", "B", "C", "D"]).bust([("D", 10_000, 1)], ["A"])
    end = d.end("cancel", stacks={"A": 20_000, "B": 10_000, "C": 10_000})
    d.store()
    # pool 50,000 (guaranteed): next prize (3rd, 10,000) to each, 20,000 left by chips
    assert end["case"] == "C" and end["prize_pool"] == 50_000 and end["overlay"] == 10_000
    assert end["refunds"] == {"A": 20_000, "B": 15_000, "C": 15_000} and end["breakage"] == 0
    assert reconcile(ledger)[0] == 0


def test_cancel_case_D_after_registration_closed_in_the_money_uses_only_what_was_collected(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    _four(d, [5_000, 3_000, 2_000], guarantee=50_000)
    d.seat(["A", "B", "C", "D"]).bust([("D", 10_000, 1)], ["A"])
    d("registration_closed", reason="in_the_money")
    end = d.end("cancel", stacks={"A": 20_000, "B": 10_000, "C": 10_000})
    d.store()
    # pool 40,000 (collected only): next prize 8,000 each, 16,000 left by chips
    assert end["case"] == "D" and end["prize_pool"] == 40_000
    assert end["refunds"] == {"A": 16_000, "B": 12_000, "C": 12_000}
    assert reconcile(ledger)[0] == 0


# --- satellites and chip races -----------------------------------------------------------

def _satellite(ledger: Any, main: str, sat: str, already_in: list[str]) -> Director:
    """A main event (``already_in`` registered there) and a two-seat satellite into it,
    with A, B, C and D registered and seated."""
    main_event = Director(ledger, main)
    main_event("open", currency="EUR", buy_in=9_000, fee=1_000, starting_chips=10_000, payouts_bp=[10_000])
    for p in already_in:
        main_event("register", player=p, entry="register")
    main_event.store()
    d = Director(ledger, sat)
    d("open", currency="EUR", buy_in=2_500, fee=250, starting_chips=5_000, payouts_bp=[5_000, 5_000],
      seats_in=main, seat_value=9_000)
    for p in ["A", "B", "C", "D"]:
        d("register", player=p, entry="register")
    return d.seat(["A", "B", "C", "D"])


def test_a_second_satellite_seat_is_paid_as_tournament_dollars_000_seat_award(ledger) -> None:  # type: ignore[no-untyped-def]
    d = _satellite(ledger, "MAIN", "SAT", ["A"])  # A is already in the main event
    d.bust([("D", 100, 1)], ["A"]).bust([("C", 100, 1)], ["A"]).bust([("B", 100, 1)], ["A"])
    d("finish", paid={}, seats={"A": "tdollars", "B": "seat"})
    d.store()
    res = CliRunner().invoke(main, ledger.cli_args() + ["balances", "A", "--json"])
    rows = {r["currency"]: r for r in json.loads(res.stdout)["accounts"]}
    assert rows["TDOLLAR"]["tournaments"] == 9_000  # T$90.00 = the main event's buy-in less its fee
    assert reconcile(ledger)[0] == 0


def test_chip_race_TDA_23() -> None:
    """Four players hold 25-chips when the 25s are coloured up to 100s: 175 in all makes
    two 100-chips (75 rounds up); the two highest cards win one each; D, with nothing
    else left, is not raced out."""
    won = chip_race({"A": 75, "B": 50, "C": 25, "D": 25}, {"A": 900, "B": 400, "C": 1_000, "D": 0}, 100,
                    {"A": ["9c", "2d", "3h"], "B": ["Kd", "Ks"], "C": ["Ah"], "D": ["4c"]})
    assert won == {"C": 1, "B": 1, "D": 1}


def test_a_chip_race_event_is_checked_TDA_23(ledger) -> None:  # type: ignore[no-untyped-def]
    d = Director(ledger)
    d("open", **{**BOUNTY, "bounty": 0})
    for p in ["A", "B", "C", "D"]:
        d("register", player=p, entry="register")
    d.seat(["A", "B", "C", "D"])
    d.store()
    race = {"denomination": 100, "odd": {"A": 75, "B": 50, "C": 25, "D": 25},
            "others": {"A": 900, "B": 400, "C": 1_000, "D": 0},
            "cards": {"A": ["9c", "2d", "3h"], "B": ["Kd", "Ks"], "C": ["Ah"], "D": ["4c"]}}
    d("chip_race", **race, won={"A": 1, "B": 1})
    report = ingest(ledger.store, d.b.lines())
    assert report.status == "rejected" and "TDA 2013 rule 23 A" in report.rejections[-1].reason
    d.b = BatchBuilder.for_store(ledger.store)
    d("chip_race", **race, won={"B": 1, "C": 1, "D": 1})
    d.store()


def test_random_seating_is_the_one_the_committed_seed_draws_000(ledger) -> None:  # type: ignore[no-untyped-def]
    import hashlib

    from ledger.judges.tournament import random_seating

    seed = bytes(range(32))
    d = Director(ledger)
    d("open", **{**BOUNTY, "bounty": 0}, seating_commitment=hashlib.sha256(seed).hexdigest(), seats_per_table=6)
    players = [f"S{k:02d}" for k in range(14)]
    for p in players:
        d("register", player=p, entry="register")
    d.store()
    drawn = random_seating(players, seed, d.stream, 6)  # 14 players: three tables of 5, 5 and 4
    assert sorted({t for _, t, _ in drawn}) == [1, 2, 3] and drawn != [(p, 0, 0) for p in players]
    assert drawn != random_seating(players, bytes(32), d.stream, 6)  # another seed, another draw
    d("start", seed=seed.hex(), seating=[{"player": p, "table": t, "seat": s} for p, t, s in reversed(drawn)])
    d.store()
    other = Director(ledger, "T2")
    other("open", **{**BOUNTY, "bounty": 0}, seating_commitment=hashlib.sha256(seed).hexdigest())
    for p in players[:4]:
        other("register", player=p, entry="register")
    other("start", seed=seed.hex(), seating=[{"player": p, "table": 1, "seat": k + 1} for k, p in enumerate(players[:4])])
    report = ingest(ledger.store, other.b.lines())
    assert report.status == "rejected" and "not the one the revealed seed draws" in report.rejections[0].reason


# --- issue 15 point 7: the bubble and satellites -----------------------------------------

def test_bounties_are_awarded_only_once_the_bubble_bursts_000_bounty_policy(ledger) -> None:  # type: ignore[no-untyped-def]
    """One paid place. A knocks D out (D's bounty to A), then B knocks A out before the
    bubble bursts: A forfeits D's bounty; B, the winner, is paid A's and C's and keeps
    their own."""
    d = Director(ledger)
    d("open", **{**BOUNTY, "payouts_bp": [10_000], "max_entries": 1, "rebuys": False})
    for p in ["A", "B", "C", "D"]:
        d("register", player=p, entry="register")
    d.seat(["A", "B", "C", "D"]).bust([("D", 100, 1)], ["A"]).bust([("A", 100, 1)], ["B"]).bust([("C", 100, 1)], ["B"])
    end = settle(d.state(), False, {})
    assert end["bounties"] == {"B": 3_000} and end["forfeited_bounties"] == 1_000
    d.store()
    d("finish", paid={**end["paid"], "A": 1_000})  # A paid the bounty won before the bubble
    report = ingest(ledger.store, d.b.lines())
    assert report.status == "rejected" and "differs from its rules" in report.rejections[-1].reason
    d.b = BatchBuilder.for_store(ledger.store, clock=lambda: f"{DAY}T21:00:00Z")
    d("finish", paid=end["paid"])
    d.store()


def test_a_satellite_ends_when_everyone_left_wins_a_seat_000_tournament_rules(ledger) -> None:  # type: ignore[no-untyped-def]
    d = _satellite(ledger, "MAIN2", "SAT2", [])
    d.bust([("D", 100, 1)], ["A"])
    d.store()
    d("finish", paid={}, seats={"A": "seat", "B": "seat", "C": "seat"})  # three left, two seats: not over
    report = ingest(ledger.store, d.b.lines())
    assert report.status == "rejected" and "3 players remain" in report.rejections[-1].reason
    d.b = BatchBuilder.for_store(ledger.store, clock=lambda: f"{DAY}T21:00:00Z")
    d.bust([("C", 100, 1)], ["B"])
    d("finish", paid={}, seats={"A": "seat", "B": "seat"})  # two left, two equal seats: it ends
    d.store()

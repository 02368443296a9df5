"""AML flags (issue #5 point 4; rules and sources in projections/aml.py): planted patterns
are flagged, a control population without them raises none. SQLite and PostgreSQL."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games.baccarat import coup_events
from ledger.games.cards import deck
from ledger.games.poker import random_hand as poker_hand
from ledger.house import create_key
from ledger.importers.phh import hand_events
from ledger.producer import BatchBuilder
from ledger.sim.sample import write_sample_batch
from projections.aml import AmlConfig, scan_store
from tests.helpers import add_round, ingest, scope_for

pytestmark = pytest.mark.usefixtures("past_dated")  # nights on fixed dates (tests/conftest.py)

T = "2026-11-20T{}Z"
SINCE = "2026-11-01T00:00:00Z"  # the planted history is dated before today: keys valid since


def producer_signer(store, keys, actor: str, role: str):  # type: ignore[no-untyped-def]
    return create_key(store, keys, actor + "-aml", role, valid_from=SINCE, scope=scope_for(role))


@pytest.fixture
def control(ledger, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Ordinary play: deposits, many coups, a withdrawal (the sample night)."""
    batch = tmp_path / "control.jsonl"
    write_sample_batch(ledger.store, ledger.keys, batch, 30)
    assert ingest(ledger.store, batch.read_text().splitlines()).status == "stored"
    return ledger


def _cash(b: BatchBuilder, cage, player: str, kind: str, amount: int, at: str, ref: str) -> None:  # type: ignore[no-untyped-def]
    b.add(cage, f"account:{player}", f"cash.{kind}.v1",
          {"amount": amount, "currency": "EUR", "method": "cash", "reference": ref}, at=at)


def test_control_population_raises_no_flag(control) -> None:  # type: ignore[no-untyped-def]
    assert scan_store(control.store) == []


def test_planted_cash_patterns_are_flagged(control) -> None:  # type: ignore[no-untyped-def]
    cage = producer_signer(control.store, control.keys, "cage:main", "cage")
    b = BatchBuilder.for_store(control.store)
    _cash(b, cage, "BIG", "deposit", 700_000, T.format("10:00:00"), "b1")  # over 1,000,000 in the day
    _cash(b, cage, "BIG", "deposit", 600_000, T.format("15:00:00"), "b2")
    for k, hour in enumerate(("09", "13", "17")):  # three just under the threshold within 24 h
        _cash(b, cage, "SPLIT", "deposit", 950_000 + k, T.format(f"{hour}:00:00"), f"s{k}")
    _cash(b, cage, "QUICK", "deposit", 300_000, T.format("20:00:00"), "q1")  # in and out, no play
    _cash(b, cage, "QUICK", "withdrawal", 299_000, T.format("20:25:00"), "q2")
    assert ingest(control.store, b.lines()).status == "stored"
    flags = scan_store(control.store)
    got = {(f.rule, tuple(f.players)) for f in flags}
    assert ("cash_over_threshold", ("BIG",)) in got
    assert ("structuring", ("SPLIT",)) in got
    assert ("minimal_play", ("QUICK",)) in got and ("rapid_in_out", ("QUICK",)) in got
    structuring = next(f for f in flags if f.rule == "structuring")
    assert structuring.amount == 950_000 * 3 + 3 and len(structuring.events) == 3
    assert not any("P00" in p for f in flags for p in f.players)  # the control players stay clean
    assert scan_store(control.store, AmlConfig(report_threshold=10_000_000)) == [
        f for f in scan_store(control.store, AmlConfig(report_threshold=10_000_000))]  # deterministic
    res = CliRunner().invoke(main, control.cli_args() + ["aml", "show", structuring.id, "--json"])
    assert res.exit_code == 0 and len(json.loads(res.stdout)["event_details"]) == 3


def _holdem(ledger, players: list[str], hands: list[list[str]]) -> None:  # type: ignore[no-untyped-def]
    """Three-handed no-limit hold'em hands (PHH actions, blinds 50/100, stacks 10,000) at table P."""
    importer = producer_signer(ledger.store, ledger.keys, "importer:aml", "importer")
    b = BatchBuilder.for_store(ledger.store)
    b.add(importer, "table:P", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    for n, actions in enumerate(hands):
        hand = {"variant": "NT", "antes": [0, 0, 0], "blinds_or_straddles": [50, 100, 0], "min_bet": 100,
                "starting_stacks": [10_000] * 3, "players": players, "actions": actions}
        rules, events, _ = hand_events(hand)
        add_round(b, importer, f"round:P-{n}", "P", "poker", events, rules=rules)
    assert ingest(ledger.store, b.lines()).status == "stored", "hands must be legal"


def test_chip_dumping_between_the_same_pair_is_flagged_TDA_58(ledger) -> None:  # type: ignore[no-untyped-def]
    # DUMPER holds the strong hand and folds it to RECEIVER's all-in, hand after hand
    _holdem(ledger, ["DUMPER", "RECEIVER", "OTHER"],
            [[f"d dh p1 {strong}", f"d dh p2 {weak}", "d dh p3 6h6s", "p3 f", "p1 cbr 3000", "p2 cbr 10000", "p1 f"]
             for strong, weak in [("AcAd", "7c2d"), ("KcKd", "8c3d"), ("QcQd", "9c4d"), ("JcJd", "Tc5d")]])
    flags = [f for f in scan_store(ledger.store) if f.rule == "chip_dumping"]
    assert [(f.players, f.amount, len(f.events)) for f in flags] == [(["DUMPER", "RECEIVER"], 12_000, 4)]


def test_baccarat_player_wagering_counts_as_play(ledger) -> None:  # type: ignore[no-untyped-def]
    """In, a real session of coups, out: not minimal play."""
    cage = producer_signer(ledger.store, ledger.keys, "cage:main", "cage")
    floor = producer_signer(ledger.store, ledger.keys, "floor:x", "floor")
    dealer = producer_signer(ledger.store, ledger.keys, "dealer:x", "dealer")
    b = BatchBuilder.for_store(ledger.store)
    b.add(floor, "table:B", "table.open.v1", {"game": "baccarat", "seats": 7, "currency": "EUR"})
    _cash(b, cage, "REG", "deposit", 100_000, "2026-11-20T10:00:00Z", "r1")
    shoe = iter(deck() * 8)
    for n in range(12):
        rid = f"round:B-{n}"
        b.add(dealer, rid, "round.open.v1", {"table": "B", "game": "baccarat", "rules": {}}, at="2026-11-20T11:00:00Z")
        for kind, payload in coup_events([("REG", "banker", 5_000)], shoe):
            b.add(dealer, rid, kind, payload, at="2026-11-20T11:00:00Z")
        b.add(dealer, rid, "round.close.v1", {"status": "complete"}, at="2026-11-20T11:00:00Z")
    _cash(b, cage, "REG", "withdrawal", 90_000, "2026-11-20T12:00:00Z", "r2")
    assert ingest(ledger.store, b.lines()).status == "stored"
    assert scan_store(ledger.store) == []


def test_random_holdem_play_raises_no_chip_dumping_flag(ledger) -> None:  # type: ignore[no-untyped-def]
    """The control population for chip dumping: 400 hands of random legal play among six
    players at one table in one day. Some pair always loses one way for a while; without
    a dumping play that is no flag (projections.aml_poker)."""
    game = producer_signer(ledger.store, ledger.keys, "game:aml", "game")
    rng = random.Random(11)
    players = [f"R{n}" for n in range(6)]
    b = BatchBuilder.for_store(ledger.store, clock=lambda: "2026-11-20T12:00:00Z")
    b.add(game, "table:H", "table.open.v1", {"game": "poker", "seats": 9, "currency": "EUR"})
    for player in players:
        b.add(game, f"seat:{player}", "seat.join.v1", {"table": "H", "blind_level": "50/100"})
    for n in range(400):
        seated = rng.sample(players, rng.randint(2, 5))
        seated = seated if len(seated) > 2 else seated + [p for p in players if p not in seated][:1]
        rules, events = poker_hand(rng, seated, [10_000] * len(seated))
        add_round(b, game, f"round:H-{n}", "H", "poker", events, rules=rules)
    assert ingest(ledger.store, b.lines()).status == "stored"
    assert [f for f in scan_store(ledger.store) if f.rule == "chip_dumping"] == []
    # the same hands with the old rule (any one-way loss, AmlConfig thresholds kept) would flag pairs:
    # the behaviour test is what keeps them clean, and planting dumping plays is flagged (next test)


def test_losing_to_the_same_opponent_without_a_dumping_play_is_no_flag(ledger) -> None:  # type: ignore[no-untyped-def]
    """Weak hands folded to the same all-in, hand after hand: bad luck or prudence, not
    dumping (a strong hand folded, or a large call with a weak one, is: TDA 58)."""
    _holdem(ledger, ["FOLDER", "RECEIVER", "OTHER"],
            [[f"d dh p1 {weak}", f"d dh p2 {strong}", "d dh p3 6h6s", "p3 f", "p1 cbr 3000", "p2 cbr 10000", "p1 f"]
             for weak, strong in [("7c2d", "AcAd"), ("8c3d", "KcKd"), ("9c4d", "QcQd"), ("Tc5d", "JcJd")]])
    assert [f for f in scan_store(ledger.store) if f.rule == "chip_dumping"] == []


def test_a_large_call_with_a_weak_hand_counts_as_a_dumping_play_TDA_58(ledger) -> None:  # type: ignore[no-untyped-def]
    _holdem(ledger, ["CALLER", "RECEIVER", "OTHER"],
            [[f"d dh p1 {weak}", "d dh p2 AhAs", "d dh p3 6h6s", "p3 f", "p1 cc", "p2 cbr 10000", "p1 cc", "p2 sm AhAs",
              f"p1 sm {weak}", "d db KsQsJh", "d db 3h", "d db 5c"] for weak in ["7c2d", "8c3d", "9c4d"]])
    (flag,) = [f for f in scan_store(ledger.store) if f.rule == "chip_dumping"]
    assert flag.players == ["CALLER", "RECEIVER"] and flag.amount == 3 * 10_000 and "called 9900 with" in flag.reason


def test_transfers_to_third_parties_are_flagged_FATF_2009(ledger) -> None:  # type: ignore[no-untyped-def]
    cage = producer_signer(ledger.store, ledger.keys, "cage:main", "cage")
    b = BatchBuilder.for_store(ledger.store)
    _cash(b, cage, "SENDER", "deposit", 300_000, T.format("10:00:00"), "t0")
    for k, (to, typ) in enumerate([("bank-DE89370400440532013000", "external"), ("FRIEND", "account")]):
        b.add(cage, "account:SENDER", "cash.transfer.v1", {"amount": 100_000 + k, "currency": "EUR", "beneficiary": to,
                                                           "beneficiary_type": typ, "reference": f"t{k + 1}"},
              at=T.format(f"1{k + 1}:00:00"))
    assert ingest(ledger.store, b.lines()).status == "stored"
    flags = sorted((f.players, f.amount, len(f.events)) for f in scan_store(ledger.store)
                   if f.rule == "third_party_transfer")
    assert flags == [(["SENDER"], 100_000, 1), (["SENDER", "FRIEND"], 100_001, 1)]
    res = CliRunner().invoke(main, ledger.cli_args() + ["balances", "FRIEND", "--json"])
    assert json.loads(res.stdout)["accounts"][0]["balance"] == 100_001  # credited to the beneficiary account
    assert scan_store(ledger.store, AmlConfig(third_party_threshold=100_000)) == [
        f for f in scan_store(ledger.store) if f.amount > 100_000]


def test_a_transfer_to_the_account_itself_is_refused(ledger) -> None:  # type: ignore[no-untyped-def]
    cage = producer_signer(ledger.store, ledger.keys, "cage:main", "cage")
    b = BatchBuilder.for_store(ledger.store)
    b.add(cage, "account:SELF", "cash.transfer.v1", {"amount": 5, "currency": "EUR", "beneficiary": "SELF",
                                                     "beneficiary_type": "account", "reference": "x"})
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and "to itself" in report.rejections[0].reason


def test_play_from_a_restricted_jurisdiction_is_flagged_FATF_call_for_action(ledger) -> None:  # type: ignore[no-untyped-def]
    """Resident in Malta (KYC), then geolocated in Iran for two coups, then back: only
    the coups played from Iran are flagged, with the location event that placed him."""
    cage = producer_signer(ledger.store, ledger.keys, "cage:main", "cage")
    game = producer_signer(ledger.store, ledger.keys, "game:x", "game")
    dealer = producer_signer(ledger.store, ledger.keys, "dealer:x", "dealer")
    b = BatchBuilder.for_store(ledger.store, clock=lambda: T.format("12:00:00"))
    b.add(game, "table:B", "table.open.v1", {"game": "baccarat", "seats": 7, "currency": "EUR"})
    b.add(cage, "account:TRAVEL", "account.location.v1", {"country": "MT", "source": "kyc"})
    shoe = iter(deck() * 8)

    def coup(n: int) -> None:
        add_round(b, dealer, f"round:B-{n}", "B", "baccarat", coup_events([("TRAVEL", "banker", 1_000)], shoe))

    coup(0)
    b.add(game, "account:TRAVEL", "account.location.v1", {"country": "IR", "source": "geolocation"})
    coup(1)
    coup(2)
    b.add(game, "account:TRAVEL", "account.location.v1", {"country": "MT", "source": "geolocation"})
    coup(3)
    assert ingest(ledger.store, b.lines()).status == "stored"
    (flag,) = scan_store(ledger.store)
    assert flag.rule == "restricted_jurisdiction" and flag.players == ["TRAVEL"] and flag.amount == 2_000
    assert flag.events[0] == "account:TRAVEL#2" and [e.split("#")[0] for e in flag.events[1:]] == ["round:B-1", "round:B-2"]
    assert scan_store(ledger.store, AmlConfig(restricted_jurisdictions=("KP",))) == []


@pytest.mark.parametrize("late_cash", [False, True], ids=["cash-first", "cash-after-the-rounds"])
def test_rapid_in_out_from_wagers_kept_only_in_its_windows_flags_as_from_all(ledger, late_cash: bool) -> None:  # type: ignore[no-untyped-def]
    """FinCEN FIN-2007-G005 (rapid in and out): reconciliation keeps a player's wagers only
    in the spans the rule can sum (``rapid_windows``: from a deposit to a withdrawal within
    ``rapid_minutes`` that it is at least half the size of), known from the ledger's cash
    rows before its pass. The flags are those of keeping every wager, at the spans' both
    ends included, whether the cash rows come before the rounds in the log or after them."""
    from ledger.events import event_from_stored
    from projections.aml import Scanner, rapid_windows
    from projections.views import Context

    cage = producer_signer(ledger.store, ledger.keys, "cage:main", "cage")
    floor = producer_signer(ledger.store, ledger.keys, "floor:x", "floor")
    dealer = producer_signer(ledger.store, ledger.keys, "dealer:x", "dealer")
    shoe = iter(deck() * 8)
    rounds = BatchBuilder.for_store(ledger.store)
    rounds.add(floor, "table:B", "table.open.v1", {"game": "baccarat", "seats": 7, "currency": "EUR"},
               at=T.format("08:00:00"))
    # REG: 5,000 at each end of its span (10:00 to 10:30) = 10% of the deposit: no flag unless an end is lost;
    # ONE: 5,000 inside its span only (under 10%): flagged; both play outside their spans too
    plays = [("REG", "09:59:59.999999"), ("REG", "10:00:00"), ("REG", "10:30:00"), ("REG", "10:30:00.000001"),
             ("ONE", "12:00:00"), ("ONE", "13:10:00"), ("ONE", "14:00:00"), ("REG", "18:00:00")]
    for n, (player, at) in enumerate(plays):
        rid = f"round:B-{n}"
        rounds.add(dealer, rid, "round.open.v1", {"table": "B", "game": "baccarat", "rules": {}}, at=T.format(at))
        for kind, payload in coup_events([(player, "banker", 5_000)], shoe):
            rounds.add(dealer, rid, kind, payload, at=T.format(at))
        rounds.add(dealer, rid, "round.close.v1", {"status": "complete"}, at=T.format(at))
    cash = BatchBuilder.for_store(ledger.store)
    _cash(cash, cage, "REG", "deposit", 100_000, T.format("10:00:00"), "r1")
    _cash(cash, cage, "REG", "withdrawal", 90_000, T.format("10:30:00"), "r2")
    _cash(cash, cage, "REG", "withdrawal", 250_000, T.format("10:40:00"), "r3")  # more than twice the deposit: no span
    _cash(cash, cage, "ONE", "deposit", 100_000, T.format("12:50:00"), "o1")
    _cash(cash, cage, "ONE", "withdrawal", 95_000, T.format("13:20:00"), "o2")
    for b in ([rounds, cash] if late_cash else [cash, rounds]):
        assert ingest(ledger.store, b.lines()).status == "stored"

    events = [event_from_stored(r.state) for r in ledger.store.rows()]
    windows = rapid_windows(e for e in events if e.kind.startswith("cash."))
    minute = 60_000_000
    assert {k: [(lo % (86_400 * 1_000_000) // minute, hi % (86_400 * 1_000_000) // minute) for lo, hi in v or []]
            for k, v in windows.items()} == {("REG", "EUR"): [(600, 630)], ("ONE", "EUR"): [(770, 800)]}
    kept = Scanner(Context(ledger.store), windows=windows)
    for ev in events:
        kept.feed(ev)
    got = kept.flags()
    assert got == scan_store(ledger.store)
    assert [(f.rule, f.players) for f in got if f.rule == "rapid_in_out"] == [("rapid_in_out", ["ONE"])]
    assert {k: len(w.amounts) for k, w in kept.wagers.items()} == {("REG", "EUR"): 2, ("ONE", "EUR"): 1}
    assert {k: sum(w.days.values()) for k, w in kept.wagers.items()} == {("REG", "EUR"): 25_000, ("ONE", "EUR"): 15_000}


def test_rapid_windows_keep_every_wager_of_a_player_whose_cash_time_does_not_read() -> None:
    """A cash row whose time or amount does not read (written behind the ledger's back;
    verification refuses it): that player's wagers are all kept, never fewer."""
    from ledger.events import SignedEvent
    from projections.aml import rapid_windows

    def ev(stream: str, kind: str, at: str, amount: object) -> SignedEvent:
        return SignedEvent(ledger="l", stream=stream, seq=1, kind=kind, actor="cage:main", key_id="k", at=at,
                           payload={"amount": amount, "currency": "EUR"}, prev="", hash="", sig="")

    got = rapid_windows([ev("account:A", "cash.deposit.v1", "not a time", 10), ev("account:B", "cash.deposit.v1",
                         "2026-11-20T10:00:00Z", "ten"), ev("account:C", "cash.deposit.v1", "2026-11-20T10:00:00Z", 10)])
    assert got == {("A", "EUR"): None, ("B", "EUR"): None, ("C", "EUR"): []}

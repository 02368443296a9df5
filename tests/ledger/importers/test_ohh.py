"""OHH (Open Hand History 1.4, PokerTracker's hh-specs JSON) import and export (issue 17
point 6), on SQLite and PostgreSQL: hold'em and Omaha round-trip through our engine with
the same final stacks; the reading of amounts (a Raise gives the bet "to", a Call the
chips added) is checked against each file's pots, so a hand written otherwise is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games.poker import final_stacks
from ledger.importers.ohh import ohh_to_phh, recorded_final_stacks
from ledger.importers.phh import hand_events
from tests.ledger.importers.test_phh_import import corpus

# hh-specs 1.4.6 in the shape PokerStars-derived files have: SB raises to 3, the big blind
# calls 2 more, the flop is checked to a bet of 5 and a fold: the hero wins a pot of 6.
SAMPLE = {"ohh": {
    "spec_version": "1.4.6", "internal_version": "1.0.0", "network_name": "Test", "site_name": "Test Site",
    "game_type": "Holdem", "table_name": "test-table", "table_size": 4, "game_number": "42",
    "start_date_utc": "2026-02-02T20:17:51.970Z", "currency": "Chips", "ante_amount": 0,
    "small_blind_amount": 0.5, "big_blind_amount": 1, "bet_limit": {"bet_cap": 0, "bet_type": "NL"},
    "dealer_seat": 2, "hero_player_id": 1,
    "players": [{"id": 1, "name": "Hero Player", "seat": 1, "starting_stack": 100, "cards": ["Ah", "Kh"]},
                {"id": 2, "name": "Villain", "seat": 2, "starting_stack": 100, "cards": ["Qh", "Jh"]}],
    "rounds": [{"id": 0, "street": "Preflop", "cards": [], "actions": [
        {"action_number": 1, "player_id": 1, "action": "Post SB", "amount": 0.5},
        {"action_number": 2, "player_id": 2, "action": "Post BB", "amount": 1},
        {"action_number": 3, "player_id": 1, "action": "Raise", "amount": 3},
        {"action_number": 4, "player_id": 2, "action": "Call", "amount": 2}]},
        {"id": 1, "street": "Flop", "cards": ["Tc", "9c", "8c"], "actions": [
            {"action_number": 5, "player_id": 2, "action": "Check"},
            {"action_number": 6, "player_id": 1, "action": "Bet", "amount": 5},
            {"action_number": 7, "player_id": 2, "action": "Fold"}]}],
    "pots": [{"number": 0, "amount": 6, "rake": 0, "player_wins": [{"player_id": 1, "win_amount": 6}]}],
}}


def _import(ledger: Any, path: Path | str, fmt: str = "ohh") -> Any:  # type: ignore[no-untyped-def]
    res = CliRunner().invoke(main, ledger.cli_args() + ["import", fmt, "--json", str(path)])
    return res.exit_code, json.loads(res.stdout)


def test_the_sample_hand_reads_raise_to_and_call_as_added_chips() -> None:
    hand, order = ohh_to_phh(SAMPLE["ohh"])
    _, _, st = hand_events({"showdown": "as_recorded", **hand})
    # heads-up PHH seats the big blind first and the button (small blind) second
    assert hand["players"] == ["Villain", "Hero Player"] and hand["variant"] == "NT"
    assert [x / 10 for x in final_stacks(st)] == [97, 103]  # scaled by 10 for the 0.5 blind
    assert [float(x) for x in recorded_final_stacks(SAMPLE["ohh"], hand, order)] == [97.0, 103.0]


def test_import_stores_the_hand_with_provenance_and_is_idempotent(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ledger.importers.phh_import import provenance_of

    f = tmp_path / "session.ohh"
    f.write_text(json.dumps(SAMPLE) + "\n\n" + json.dumps(SAMPLE).replace('"42"', '"43"') + "\n")
    code, out = _import(ledger, f)
    assert code == 0 and len(out) == 2 and out[0]["round"] != out[1]["round"] and out[0]["round"].startswith("ohh-")
    prov = provenance_of(ledger.store, f"round:{out[0]['round']}")
    assert prov["format"] == "ohh" and prov["names"] == ["Villain", "Hero Player"]
    assert prov["meta"]["site_name"] == "Test Site" and prov["meta"]["game_number"] == "42"
    again_code, again = _import(ledger, f)
    assert again_code == 0 and all(r["already_imported"] for r in again)


def test_a_hand_whose_pots_disagree_with_the_engine_is_refused(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wrong = json.loads(json.dumps(SAMPLE))
    wrong["ohh"]["pots"][0]["player_wins"][0]["win_amount"] = 7  # one chip from nowhere
    f = tmp_path / "wrong.ohh"
    f.write_text(json.dumps(wrong))
    code, out = _import(ledger, f)
    assert code == 1 and "differ from what the hand's pots record" in out[0]["error"]


def test_games_other_than_holdem_and_omaha_are_refused_by_name(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stud = json.loads(json.dumps(SAMPLE))
    stud["ohh"]["game_type"] = "Stud"
    f = tmp_path / "stud.json"
    f.write_text(json.dumps(stud))
    code, out = _import(ledger, f)
    assert code == 1 and "OHH game Stud NL is not supported" in out[0]["error"]


@pytest.mark.parametrize("rel", ["pluribus/100/10.phh", "wsop/2023/43/5/1.phh", "wsop/2023/43/5/27.phh",
                                 "wsop/2023/43/5/12.phh"])
def test_holdem_and_omaha_round_trip_through_ohh_with_the_same_final_stacks(ledger, tmp_path: Path, rel: str) -> None:  # type: ignore[no-untyped-def]
    """A corpus hand (NT, PO, FO/8) imported from PHH, exported as OHH, imported again:
    the engine gives the same final stacks, and the OHH file's own pots agree."""
    code, out = _import(ledger, corpus(rel), "phh")
    assert code == 0, out
    first = out[0]["round"]
    ohh_file = tmp_path / "hand.ohh"
    res = CliRunner().invoke(main, ledger.cli_args() + ["export", "ohh", first, "-o", str(ohh_file)])
    assert res.exit_code == 0, res.output
    doc = json.loads(ohh_file.read_text())["ohh"]
    assert doc["spec_version"].startswith("1.4") and doc["game_type"] in ("Holdem", "Omaha", "OmahaHiLo")
    code, back = _import(ledger, ohh_file)
    assert code == 0, back
    rep1 = json.loads(CliRunner().invoke(main, ledger.cli_args() + ["replay", "--json", first]).stdout)
    rep2 = json.loads(CliRunner().invoke(main, ledger.cli_args() + ["replay", "--json", back[0]["round"]]).stdout)
    assert [s["final_stack"] for s in rep1["seats"]] == [s["final_stack"] for s in rep2["seats"]]
    names = json.loads(CliRunner().invoke(main, ledger.cli_args() + ["export", "ohh", back[0]["round"]]).stdout)
    assert [p["name"] for p in names["ohh"]["players"]] == [p["name"] for p in doc["players"]]


def test_export_of_a_game_ohh_does_not_know_is_refused(ledger) -> None:  # type: ignore[no-untyped-def]
    code, out = _import(ledger, corpus("wsop/2023/43/5/10.phh"), "phh")  # seven-card stud (MANIFEST.tsv)
    res = CliRunner().invoke(main, ledger.cli_args() + ["export", "ohh", out[0]["round"]])
    assert code == 0 and res.exit_code == 1 and "F7S is not an OHH game" in res.stderr

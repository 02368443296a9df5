"""PHH import into the ledger, export back, and the poker rules at ingest (issue #3
points 3, 5 and 6), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games.poker import PokerEngine, final_stacks
from ledger.importers.phh import hand_events, load_hands
from ledger.importers.phh_import import export_round, provenance_of
from ledger.producer import BatchBuilder
from tests.conftest import dump_rows
from tests.helpers import add_round, ingest, open_table
from tests.ledger.importers.test_phh_corpus import CORPUS

NT = "pluribus/100/10.phh"
SHOWDOWN_NT = "wsop/2023/43/5/1.phh"


def corpus(rel: str) -> str:
    path = CORPUS / rel
    if not path.exists():
        pytest.skip(f"no PHH corpus at {CORPUS}")
    return str(path)


def _variant_files() -> list[str]:
    import csv

    if not (CORPUS / "MANIFEST.tsv").exists():
        return []
    rows = list(csv.DictReader(open(CORPUS / "MANIFEST.tsv", encoding="utf-8"), delimiter="\t"))
    picked: dict[str, str] = {}
    for r in rows:
        if r["path"].startswith(("wsop/", "historical/")) and "finishing_stacks" in (CORPUS / r["path"]).read_text():
            picked.setdefault(r["variant"], r["path"])  # one hand per variant, with recorded stacks
    return sorted(picked.values())


def test_import_cli_reports_each_hand_and_reimport_is_idempotent(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.phh"  # a raise to 150 when the minimum is 200 (TDA 40)
    bad.write_text("variant = 'NT'\nantes = [0, 0, 0]\nblinds_or_straddles = [50, 100, 0]\nmin_bet = 100\n"
                   "starting_stacks = [1000, 1000, 1000]\nactions = ['d dh p1 AcAd', 'd dh p2 KcKd', 'd dh p3 QcQd',"
                   " 'p3 cbr 150']\n")
    paths = [corpus(NT), corpus(SHOWDOWN_NT), str(bad)]
    res = CliRunner().invoke(main, ledger.cli_args() + ["import", "phh", "--json", *paths])
    assert res.exit_code == 1, res.output
    out = json.loads(res.stdout)
    assert [set(r) for r in out] == [{"source", "round"}, {"source", "round"}, {"source", "error"}]
    assert out[0]["source"] == paths[0] and "limits here are 200 to 1000" in out[2]["error"]
    again = CliRunner().invoke(main, ledger.cli_args() + ["import", "phh", "--json", *paths[:2]])
    assert again.exit_code == 0 and all(r["already_imported"] for r in json.loads(again.stdout))
    rep = CliRunner().invoke(main, ledger.cli_args() + ["replay", "--json", out[1]["round"]])
    data = json.loads(rep.stdout)
    assert rep.exit_code == 0 and data["ok"]
    hand = load_hands(Path(paths[1]).read_text(), False)[0][1]
    assert [s["final_stack"] for s in data["seats"]] == hand["finishing_stacks"]
    assert [s["player"] for s in data["seats"]] == [p.replace(" ", "_") for p in hand["players"]]


def test_a_phhs_file_with_decimal_amounts_is_scaled_to_integer_units(ledger) -> None:  # type: ignore[no-untyped-def]
    text = (CORPUS / "handhq/ftp_1000nl.phhs").read_text() if CORPUS.exists() else pytest.skip("no corpus")
    section, hand = load_hands(text, True)[1]
    rules, _, _ = hand_events(hand)
    assert rules["scale"] == "0.01" and all(isinstance(s, int) for s in rules["starting_stacks"])
    assert rules["starting_stacks"][3] == 65715  # 657.15 dollars in cents


@pytest.mark.parametrize("rel", [NT, SHOWDOWN_NT] + _variant_files())
def test_export_round_trips_through_pokerkit(ledger, rel: str) -> None:  # type: ignore[no-untyped-def]
    pokerkit = pytest.importorskip("pokerkit")
    res = CliRunner().invoke(main, ledger.cli_args() + ["import", "phh", "--json", corpus(rel)])
    rid = json.loads(res.stdout)[0]["round"]
    text = export_round(ledger.store.stream_events(f"round:{rid}"), None, provenance_of(ledger.store, f"round:{rid}"))
    hh = pokerkit.HandHistory.loads(text)
    for state in hh:
        pass
    st = PokerEngine().start(ledger.store.stream_events(f"round:{rid}")[0].payload["rules"])
    for ev in ledger.store.stream_events(f"round:{rid}")[1:-1]:
        st = PokerEngine().apply(st, ev.kind, ev.payload)
    assert list(state.stacks) == final_stacks(st)
    out = CliRunner().invoke(main, ledger.cli_args() + ["export", "phh", rid])
    assert out.exit_code == 0 and out.stdout == text


# --- illegal actions at ingest: refused with the rule, nothing stored -----------------

RULES = {"variant": "NT", "players": ["ann", "bob", "cy"], "starting_stacks": [1000, 1000, 1000],
         "antes": [0, 0, 0], "blinds_or_straddles": [50, 100, 0], "min_bet": 100}
START = [("poker.post.v1", {"seat": 1, "type": "blind", "amount": 50}),
         ("poker.post.v1", {"seat": 2, "type": "blind", "amount": 100}),
         ("poker.deal.v1", {"seat": 1, "cards": ["Ac", "Ad"]}),
         ("poker.deal.v1", {"seat": 2, "cards": ["Kc", "Kd"]}),
         ("poker.deal.v1", {"seat": 3, "cards": ["Qc", "Qd"]})]


def _refused(ledger, events, reason: str, rules=RULES) -> None:  # type: ignore[no-untyped-def]
    dealer = open_table(ledger, "P1", "poker", seats=9, seated=tuple(rules["players"]))
    b = add_round(BatchBuilder.for_store(ledger.store), dealer, "round:P1-1", "P1", "poker", events, rules=rules,
                  close=False)
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    assert reason in report.rejections[0].reason, report.rejections[0].reason


def test_acting_out_of_turn_is_refused_TDA_38(ledger) -> None:  # type: ignore[no-untyped-def]
    _refused(ledger, START + [("poker.action.v1", {"seat": 1, "action": "fold"})],
             "seat 1 acted out of turn: seat 3 is to act")


def test_raise_below_the_minimum_is_refused_TDA_40(ledger) -> None:  # type: ignore[no-untyped-def]
    _refused(ledger, START + [("poker.action.v1", {"seat": 3, "action": "raise", "to": 150})],
             "limits here are 200 to 1000")


def test_bet_over_the_cap_is_refused_fixed_limit_001(ledger) -> None:  # type: ignore[no-untyped-def]
    fl = dict(RULES, variant="FT", small_bet=100, big_bet=200)
    del fl["min_bet"]
    raises = [("poker.action.v1", {"seat": s, "action": "raise", "to": to})
              for s, to in ((3, 200), (1, 300), (2, 400), (3, 500))]
    _refused(ledger, START + raises + [("poker.action.v1", {"seat": 1, "action": "raise", "to": 600})],
             "at most 4 bets and raises in a betting round", rules=fl)


def test_pot_limit_raise_over_the_pot_is_refused(ledger) -> None:  # type: ignore[no-untyped-def]
    po = dict(RULES, variant="PO")
    start = START[:2] + [("poker.deal.v1", {"seat": s, "cards": c}) for s, c in
                         ((1, ["Ac", "Ad", "2c", "2d"]), (2, ["Kc", "Kd", "3c", "3d"]), (3, ["Qc", "Qd", "4c", "4d"]))]
    # pot 150, call 100: a pot raise is to 100 + 250 = 350
    _refused(ledger, start + [("poker.action.v1", {"seat": 3, "action": "raise", "to": 351})],
             "limits here are 200 to 350", rules=po)


def test_award_that_does_not_match_the_hands_is_refused(ledger) -> None:  # type: ignore[no-untyped-def]
    play = [("poker.action.v1", {"seat": 3, "action": "call"}), ("poker.action.v1", {"seat": 1, "action": "call"}),
            ("poker.action.v1", {"seat": 2, "action": "check"})]
    for board in (["2h", "7s", "9d"], ["Jh"], ["3s"]):
        play.append(("poker.deal.v1", {"seat": 0, "cards": board}))
        play += [("poker.action.v1", {"seat": s, "action": "check"}) for s in (1, 2, 3)]
    play += [("poker.show.v1", {"seat": s, "cards": c}) for s, c in ((1, ["Ac", "Ad"]), (2, ["Kc", "Kd"]), (3, ["Qc", "Qd"]))]
    wrong = [("poker.award.v1", {"pot": 1, "amount": 300, "rake": 0, "winners": [{"seat": 2, "amount": 300}]})]
    _refused(ledger, START + play + wrong, "pot 1 is 300 with rake 0 and goes to seat 1 300")


# --- issue 17 point 6: idempotent by content, provenance, directories, TOML export ---------

def test_the_same_hand_by_three_spellings_of_its_path_is_one_round(ledger, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    src = Path(corpus(SHOWDOWN_NT))
    (tmp_path / "h").mkdir()
    copy = tmp_path / "h" / "hand.phh"
    copy.write_bytes(src.read_bytes())
    monkeypatch.chdir(tmp_path)
    spellings = [str(copy), "h/hand.phh", "./h/../h/hand.phh"]
    first = CliRunner().invoke(main, ledger.cli_args() + ["import", "phh", "--json", *spellings])
    out = json.loads(first.stdout)
    assert first.exit_code == 0 and len({r["round"] for r in out}) == 1
    assert "already_imported" not in out[0] and all(r["already_imported"] for r in out[1:])
    # another file with the same hand (renamed) is the same round too
    other = tmp_path / "renamed.phh"
    other.write_bytes(src.read_bytes())
    again = json.loads(CliRunner().invoke(main, ledger.cli_args() + ["import", "phh", "--json", str(other)]).stdout)
    assert again == [{"source": str(other), "round": out[0]["round"], "already_imported": True}]
    assert len(ledger.store.stream_events(f"import:{out[0]['round']}")) == 1


def test_provenance_records_the_file_name_sha256_names_and_metadata(ledger) -> None:  # type: ignore[no-untyped-def]
    import hashlib

    from ledger.importers.phh_import import provenance_of

    path = Path(corpus(SHOWDOWN_NT))
    out = json.loads(CliRunner().invoke(main, ledger.cli_args() + ["import", "phh", "--json", str(path)]).stdout)
    prov = provenance_of(ledger.store, f"round:{out[0]['round']}")
    assert prov is not None and prov["format"] == "phh" and prov["file"] == "1.phh"
    assert prov["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert prov["names"][0] == "Matthew Ashton" and prov["meta"]["year"] == 2023
    assert prov["meta"]["event"].startswith("2023 World Series of Poker Event #43")
    events = ledger.store.stream_events(f"import:{out[0]['round']}")
    assert [e.kind for e in events] == ["import.source.v1"] and events[0].actor == "importer:phh"


def test_a_directory_is_imported_recursively(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tree = tmp_path / "hands"
    (tree / "a" / "b").mkdir(parents=True)
    for i, rel in enumerate([NT, SHOWDOWN_NT]):
        (tree / ("a" if i else "a/b") / f"{i}.phh").write_bytes(Path(corpus(rel)).read_bytes())
    (tree / "a" / "readme.txt").write_text("not a hand")
    res = CliRunner().invoke(main, ledger.cli_args() + ["import", "phh", "--json", str(tree)])
    out = json.loads(res.stdout)
    assert res.exit_code == 0 and sorted(Path(r["source"]).name for r in out) == ["0.phh", "1.phh"]


def test_provenance_is_refused_for_a_round_that_is_not_there_or_twice(ledger) -> None:  # type: ignore[no-untyped-def]
    from ledger.sim.sample import producer_signer

    signer = producer_signer(ledger.store, ledger.keys, "importer:phh", "importer", ["table:phh-import"])
    b = BatchBuilder.for_store(ledger.store)
    b.add(signer, "import:phh-nothere", "import.source.v1",
          {"round": "round:phh-nothere", "table": "phh-import", "format": "phh", "file": "x.phh", "sha256": "0" * 64})
    report = ingest(ledger.store, b.lines())
    assert not report.ok and "no round round:phh-nothere" in str(report.rejections[0])


def test_export_writes_toml_that_round_trips_names_event_year_and_currency(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import tomllib

    src = tmp_path / "h.phh"
    text = Path(corpus(SHOWDOWN_NT)).read_text() + "\ncurrency = 'USD'\ntime = 12:30:00\n_note = \"it's \\\"quoted\\\"\"\n"
    src.write_text(text)
    out = json.loads(CliRunner().invoke(main, ledger.cli_args() + ["import", "phh", "--json", str(src)]).stdout)
    res = CliRunner().invoke(main, ledger.cli_args() + ["export", "phh", out[0]["round"], "-o", "-"])
    assert res.exit_code == 0
    back, orig = tomllib.loads(res.stdout), tomllib.loads(text)
    for key in ("players", "event", "year", "month", "day", "currency", "city", "author", "time", "_note",
                "starting_stacks", "finishing_stacks", "antes", "blinds_or_straddles", "min_bet", "variant"):
        assert back[key] == orig[key], key
    assert back["actions"] == [a.split("#")[0].strip() for a in orig["actions"]]


def test_a_seat_spelled_with_leading_zeros_is_the_same_seat_and_one_beyond_the_hand_is_refused() -> None:
    """PHH names a seat ``pN`` (phh-std, action notation): the importer looks the usual
    spellings up and reads any other as the standard's pattern does, so ``p01`` is seat 1
    as before, and a seat the hand does not have is refused whatever its spelling."""
    from ledger.importers.phh import PhhError

    hand = {"variant": "NT", "starting_stacks": [200, 200, 200], "blinds_or_straddles": [1, 2, 0], "antes": [0, 0, 0],
            "min_bet": 2, "actions": ["d dh p1 AcKc", "d dh p2 2d2h", "d dh p3 7s8s", "p3 f", "p1 f"]}
    plain = hand_events(hand)
    padded = hand_events({**hand, "actions": ["d dh p01 AcKc", "d dh p002 2d2h", "d dh p3 7s8s", "p03 f", "p01 f"]})
    assert padded[1] == plain[1]
    assert final_stacks(padded[2]) == final_stacks(plain[2]) == [199, 201, 200]
    for seat in ("p4", "p04", "p0", "p10"):
        with pytest.raises(PhhError, match="is not a seat of this hand"):
            hand_events({**hand, "actions": hand["actions"][:3] + [f"{seat} f"]})

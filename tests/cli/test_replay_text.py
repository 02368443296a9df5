"""Replays people can read (issue 17 point 3), on a demo night in a SQLite ledger: every
game's text replay shows the state after each step and the result in a sentence, fits
100 columns, shows money in the table's currency; --at stops at a seq; a stream shorter
than --seq / --at is an error."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.games import ENGINES

GAMES = ["baccarat", "blackjack", "roulette", "sicbo", "dragon-tiger", "high-card-flush", "poker"]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    tmp = tmp_path_factory.mktemp("replays")
    args = ["--db", f"sqlite:///{tmp}/d.db", "--keys", str(tmp / "k"), "--public", str(tmp / "p")]
    assert CliRunner().invoke(main, args + ["init"]).exit_code == 0
    assert CliRunner().invoke(main, args + ["demo", "--hands", "40", "-o", str(tmp / "o")]).exit_code == 0
    return args


def _cli(args: list[str], *more: str) -> Any:
    return CliRunner().invoke(main, [*args, *more])


def _round(night: list[str], game: str) -> str:
    res = _cli(night, "rounds", "--game", game, "--status", "complete", "--limit", "1", "--offset", "1", "--ids")
    assert res.exit_code == 0, res.output
    return str(res.stdout.strip())


def test_every_game_has_a_readable_description_and_result() -> None:
    assert set(GAMES) <= set(ENGINES)
    for engine in ENGINES.values():
        assert callable(engine.describe) and callable(engine.result)


@pytest.mark.parametrize("game", GAMES)
def test_text_replay_of_every_game_shows_each_step_and_the_result(night: list[str], game: str) -> None:
    rid = _round(night, game)
    res = _cli(night, "replay", rid)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)
    assert any(line.startswith("result: ") for line in lines) and lines[-1].startswith("OK")
    assert "€" in res.stdout  # the demo's tables play in euros: money in major units
    steps = json.loads(_cli(night, "replay", rid, "--json").stdout)["steps"]
    assert all(s["text"] for s in steps[1:])  # the state after every step of the game
    assert re.search(r"(amount|paid)=\d", res.stdout) is None  # no amount in minor units without its currency


def test_the_result_is_a_plain_sentence(night: list[str]) -> None:
    for game, pattern in (("baccarat", r"^result: (Banker \d beats Player \d|Player \d beats Banker \d|Tie at \d)"),
                          ("dragon-tiger", r"^result: (Dragon \S+ beats Tiger|Tiger \S+ beats Dragon|Tie)"),
                          ("roulette", r"^result: The ball landed on \d+ \((red|black|green)\)"),
                          ("sicbo", r"^result: The dice show \d-\d-\d, total \d+"),
                          ("blackjack", r"^result: Dealer (stands on|busts with) \d+"),
                          ("poker", r"^result: main pot: seat \d+ \S+ wins €")):
        text = _cli(night, "replay", _round(night, game)).stdout
        assert re.search(pattern, text, re.M), (game, text[-600:])


def test_baccarat_commission_is_stated_beside_what_was_paid(night: list[str]) -> None:
    rows = json.loads(_cli(night, "rounds", "--game", "baccarat", "--limit", "100", "--json").stdout)["rounds"]
    rid = next(r["round"] for r in rows if r["commission"])
    text = _cli(night, "replay", rid).stdout
    assert re.search(r"is paid €[\d,.]+ \(after €[\d.]+ commission\)", text)


def test_at_stops_at_a_seq_and_a_seq_past_the_end_is_an_error(night: list[str]) -> None:
    rid = _round(night, "baccarat")
    whole = json.loads(_cli(night, "replay", rid, "--json").stdout)
    part = _cli(night, "replay", rid, "--at", "4", "--json")
    data = json.loads(part.stdout)
    assert part.exit_code == 0 and [s["seq"] for s in data["steps"]] == [1, 2, 3, 4] and data["at"] == 4
    assert data["steps"] == whole["steps"][:4]
    text = _cli(night, "replay", rid, "--at", "4").stdout
    assert "stopped at seq 4" in text and "result:" not in text
    past = _cli(night, "replay", rid, "--at", str(len(whole["steps"]) + 1))
    assert past.exit_code == 2 and "there is no seq" in past.stderr


def test_table_seq_past_the_end_of_its_stream_is_an_error(night: list[str]) -> None:
    table = json.loads(_cli(night, "rounds", "--game", "poker", "--limit", "1", "--json").stdout)["rounds"][0]["table_id"]
    res = _cli(night, "table", table, "--seq", "9999")
    assert res.exit_code == 2 and "there is no seq 9999" in res.stderr
    assert _cli(night, "table", table, "--seq", "1").exit_code == 0


def test_table_at_compares_times_as_instants_not_as_text(night: list[str]) -> None:
    table = json.loads(_cli(night, "rounds", "--game", "baccarat", "--limit", "1", "--json").stdout)["rounds"][0]
    day = table["closed_at"][:10]
    a = json.loads(_cli(night, "table", table["table_id"], "--at", f"{day}T23:59:59Z", "--json").stdout)
    b = json.loads(_cli(night, "table", table["table_id"], "--at", f"{day}T23:59:59.000000Z", "--json").stdout)
    assert a["rounds_closed"] == b["rounds_closed"] > 0

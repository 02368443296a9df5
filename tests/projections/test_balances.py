"""projections/balances.py (issue #5 point 3), pure, from view rows: the balance is what
the house owes the player, at the cage and in chips; chips in play only where a table
records buy-ins; liabilities per currency are the players' balances summed."""

from __future__ import annotations

from projections.balances import balances_report
from projections.views import ACCOUNT_COLUMNS


def account(player: str, currency: str, **values: int) -> tuple[object, ...]:
    return (player, currency, *(values.get(c, 0) for c in ACCOUNT_COLUMNS))


def test_balances_chips_in_play_revenue_and_liabilities() -> None:
    accounts = [account("P1", "EUR", deposits=10_000, withdrawals=2_000, buy_ins=5_000, game_net=1_500, rounds=3),
                account("P2", "EUR", deposits=4_000, transfers_out=1_000, game_net=-500, rounds=1),
                account("P3", "USD", deposits=700)]
    chips = [("T1", "P1", "EUR", 5_000, 0, 1_500),  # bought 5,000 at T1, won 1,500 there
             ("T2", "P2", "EUR", 0, 0, -500)]  # T2 records no buy-ins: the result went to the account
    tables = [("T1", "2026-11-20", "EUR", 3, 0, 9_000, 10_500, 0, 0, -1_500)]
    report = balances_report(accounts, chips, tables)
    p1, p2, p3 = report["accounts"]
    assert (p1["balance"], p1["chips_in_play"], p1["at_cage"]) == (9_500, 6_500, 3_000)
    assert (p2["balance"], p2["chips_in_play"], p2["at_cage"]) == (2_500, 0, 2_500)
    assert p3["balance"] == 700
    assert report["chips_in_play"] == [{"table": "T1", "currency": "EUR", "chips": 6_500, "players": {"P1": 6_500}}]
    assert report["house_revenue"][0]["house_net"] == -1_500
    assert report["liabilities"] == {"EUR": 12_000, "USD": 700}
    only = balances_report(accounts, chips, tables, player="P2")
    assert [a["player"] for a in only["accounts"]] == ["P2"] and only["liabilities"] == report["liabilities"]

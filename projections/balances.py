"""The balances report (issue #5 point 3) from the views' rows (pure).

- accounts: per player and currency, every column of the ``accounts`` view and the
  balance (``views.account_balance``: what the house owes the player, at the cage and in
  chips), of which ``at_cage`` (balance less the chips the player holds at tables that
  record buy-ins);
- chips in play per table: on each table that records buy-ins (``chips:<table>``), the
  players' chips (bought − cashed + results there);
- house revenue per table and gaming day: the ``tables`` view (commission, rake, the
  house's net result);
- outstanding liabilities per currency: the sum of the players' balances (money the
  house holds for players, whether at the cage or as chips).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from projections.views import ACCOUNT_COLUMNS, account_balance, chips_held


def balances_report(account_rows: list[tuple[Any, ...]], chip_rows: list[tuple[Any, ...]],
                    table_rows: list[tuple[Any, ...]], player: str | None = None) -> dict[str, Any]:
    chips_by_player: dict[tuple[str, str], int] = defaultdict(int)
    tables: dict[tuple[str, str], dict[str, Any]] = {}
    for table, who, currency, bought, cashed, results in chip_rows:
        if bought == 0:
            continue  # no chip accounting for this player at this table: results went to the account
        chips = chips_held(bought, cashed, results)
        chips_by_player[(who, currency)] += chips
        row = tables.setdefault((table, currency), {"table": table, "currency": currency, "chips": 0, "players": {}})
        row["chips"] += chips
        if chips:
            row["players"][who] = chips
    accounts = []
    liabilities: dict[str, int] = defaultdict(int)
    for account, currency, *values in account_rows:
        row = dict(zip(ACCOUNT_COLUMNS, values, strict=True))
        balance = account_balance(row)
        liabilities[currency] += balance
        if player not in (None, account):
            continue
        chips = chips_by_player.get((account, currency), 0)
        accounts.append({"player": account, "currency": currency, **row, "balance": balance,
                         "chips_in_play": chips, "at_cage": balance - chips})
    revenue = [{"table": t, "day": day, "currency": cur, "rounds": n, "voided": v, "staked": st, "paid": pd,
                "commission": com, "rake": rake, "house_net": net}
               for t, day, cur, n, v, st, pd, com, rake, net in table_rows]
    return {"accounts": accounts, "chips_in_play": sorted(tables.values(), key=lambda r: (r["table"], r["currency"])),
            "house_revenue": revenue, "liabilities": dict(sorted(liabilities.items()))}

"""Money at the cage, followed per account in ledger order (reconciliation, issue #5
point 6): no event may take an account's money at the cage below zero.

An account's money at the cage is its balance (``views.account_balance``: what the house
owes the player) less the chips the player holds at tables that record buy-ins
(``chips:<table>``), as the balances report gives it (``projections.balances``). What
the cage or the house takes from an account — a withdrawal, a transfer, a buy-in, a
tournament entry or stake, a fine — must be covered by that money:

- 000 (tournament rules): re-entering, rebuying or adding on needs funds in the account;
- a cage that pays out or sells chips beyond the account's money extends credit, which
  the ledger records no instrument for (no marker), so it is a discrepancy.

Each such event after which the account's cage money is below zero, and lower than
before it, is named with the amounts. A round's result is not judged here: at a table
that records buy-ins, play beyond the chips bought is ``projections.table_chips``'s
finding; at a table that does not (an imported hand history, a live table played in
cash), the ledger does not see how the stake was funded (000 live casino blackjack
2.1.2, bets from the player's available funds, is the game server's to enforce there).
Pure: the caller feeds each event in ledger order with the
``accounts`` and ``chips`` views' row operations for it (``projections.runner.catch_up``'s
``observe``), so the figures are exactly the views'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ledger.events import SignedEvent
from ledger.timeutil import gaming_day
from projections.money import show
from projections.views import ACCOUNT_COLUMNS, Add, Put, account_balance, chips_held

Key = tuple[str, str]  # (player, currency)


@dataclass
class CageBook:
    day: str
    accounts: dict[Key, dict[str, int]] = field(default_factory=dict)
    # (player, currency) -> table -> [bought, cashed, results]
    chips: dict[Key, dict[str, list[int]]] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)

    def at_cage(self, key: Key) -> int:
        row = self.accounts.get(key)
        balance = account_balance(row) if row else 0
        held = sum(chips_held(*counters) for counters in self.chips.get(key, {}).values())
        return balance - held

    def event(self, ev: SignedEvent, ops: dict[str, list[Add | Put]]) -> None:
        if not (ops.get("accounts") or ops.get("chips")):
            return  # most events move no money: nothing to follow
        account_ops = [op for op in ops.get("accounts", ()) if isinstance(op, Add)]
        chip_ops = [op for op in ops.get("chips", ()) if isinstance(op, Add)]
        keys = {op.key for op in account_ops} | {(op.key[1], op.key[2]) for op in chip_ops}
        if not keys:
            return
        before = {k: self.at_cage(k) for k in keys}
        for op in account_ops:
            row = self.accounts.setdefault(op.key, dict.fromkeys(ACCOUNT_COLUMNS, 0))
            for column, amount in zip(ACCOUNT_COLUMNS, op.amounts, strict=True):
                row[column] += amount
        for op in chip_ops:
            table, player, currency = op.key
            counters = self.chips.setdefault((player, currency), {}).setdefault(table, [0, 0, 0])
            for i, amount in enumerate(op.amounts):
                counters[i] += amount
        if gaming_day(ev.at) != self.day or ev.kind == "round.close.v1":
            return
        for key in sorted(keys):
            after = self.at_cage(key)
            if after < 0 and after < before[key]:
                player, currency = key
                self.problems.append({
                    "check": "account_funds", "stream": ev.stream, "seq": ev.seq,
                    "reason": f"{player} had {show(before[key], currency)} at the cage; this {ev.kind} takes"
                              f" {show(before[key] - after, currency)}, leaving {show(after, currency)}: more than"
                              " the account holds (no credit is recorded)"})

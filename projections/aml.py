"""AML flags: rules over the ledger's events, thresholds as configuration (issue #5 point 4).

A scan reads every event in ledger order and is deterministic, so any flag can be
reproduced by scanning again; each flag names its rule, the player(s), the amount and
the events that raised it. Amounts are in minor units of the account's currency.

Rules and default thresholds (``AmlConfig``), with where they come from:

- ``cash_over_threshold``: a player's cash in (deposits) or cash out (withdrawals) in one
  gaming day above ``report_threshold`` (default 1,000,000 = 10,000.00: the casino
  currency-transaction report threshold, 31 CFR 1021.311; the EU's casino threshold is
  EUR 2,000, Directive (EU) 2015/849 art. 11(d) — set it per operator);
- ``structuring``: at least two cash transactions within 24 h, each between
  ``structuring_band`` (default 90%) of the threshold and the threshold, that together
  exceed it (31 U.S.C. 5324; the band is a house choice);
- ``minimal_play``: cash in, then cash out the same gaming day, having wagered less than
  ``minimal_play_ratio`` (default 10%) of the cash in (FinCEN FIN-2007-G005, "minimal
  gaming" red flag);
- ``rapid_in_out``: a withdrawal within ``rapid_minutes`` (default 60) of a deposit of
  at least half its size, with less than ``minimal_play_ratio`` wagered in between;
- ``chip_dumping``: in hold'em, one player losing to the same opponent with a dumping
  play (a strong hand folded after putting chips in, or a large call with a weak hand:
  ``projections.aml_poker``) in at least ``dumping_hands`` (default 3) hands of a gaming
  day, at least ``dumping_ratio`` (default 10) times what flowed back in all their hands
  (TDA 2013 rule 58: chip dumping and collusion). A loss alone is not a flag: at scale,
  some pair of players always loses one way for a while;
- ``third_party_transfer``: money sent from a player's account to anyone else (another
  player's account or an outside beneficiary, ``cash.transfer.v1``), per sender,
  beneficiary and gaming day above ``third_party_threshold`` (default 0: every one;
  FATF, "Vulnerabilities of Casinos and Gaming Sector", 2009, on third-party transfers;
  FinCEN FIN-2007-G005);
- ``restricted_jurisdiction``: play by a player whose location in force
  (``account.location.v1``: KYC residence, document or session geolocation) is in
  ``restricted_jurisdictions`` (default KP, IR, MM: FATF "High-Risk Jurisdictions subject
  to a Call for Action", June 2025; the operator's licence adds its own), per player and
  gaming day, with the amount wagered there.
"""

from __future__ import annotations

import bisect
import hashlib
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ledger.events import SignedEvent
from ledger.refs import event_ref
from ledger.store import Store
from ledger.timeutil import gaming_day, parse_utc, parse_utc_trusted
from projections.aml_poker import dumping_plays
from projections.money import round_money, show
from projections.views import Context

NOT_COVERED = ["chip dumping in poker variants other than hold'em: their play is not judged"
               " (projections.aml_poker)"]


@dataclass(frozen=True)
class AmlConfig:
    report_threshold: int = 1_000_000
    structuring_band: float = 0.9
    minimal_play_ratio: float = 0.1
    rapid_minutes: int = 60
    dumping_hands: int = 3
    dumping_ratio: float = 10.0
    dumping_call_share: float = 0.25
    third_party_threshold: int = 0
    restricted_jurisdictions: tuple[str, ...] = ("KP", "IR", "MM")


@dataclass
class Flag:
    rule: str
    players: list[str]
    amount: int
    day: str
    reason: str
    events: list[str] = field(default_factory=list)
    currency: str = ""
    """The currency (or chip unit) of ``amount``: a rule sums one currency at a time."""
    id: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class _Cash:
    at: str
    amount: int
    deposit: bool
    ref: str


class _Wagers:
    """What one player wagered in one currency, as the cash rules read it: a total per
    gaming day (``minimal_play``) and closed rounds' wagers at their times, as epoch
    microseconds beside the amount in two machine arrays (``rapid_in_out`` sums those in a
    window). ``windows`` (sorted, disjoint ``(from, to)`` epoch microseconds, both
    included), when given, are the only times ``rapid_in_out`` can ask about
    (``rapid_windows``): a wager outside them is counted in its day's total only, so the
    scan's memory follows the player's cash movements, not the day's rounds. The rules cite
    the cash events, never a wager's round, so none is kept."""

    __slots__ = ("days", "times", "amounts", "windows")

    def __init__(self, windows: Sequence[tuple[int, int]] | None = None) -> None:
        self.days: dict[str, int] = {}
        self.times = array("q")
        self.amounts = array("q")
        self.windows = windows

    def add(self, at: str, amount: int) -> None:
        day = gaming_day(at)
        self.days[day] = self.days.get(day, 0) + amount
        if self.windows is not None and not self.windows:
            return
        t = _micros(parse_utc_trusted(at))
        if self.windows is not None:
            k = bisect.bisect_right(self.windows, (t, _NEVER)) - 1  # the last window starting at or before t
            if k < 0 or t > self.windows[k][1]:
                return
        self.times.append(t)
        self.amounts.append(amount)

    def between(self, t0: datetime, t1: datetime) -> int:
        """The wagers of rounds closed from ``t0`` to ``t1``, both included (a window given
        to ``__init__`` must hold the span, as ``rapid_windows``' do for the pairs
        ``rapid_in_out`` asks about)."""
        lo, hi = _micros(t0), _micros(t1)
        return sum(a for t, a in zip(self.times, self.amounts, strict=True) if lo <= t <= hi)


_NEVER = 2**63 - 1
CASH_MOVES = ("cash.deposit.v1", "cash.withdrawal.v1")
"""The kinds the cash rules read as a player's cash in and out."""


Windows = dict[tuple[str, str], list[tuple[int, int]] | None]
"""Per (player, currency): the spans ``rapid_in_out`` can ask about, or None (keep every wager)."""


def rapid_windows(cash: Iterable[SignedEvent], config: AmlConfig | None = None) -> Windows:
    """The spans, per (player, currency), that ``rapid_in_out`` can sum wagers over, from
    cash events known before a scan (reconciliation reads the ledger's few deposits and
    withdrawals before its pass): from a deposit to each withdrawal within
    ``rapid_minutes`` after it that it is at least half the size of (the rule's pairs), as
    sorted, disjoint epoch-microsecond spans. Given more cash events than the scan is fed
    (rows verification later refuses), the spans only grow: the scan stays exact. A player
    whose cash event's time or amount does not read gets None: the scan keeps all of that
    player's wagers."""
    cfg = config or AmlConfig()
    moves: dict[tuple[str, str], list[tuple[int, int, bool]]] = defaultdict(list)
    unread: set[tuple[str, str]] = set()
    for ev in cash:
        if ev.kind not in CASH_MOVES:
            continue
        try:
            key = (ev.stream.split(":", 1)[1], ev.payload["currency"])
            amount = ev.payload["amount"]
        except (KeyError, IndexError, TypeError):
            continue  # not a cash movement the scan could file under a player either
        try:
            if not isinstance(amount, int):
                raise TypeError(f"amount {amount!r}")
            moves[key].append((_micros(parse_utc(ev.at)), amount, ev.kind == "cash.deposit.v1"))
        except (ValueError, TypeError):
            unread.add(key)
    rapid = cfg.rapid_minutes * 60_000_000
    out: dict[tuple[str, str], list[tuple[int, int]] | None] = dict.fromkeys(unread)
    for key, items in moves.items():
        if key in unread:
            continue
        spans = sorted((t0, t1) for t0, a0, d0 in items if d0
                       for t1, a1, d1 in items if not d1 and 0 <= t1 - t0 <= rapid and a0 * 2 >= a1)
        merged: list[tuple[int, int]] = []
        for lo, hi in spans:
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        out[key] = merged
    return out


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(moment: datetime) -> int:
    """A UTC time as whole microseconds since 1970 (a ledger time has at most six fraction
    digits: ``ledger.timeutil``), so comparing these is comparing the times."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


def scan(events: Iterable[SignedEvent], ctx: Context, config: AmlConfig | None = None) -> list[Flag]:
    scanner = Scanner(ctx, config)
    for ev in events:
        scanner.feed(ev)
    return scanner.flags()


class Scanner:
    """The AML rules over events fed one at a time in ledger order: ``feed`` each, then
    ``flags``. Reconciliation feeds it from its own pass over the log, so a closed round is
    derived once (``Context.closed_round``) for the views and the scan alike."""

    def __init__(self, ctx: Context, config: AmlConfig | None = None,
                 windows: Windows | None = None):
        """``windows``: ``rapid_windows`` of the cash events the scan will be fed (or more),
        when the caller knows them before: then a wager is kept only where ``rapid_in_out``
        can ask about it. None keeps every wager."""
        self.ctx, self.cfg = ctx, config or AmlConfig()
        self.windows = windows
        # every sum is of one currency (or chip unit): keys carry it
        self.cash: dict[tuple[str, str], list[_Cash]] = defaultdict(list)  # (player, currency)
        self.wagers: dict[tuple[str, str], _Wagers] = {}  # (player, currency)
        # (day, from, to, currency) -> what flowed from one player to another; each dumping play's share
        self.flows: dict[tuple[str, str, str, str], int] = defaultdict(int)
        self.dumps: dict[tuple[str, str, str, str], list[tuple[int, str, str]]] = defaultdict(list)
        # (day, from, to, currency) -> (amount, beneficiary type, ref)
        self.transfers: dict[tuple[str, str, str, str], list[tuple[int, str, str]]] = defaultdict(list)
        self.location: dict[str, tuple[str, str]] = {}  # player -> (country, location event ref)
        # (player, day, currency) -> (wagered, round ref, (location event ref, country)) for rounds played from there
        self.abroad: dict[tuple[str, str, str], list[tuple[int, str, tuple[str, str]]]] = defaultdict(list)

    def feed(self, ev: SignedEvent) -> None:
        ctx, cfg = self.ctx, self.cfg
        cash, wagers, flows, dumps = self.cash, self.wagers, self.flows, self.dumps
        transfers, location, abroad = self.transfers, self.location, self.abroad
        if ev.kind in CASH_MOVES:
            cash[(ev.stream.split(":", 1)[1], ev.payload["currency"])].append(
                _Cash(ev.at, ev.payload["amount"], ev.kind == "cash.deposit.v1", event_ref(ev.stream, ev.seq)))
        elif ev.kind == "cash.transfer.v1":
            p = ev.payload
            transfers[(gaming_day(ev.at), ev.stream.split(":", 1)[1], p["beneficiary"], p["currency"])].append(
                (p["amount"], p["beneficiary_type"], event_ref(ev.stream, ev.seq)))
        elif ev.kind == "account.location.v1":
            location[ev.stream.split(":", 1)[1]] = (ev.payload["country"], event_ref(ev.stream, ev.seq))
        elif ev.kind == "round.close.v1":
            rs, opening, outcome = ctx.closed_round(ev.stream)
            money = round_money(rs.game, outcome, ev.payload["status"])
            ref = event_ref(ev.stream, ev.seq)
            currency = ctx.currency(opening.payload["table"], opening.at)
            for player, amount in money.wagered.items():
                held = wagers.get((player, currency))
                if held is None:
                    held = wagers[(player, currency)] = _Wagers(
                        None if self.windows is None else self.windows.get((player, currency), []))
                held.add(ev.at, amount)
                country, where = location.get(player, ("", ""))
                if country in cfg.restricted_jurisdictions:
                    abroad[(player, gaming_day(ev.at), currency)].append((amount, ref, (where, country)))
            if rs.engine is not None and rs.engine.banking == "pool":  # players play each other: money flows between them
                losers = {p: -n for p, n in money.nets.items() if n < 0}
                winners = {p: n for p, n in money.nets.items() if n > 0}
                won = sum(winners.values())
                plays = dumping_plays(rs.st.rules.model_dump(), ctx.round_events(ev.stream),  # as played
                                      cfg.dumping_call_share) if losers and winners else {}
                players = opening.payload["rules"].get("players", [])
                dumped = {players[i]: why for i, why in plays.items() if i < len(players)}
                for loser, lost in losers.items():
                    for winner, gain in winners.items():
                        share = lost * gain // won
                        flows[(gaming_day(ev.at), loser, winner, currency)] += share
                        if loser in dumped:
                            dumps[(gaming_day(ev.at), loser, winner, currency)].append((share, ref, dumped[loser]))

    def flags(self) -> list[Flag]:
        flags: list[Flag] = []
        for (player, currency), items in sorted(self.cash.items()):
            flags += _cash_rules(player, currency, items, self.wagers.get((player, currency)) or _Wagers(), self.cfg)
        flags += _dumping(self.dumps, self.flows, self.cfg)
        flags += _third_party(self.transfers, self.cfg)
        for (player, day, currency), rounds in sorted(self.abroad.items()):
            places = list(dict.fromkeys(where for _, _, where in rounds))  # the location events, in order
            flags.append(Flag("restricted_jurisdiction", [player], sum(a for a, _, _ in rounds), day,
                              f"{player} played {len(rounds)} rounds while located in a restricted jurisdiction"
                              f" ({', '.join(country for _, country in places)})",
                              [ref for ref, _ in places] + [ref for _, ref, _ in rounds], currency))
        for f in flags:
            f.id = hashlib.sha256(f"{f.rule}|{','.join(f.players)}|{f.day}|{','.join(f.events)}".encode()).hexdigest()[:12]
        return flags


def _cash_rules(player: str, currency: str, items: list[_Cash], wagers: _Wagers, cfg: AmlConfig) -> list[Flag]:
    """The cash rules over one player's movements in one currency (thresholds in its minor units)."""
    out: list[Flag] = []

    def m(amount: int) -> str:
        return show(amount, currency)
    by_day: dict[str, list[_Cash]] = defaultdict(list)
    for c in items:
        by_day[gaming_day(c.at)].append(c)
    for day, day_items in sorted(by_day.items()):
        for deposit, label in ((True, "cash in"), (False, "cash out")):
            chosen = [c for c in day_items if c.deposit == deposit]
            total = sum(c.amount for c in chosen)
            if total > cfg.report_threshold:
                out.append(Flag("cash_over_threshold", [player], total, day,
                                f"{label} of {m(total)} in the gaming day exceeds the reporting threshold"
                                f" {m(cfg.report_threshold)}", [c.ref for c in chosen], currency))
        ins = sum(c.amount for c in day_items if c.deposit)
        outs = [c for c in day_items if not c.deposit]
        wagered = wagers.days.get(day, 0)
        if ins and outs and wagered < cfg.minimal_play_ratio * ins:
            out.append(Flag("minimal_play", [player], ins, day,
                            f"cash in {m(ins)} and out {m(sum(c.amount for c in outs))} the same day with only"
                            f" {m(wagered)} wagered (under {cfg.minimal_play_ratio:.0%} of the cash in)",
                            [c.ref for c in day_items], currency))
    near = [c for c in items if cfg.structuring_band * cfg.report_threshold <= c.amount < cfg.report_threshold]
    used: set[str] = set()
    for i, first in enumerate(near):
        if first.ref in used:
            continue
        start = parse_utc(first.at)
        window = [c for c in near[i:] if parse_utc(c.at) - start <= timedelta(hours=24)]
        total = sum(c.amount for c in window)
        if len(window) >= 2 and total > cfg.report_threshold:
            used |= {c.ref for c in window}
            out.append(Flag("structuring", [player], total, gaming_day(first.at),
                            f"{len(window)} cash transactions within 24 h, each just under the threshold"
                            f" {m(cfg.report_threshold)}, {m(total)} together", [c.ref for c in window], currency))
    for d in (c for c in items if c.deposit):
        t0 = parse_utc(d.at)
        for w in (c for c in items if not c.deposit):
            t1 = parse_utc(w.at)
            if timedelta(0) <= t1 - t0 <= timedelta(minutes=cfg.rapid_minutes) and d.amount * 2 >= w.amount:
                played = wagers.between(t0, t1)
                if played < cfg.minimal_play_ratio * d.amount:
                    out.append(Flag("rapid_in_out", [player], w.amount, gaming_day(d.at),
                                    f"cash out {m(w.amount)} {int((t1 - t0).total_seconds() // 60)} min after cash"
                                    f" in {m(d.amount)}, with {m(played)} wagered between", [d.ref, w.ref],
                                    currency))
                    break
    return out


def _dumping(dumps: dict[tuple[str, str, str, str], list[tuple[int, str, str]]],
             flows: dict[tuple[str, str, str, str], int], cfg: AmlConfig) -> list[Flag]:
    out: list[Flag] = []
    for (day, loser, winner, currency), items in sorted(dumps.items()):
        forward = sum(a for a, _, _ in items)
        back = flows.get((day, winner, loser, currency), 0)
        if len(items) >= cfg.dumping_hands and forward > 0 and forward >= cfg.dumping_ratio * back:
            out.append(Flag("chip_dumping", [loser, winner], forward, day,
                            f"{loser} lost {show(forward, currency)} to {winner} over {len(items)} hands with dumping"
                            f" plays ({items[0][2]}; ...), {show(back, currency)} flowed back",
                            [ref for _, ref, _ in items], currency))
    return out


def _third_party(transfers: dict[tuple[str, str, str, str], list[tuple[int, str, str]]], cfg: AmlConfig) -> list[Flag]:
    out: list[Flag] = []
    for (day, sender, beneficiary, currency), items in sorted(transfers.items()):
        total = sum(a for a, _, _ in items)
        if total > cfg.third_party_threshold:
            kind = "the account of " if items[0][1] == "account" else "the outside party "
            out.append(Flag("third_party_transfer", [sender] + ([beneficiary] if items[0][1] == "account" else []),
                            total, day, f"{sender} sent {show(total, currency)} to {kind}{beneficiary} in"
                                        f" {len(items)} transfers", [ref for _, _, ref in items], currency))
    return out


def scan_store(store: Store, config: AmlConfig | None = None,
               accept: Callable[[int, str, int, str, bytes], bool] | None = None) -> list[Flag]:
    """Flags from the events that count (issue 14 point 3): ``accept`` says which rows do;
    by default each row's own hash, signature and key are checked (``ledger.verify.RowJudge``)."""
    from ledger.verify import RowJudge, counted

    return scan((ev for _, ev in counted(store.rows(), accept or RowJudge(store))), Context(store), config)

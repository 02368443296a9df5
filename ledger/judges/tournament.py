"""Tournaments (issue #6 point 3): a tournament's stream ``tournament:<id>`` and the
money it moves, judged by pure functions (no I/O) that ingest, the views and
reconciliation share. Sources: 000_c28081091adb3e2e.txt (GGPoker operating rules,
"tournament rules", "refund policy", "tournament staking policy", "multiple
satellite/seat award policy", "bounty tournament policy", "deal-making policy") and
TDA 2013 (002) where named.

Money, in integer minor units of the tournament's currency:

- every entry (register, late registration, re-entry, rebuy, add-on) pays ``buy_in``
  (to the prize pool) + ``fee`` (the house's, 000 "rake and fees": e.g. $0.92 + $0.08)
  + ``bounty`` (to the bounty pool, bounty tournaments only);
- the prize pool is what the entries paid, or the ``guarantee`` when larger (the house
  adds the overlay), except once late registration was closed because the money was
  reached (000: then only what registrations collected);
- each paid place gets ``payouts_bp[place-1]`` / 10,000 of the pool, rounded DOWN to the
  cent (000: "$4.096 is paid as $4.09"); the cents left over (``breakage``) are listed;
- finishing order (000 "elimination rules"): the last player left is first; players
  knocked out in the same hand finish in order of their chips at the start of that hand
  (more chips, higher place), equal stacks by seat: the one seated closest to the
  button's left finishes higher;
- bounties (000 "bounty policy"): a knocked-out entry's bounty goes to whoever won the
  pot that knocked it out, split equally between players who chopped it (rounded down);
  the winner keeps their own; they are paid when the tournament ends, and only to a player
  who reaches a paid place ("バブルがはじけた時点で初めて授与": a player knocked out before
  the bubble bursts forfeits what they won);
- a deal (000 "deal-making policy"): all remaining players agree how to share the
  prize money still to be paid; the shares must add up to exactly that;
- staking (000 "staking policy"): before the start a player sells a share (basis points)
  of their action to a backer; the backer receives that share, rounded down, of what
  the player is paid or refunded; if the player unregisters, the backer's money is
  returned;
- satellite seats (000 "multiple satellite/seat award"): a satellite awards seats in a
  target tournament; a winner already registered there gets tournament dollars (T$)
  worth the target's buy-in less its fee instead;
- cancellation (000 "refund policy", four cases):
  A. not started: every entry refunded in full (buy-in, fee, bounty);
  B. started, before the money (late registration open or closed): the remaining players
     get their fee back; the prize pool (what registrations collected, never the
     guarantee) is paid 50% in equal shares to the remaining players and 50% in
     proportion to their chips;
  C. in the money: the remaining players get their fee back; each gets the next prize
     to be paid, and the rest of the pool (guarantee included) is shared in proportion
     to chips;
  D. as C, when late registration had been closed because the money was reached: the
     pool is only what registrations collected.
  Bounties still on the remaining players go back to them.

Chip races at colour-ups (TDA 2013 rule 23) are ``chip_race`` below. Random seating
(000): when the open commits to a seed, the start reveals it and the seating must be
the one ``random_seating`` draws from it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import Field

from ledger import rng
from ledger.events import SignedEvent
from ledger.games import RuleViolation
from ledger.judges import BaseJudge, register_judge
from ledger.kinds import Amount, Count, Currency, Ident, Strict, register_kind
from ledger.refs import parse_ref

BP = 10_000
ROLES = ("game", "floor")
HEADS = ("register", "late", "reentry")


class TournamentOpen(Strict):
    currency: Currency
    buy_in: Amount
    fee: Count
    bounty: Count = 0
    starting_chips: Amount
    payouts_bp: Annotated[list[Annotated[int, Field(ge=0, le=BP)]], Field(min_length=1, max_length=1000)]
    guarantee: Count = 0
    max_entries: Annotated[int, Field(ge=1, le=100)] = 1
    rebuys: bool = False
    seats_in: Ident | None = None
    """A satellite: its paid places win seats in this tournament instead of money."""
    seat_value: Count = 0
    """A satellite: the target's buy-in less its fee, paid as T$ to a winner already there."""
    seating_commitment: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    """SHA-256 of the seed the start will reveal; the seating is then checked to be the one
    the seed draws (``random_seating``), so the random seating of 000 can be proved."""
    seats_per_table: Annotated[int, Field(ge=2, le=10)] = 9


class TournamentEntry(Strict):
    player: Ident
    entry: Literal["register", "late", "reentry", "rebuy", "addon"]
    payment: Literal["cash", "ticket", "tdollars"] = "cash"
    table: Annotated[int, Field(ge=1, le=10_000)] | None = None
    seat: Annotated[int, Field(ge=1, le=10)] | None = None
    """Late registration and re-entry: where the player sits down."""


class TournamentPlayer(Strict):
    player: Ident


class TournamentDisqualify(Strict):
    """TDA 2013 rule 58 D: the player's chips are removed from the tournament; signed by
    the floor, citing the ``penalty.v1`` that disqualified them (``ledger.judges.penalty``)."""
    player: Ident
    penalty: Annotated[str, Field(pattern=r"^penalty:[A-Za-z0-9._~@/+-]{1,160}#[1-9][0-9]{0,11}$")]


class Seat(Strict):
    player: Ident
    table: Annotated[int, Field(ge=1, le=10_000)]
    seat: Annotated[int, Field(ge=1, le=10)]


class TournamentMove(Strict):
    """Players moved when a table breaks or to balance the tables (000 tournament rules;
    TDA 2013: play halts at a table three or more players short of the fullest)."""
    moves: Annotated[list[Seat], Field(min_length=1, max_length=1000)]
    reason: Literal["break", "balance"]


class TournamentStake(Strict):
    player: Ident
    backer: Ident
    share_bp: Annotated[int, Field(ge=1, le=BP - 1)]
    price: Amount


class TournamentStart(Strict):
    seating: Annotated[list[Seat], Field(min_length=2, max_length=10_000)]
    seed: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    """The seating seed, revealed (when the open committed to one)."""


class TournamentRegClosed(Strict):
    reason: Literal["scheduled", "in_the_money"]


class Busted(Strict):
    player: Ident
    start_stack: Amount
    seat_from_button: Annotated[int, Field(ge=0, le=9)]
    """Seats to the button's left (1 = small blind ... 0 = the button itself)."""


class TournamentEliminate(Strict):
    hand: Ident
    busted: Annotated[list[Busted], Field(min_length=1, max_length=10)]
    won_by: Annotated[list[Ident], Field(min_length=1, max_length=10)]
    """Who won the pot that knocked them out (several when it was chopped)."""


class TournamentChipRace(Strict):
    """A colour-up chip race (TDA 2013 rule 23): the value each player holds in the colour
    removed, their other chips, the card dealt for each odd chip, and who won a chip of
    the new ``denomination``; checked against ``chip_race``."""
    denomination: Amount
    odd: Annotated[dict[Ident, Count], Field(min_length=1, max_length=1000)]
    others: Annotated[dict[Ident, Count], Field(max_length=1000)]
    cards: Annotated[dict[Ident, list[Annotated[str, Field(pattern=r"^[2-9TJQKA][cdhs]$")]]], Field(max_length=1000)]
    won: Annotated[dict[Ident, Annotated[int, Field(ge=1, le=1)]], Field(max_length=1000)]


class TournamentDeal(Strict):
    shares: Annotated[dict[Ident, Count], Field(min_length=2, max_length=20)]


class TournamentEnd(Strict):
    paid: Annotated[dict[Ident, Count], Field(max_length=10_000)]
    """What each person receives from the tournament (prizes, bounties, refunds, staking
    shares): must equal what the rules give (``settle``)."""
    stacks: Annotated[dict[Ident, Count], Field(max_length=10_000)] | None = None
    """Cancellation: each remaining player's chips."""
    seats: Annotated[dict[Ident, Literal["seat", "tdollars"]], Field(max_length=10_000)] | None = None
    """A satellite's winners: a seat in the target, or T$ for one already registered there."""


register_kind("tournament.open.v1", TournamentOpen, "tournament", ROLES)
# An entry or a stake takes the player's money at the cage: the cage signs it (issue 13 point 2)
register_kind("tournament.register.v1", TournamentEntry, "tournament", ("cage",))
register_kind("tournament.unregister.v1", TournamentPlayer, "tournament", ROLES)
register_kind("tournament.stake.v1", TournamentStake, "tournament", ("cage",))
register_kind("tournament.start.v1", TournamentStart, "tournament", ROLES)
register_kind("tournament.registration_closed.v1", TournamentRegClosed, "tournament", ROLES)
register_kind("tournament.eliminate.v1", TournamentEliminate, "tournament", ROLES)
register_kind("tournament.deal.v1", TournamentDeal, "tournament", ROLES)
register_kind("tournament.move.v1", TournamentMove, "tournament", ROLES)
register_kind("tournament.chip_race.v1", TournamentChipRace, "tournament", ROLES)
register_kind("tournament.disqualify.v1", TournamentDisqualify, "tournament", ("floor",))
register_kind("tournament.finish.v1", TournamentEnd, "tournament", ROLES)
register_kind("tournament.cancel.v1", TournamentEnd, "tournament", ROLES)


@dataclass(frozen=True)
class Tournament:
    stream: str
    rules: dict[str, Any]
    phase: str = "registering"  # registering, running, finished, cancelled
    late_open: bool = True
    closed_in_the_money: bool = False
    entries: tuple[tuple[str, str, str], ...] = ()  # (player, entry kind, payment)
    active: frozenset[str] = frozenset()
    players: tuple[str, ...] = ()  # every player who ever entered, first entry order
    stakes: tuple[tuple[str, str, int, int], ...] = ()  # (player, backer, share_bp, price)
    eliminations: tuple[tuple[tuple[Any, ...], ...], ...] = ()  # per hand: (player, stack, seat) best first
    bounties_won: tuple[tuple[str, int], ...] = ()
    deal: dict[str, int] | None = None
    end: dict[str, Any] | None = None  # the settlement, once finished or cancelled
    seating: tuple[tuple[str, int, int], ...] = ()  # (player, table, seat) of the players in
    disqualified: frozenset[str] = frozenset()

    def cost(self, entry: str) -> int:
        """What one entry pays: buy-in + fee, + the bounty for an entry that puts a head in
        play (register, late, re-entry; not a rebuy or add-on)."""
        r = self.rules
        return int(r["buy_in"] + r["fee"] + (r.get("bounty", 0) if entry in HEADS else 0))

    def heads(self) -> int:
        return sum(1 for e in self.entries if e[1] in HEADS)


def open_tournament(stream: str, payload: dict[str, Any]) -> Tournament:
    if sum(payload["payouts_bp"]) > BP:
        raise RuleViolation(f"the payouts add up to {sum(payload['payouts_bp'])} basis points, more than 100%")
    return Tournament(stream, dict(payload))


def apply(t: Tournament, kind: str, p: dict[str, Any], lookup: Any = None) -> Tournament:
    """The tournament after one event, or RuleViolation naming the rule broken.
    ``lookup(stream)`` gives another tournament's state (satellite seats)."""
    if t.phase in ("finished", "cancelled"):
        raise RuleViolation(f"the tournament is {t.phase}")
    if kind == "tournament.register.v1":
        return _enter(t, p)
    if kind == "tournament.unregister.v1":
        if t.phase != "registering":
            raise RuleViolation("players unregister only before the start (000 tournament rules)")
        if p["player"] not in t.active:
            raise RuleViolation(f"{p['player']} is not registered")
        return replace(t, active=t.active - {p["player"]},
                       entries=tuple(e for e in t.entries if e[0] != p["player"]),
                       stakes=tuple(s for s in t.stakes if s[0] != p["player"]))
    if kind == "tournament.stake.v1":
        if t.phase != "registering":
            raise RuleViolation("action is sold after registering and before the start (000 staking policy)")
        if p["player"] not in t.active:
            raise RuleViolation(f"{p['player']} is not registered")
        sold = sum(s[2] for s in t.stakes if s[0] == p["player"]) + p["share_bp"]
        if sold >= BP:
            raise RuleViolation(f"{p['player']} would have sold {sold / 100:.2f}% of their action")
        return replace(t, stakes=t.stakes + ((p["player"], p["backer"], p["share_bp"], p["price"]),))
    if kind == "tournament.start.v1":
        if t.phase != "registering":
            raise RuleViolation("the tournament has started")
        if len(t.active) < 2:
            raise RuleViolation("a tournament starts with at least two players")
        _check_seating(t.active, p["seating"])
        if t.rules.get("seating_commitment"):
            seed = bytes.fromhex(p.get("seed") or "")
            if hashlib.sha256(seed).hexdigest() != t.rules["seating_commitment"]:
                raise RuleViolation("the seating seed does not hash to the commitment made at the open")
            drawn = random_seating(sorted(t.active), seed, t.stream, t.rules.get("seats_per_table", 9))
            if sorted((s["player"], s["table"], s["seat"]) for s in p["seating"]) != sorted(drawn):
                raise RuleViolation("the seating is not the one the revealed seed draws (000: random seating;"
                                    " ledger.judges.tournament.random_seating)")
        return replace(t, phase="running", seating=tuple((s["player"], s["table"], s["seat"]) for s in p["seating"]))
    if kind == "tournament.registration_closed.v1":
        if t.phase != "running" or not t.late_open:
            raise RuleViolation("late registration is not open")
        if p["reason"] == "in_the_money" and len(t.active) > len(t.rules["payouts_bp"]):
            raise RuleViolation("the money is not reached: more players remain than places are paid")
        return replace(t, late_open=False, closed_in_the_money=p["reason"] == "in_the_money")
    if kind == "tournament.eliminate.v1":
        return _eliminate(t, p)
    if kind == "tournament.move.v1":
        return _move(t, p)
    if kind == "tournament.chip_race.v1":
        if t.phase != "running" or not set(p["odd"]) <= t.active:
            raise RuleViolation("a chip race is run among the players still in a running tournament")
        won = chip_race(p["odd"], p["others"], p["denomination"], p["cards"])
        if won != p["won"]:
            raise RuleViolation(f"the chip race gives {won}, not {p['won']} (TDA 2013 rule 23 A)")
        return t
    if kind == "tournament.disqualify.v1":
        if t.phase != "running" or p["player"] not in t.active:
            raise RuleViolation(f"{p['player']} is not playing in this tournament")
        return replace(t, active=t.active - {p["player"]}, disqualified=t.disqualified | {p["player"]},
                       seating=tuple(s for s in t.seating if s[0] != p["player"]))
    if kind == "tournament.deal.v1":
        if t.phase != "running" or set(p["shares"]) != set(t.active):
            raise RuleViolation("a deal is agreed by all the players remaining (000 deal-making policy)")
        left = _unpaid(t, len(t.active))
        if sum(p["shares"].values()) != left:
            raise RuleViolation(f"the deal shares {sum(p['shares'].values())}, but {left} prize money remains")
        return replace(t, deal=dict(p["shares"]))
    if kind in ("tournament.finish.v1", "tournament.cancel.v1"):
        cancel = kind == "tournament.cancel.v1"
        if not cancel and t.deal is None and len(t.active) != 1 and not _all_left_win_alike(t):
            raise RuleViolation(f"{len(t.active)} players remain: the tournament is not over (or make a deal)")
        if cancel and t.phase == "running" and set(p.get("stacks") or {}) != set(t.active):
            raise RuleViolation("a cancellation counts the chips of every remaining player")
        end = settle(t, cancel, p.get("stacks") or {}, lookup, p.get("seats"))
        if p["paid"] != end["paid"]:
            diff = sorted(set(p["paid"].items()) ^ set(end["paid"].items()))[:3]
            raise RuleViolation(f"what the tournament pays differs from its rules, e.g. {diff}")
        if (p.get("seats") or {}) != end["seats"]:
            raise RuleViolation(f"the satellite's seats should be {end['seats']} (000 seat award policy)")
        return replace(t, phase="cancelled" if cancel else "finished", end=end)
    raise RuleViolation(f"{kind} is not a tournament event")


def _enter(t: Tournament, p: dict[str, Any]) -> Tournament:
    player, entry = p["player"], p["entry"]
    mine = [e for e in t.entries if e[0] == player]
    if entry == "register":
        if t.phase != "registering" or player in t.active or mine:
            raise RuleViolation(f"{player} cannot register now (before the start, once)")
    elif entry == "late":
        if t.phase != "running" or not t.late_open or mine:
            raise RuleViolation(f"late registration for {player} is not open (000 tournament rules)")
    elif entry == "reentry":
        if t.phase != "running" or not t.late_open or not mine or player in t.active:
            raise RuleViolation(f"{player} re-enters only once knocked out, while late registration is open")
        if sum(1 for e in mine if e[1] != "rebuy" and e[1] != "addon") >= t.rules.get("max_entries", 1):
            raise RuleViolation(f"{player} has used every entry allowed ({t.rules.get('max_entries', 1)})")
    else:  # rebuy, add-on
        if not t.rules.get("rebuys") or t.phase != "running" or not t.late_open or player not in t.active:
            raise RuleViolation(f"no {entry} for {player} now (rebuys and add-ons while registration is open)")
    seating = t.seating
    if entry in ("late", "reentry"):
        if p.get("table") is None or p.get("seat") is None:
            raise RuleViolation(f"a {entry} entry names the table and seat {player} sits down at")
        if any((s[1], s[2]) == (p["table"], p["seat"]) for s in t.seating):
            raise RuleViolation(f"table {p['table']} seat {p['seat']} is taken")
        seating = seating + ((player, p["table"], p["seat"]),)
    return replace(t, entries=t.entries + ((player, entry, p.get("payment", "cash")),), active=t.active | {player},
                   players=t.players + (() if player in t.players else (player,)), seating=seating)


def _move(t: Tournament, p: dict[str, Any]) -> Tournament:
    if t.phase != "running":
        raise RuleViolation("players are moved only while the tournament runs")
    where = {s[0]: (s[1], s[2]) for s in t.seating}
    for m in p["moves"]:
        if m["player"] not in where:
            raise RuleViolation(f"{m['player']} has no seat in the tournament")
        if where[m["player"]][0] == m["table"]:
            raise RuleViolation(f"{m['player']} is moved to the table they sit at")
    before = {table for table, _ in where.values()}
    for m in p["moves"]:
        where[m["player"]] = (m["table"], m["seat"])
    if len(set(where.values())) != len(where):
        raise RuleViolation("two players would share a seat")
    sizes: dict[int, int] = {}
    for table, _ in where.values():
        sizes[table] = sizes.get(table, 0) + 1
    if p["reason"] == "break" and not before - set(sizes):
        raise RuleViolation("a table break leaves no table empty")
    if max(sizes.values()) - min(sizes.values()) >= 3:
        raise RuleViolation(f"after the moves the tables hold {sorted(sizes.values())} players: one is three or more"
                            " short of the fullest (TDA 2013: balance the tables)")
    return replace(t, seating=tuple((pl, tb, st) for pl, (tb, st) in sorted(where.items())))


def random_seating(players: list[str], seed: bytes, stream: str, per_table: int) -> list[tuple[str, int, int]]:
    """000 "seats are assigned at random", provably: the players in sorted order shuffled
    by ``ledger.rng`` (HMAC-SHA256 draws keyed by the seed, bound to the tournament's
    stream; Fisher-Yates), then dealt round the tables: the k-th drawn player sits at table
    k mod T + 1, seat k div T + 1, with T = ceil(players / seats per table)."""
    order = rng.shuffle(players, rng.DrawStream(seed, stream))
    tables = -(-len(order) // per_table)
    return [(p, k % tables + 1, k // tables + 1) for k, p in enumerate(order)]


def _check_seating(players: frozenset[str], seating: list[dict[str, Any]]) -> None:
    """000: seats are assigned at random; the ledger checks every registered player has
    one seat of their own (the draw itself is the game server's)."""
    seated = [str(s.get("player")) for s in seating]
    places = [(s.get("table"), s.get("seat")) for s in seating]
    if sorted(seated) != sorted(players) or len(set(places)) != len(places):
        raise RuleViolation("the seating puts every registered player in one seat of their own (000: random seating)")


def _eliminate(t: Tournament, p: dict[str, Any]) -> Tournament:
    if t.phase != "running":
        raise RuleViolation("nobody is knocked out of a tournament that is not running")
    out = [b["player"] for b in p["busted"]]
    if not set(out) <= t.active or len(set(out)) != len(out):
        raise RuleViolation(f"{out} are not all players still in the tournament")
    if not set(p["won_by"]) <= t.active - set(out):
        raise RuleViolation("the pot that knocks players out is won by players still in")
    # 000 elimination rules: more chips at the start of the hand finish higher; equal stacks: nearer the button's left
    order = sorted(p["busted"], key=lambda b: (-b["start_stack"], (b["seat_from_button"] - 1) % 10))
    won: list[tuple[str, int]] = []
    bounty = t.rules.get("bounty", 0)
    for _ in out:
        share = bounty // len(p["won_by"])  # a chopped pot splits the bounty equally (000 bounty policy)
        won += [(w, share) for w in p["won_by"]]
    hand = tuple((b["player"], b["start_stack"], b["seat_from_button"]) for b in order)
    return replace(t, active=t.active - set(out), eliminations=t.eliminations + (hand,),
                   bounties_won=t.bounties_won + tuple(won), seating=tuple(s for s in t.seating if s[0] not in out))


def _all_left_win_alike(t: Tournament) -> bool:
    """000 tournament rules: a tournament may end when every player left wins the same
    prize ("サテライトトーナメントで同じ賞品が5つ与えられる場合、5人のプレイヤーが残った
    時点で終了する"): the remaining players fill paid places of equal value."""
    n = len(t.active)
    amounts = place_amounts(prize_pool(t), t.rules["payouts_bp"], len(finishing_order(t)))
    top = amounts[:n]
    return n >= 1 and len(top) == n and top[0] > 0 and len(set(top)) == 1


def finishing_order(t: Tournament) -> list[str]:
    """Players best first: those still in (the winner), then each player's last
    knock-out, the latest first, within a hand in the order of the rules."""
    order = sorted(t.active)
    seen = set(order) | set(t.disqualified)  # TDA 58 D: a disqualified player finishes nowhere
    for hand in reversed(t.eliminations):
        for player, _, _ in hand:
            if player not in seen:
                order.append(player)
                seen.add(player)
    return order


def money_in(t: Tournament) -> dict[str, int]:
    n = len(t.entries)
    return {"entries": n, "buy_ins": t.rules["buy_in"] * n, "fees": t.rules["fee"] * n,
            "bounties": t.rules.get("bounty", 0) * t.heads(), "total": sum(t.cost(e[1]) for e in t.entries)}


def prize_pool(t: Tournament, cancelled: bool = False) -> int:
    collected = int(t.rules["buy_in"]) * len(t.entries)
    before_the_money = len(t.active) > len(t.rules["payouts_bp"])
    if (cancelled and t.phase == "running" and before_the_money) or t.closed_in_the_money:
        return collected  # 000 refund policy (case B) and tournament rules (D): only what registrations collected
    return max(collected, int(t.rules.get("guarantee", 0)))


def place_amounts(pool: int, payouts_bp: list[int], places: int) -> list[int]:
    """Place 1..places, each rounded down to the cent (000 prize policy)."""
    return [pool * payouts_bp[i] // BP if i < len(payouts_bp) else 0 for i in range(places)]


def _unpaid(t: Tournament, remaining: int) -> int:
    return sum(place_amounts(prize_pool(t), t.rules["payouts_bp"], remaining))


def settle(t: Tournament, cancelled: bool, stacks: dict[str, int], lookup: Any = None,
           recorded_seats: dict[str, str] | None = None) -> dict[str, Any]:
    """Everything the tournament pays, per person, and the pools it comes from. A
    satellite's seats are judged with ``lookup`` (the target's state, at ingest); without
    it (a replay) the recorded ``seats`` stand, as ingest accepted them."""
    pool = prize_pool(t, cancelled)
    prize: dict[str, int] = {}
    refund: dict[str, int] = {}
    fee_refund: dict[str, int] = {}
    bounty_paid: dict[str, int] = {}
    seats: dict[str, str] = {}
    order = finishing_order(t)
    r = t.rules
    if cancelled and t.phase == "registering":  # case A: refund every entry in full
        for player, entry, _ in t.entries:
            refund[player] = refund.get(player, 0) + r["buy_in"]
            fee_refund[player] = fee_refund.get(player, 0) + r["fee"]
            if entry in HEADS:
                bounty_paid[player] = bounty_paid.get(player, 0) + r.get("bounty", 0)
        case = "A"
    elif cancelled:
        remaining = sorted(t.active)
        paid_places = len(r["payouts_bp"])
        knocked = order[len(remaining):]
        amounts = place_amounts(pool, r["payouts_bp"], len(order))
        for i, player in enumerate(knocked, start=len(remaining)):  # places already reached keep their prize
            if amounts[i]:
                prize[player] = amounts[i]
        for player in remaining:
            fee_refund[player] = r["fee"]
        left = pool - sum(prize.values())
        chips = sum(stacks.values())
        if len(remaining) > paid_places:  # case B: 50% equally, 50% by chips
            equal, by_chips = left // 2, left - left // 2
            for player in remaining:
                refund[player] = equal // len(remaining) + (by_chips * stacks[player] // chips if chips else 0)
            case = "B"
        else:  # cases C and D: the next prize to each, the rest by chips
            nxt = amounts[len(remaining) - 1]
            rest = left - nxt * len(remaining)
            for player in remaining:
                refund[player] = nxt + (rest * stacks[player] // chips if chips else 0)
            case = "D" if t.closed_in_the_money else "C"
        for player in remaining:
            bounty_paid[player] = bounty_paid.get(player, 0) + r.get("bounty", 0)
    else:
        case = None
        if t.deal is not None:
            prize.update(t.deal)
            knocked = order[len(t.active):]
            start = len(t.active)
            for player in t.active:
                bounty_paid[player] = bounty_paid.get(player, 0) + r.get("bounty", 0)
        else:
            knocked, start = order, 0
            bounty_paid[order[0]] = bounty_paid.get(order[0], 0) + r.get("bounty", 0)  # the winner keeps their own
        amounts = place_amounts(pool, r["payouts_bp"], len(order))
        for i, player in enumerate(knocked, start=start):
            if amounts[i]:
                prize[player] = prize.get(player, 0) + amounts[i]
        if r.get("seats_in"):  # a satellite: paid places win seats, or T$ if already in (000 seat award policy)
            target = lookup(f"tournament:{r['seats_in']}") if lookup else None
            for player in list(prize):
                if target is None and recorded_seats is not None:
                    seats[player] = recorded_seats.get(player, "seat")
                else:
                    seats[player] = "tdollars" if target and player in {e[0] for e in target.entries} else "seat"
    # 000 bounty policy: what a player wins in bounties is awarded only once the bubble bursts
    # (the player reaches a paid place); a player knocked out before it forfeits them
    before_bubble = set(order[len(r["payouts_bp"]):]) if case is None else set()
    forfeited = 0
    for winner, amount in t.bounties_won:
        if winner in before_bubble:
            forfeited += amount
            continue
        bounty_paid[winner] = bounty_paid.get(winner, 0) + amount
    paid: dict[str, int] = {}

    def pay(person: str, amount: int) -> None:
        if amount:
            paid[person] = paid.get(person, 0) + amount

    staking: dict[str, int] = {}
    for player in sorted(set(prize) | set(refund) | set(fee_refund) | set(bounty_paid)):
        cash_prize = 0 if seats.get(player) else prize.get(player, 0)
        backed = cash_prize + refund.get(player, 0) + fee_refund.get(player, 0)
        for staked, backer, share, _ in t.stakes:
            if staked == player:
                cut = backed * share // BP  # 000 staking policy: pro rata, rounded down
                staking[backer] = staking.get(backer, 0) + cut
                pay(backer, cut)
                backed -= cut
        pay(player, backed + bounty_paid.get(player, 0))
    # T$ worth the target's buy-in less its fee: its prize-pool part (000: "$100 = $90 + $10 fee -> T$90")
    tdollars = {p: r["seat_value"] for p, kind in seats.items() if kind == "tdollars"}
    bounty_pool = r.get("bounty", 0) * t.heads()
    forfeited += r.get("bounty", 0) * len(t.disqualified)  # TDA 58 D: a disqualified player's bounty leaves too
    return {"case": case, "forfeited_bounties": forfeited, "prize_pool": pool, "overlay": max(0, pool - r["buy_in"] * len(t.entries)),
            "prizes": prize, "refunds": refund, "fee_refunds": fee_refund, "bounties": bounty_paid,
            "staking": staking, "seats": seats, "tdollars": tdollars, "paid": paid, "bounty_pool": bounty_pool,
            "breakage": pool - sum(prize.values()) - sum(refund.values()),
            "bounty_breakage": bounty_pool - sum(bounty_paid.values()) - forfeited, "order": order}


def cash_effects(before: Tournament | None, kind: str, p: dict[str, Any], after: Tournament) -> dict[tuple[str, str], int]:
    """What one tournament event does to people's accounts, (person, currency) -> amount
    (negative: paid in). T$ are the currency ``TDOLLAR``."""
    cur = after.rules["currency"]
    out: dict[tuple[str, str], int] = {}

    def add(person: str, currency: str, amount: int) -> None:
        if amount:
            out[(person, currency)] = out.get((person, currency), 0) + amount

    if kind == "tournament.register.v1":
        if p.get("payment", "cash") != "ticket":
            add(p["player"], cur if p.get("payment", "cash") == "cash" else "TDOLLAR", -after.cost(p["entry"]))
    elif kind == "tournament.unregister.v1" and before is not None:
        for player, entry, payment in before.entries:
            if player == p["player"] and payment != "ticket":
                add(player, cur if payment == "cash" else "TDOLLAR", before.cost(entry))
        for player, backer, _, price in before.stakes:
            if player == p["player"]:  # 000 staking policy: the stake goes back to the backer
                add(player, cur, -price)
                add(backer, cur, price)
    elif kind == "tournament.stake.v1":
        add(p["backer"], cur, -p["price"])
        add(p["player"], cur, p["price"])
    elif kind in ("tournament.finish.v1", "tournament.cancel.v1") and after.end is not None:
        for person, amount in after.end["paid"].items():
            add(person, cur, amount)
        for person, amount in after.end["tdollars"].items():
            add(person, "TDOLLAR", amount)
    return out


def conservation(t: Tournament) -> list[str]:
    """The identities reconciliation checks on an ended tournament, as problems (empty: all hold):
    money in = fees + prize pool (less the overlay) + bounties; prize pool = prizes +
    refunds + breakage (under one cent per payee); bounties likewise; what is paid =
    prizes in cash + refunds + fee refunds + bounties."""
    if t.end is None:
        return []
    e, m = t.end, money_in(t)
    problems = []
    if m["total"] != m["fees"] + (e["prize_pool"] - e["overlay"]) + e["bounty_pool"]:
        problems.append(f"money in {m['total']} is not fees {m['fees']} + prize pool {e['prize_pool']} - overlay"
                        f" {e['overlay']} + bounties {e['bounty_pool']}")
    payees = len(e["prizes"]) + len(e["refunds"])
    if not 0 <= e["breakage"] <= max(payees, 1) * 2:
        problems.append(f"prize pool {e['prize_pool']} != prizes + refunds + breakage ({e['breakage']})")
    if not 0 <= e["bounty_breakage"] < max(len(t.bounties_won), 1) * 10:
        problems.append(f"bounty pool {e['bounty_pool']} != bounties paid + breakage ({e['bounty_breakage']})")
    cash_prizes = sum(v for p_, v in e["prizes"].items() if not e["seats"].get(p_))
    want = cash_prizes + sum(e["refunds"].values()) + sum(e["fee_refunds"].values()) + sum(e["bounties"].values())
    if sum(e["paid"].values()) != want:
        problems.append(f"paid {sum(e['paid'].values())} != prizes + refunds + fee refunds + bounties {want}")
    return problems


def step(t: Tournament | None, ev: Any, lookup: Any = None) -> Tournament:
    """The tournament after one stored or incoming event (``tournament.open`` starts it):
    the one transition ingest, the views, reconciliation and the demo share."""
    if ev.kind == "tournament.open.v1":
        return open_tournament(ev.stream, ev.payload)
    if t is None:
        raise RuleViolation(f"{ev.stream} must start with tournament.open.v1")
    return apply(t, ev.kind, ev.payload, lookup)


def fold(stream: str, events: list[Any], lookup: Any = None) -> Tournament | None:
    """A stored tournament stream's state (its first event is its open, stored only so)."""
    t: Tournament | None = None
    for ev in events:
        t = step(t, ev, lookup)
    return t


def chip_race(odd: dict[str, int], others: dict[str, int], denomination: int, cards: dict[str, list[str]]
              ) -> dict[str, int]:
    """TDA 2013 rule 23 A (colour-up chip race). ``odd``: each player's value in the colour
    being removed; ``others``: the value of their other chips; ``cards``: one card dealt
    per odd chip (from seat 1). The total odd value becomes whole chips of
    ``denomination`` (half or more rounds up), won by the highest cards (rank, then suit
    clubs < diamonds < hearts < spades), at most one chip per player; nobody is raced out
    of the tournament: a player left with no chips gets one of the smallest
    denomination. Returns the chips of ``denomination`` each player receives."""
    from ledger.games.poker_hands import RANK_VALUE

    total = sum(odd.values())
    chips = total // denomination + (1 if (total % denomination) * 2 >= denomination else 0)
    ranked = sorted(((RANK_VALUE[c[0]], "cdhs".index(c[1]), p) for p, cs in cards.items() for c in cs), reverse=True)
    won: dict[str, int] = {}
    for _, _, player in ranked:
        if len(won) >= chips:
            break
        won.setdefault(player, 1)
    for player in odd:
        if player not in won and not others.get(player):
            won[player] = 1  # TDA 23 A: a player is not eliminated by a chip race
    return won


__all__ = ["Tournament", "apply", "cash_effects", "chip_race", "conservation", "finishing_order", "fold",
           "money_in", "open_tournament", "place_amounts", "prize_pool", "settle"]


class TournamentJudge(BaseJudge):
    """``tournament:<id>``: opened once (a satellite's seat value is the buy-in less the fee
    of its open target, 000 seat award policy), then every event by ``apply``; a
    disqualification cites the penalty that disqualified the player (TDA 2013 rule 58 D)."""

    stream_types = ("tournament",)
    keeps_state = True

    def step(self, state: Tournament | None, ev: SignedEvent, world: Any) -> Tournament:
        return step(state, ev, world.state if world is not None else None)

    def admit(self, state: Tournament | None, ev: SignedEvent, world: Any) -> None:
        if ev.kind == "tournament.open.v1":
            if state is not None:
                raise RuleViolation(f"{ev.stream} is already open")
            target_id = ev.payload.get("seats_in")
            if target_id is not None:
                target = world.state(f"tournament:{target_id}")
                if target is None or target.rules["buy_in"] != ev.payload.get("seat_value"):
                    raise RuleViolation(f"a satellite's seat_value is the buy-in less the fee of tournament:{target_id},"
                                        " which must be open (000 seat award policy)")
        elif ev.kind == "tournament.disqualify.v1" and state is not None:
            stream, _ = parse_ref(ev.payload["penalty"])
            penalty = world.cited(ev.payload["penalty"])
            if (penalty is None or penalty.kind != "penalty.v1" or penalty.payload["offence"] != "disqualification"
                    or stream != f"penalty:{ev.payload['player']}"
                    or f"tournament:{penalty.payload.get('tournament')}" != ev.stream):
                raise RuleViolation(f"{ev.payload['penalty']} is not a disqualification of {ev.payload['player']} from"
                                    f" {ev.stream} (TDA 2013 rule 58 D)")


register_judge(TournamentJudge())

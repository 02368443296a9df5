"""High Card Flush poker, player-banked, as a pure engine.

Source: 003_10e12fa1eb1379fe.txt (cited by its section names):

- "ゲームプレイ" 1: an ante is required; the Straight Flush and Flush bonus wagers are
  optional; every player and the designated player get 7 cards from one 52-card deck,
  dealt from the button's left, clockwise (the button sits in front of the designated
  player, "指定プレーヤーの前にディーラーボタン");
- 2: each player folds (losing the ante *and* the bonus wagers) or raises: up to 3x the
  ante with a 6- or 7-card flush, 2x with 5, 1x with 4 or fewer;
- hands compare by the number of cards in the longest flush, then the flush's cards from
  the highest down; all equal is a push ("ハイカードフラッシュポーカーでは..."); hands are
  compared from the button's right, counter-clockwise;
- 4: the designated player qualifies with at least a 3-card 9-high flush; if not, the
  ante wins even money and the raise pushes; 5: a player who beats a qualifying hand wins
  ante and raise at even money;
- "すべての賭け金は、指定されたプレイヤーのマネーが..." every wager is paid only as far as
  the designated player's money covers; a hand it cannot cover is dead and its wagers are
  returned;
- Appendix A (straight flush: 3 cards 8-1 ... 7 cards 1000-1) and Appendix B (flush:
  4 cards 2-1 ... 7 cards 200-1); only the best qualifying hand is paid.

Where the seed contradicts itself: its prose (sections 5 and 7) also describes the bonus
wagers as a comparison with the designated player, while its paytables (Appendix A/B)
pay "if the player's first 7 cards are a triggering hand". The engine follows the
paytables, which the issue names ("Flush and Straight Flush bonus paytables"), except on
an exact tie with the designated player, where the opening section pushes every bonus
wager (the default; ``tie_bonus: "paytable"`` is the house option that pays the
paytables then too). The
paytable headings are swapped in the seed (Appendix A is headed "Flush Cards" but sits
under the straight-flush heading and counts straight cards); the engine reads them by
content. A straight flush counts the ace high or low (A-2-3 and Q-K-A). The house rake
(a per-player fee, "注意") is not a wager and is not settled here.

Coverage: settling in the order above, the designated player's money is the bankroll
recorded in ``hcf.designate.v1`` plus what earlier players lost minus what they won. A
player whose net win exceeds it has a dead hand: every wager returned ("returned").

Events: ``hcf.designate.v1`` {seat, player, bankroll}; ``hcf.bet.v1`` {seat, player,
wager (ante|flush|straight_flush), amount}; ``hcf.no_more_bets.v1``; ``hcf.card.v1``
{seat, card}; ``hcf.decision.v1`` {seat, action (fold|raise), amount?};
``hcf.settle.v1`` {seat, wager (ante|raise|flush|straight_flush), outcome
(win|lose|push|returned), paid} (paid = everything handed back, stake included).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Annotated, Any, Final, Literal

from pydantic import Field

from ledger.games import (
    DemoTable,
    EngineDefaults,
    Events,
    Money,
    Play,
    RoundMoney,
    RuleViolation,
    close_betting,
    evolve,
    paid_text,
    parse_rules,
    register_engine,
    settlement_money,
    wrap,
)
from ledger.games.cards import CARD_PATTERN, show_cards
from ledger.kinds import (
    ROUND_PRODUCERS,
    Amount,
    EmptyPayload,
    Ident,
    Strict,
    register_kind,
)

Seat = Annotated[int, Field(ge=1, le=10)]
RANK_ORDER = "23456789TJQKA"  # high card order, ace high
FLUSH_PAYS = {"4": 2, "5": 10, "6": 50, "7": 200}  # Appendix B
STRAIGHT_FLUSH_PAYS = {"3": 8, "4": 60, "5": 100, "6": 500, "7": 1000}  # Appendix A
PayTable = dict[Literal["3", "4", "5", "6", "7"], Annotated[int, Field(ge=1, le=100_000)]]


class HcfRules(Strict):
    flush_pays: PayTable = FLUSH_PAYS  # type: ignore[assignment]  # the default paytable, validated as PayTable by pydantic
    straight_flush_pays: PayTable = STRAIGHT_FLUSH_PAYS  # type: ignore[assignment]  # as above
    tie_bonus: Literal["push", "paytable"] = "push"
    """An exact tie with the designated player (as many flush cards, every rank equal):
    "push" (the default) pushes every bonus wager, as 003's opening section says
    ("全てのボーナス賭け金はプッシュ"); "paytable" pays the bonus wagers by the paytables
    alone (the reading of its Appendices A and B), a house option."""


class HcfDesignate(Strict):
    seat: Seat
    player: Ident
    bankroll: Annotated[int, Field(ge=0)]


class HcfBet(Strict):
    seat: Seat
    player: Ident
    wager: Literal["ante", "flush", "straight_flush"]
    amount: Amount


class HcfCard(Strict):
    seat: Seat
    card: Annotated[str, Field(pattern=CARD_PATTERN)]


class HcfDecision(Strict):
    seat: Seat
    action: Literal["fold", "raise"]
    amount: Amount | None = None


class HcfSettle(Strict):
    seat: Seat
    wager: Literal["ante", "raise", "flush", "straight_flush"]
    outcome: Literal["win", "lose", "push", "returned"]
    paid: Annotated[int, Field(ge=0)]


ROLES = ROUND_PRODUCERS
register_kind("hcf.designate.v1", HcfDesignate, "round", ROLES)
register_kind("hcf.bet.v1", HcfBet, "round", ROLES)
register_kind("hcf.no_more_bets.v1", EmptyPayload, "round", ROLES)
register_kind("hcf.card.v1", HcfCard, "round", ROLES)
register_kind("hcf.decision.v1", HcfDecision, "round", ROLES)
register_kind("hcf.settle.v1", HcfSettle, "round", ROLES)


def flush_rank(cards: tuple[str, ...] | list[str]) -> tuple[int, tuple[int, ...]]:
    """(cards in the best flush, their ranks high to low): more suited cards wins, then
    the highest card, the next, and so on (003 opening section)."""
    best: tuple[int, tuple[int, ...]] = (0, ())
    for suit in "cdhs":
        ranks = tuple(sorted((RANK_ORDER.index(c[0]) for c in cards if c[1] == suit), reverse=True))
        best = max(best, (len(ranks), ranks))
    return best


def longest_run(ranks: set[int]) -> int:
    """Longest run of consecutive ranks (indices into RANK_ORDER); the ace also plays low."""
    present = set(ranks) | ({-1} if 12 in ranks else set())
    best = 0
    for r in present:
        if r - 1 not in present:
            n = 1
            while r + n in present:
                n += 1
            best = max(best, n)
    return best


def straight_flush_length(cards: tuple[str, ...] | list[str]) -> int:
    return max(longest_run({RANK_ORDER.index(c[0]) for c in cards if c[1] == s}) for s in "cdhs")


def qualifies(rank: tuple[int, tuple[int, ...]]) -> bool:
    """003 section 4: at least a 3-card 9-high flush."""
    n, ranks = rank
    return n > 3 or (n == 3 and ranks[0] >= RANK_ORDER.index("9"))


def raise_cap(cards: tuple[str, ...]) -> int:
    """003 section 2: the raise is at most 3x the ante (6-7 flush), 2x (5), 1x (4 or fewer)."""
    n = flush_rank(cards)[0]
    return 3 if n >= 6 else 2 if n == 5 else 1


@dataclass(frozen=True)
class Player:
    seat: int
    player: str
    bets: tuple[tuple[str, int], ...] = ()
    cards: tuple[str, ...] = ()
    decision: str | None = None
    raised: int = 0

    def bet(self, wager: str) -> int:
        return dict(self.bets).get(wager, 0)


@dataclass(frozen=True)
class HcfState:
    rules: HcfRules
    designated: Player | None = None
    bankroll: int = 0
    players: tuple[Player, ...] = ()
    betting_open: bool = True
    dealt: tuple[str, ...] = ()
    settled: frozenset[tuple[int, str]] = frozenset()


def _clockwise_from(state: HcfState, start_after: int, seats: list[int]) -> list[int]:
    return sorted(seats, key=lambda s: (s - start_after - 1) % 10)


def deal_order(state: HcfState) -> list[int]:
    """One card at a time, from the button's left clockwise, seven times (003 section 1)."""
    assert state.designated is not None
    dp = state.designated.seat
    seats = _clockwise_from(state, dp, [p.seat for p in state.players] + [dp])
    return seats * 7


def settle_order(state: HcfState) -> list[int]:
    """From the button's right, counter-clockwise (003 section 2)."""
    assert state.designated is not None
    dp = state.designated.seat
    return sorted((p.seat for p in state.players), key=lambda s: (dp - s) % 10)


def _player(state: HcfState, seat: int) -> Player:
    for p in state.players:
        if p.seat == seat:
            return p
    raise RuleViolation(f"seat {seat} has no ante in this round")


def _with(state: HcfState, new: Player) -> HcfState:
    return evolve(state, players=tuple(new if p.seat == new.seat else p for p in state.players))


def dealing_done(state: HcfState) -> bool:
    return not state.betting_open and state.designated is not None and len(state.dealt) == len(deal_order(state))


def decisions_done(state: HcfState) -> bool:
    return dealing_done(state) and all(p.decision for p in state.players)


def _own_results(state: HcfState, p: Player) -> list[tuple[str, str, int]]:
    """(wager, outcome, paid) for each of the player's wagers, before coverage."""
    assert state.designated is not None
    out: list[tuple[str, str, int]] = []
    ante, rules = p.bet("ante"), state.rules
    if p.decision == "fold":
        out.append(("ante", "lose", 0))
        out += [(w, "lose", 0) for w in ("flush", "straight_flush") if p.bet(w)]
        return out
    mine, theirs = flush_rank(p.cards), flush_rank(state.designated.cards)
    if not qualifies(theirs):
        out += [("ante", "win", 2 * ante), ("raise", "push", p.raised)]
    elif mine > theirs:
        out += [("ante", "win", 2 * ante), ("raise", "win", 2 * p.raised)]
    elif mine < theirs:
        out += [("ante", "lose", 0), ("raise", "lose", 0)]
    else:
        out += [("ante", "push", ante), ("raise", "push", p.raised)]
    if mine == theirs and rules.tie_bonus == "push":  # 003 opening section: an exact tie pushes every bonus wager
        out += [(w, "push", p.bet(w)) for w in ("flush", "straight_flush") if p.bet(w)]
        return out
    if p.bet("flush"):
        pays = rules.flush_pays.get(str(mine[0]))  # type: ignore[call-overload]  # keys are the Literal counts as text
        out.append(("flush", "win", p.bet("flush") * (pays + 1)) if pays else ("flush", "lose", 0))
    if p.bet("straight_flush"):
        pays = rules.straight_flush_pays.get(str(straight_flush_length(p.cards)))  # type: ignore[call-overload]  # keys are the Literal counts as text
        out.append(("straight_flush", "win", p.bet("straight_flush") * (pays + 1)) if pays
                   else ("straight_flush", "lose", 0))
    return out


def settlements(state: HcfState) -> dict[int, list[tuple[str, str, int]]]:
    """Every wager's (wager, outcome, paid) by seat, with the designated player's money
    applied in settlement order; a hand it cannot cover is dead and returned."""
    money = state.bankroll
    out: dict[int, list[tuple[str, str, int]]] = {}
    for seat in settle_order(state):
        p = _player(state, seat)
        rows = _own_results(state, p)
        stakes = {"ante": p.bet("ante"), "raise": p.raised, "flush": p.bet("flush"),
                  "straight_flush": p.bet("straight_flush")}
        net_win = sum(paid - stakes[w] for w, _, paid in rows)
        if net_win > money:
            rows = [(w, "returned", stakes[w]) for w, _, _ in rows]
        else:
            money -= net_win
        out[seat] = rows
    return out


class HighCardFlushEngine(EngineDefaults):
    game = "high-card-flush"
    rules_model = HcfRules
    banking: Final = "player"
    equipment: Final = "shoe"

    def stakes(self, kind: str, payload: dict[str, Any]) -> tuple[tuple[str, int], ...]:
        return ((payload["wager"], payload["amount"]),) if kind == "hcf.bet.v1" else ()
    house_edges = {"high-card-flush": "exact count over all C(52,7) hands of the bonus wagers (Appendix A/B"
                                      " paytables); ante and raise are played against the designated player, not the"
                                      " house"}
    demo_tables = (DemoTable("HCF"),)

    def money(self, outcome: dict[str, Any]) -> RoundMoney:
        """Player-banked (003): the designated player takes the other side of every
        wager, so its net is the negative of the players' sum and the house's is 0."""
        out = settlement_money(outcome)
        if outcome.get("settlements"):
            dp = outcome["designated"]
            out.nets[dp] = out.nets.get(dp, 0) + out.house_net
        out.house_net = 0
        return out

    def house_edge(self, name: str) -> dict[str, dict[str, Any]]:
        return house_edge()

    def demo_round(self, rng: Any, players: list[str], cards: Any) -> tuple[dict[str, Any], Events]:
        """The first player designated with a 2,000.00 bankroll; antes, some flush bets;
        folds on weak hands, the largest raise the cap allows otherwise."""
        play = Play(self, {})
        play("hcf.designate.v1", {"seat": 1, "player": players[0], "bankroll": 200_000})
        for seat, player in enumerate(players[1:], start=2):
            play("hcf.bet.v1", {"seat": seat, "player": player, "wager": "ante", "amount": 1000})
            if rng.random() < 0.3:
                play("hcf.bet.v1", {"seat": seat, "player": player, "wager": "flush", "amount": 500})
        play("hcf.no_more_bets.v1", {})
        for seat in deal_order(play.st):
            play("hcf.card.v1", {"seat": seat, "card": next(cards)})
        for p in play.st.players:
            n = flush_rank(p.cards)[0]
            if n < 3 and rng.random() < 0.5:
                play("hcf.decision.v1", {"seat": p.seat, "action": "fold"})
            else:
                cap = 3 if n >= 6 else 2 if n == 5 else 1
                play("hcf.decision.v1", {"seat": p.seat, "action": "raise", "amount": cap * 1000})
        return {}, play.settle("hcf", ("seat", "wager", "outcome", "paid"))
    kinds = frozenset({"hcf.designate.v1", "hcf.bet.v1", "hcf.no_more_bets.v1", "hcf.card.v1",
                       "hcf.decision.v1", "hcf.settle.v1"})

    def start(self, rules: dict[str, Any]) -> HcfState:
        return HcfState(parse_rules(HcfRules, rules, "high card flush"))

    def apply(self, state: HcfState, kind: str, p: dict[str, Any]) -> HcfState:
        if kind == "hcf.designate.v1":
            if state.designated is not None or not state.betting_open:
                raise RuleViolation("the designated player is named once, before 'no more bets'")
            if any(x.seat == p["seat"] for x in state.players):
                raise RuleViolation(f"seat {p['seat']} has a wager: it cannot be the designated player")
            return evolve(state, designated=Player(p["seat"], p["player"]), bankroll=p["bankroll"])
        if kind == "hcf.bet.v1":
            if not state.betting_open:
                raise RuleViolation("bet after 'no more bets' (003 section 1)")
            if state.designated is None:
                raise RuleViolation("bets come after the designated player is named")
            if p["seat"] == state.designated.seat:
                raise RuleViolation("the designated player does not bet against itself")
            existing = [x for x in state.players if x.seat == p["seat"]]
            if p["wager"] == "ante":
                if existing:
                    raise RuleViolation(f"seat {p['seat']} already has an ante")
                new = Player(p["seat"], p["player"], (("ante", p["amount"]),))
                return evolve(state, players=state.players + (new,))
            if not existing:
                raise RuleViolation("a bonus wager needs the ante first (the ante is required, 003 section 1)")
            if existing[0].bet(p["wager"]):
                raise RuleViolation(f"seat {p['seat']} already has a {p['wager']} wager")
            return _with(state, evolve(existing[0], bets=existing[0].bets + ((p["wager"], p["amount"]),)))
        if kind == "hcf.no_more_bets.v1":
            if not state.players:
                raise RuleViolation("no player has an ante")
            return close_betting(state)
        if kind == "hcf.card.v1":
            if state.betting_open:
                raise RuleViolation("card dealt before 'no more bets'")
            order = deal_order(state)
            if len(state.dealt) >= len(order):
                raise RuleViolation("every hand already has 7 cards (003 section 1)")
            due = order[len(state.dealt)]
            if p["seat"] != due:
                raise RuleViolation(f"this card goes to seat {due}, not seat {p['seat']} (003 section 1: from the"
                                    " button's left, clockwise)")
            if p["card"] in state.dealt:
                raise RuleViolation(f"{p['card']} was already dealt: one 52-card deck (003 opening section)")
            state = evolve(state, dealt=state.dealt + (p["card"],))
            dp = state.designated
            if dp is not None and due == dp.seat:
                return evolve(state, designated=evolve(dp, cards=dp.cards + (p["card"],)))
            x = _player(state, due)
            return _with(state, evolve(x, cards=x.cards + (p["card"],)))
        if kind == "hcf.decision.v1":
            if not dealing_done(state):
                raise RuleViolation("decisions come after all 7 cards are dealt (003 section 2)")
            x = _player(state, p["seat"])
            if x.decision:
                raise RuleViolation(f"seat {x.seat} already decided ({x.decision})")
            if p["action"] == "fold":
                if p.get("amount") is not None:
                    raise RuleViolation("a fold takes no amount")
                return _with(state, evolve(x, decision="fold"))
            cap = raise_cap(x.cards) * x.bet("ante")
            amount = p.get("amount")
            if amount is None or amount > cap:
                n = flush_rank(x.cards)[0]
                raise RuleViolation(f"raise of {amount} with a {n}-card flush: at most {cap}"
                                    f" ({raise_cap(x.cards)}x the ante, 003 section 2)")
            return _with(state, evolve(x, decision="raise", raised=amount))
        if kind == "hcf.settle.v1":
            if not decisions_done(state):
                raise RuleViolation("settlement before every player has folded or raised")
            seat, wager = p["seat"], p["wager"]
            rows = {w: (o, paid) for w, o, paid in settlements(state).get(seat, [])}
            if wager not in rows:
                raise RuleViolation(f"seat {seat} has no {wager} wager")
            if (seat, wager) in state.settled:
                raise RuleViolation(f"seat {seat} {wager} is already settled")
            if (p["outcome"], p["paid"]) != rows[wager]:
                want = rows[wager]
                raise RuleViolation(f"wrong settlement of seat {seat} {wager}: the engine pays {want[0]} {want[1]},"
                                    f" the event says {p['outcome']} {p['paid']} (003)")
            return evolve(state, settled=state.settled | {(seat, wager)})
        raise RuleViolation(f"{kind} is not a high card flush event")

    def close_problem(self, state: HcfState) -> str | None:
        if not decisions_done(state):
            return "the hands are not all dealt and decided"
        left = [(s, w) for s, rows in settlements(state).items() for w, _, _ in rows if (s, w) not in state.settled]
        return f"wagers {left} are not settled" if left else None

    def draws(self, state: HcfState) -> tuple[tuple[Any, ...], list[Any], bool]:
        return ("cards", 1), list(state.dealt), dealing_done(state)

    def snapshot(self, state: HcfState) -> dict[str, Any]:
        dp = state.designated
        return {
            "designated": None if dp is None else {"seat": dp.seat, "player": dp.player, "bankroll": state.bankroll,
                                                   "cards": list(dp.cards), "flush": flush_rank(dp.cards)[0]},
            "players": [{"seat": x.seat, "player": x.player, "bets": dict(x.bets), "cards": list(x.cards),
                         "flush": flush_rank(x.cards)[0], "decision": x.decision, "raise": x.raised}
                        for x in state.players],
            "betting_open": state.betting_open,
            "settled": sorted(list(k) for k in state.settled),
        }

    def describe(self, state: HcfState, money: Money) -> list[str]:
        snap = self.snapshot(state)
        lines = []
        dp = snap["designated"]
        if dp is not None:
            lines.append(f"designated player seat {dp['seat']} {dp['player']} (bankroll {money(dp['bankroll'])}):"
                         f" {show_cards(dp['cards'])}, a {dp['flush']}-card flush")
        for x in snap["players"]:
            bets = ", ".join(f"{w.replace('_', ' ')} {money(a)}" for w, a in x["bets"].items())
            items = [f"seat {x['seat']} {x['player']} {bets}"]
            if x["cards"]:
                items.append(f"{show_cards(x['cards'])} ({x['flush']}-card flush)")
            if x["decision"]:
                items.append(x["decision"] + (f" {money(x['raise'])}" if x["raise"] else ""))
            lines += wrap(items, indent="  ")
        return lines

    def result(self, state: HcfState, money: Money) -> str | None:
        """003 section 4: the designated player's hand qualifies with a 3-card 9-high flush or better."""
        if not decisions_done(state) or state.designated is None:
            return None
        rank = flush_rank(state.designated.cards)
        verdict = "qualifies" if qualifies(rank) else "does not qualify"
        return f"The designated player's {rank[0]}-card flush {verdict}" + paid_text(self.outcome(state), money)

    def outcome(self, state: HcfState) -> dict[str, Any]:
        if not decisions_done(state):
            return {"qualified": None, "settlements": []}
        rows = []
        for seat, items in settlements(state).items():
            x = _player(state, seat)
            for wager, o, paid in items:
                staked = x.raised if wager == "raise" else x.bet(wager)
                rows.append({"seat": seat, "player": x.player, "wager": wager, "outcome": o, "paid": paid,
                             "staked": staked})
        return {"qualified": qualifies(flush_rank(state.designated.cards)),  # type: ignore[union-attr]  # decisions are done only once a player is designated
                "designated": state.designated.player,  # type: ignore[union-attr]  # decisions are done only once a player is designated
                "settlements": rows}


register_engine(HighCardFlushEngine())


# --- theoretical return of the bonus wagers -------------------------------------------

def suit_run_histograms() -> dict[int, dict[int, int]]:
    """For k cards of one suit: how many of the C(13, k) rank sets have each longest run."""
    out: dict[int, dict[int, int]] = {}
    for k in range(8):
        h: dict[int, int] = {}
        for ranks in itertools.combinations(range(13), k):
            n = longest_run(set(ranks))
            h[n] = h.get(n, 0) + 1
        out[k] = h
    return out


def bonus_distributions() -> tuple[dict[int, int], dict[int, int]]:
    """Exact counts over all C(52, 7) hands of (cards in the longest flush) and (length of
    the longest straight flush), by the hand's number of cards in each suit."""
    runs = suit_run_histograms()
    flush: dict[int, int] = {}
    sflush: dict[int, int] = {}
    for ks in itertools.product(range(8), repeat=4):
        if sum(ks) != 7:
            continue
        ways = 1
        for k in ks:
            ways *= comb(13, k)
        flush[max(ks)] = flush.get(max(ks), 0) + ways
        dist = {0: 1}  # longest straight flush so far over the suits -> count
        for k in ks:
            new: dict[int, int] = {}
            for a, ca in dist.items():
                for b, cb in runs[k].items():
                    m = max(a, b)
                    new[m] = new.get(m, 0) + ca * cb
            dist = new
        for n, c in dist.items():
            sflush[n] = sflush.get(n, 0) + c
    return flush, sflush


def house_edge(rules: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Exact edge of the Flush and Straight Flush bonus wagers (Appendix A/B paytables).

    Ante and raise are played against the designated player, not the house, so the
    house has no edge on them (its income is the rake, 003 "注意").
    """
    r = HcfRules.model_validate(rules or {})
    flush, sflush = bonus_distributions()
    total = comb(52, 7)
    out: dict[str, dict[str, Any]] = {}
    for name, counts, table in (("flush", flush, r.flush_pays), ("straight_flush", sflush, r.straight_flush_pays)):
        pays: dict[str, int] = {str(k): v for k, v in table.items()}
        back: int = sum(c * (pays[str(n)] + 1) for n, c in counts.items() if str(n) in pays)
        out[name] = {"pays": max(table.values()), "paytable": {n: table[n] for n in sorted(table)},
                     "edge": 1 - Fraction(back, total)}
    return out

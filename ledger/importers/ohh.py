"""OHH (Open Hand History, PokerTracker's hh-specs, JSON, spec_version 1.4.x) to and from
the poker engine's hands (pure, no I/O).

Reading: an OHH hand (``{"ohh": {...}}``) becomes a PHH hand (``ledger.importers.phh``),
which ``hand_events`` then judges through the poker engine like any imported history:

- games: ``Holdem`` NL (PHH ``NT``) and FL (``FT``), ``Omaha`` PL (``PO``) and
  ``OmahaHiLo`` FL (``FO/8``); anything else is refused, naming it;
- seats: players in clockwise seat order from the seat after the button, as PHH orders
  them: the small blind first, or heads-up the big blind (the button posts the small);
- forced bets: ``Post SB``, ``Post BB`` (the blinds), ``Post Ante`` (antes);
- hole cards: a ``Dealt Cards`` action, else the player's ``cards``, else unknown
  (``????``, as PHH writes a card nobody saw);
- actions: ``Fold``, ``Check``, ``Call``, ``Bet``, ``Raise``, ``Shows Cards``,
  ``Mucks Cards``. **Amounts, the reading we take where the spec's text is silent:** a
  ``Call`` and a ``Bet`` give the chips the action adds; a ``Raise`` gives the player's
  whole bet on the street after it ("raises to"), as PokerStars-derived OHH files write
  it. The hand's ``pots`` (``player_wins``) are checked against the engine's result, so a
  file written with the other reading is refused, not imported wrong.

Writing: a stored poker round (hold'em or Omaha) as an OHH 1.4.6 hand with the same
readings, its pots and wins from the engine's outcome; an imported round gets back its
players' names and the OHH fields its provenance kept (site, table, game number...).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ledger.games import RuleViolation
from ledger.games.poker import PokerEngine, final_stacks
from ledger.importers.phh import PhhError

SPEC_VERSION = "1.4.6"
GAMES = {("Holdem", "NL"): "NT", ("Holdem", "FL"): "FT", ("Omaha", "PL"): "PO", ("OmahaHiLo", "FL"): "FO/8"}
HOLE_CARDS = {"NT": 2, "FT": 2, "PO": 4, "FO/8": 4}
STREETS = ("Preflop", "Flop", "Turn", "River")
GAME_FIELDS = frozenset({"game_type", "bet_limit", "players", "rounds", "pots", "dealer_seat", "small_blind_amount",
                         "big_blind_amount", "ante_amount"})
"""The OHH fields the round itself carries; the others (site, table, game number, date,
currency...) are kept in its provenance."""


def load_ohh(text: str) -> list[tuple[str, dict[str, Any]]]:
    """[(section, OHH hand)] of a file: one JSON object, or several (one per line, or
    separated by blank lines, as hh-specs writes a session), each ``{"ohh": {...}}``."""
    import json

    decoder = json.JSONDecoder()
    out: list[tuple[str, dict[str, Any]]] = []
    at, n = 0, 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        try:
            doc, at = decoder.raw_decode(text, at)
        except ValueError as exc:
            raise PhhError(f"not valid JSON: {exc}") from None
        n += 1
        hand = doc.get("ohh") if isinstance(doc, dict) else None
        if not isinstance(hand, dict):
            raise PhhError(f"hand {n}: not an OHH hand (no \"ohh\" object)")
        out.append((str(n), hand))
    return out


def _num(x: Any, what: str) -> int | float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise PhhError(f"{what}: {x!r} is not an amount")
    return x


def ohh_to_phh(o: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """(the PHH hand of one OHH hand, the OHH player ids in its seat order), or PhhError
    naming what is not supported (module doc)."""
    try:
        return _to_phh(o)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise PhhError(f"malformed OHH hand: {type(exc).__name__}: {exc}") from None


def _to_phh(o: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    game = (o.get("game_type"), (o.get("bet_limit") or {}).get("bet_type"))
    variant = GAMES.get(game)  # type: ignore[arg-type]
    if variant is None:
        raise PhhError(f"OHH game {game[0]} {game[1]} is not supported (supported: "
                       + ", ".join(f"{g} {b}" for g, b in GAMES) + ")")
    players = sorted(o["players"], key=lambda p: p["seat"])
    if len(players) < 2:
        raise PhhError("an OHH hand has at least two players")
    rounds = sorted(o.get("rounds") or [], key=lambda r: r["id"])
    actions = [a for r in rounds for a in sorted(r.get("actions") or [], key=lambda a: a["action_number"])]
    posts = {a["action"]: a["player_id"] for a in actions if a["action"] in ("Post SB", "Post BB")}
    by_id = {p["id"]: p for p in players}
    ids = [p["id"] for p in players]
    if "Post SB" in posts and len(players) > 2:  # PHH's seat 1 is the small blind...
        first = ids.index(posts["Post SB"])
    elif "Post BB" in posts and len(players) == 2:  # ...heads-up, the big blind (the button posts the small)
        first = ids.index(posts["Post BB"])
    else:  # the seat after the button
        after = [i for i, p in enumerate(players) if p["seat"] > o.get("dealer_seat", 0)]
        first = after[0] if after else 0
    order = players[first:] + players[:first]
    seat_of = {p["id"]: i + 1 for i, p in enumerate(order)}
    n = len(order)
    blinds: list[int | float] = [0] * n
    antes: list[int | float] = [0] * n
    for a in actions:
        if a["action"] in ("Post SB", "Post BB"):
            blinds[seat_of[a["player_id"]] - 1] = _num(a["amount"], a["action"])
        elif a["action"] == "Post Ante":
            antes[seat_of[a["player_id"]] - 1] = _num(a["amount"], "Post Ante")
    if n == 2:  # heads-up PHH reads per-seat amounts reversed (pokerkit's convention, ledger.games.poker)
        blinds, antes = blinds[::-1], antes[::-1]
    dealt = {a["player_id"]: a.get("cards") or [] for a in actions if a["action"] == "Dealt Cards"}
    out: list[str] = []
    for p in order:
        cards = dealt.get(p["id"]) or p.get("cards") or []
        out.append(f"d dh p{seat_of[p['id']]} " + ("".join(cards) if cards else "??" * HOLE_CARDS[variant]))
    for r in rounds:
        if r["street"] not in STREETS and r["street"] != "Showdown":
            raise PhhError(f"OHH street {r['street']!r} is not supported")
        if r["street"] in STREETS[1:] and r.get("cards"):
            out.append("d db " + "".join(r["cards"]))
        for a in sorted(r.get("actions") or [], key=lambda a: a["action_number"]):
            kind, who = a["action"], f"p{seat_of.get(a.get('player_id'), 0)}"
            if kind in ("Post SB", "Post BB", "Post Ante", "Dealt Cards"):
                continue
            if a.get("player_id") not in by_id:
                raise PhhError(f"action {a['action_number']}: player {a.get('player_id')} is not at the table")
            if kind == "Fold":
                out.append(f"{who} f")
            elif kind in ("Check", "Call"):
                out.append(f"{who} cc")
            elif kind in ("Bet", "Raise"):
                out.append(f"{who} cbr {_num(a['amount'], kind)}")
            elif kind == "Shows Cards":
                out.append(f"{who} sm {''.join(a.get('cards') or [])}".rstrip())
            elif kind == "Mucks Cards":
                out.append(f"{who} sm")
            else:
                raise PhhError(f"action {a['action_number']}: OHH action {kind!r} is not supported")
    bb = _num(o.get("big_blind_amount") or max(blinds), "big_blind_amount")
    hand: dict[str, Any] = {
        "variant": variant, "ante_trimming_status": False, "antes": antes, "blinds_or_straddles": blinds,
        "starting_stacks": [_num(p["starting_stack"], "starting_stack") for p in order],
        "actions": out, "players": [str(p.get("name") or f"p{i + 1}") for i, p in enumerate(order)],
    }
    if variant in ("FT", "FO/8"):
        hand.update(small_bet=bb, big_bet=bb * 2)
    else:
        hand["min_bet"] = bb
    return hand, [p["id"] for p in order]


def _dec(x: Any) -> Decimal:
    return Decimal(repr(x)) if isinstance(x, float) else Decimal(x)


def put_in(o: dict[str, Any], order: list[Any]) -> list[Decimal]:
    """What each player (in ``order``, OHH player ids) put into the pots by the module's
    reading of amounts: antes, blinds, calls, bets, raises "to", less each street's bet
    nobody called (it comes back to its player at the end of the street, TDA)."""
    ids = {pid: i for i, pid in enumerate(order)}
    total = [Decimal(0)] * len(order)
    for r in sorted(o.get("rounds") or [], key=lambda r: r["id"]):
        street = [Decimal(0)] * len(order)
        for a in sorted(r.get("actions") or [], key=lambda a: a["action_number"]):
            i = ids.get(a.get("player_id"))
            if i is None or "amount" not in a:
                continue
            amount = _dec(a["amount"])
            if a["action"] == "Post Ante":
                total[i] += amount
                continue
            add = amount - street[i] if a["action"] == "Raise" else amount
            street[i] += add
            total[i] += add
        ranked = sorted(street, reverse=True)
        if len(ranked) > 1 and ranked[0] > ranked[1]:
            total[street.index(ranked[0])] -= ranked[0] - ranked[1]
    return total


def recorded_final_stacks(o: dict[str, Any], hand: dict[str, Any], order: list[Any]) -> list[Decimal] | None:
    """Each player's final stack as the OHH hand records it (starting stack, less what the
    player put in, plus ``player_wins``), in the PHH order (``order``: the OHH player ids);
    None when the file records no pots."""
    if not o.get("pots"):
        return None
    ids = {pid: i for i, pid in enumerate(order)}
    final = [_dec(s) for s in hand["starting_stacks"]]
    for pot in o["pots"]:
        for w in pot.get("player_wins") or []:
            i = ids.get(w["player_id"])
            if i is not None:
                final[i] += _dec(w["win_amount"])
    return [f - p for f, p in zip(final, put_in(o, order), strict=True)]


def round_to_ohh(events: list[Any], rules: dict[str, Any], provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """An OHH 1.4.6 hand (``{"ohh": {...}}``) of a stored poker round (``round.open`` first),
    played by ``rules`` (its house options as played, ``ledger.judges.round.played_rules``)."""
    variant = rules["variant"]
    game = next((g for g, v in GAMES.items() if v == variant), None)
    if game is None:
        raise PhhError(f"{variant} is not an OHH game (OHH export: hold'em and Omaha)")
    scale = rules.get("scale")

    def amount(value: int) -> int | float:
        if not scale:
            return value
        exact = Decimal(value) * Decimal(scale)
        return int(exact) if exact == exact.to_integral_value() else float(exact)

    names = (provenance or {}).get("names") or list(rules["players"])
    n = len(rules["players"])
    engine = PokerEngine()
    st = engine.start(rules)
    rounds: list[dict[str, Any]] = [{"id": 0, "street": "Preflop", "cards": [], "actions": []}]
    number = 0

    def act(seat: int, action: str, value: int | None = None, cards: list[str] | None = None) -> None:
        nonlocal number
        number += 1
        a: dict[str, Any] = {"action_number": number, "player_id": seat, "action": action}
        if value is not None:
            a["amount"] = amount(value)
        if cards is not None:
            a["cards"] = cards
        if value is not None and action not in ("Post Ante",) and st.stacks[seat - 1] == 0:
            a["is_allin"] = True
        rounds[-1]["actions"].append(a)

    for ev in events[1:]:
        p = ev.payload
        if ev.kind == "round.close.v1":
            continue
        seat = p.get("seat", 0)
        before_bet = st.bets[seat - 1] if seat else 0
        to_call = st.to_call(seat - 1) if seat and ev.kind == "poker.action.v1" else 0
        try:
            st = engine.apply(st, ev.kind, p)
        except RuleViolation as exc:
            raise PhhError(f"seq {ev.seq}: {exc.reason}") from None
        if ev.kind == "poker.post.v1":
            big = max(rules["blinds_or_straddles"])
            kind = "Post Ante" if p["type"] == "ante" else "Post BB" if p["amount"] == big else "Post SB"
            act(seat, kind, p["amount"])
        elif ev.kind == "poker.deal.v1" and seat:
            act(seat, "Dealt Cards", cards=list(p["cards"]))
        elif ev.kind == "poker.deal.v1":
            rounds.append({"id": len(rounds), "street": STREETS[len(rounds)], "cards": list(p["cards"]), "actions": []})
        elif ev.kind == "poker.action.v1":
            name = p["action"]
            if name == "fold":
                act(seat, "Fold")
            elif name == "check":
                act(seat, "Check")
            elif name == "call":
                act(seat, "Call", to_call)
            elif name == "bet":
                act(seat, "Bet", p["to"] - before_bet)
            else:  # raise, complete: the whole bet after it
                act(seat, "Raise", p["to"])
        elif ev.kind == "poker.show.v1":
            act(seat, "Shows Cards" if p["cards"] else "Mucks Cards", cards=list(p["cards"]) or None)
    outcome = engine.outcome(st)
    meta = {k: v for k, v in ((provenance or {}).get("meta") or {}).items() if not isinstance(v, dict)}
    ohh: dict[str, Any] = {
        "spec_version": SPEC_VERSION, "internal_version": SPEC_VERSION, "network_name": "pitboss",
        "site_name": "pitboss", "table_name": events[0].payload["table"], "table_size": max(n, 2),
        "game_number": events[0].stream.split(":", 1)[1], "start_date_utc": events[0].at, "currency": "Chips",
        **meta,
        "game_type": game[0], "bet_limit": {"bet_cap": 0, "bet_type": game[1]},
        "dealer_seat": n,  # PHH's last seat has the button (heads-up too: it posts the small blind)
        "small_blind_amount": amount(min((b for b in rules["blinds_or_straddles"] if b), default=0)),
        "big_blind_amount": amount(max(rules["blinds_or_straddles"])),
        "ante_amount": amount(max(rules.get("antes") or [0])),
        "players": [{"id": i + 1, "seat": i + 1, "name": str(names[i]),
                     "starting_stack": amount(rules["starting_stacks"][i]) if rules["starting_stacks"][i] is not None
                     else 0} for i in range(n)],
        "rounds": rounds,
    }
    if st.phase != "done":
        raise PhhError(f"{events[0].stream} is not over (its {st.phase} phase): OHH records whole hands")
    if any(s is None for s in rules["starting_stacks"]):
        raise PhhError(f"{events[0].stream} has unrecorded stacks: OHH needs every starting stack")
    ohh["pots"] = _pots(ohh, outcome, final_stacks(st), rules["starting_stacks"], amount, Decimal(scale or 1))
    return {"ohh": ohh}


def _pots(ohh: dict[str, Any], outcome: dict[str, Any], final: list[int], start: list[int],
          amount: Any, scale: Decimal) -> list[dict[str, Any]]:
    """The engine's pots as OHH writes them: each winner's ``win_amount`` is what the
    player collects (a pot won without a call includes the winner's own matched chips,
    which the engine leaves in the winner's stack), so that the file's own arithmetic
    (``recorded_final_stacks``) gives the engine's final stacks."""
    ids = [p["id"] for p in ohh["players"]]
    paid = put_in(ohh, ids)
    collected = [Decimal(f - s) * scale + p for f, s, p in zip(final, start, paid, strict=True)]
    pots: list[dict[str, Any]] = []
    given = [Decimal(0)] * len(ids)
    for k, pot in enumerate(outcome["pots"]):
        wins = [{"player_id": w["seat"], "win_amount": Decimal(w["amount"]) * scale} for w in pot["winners"]]
        for w in wins:
            given[w["player_id"] - 1] += w["win_amount"]
        pots.append({"number": k, "rake": amount(pot["rake"]), "player_wins": wins})
    for i, (want, got) in enumerate(zip(collected, given, strict=True)):
        if want != got:  # the winner's own matched chips, in the last pot the player won
            last = next((p for p in reversed(pots) if any(w["player_id"] == i + 1 for w in p["player_wins"])), None)
            if last is not None:
                next(w for w in last["player_wins"] if w["player_id"] == i + 1)["win_amount"] += want - got
    for p in pots:
        p["amount"] = _num_out(sum((w["win_amount"] for w in p["player_wins"]), Decimal(0)))
        for w in p["player_wins"]:
            w["win_amount"] = _num_out(w["win_amount"])
    return pots


def _num_out(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)

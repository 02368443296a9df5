"""PHH hand histories (uoftcprg/phh-std) to and from ledger events (pure, no I/O).

Reading: a ``.phh`` file is one TOML hand; a ``.phhs`` file holds one hand per TOML table
``[N]``. ``hand_events`` turns one hand into the rules of its ``round.open`` and the
round's events, running them through the poker engine as it goes, so a hand that breaks
the rules or stops before it is over is refused with the reason and the action number.

Amounts: PHH amounts may be decimals (HandHQ's dollars, ``2.50``). Every amount of a hand
is scaled by the smallest power of ten that makes all of them integers, and the unit is
recorded in the rules (``"scale": "0.01"``). A starting stack of ``inf`` (the source
logged none) is imported as ``null``: the engine lets that seat cover every bet and
replay reports only its net result, never an invented stack.

Action notation: ``d dh pN CARDS`` hole cards (or a draw's replacements), ``d db CARDS``
board, ``pN f`` fold, ``pN cc`` check or call, ``pN cbr X`` complete, bet or raise to X,
``pN pb`` post the bring-in, ``pN sd CARDS`` discard (``pN sd`` stands pat), ``pN sm
CARDS`` show (``pN sm`` or ``pN sm -`` mucks); text after ``#`` is a comment.
"""

from __future__ import annotations

import math
import re
import tomllib
from decimal import Decimal
from functools import lru_cache
from typing import Any

import rtoml

from ledger.games import RuleViolation
from ledger.games.poker import PokerEngine, PokerState, award_events, final_stacks
from ledger.games.poker_kinds import VARIANTS

ENGINE = PokerEngine()
IDENT_BAD = re.compile(r"[^A-Za-z0-9._~@/+-]")
_SEAT = re.compile(r"p\d+")
_SEATS = {f"p{i}": i for i in range(1, 11)}
"""The usual spellings of a seat, looked up; any other goes through ``_SEAT``."""


def _seat_of(word: str) -> int | None:
    """The N of a seat ``pN``, or None when the word does not name a seat that way."""
    seat = _SEATS.get(word)
    if seat is None and _SEAT.fullmatch(word):
        seat = int(word[1:])
    return seat


class PhhError(Exception):
    """A hand that cannot be imported; the message says why."""


def load_hands(text: str, multi: bool) -> list[tuple[str | None, dict[str, Any]]]:
    """[(section or None, hand)] from a .phh (one hand) or .phhs (tables [N]) text."""
    try:
        doc = rtoml.loads(text)  # the fast reader (pyproject.toml says why)
    except (ValueError, TypeError):  # rtoml.TomlParsingError is a ValueError
        try:  # the standard library's reader decides, and names the fault
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PhhError(f"not valid TOML: {exc}") from None
    if not multi:
        return [(None, doc)]
    return [(key, value) for key, value in doc.items() if isinstance(value, dict)]


def _decimals(x: Any) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise PhhError(f"{x!r} is not an amount")
    if isinstance(x, float):
        if math.isinf(x):
            return 0  # an unrecorded stack: imported as null (see the module docstring)
        if math.isnan(x):
            raise PhhError("an amount is nan")
        exp = Decimal(repr(x)).normalize().as_tuple().exponent
        return max(0, -int(exp))
    return 0


def _scaled(x: Any, factor: int) -> int:
    if type(x) is int:  # whole already: exact in Python's integers (most amounts: no Decimal made)
        return x * factor
    if isinstance(x, float) and not math.isfinite(x):  # an unrecorded stack is handled before (None)
        raise PhhError(f"amount {x} is not a finite amount")
    value = Decimal(repr(x)) * factor if isinstance(x, float) else Decimal(x) * factor
    if value != value.to_integral_value():
        raise PhhError(f"amount {x} is not a whole number of units")
    return int(value)


@lru_cache(maxsize=4096)
def _ident(name: str, seat: int) -> str:
    """The player's name as a ledger identifier (cached: a site's histories repeat names)."""
    ident = IDENT_BAD.sub("_", str(name))[:160]
    return ident or f"p{seat}"


def _cards(text: str) -> list[str]:
    if len(text) == 4:  # two cards: hold'em's hole cards, the most frequent deal
        return [text[:2], text[2:]]
    if text in ("", "-"):
        return []
    if len(text) % 2:
        raise PhhError(f"cards {text!r} are not two characters each")
    return [text[i:i + 2] for i in range(0, len(text), 2)]


def hand_events(hand: dict[str, Any], complete: bool = True,
                ) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], Any]:
    """(round rules, [(kind, payload)], final engine state) for one PHH hand, or PhhError.
    ``complete=False`` stops where the actions stop (for tests of a hand in progress)."""
    variant = hand.get("variant")
    if variant not in VARIANTS:
        raise PhhError(f"variant {variant!r} is not supported yet (supported: {', '.join(sorted(VARIANTS))})")
    actions = hand.get("actions")
    stacks = hand.get("starting_stacks")
    if not isinstance(actions, list) or not isinstance(stacks, list):
        raise PhhError("a hand needs 'starting_stacks' and 'actions'")
    n = len(stacks)
    if n < 2:
        raise PhhError("a hand has at least two starting stacks")
    for key in ("antes", "blinds_or_straddles", "players"):
        if hand.get(key) is not None and not isinstance(hand[key], list):
            raise PhhError(f"'{key}' is a list, not {type(hand[key]).__name__}")
    if hand.get("players") is not None and (len(hand["players"]) != n
                                            or not all(isinstance(p, str) for p in hand["players"])):
        raise PhhError(f"'players' names each of the {n} seats")
    try:
        return _hand_events(hand, complete, variant, actions, stacks, n)
    except (TypeError, ValueError, OverflowError, ArithmeticError) as exc:  # malformed beyond the checks above
        raise PhhError(f"malformed hand: {type(exc).__name__}: {exc}") from None


def _hand_events(hand: dict[str, Any], complete: bool, variant: str, actions: list[Any], stacks: list[Any], n: int,
                 ) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], Any]:
    amounts: list[Any] = list(stacks) + list(hand.get("antes") or []) + list(hand.get("blinds_or_straddles") or [])
    amounts += [hand[k] for k in ("min_bet", "small_bet", "big_bet", "bring_in") if k in hand]
    split = [str(a).partition("#")[0].split() for a in actions]  # each action's words, the comment dropped
    for a, parts in zip(actions, split):
        if len(parts) == 3 and parts[1] == "cbr":
            try:
                amounts.append(float(parts[2]) if "." in parts[2] else int(parts[2]))
            except ValueError:
                raise PhhError(f"action {a!r}: {parts[2]!r} is not an amount") from None
    # most histories are in whole chips: no amount to look at more closely
    decimals = 0 if all(type(x) is int for x in amounts) else max(_decimals(x) for x in amounts)
    factor = 10 ** decimals
    names = hand.get("players") or [f"p{i + 1}" for i in range(n)]
    rules: dict[str, Any] = {
        "variant": variant,
        "players": [_ident(p, i + 1) for i, p in enumerate(names)],
        "starting_stacks": [None if isinstance(x, float) and math.isinf(x) else _scaled(x, factor) for x in stacks],
        "antes": [_scaled(x, factor) for x in hand.get("antes") or [0] * n],
        "blinds_or_straddles": [_scaled(x, factor) for x in hand.get("blinds_or_straddles") or [0] * n],
        "ante_trimming": bool(hand.get("ante_trimming_status", False)),
    }
    for key in ("min_bet", "small_bet", "big_bet", "bring_in"):
        if hand.get(key):
            rules[key] = _scaled(hand[key], factor)
    for key in ("rake", "dead_blinds", "odd_chip", "limit_reopen_at_half", "open_pair_big_bet", "showdown"):
        if key in hand:  # house options beyond PHH (the ledger's own tests and producers)
            rules[key] = hand[key]
    if decimals:
        rules["scale"] = str(Decimal(1).scaleb(-decimals))
    try:
        st = ENGINE.start(rules)
    except RuleViolation as exc:
        raise PhhError(exc.reason) from None
    events: list[tuple[str, dict[str, Any]]] = []
    payload: dict[str, Any]
    while st.posts_due:
        seat, typ, amount = st.posts_due[0]
        payload = {"seat": seat + 1, "type": typ, "amount": amount}
        st = _apply(st, "poker.post.v1", payload, 0, None)
        events.append(("poker.post.v1", payload))
    for k, (raw, parts) in enumerate(zip(actions, split), start=1):  # each action judged here: no call a line
        size = len(parts)
        if size < 2:
            raise PhhError(f"{_where(k, raw, st.phase)}: not an action")
        actor, verb = parts[0], parts[1]
        if actor == "d":
            dealt = _seat_of(parts[2]) if verb == "dh" and size == 4 else None
            if dealt is not None:
                kind, payload = "poker.deal.v1", {"seat": dealt, "cards": _cards(parts[3])}
            elif verb == "db" and size == 3:
                kind, payload = "poker.deal.v1", {"seat": 0, "cards": _cards(parts[2])}
            else:
                raise PhhError(f"{_where(k, raw, st.phase)}: dealer action {verb!r} is not supported for {variant}")
        else:
            named = _seat_of(actor)
            if named is None or not 1 <= named <= n:
                raise PhhError(f"{_where(k, raw, st.phase)}: {actor!r} is not a seat of this hand")
            seat = named
            kind = "poker.action.v1"
            if verb == "f" and size == 2:
                payload = {"seat": seat, "action": "fold"}
            elif verb == "cc" and size == 2:
                betting = st.phase == "betting"
                payload = {"seat": seat, "action": "call" if betting and st.to_call(seat - 1) > 0 else "check"}
            elif verb == "cbr" and size == 3:
                word = parts[2]
                to = _scaled(float(word) if "." in word else int(word), factor)
                name = ("complete" if st.phase == "betting" and st.completion
                        else "raise" if st.phase == "betting" and max(st.bets) else "bet")
                payload = {"seat": seat, "action": name, "to": to}
            elif verb == "pb" and size == 2:
                payload = {"seat": seat, "action": "bring_in"}
            elif verb == "sd" and size <= 3:
                kind, payload = "poker.draw.v1", {"seat": seat, "discard": _cards(parts[2] if size == 3 else "")}
            elif verb == "sm" and size <= 3:
                kind, payload = "poker.show.v1", {"seat": seat, "cards": _cards(parts[2] if size == 3 else "")}
            else:
                raise PhhError(f"{_where(k, raw, st.phase)}: action {verb!r} is not supported for {variant}")
        st = _apply(st, kind, payload, k, raw)  # a refusal drops the whole hand
        events.append((kind, payload))
    if st.phase == "award":
        for award in award_events(st):
            st = _apply(st, "poker.award.v1", award, 0, None)
            events.append(("poker.award.v1", award))
    if st.phase != "done" and complete:
        raise PhhError(f"the history stops before the hand is over (it is in its {st.phase} phase)")
    return rules, events, st


def _where(k: int, raw: Any, phase: str) -> str:
    """Where a hand went wrong: action ``k`` (1-based) and its text, else the forced bets
    or the award."""
    return f"action {k} {raw!r}" if k else ("forced bets" if phase != "award" else "award")


def _apply(st: PokerState, kind: str, payload: dict[str, Any], k: int, raw: Any) -> PokerState:
    """The engine's state after the event (judged in place: a refusal drops the whole
    hand), or PhhError naming where (``_where``) and why. Plain functions, no closure over
    the hand's state: compiled (``ledger.native``), a closure's environment and the
    functions in it would refer to each other, a cycle that kept every hand's state for
    the garbage collector rather than freeing it when the hand is done."""
    try:
        return ENGINE.apply_in_place(st, kind, payload)
    except RuleViolation as exc:
        raise PhhError(f"{_where(k, raw, st.phase)}: {exc.reason}") from None


def check_finishing_stacks(hand: dict[str, Any], rules: dict[str, Any], st: Any) -> str | None:
    """Why the replayed stacks differ from the hand's finishing_stacks, or None."""
    recorded = hand.get("finishing_stacks")
    if recorded is None:
        return None
    factor = 10 ** (len(rules["scale"].split(".")[1]) if "scale" in rules else 0)
    got = final_stacks(st)
    exact = [Decimal(repr(x)) * factor for x in recorded]
    if any(v != v.to_integral_value() for v in exact):
        return (f"the recorded finishing_stacks {recorded} split a chip in halves; the replay gives {got}"
                " in whole units, the odd chip to the first winning seat left of the button (TDA)")
    want = [int(v) for v in exact]
    if got != want:
        return f"replayed final stacks {got} differ from the recorded finishing_stacks {want}"
    return None

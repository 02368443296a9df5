"""What a closed round did to everyone's money, from the engine's own outcome (pure).

``round_money(game, outcome, status)`` asks the game's engine (``Engine.money``,
``ledger.games``) how the round's outcome nets: per-player results and the house's
take, so the balance views never re-implement a game rule. A void round ("a system
malfunction voids all pays and plays", 000 III 2.1.5) moves no money; neither does a
round of a game with no engine (the ledger records it but cannot price it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledger.events import EventError
from ledger.games import ENGINES, RoundMoney
from ledger.keyring import KeyRing, load_keyring


def round_money(game: str, outcome: dict[str, Any] | None, status: str) -> RoundMoney:
    engine = ENGINES.get(game)
    if status != "complete" or not outcome or engine is None:
        return RoundMoney()
    return engine.money(outcome)


def readable_keyring(store: Any) -> KeyRing:
    """The key ring as stored, or an empty one where it was altered behind ingest's back
    (verify names that; the readers then count no table as imported)."""
    try:
        return load_keyring(store)
    except EventError:
        return KeyRing()


def opened_by_importer(ring: KeyRing, key_id: str) -> bool:
    """Whether a ``table.open`` signed by ``key_id`` opened an imported hand history's
    table: evidence in the hand's own unit, which moves no player's money (issue 13
    point 2)."""
    entry = ring.keys.get(key_id)
    return entry is not None and entry.role == "importer"


__all__ = ["RoundMoney", "opened_by_importer", "readable_keyring", "round_money"]


MINOR_DIGITS = {
    # ISO 4217 currencies a casino meets, and the digits of their minor unit; T$ (tournament
    # dollars, ``TDOLLAR``) are counted in the cents of the money they stand for
    # (``ledger.judges.tournament``). Every other code (CHIP, a house's chip unit) is a unit
    # counted whole.
    "TDOLLAR": 2,
    **dict.fromkeys(("EUR", "USD", "GBP", "CHF", "CAD", "AUD", "NZD", "HKD", "SGD", "MOP", "CNY", "SEK", "NOK",
                     "DKK", "PLN", "CZK", "HUF", "RON", "BGN", "TRY", "INR", "ZAR", "MXN", "BRL", "ILS", "AED",
                     "PHP", "THB", "MYR", "TWD", "RUB", "UAH", "ARS"), 2),
    **dict.fromkeys(("JPY", "KRW", "VND", "CLP", "ISK", "XAF", "XOF"), 0),
    **dict.fromkeys(("KWD", "BHD", "OMR", "JOD", "TND"), 3),
}
SYMBOLS = {"TDOLLAR": "T$", "EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "CHF": "CHF ", "INR": "₹", "KRW": "₩", "ILS": "₪"}


def table_currency(events: Iterable[Any], table: str, at: str | None = None) -> str:
    """The currency ``table`` opened in, from events that include its ``table.open``
    events: its last opening (at or before ``at``, an instant, when given), or "?"."""
    from ledger.timeutil import parse_utc

    when = parse_utc(at) if at is not None else None
    opened = [ev.payload["currency"] for ev in events if ev.stream == f"table:{table}" and ev.kind == "table.open.v1"
              and (when is None or parse_utc(ev.at) <= when)]
    return opened[-1] if opened else "?"


def show(amount: int, currency: str) -> str:
    """An integer amount as a person reads it (issue 17 point 3): ISO 4217 money in major
    units with its symbol or code (78800 EUR -> "€788.00", 5 JPY -> "¥5", 1234 KWD ->
    "1.234 KWD"), a chip unit whole with its name ("1,250 CHIP"). JSON keeps the integers."""
    sign = "-" if amount < 0 else ""
    n = abs(amount)
    digits = MINOR_DIGITS.get(currency)
    if digits is None:
        return f"{sign}{n:,} {currency}"
    major, minor = divmod(n, 10 ** digits)
    number = f"{major:,}" + (f".{minor:0{digits}d}" if digits else "")
    symbol = SYMBOLS.get(currency)
    return f"{sign}{symbol}{number}" if symbol else f"{sign}{number} {currency}"

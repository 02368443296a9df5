"""Money as a person reads it (issue 17 point 3): major units with the currency's symbol
or code (ISO 4217 minor-unit digits), chip units whole with their name; JSON keeps the
integers."""

from __future__ import annotations

import pytest

from projections.money import show


@pytest.mark.parametrize("amount, currency, text", [
    (78800, "EUR", "€788.00"), (-5, "EUR", "-€0.05"), (0, "USD", "$0.00"), (123456789, "USD", "$1,234,567.89"),
    (50, "CHF", "CHF 0.50"), (5, "JPY", "¥5"), (1234, "KWD", "1.234 KWD"), (1250, "CHIP", "1,250 CHIP"),
    (-3, "CHIP", "-3 CHIP"), (1999, "TDOLLAR", "T$19.99"), (100, "SEK", "1.00 SEK"),
])
def test_amounts_in_major_units_with_the_currency_ISO_4217(amount: int, currency: str, text: str) -> None:
    assert show(amount, currency) == text

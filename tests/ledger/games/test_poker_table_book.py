"""The poker table's book (``ledger.games.poker_table``) as pure rules, over many hands:
the rotations TDA 31 and 33 describe, which the ingest tests
(``tests/ledger/judges/test_poker_table.py``) check a hand at a time."""

from __future__ import annotations

from ledger.games.poker_table import Book


def _book(seats: dict[str, int], size: int = 9) -> Book:
    book = Book(size, (50, 100))
    for player, n in seats.items():
        book.seat("seat.join.v1", player, {"table": "T", "seat": n})
        book.chips("chips.buy_in.v1", player, 10_000)
    return book


def _play(book: Book, rid: str, button: int | None = None) -> dict:  # type: ignore[type-arg]
    """The next hand to everyone present, dealt and closed with no chips changing hands."""
    present = {s.player for s in book.seats.values() if not s.out}
    rules, _ = book.next_hand(present, button)
    assert book.hand_problem(rules) is None
    book.open_hand(rid, rules)
    book.close_hand(rid, dict(zip(rules["players"], rules["starting_stacks"], strict=True)))
    return rules


def _big_blind(rules: dict) -> str:  # type: ignore[type-arg]
    blinds = rules["blinds_or_straddles"]
    if len(blinds) == 2:  # heads-up, read reversed: the first seat (the big blind) posts the second amount
        return str(rules["players"][0])
    return str(rules["players"][blinds.index(100)])


def test_the_big_blind_goes_round_once_per_orbit_TDA_31() -> None:
    book = _book({"A": 2, "B": 4, "C": 6, "D": 8})
    bigs = [_big_blind(_play(book, f"h{k}", button=8 if k == 0 else None)) for k in range(8)]
    assert bigs == ["B", "C", "D", "A", "B", "C", "D", "A"]


def test_from_heads_up_to_three_nobody_posts_the_big_blind_twice_TDA_33() -> None:
    book = _book({"A": 1, "B": 3})
    first = _play(book, "h0", button=3)  # heads-up: B is the button and posts the small blind
    assert first["players"] == ["A", "B"] and _big_blind(first) == "A"
    second = _play(book, "h1")
    assert _big_blind(second) == "B"
    book.seat("seat.join.v1", "C", {"table": "T", "seat": 2})  # between A and B
    book.chips("chips.buy_in.v1", "C", 10_000)
    # three-handed: the big blind moves on to A, B (who had it) has the small blind, and the button,
    # which heads-up was A's small blind, sits right of the small blind: C, new, posts a live big blind
    third = _play(book, "h2")
    assert third["players"] == ["B", "A", "C"] and third["blinds_or_straddles"] == [50, 100, -100]
    assert [_big_blind(_play(book, f"h{k}")) for k in range(3, 6)] == ["C", "B", "A"]


def test_an_empty_table_draws_its_button_again() -> None:
    book = _book({"A": 1, "B": 3, "C": 5})
    _play(book, "h0", button=5)
    for player in ("A", "B", "C"):
        book.seat("seat.leave.v1", player, {"table": "T"})
    assert book.bb is None
    book.seat("seat.join.v1", "D", {"table": "T", "seat": 7})
    book.seat("seat.join.v1", "E", {"table": "T", "seat": 9})
    for player in ("D", "E"):
        book.chips("chips.buy_in.v1", player, 10_000)
    rules = _play(book, "h1", button=9)
    assert rules["players"] == ["D", "E"] and rules["blinds_or_straddles"] == [50, 100]

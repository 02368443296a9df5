"""References to events, written once: ``stream#seq`` (``event_ref``, ``parse_ref``), the form
rulings, penalties and reports cite events in."""

from __future__ import annotations


def event_ref(stream: str, seq: int) -> str:
    """``round:B1-7#3``: the event ``seq`` of ``stream``."""
    return f"{stream}#{seq}"


def parse_ref(text: str) -> tuple[str, int]:
    """(stream, seq) of a ``stream#seq`` reference (schemas check its form first)."""
    stream, _, seq = text.rpartition("#")
    return stream, int(seq)


__all__ = ["event_ref", "parse_ref"]

"""The chain rule, written once: every event of a stream names the hash of the one before
it (``prev``; the fixed ``GENESIS_PREV`` for seq 1), and seqs run 1, 2, 3 ... with no gap.

``link(before, seq, prev)`` says whether an event follows the stream's previous event
(``before``: its (seq, hash), None when the stream has none). Ingest, verify, evidence
bundles and replay all ask it; each words the answer for its reader.
"""

from __future__ import annotations

from typing import Literal

from ledger.canonical import GENESIS_PREV

Link = Literal["ok", "repeat", "gap", "prev"]
"""ok: it follows; repeat: its seq is not after the previous one's; gap: seqs are
missing between them; prev: the seq follows but ``prev`` is not the previous hash."""


def follows(before: tuple[int, str] | None, seq: int, prev: str) -> bool:
    """Whether ``link`` says "ok": one call, no tuple, for verify, which asks it of every
    row and needs ``link``'s other answers (and their wording) only for a problem."""
    if before is None:
        return seq == 1 and prev == GENESIS_PREV
    return seq == before[0] + 1 and prev == before[1]


def link(before: tuple[int, str] | None, seq: int, prev: str) -> Link:
    if follows(before, seq, prev):
        return "ok"
    last_seq = before[0] if before is not None else 0
    if seq <= last_seq:
        return "repeat"
    if seq > last_seq + 1:
        return "gap"
    return "prev"  # the seq follows (``follows`` said no: ``prev`` is not ``last_hash``)


def link_problem(before: tuple[int, str] | None, seq: int, prev: str) -> str | None:
    """The verifier's wording of ``link``: None when the event follows."""
    last_seq = before[0] if before is not None else 0
    result = link(before, seq, prev)
    if result == "ok":
        return None
    if result == "prev":
        return f"prev does not match the hash of seq {last_seq}" if last_seq else "prev of seq 1 is not the genesis value"
    if result == "repeat":
        return f"seq {seq} appears after seq {last_seq}: events out of order or repeated"
    missing = f"seq {last_seq + 1}" if seq == last_seq + 2 else f"seqs {last_seq + 1}..{seq - 1}"
    return f"{missing} missing: deleted from the stream"


__all__ = ["GENESIS_PREV", "Link", "follows", "link", "link_problem"]

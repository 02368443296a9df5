"""What reconciliation checks about the day's rulings and incidents (issue #6 point 5;
rules in ``ledger.judges.ruling``). Fed the ledger's rows in order; pure.

- Server crash (000 refund policy: "in cash games every hand in progress is rolled
  back"): each poker round open when the incident's disruption ``started`` (opened at or
  before it, not closed before it) must carry a ``rollback`` ruling citing the incident.
- Misdeal (TDA 2013 rule 34 B: "the re-deal is dealt exactly as the first: the button
  does not move, no new player is seated, the blinds do not go up"): the re-deal round
  the ruling names exists and was opened with the same rules (players, stacks, button,
  blinds) as the hand it replaces.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ledger.events import SignedEvent
from ledger.games import ENGINES
from ledger.refs import event_ref
from ledger.timeutil import parse_utc_trusted


@dataclass
class RulingBook:
    rounds: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """stream -> (opened, closed) of the rounds of games whose players play each other
    (``banking == "pool"``): the only ones a crash's refund policy is checked for, so the
    others are not kept."""
    starts: Sequence[str] | None = None
    """The ``started`` of the ledger's crash incidents, when the caller knows them before
    the pass (reconciliation reads the few incidents first), or more of them: a closed
    round then stays in ``rounds`` only if it was in progress at one of them, so the book
    holds the rounds open at once and those few, not the day's. None keeps every one."""
    _began: list[datetime] = field(default_factory=list, init=False, repr=False)  # ``starts`` as instants, sorted
    rulings: list[dict[str, Any]] = field(default_factory=list)
    crashes: list[tuple[str, str]] = field(default_factory=list)  # (incident ref, started) of the day

    def __post_init__(self) -> None:
        self._began = sorted(parse_utc_trusted(s) for s in self.starts or ())

    def opened(self, stream: str, game: str, at: str) -> None:
        engine = ENGINES.get(game)
        if engine is not None and engine.banking == "pool":  # 000 refund policy: cash games players play each other
            self.rounds[stream] = (at, None)

    def closed(self, stream: str, at: str) -> None:
        if stream not in self.rounds:
            return
        opened = self.rounds[stream][0]
        if self.starts is not None:
            began, first = self._began, parse_utc_trusted(opened)
            k = bisect.bisect_left(began, first)  # the first crash at or after the round's opening
            if k == len(began) or began[k] >= parse_utc_trusted(at):
                del self.rounds[stream]  # in progress at no crash: what ``problems`` asks of it is answered
                return
        self.rounds[stream] = (opened, at)

    def record(self, stream: str, seq: int, kind: str, payload: dict[str, Any], at: str, on_day: bool) -> None:
        if kind == "incident.server_crash.v1":
            if on_day:
                self.crashes.append((event_ref(stream, seq), payload["started"]))
            return
        self.rulings.append({"round": stream, "seq": seq, "rule": payload["rule"], "effect": payload["effect"],
                             "acts_on": payload["acts_on"], "redeal": payload.get("redeal"), "on_day": on_day})

    def of_day(self) -> list[dict[str, Any]]:
        return [{k: r[k] for k in ("round", "seq", "rule", "effect", "acts_on")} for r in self.rulings if r["on_day"]]

    def problems(self, opening_of: Callable[[str], SignedEvent | None]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for ref, started in self.crashes:
            rolled = {r["round"] for r in self.rulings if r["effect"] == "rollback" and ref in r["acts_on"]}
            began = parse_utc_trusted(started)
            for stream, (opened, closed) in sorted(self.rounds.items()):  # compared as instants, not as text
                in_progress = parse_utc_trusted(opened) <= began and (closed is None or parse_utc_trusted(closed) > began)
                if in_progress and stream not in rolled:
                    out.append({"check": "rulings", "stream": stream, "seq": None,
                                "reason": f"in progress when the server crash {ref} began ({started}) but not"
                                          " rolled back to its starting stacks (000 refund policy)"})
        for r in self.rulings:
            if not r["on_day"] or r["effect"] != "misdeal":
                continue
            first, again = opening_of(r["round"]), opening_of(f"round:{r['redeal']}")
            if again is None or again.kind != "round.open.v1":
                out.append({"check": "rulings", "stream": r["round"], "seq": r["seq"],
                            "reason": f"the misdeal's re-deal round:{r['redeal']} is not in the ledger (TDA 34 B)"})
            elif first is not None and (again.payload["rules"], again.payload["table"]) != (
                    first.payload["rules"], first.payload["table"]):
                out.append({"check": "rulings", "stream": again.stream, "seq": 1,
                            "reason": f"the re-deal of {r['round']} is not dealt as the misdealt hand was (same"
                                      " table, players, stacks, button and blinds: TDA 34 B)"})
        return out

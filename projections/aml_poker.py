"""What a poker hand's play says about chip dumping (pure; used by ``projections.aml``).

Issue #5 point 4 names the behaviour: "folding strong hands or large calls with weak
ones, losing to the same opponent" (TDA 2013 rule 58 on chip dumping and collusion). A
random loss says nothing; these plays do, in hold'em (``NT``, ``FT``: two private hole
cards and a board, the ledger knows every dealt card):

- **a strong hand folded after putting chips in**: the player had paid more than the
  forced bets (so chose to play the hand) and folds, holding preflop a pair of tens or
  better or ace-king, after the flop two pair or better with the board dealt so far;
- **a large call with a weak hand**: a call of at least ``call_share`` (default 25%) of
  the player's starting stack holding preflop two unsuited cards below ten that are not
  a pair, after the flop no pair at all.

The thresholds are house choices (stated here, configurable through ``AmlConfig``),
not a published standard. Other variants are not judged (listed in ``aml.NOT_COVERED``).
"""

from __future__ import annotations

from typing import Any

from ledger.events import SignedEvent
from ledger.games import RuleViolation
from ledger.games.poker import PokerEngine
from ledger.games.poker_hands import HIGH_CARD, RANK_VALUE, TWO_PAIR, high_rank

JUDGED_VARIANTS = ("NT", "FT")
_ENGINE = PokerEngine()


def _strong(hole: list[str], board: list[str]) -> bool:
    if not board:
        r = sorted((RANK_VALUE[c[0]] for c in hole), reverse=True)
        return (r[0] == r[1] and r[0] >= 10) or r == [14, 13]
    return high_rank(hole + board)[0] >= TWO_PAIR


def _weak(hole: list[str], board: list[str]) -> bool:
    if not board:
        r = [RANK_VALUE[c[0]] for c in hole]
        return r[0] != r[1] and max(r) < 10 and hole[0][1] != hole[1][1]
    return high_rank(hole + board)[0] == HIGH_CARD


def dumping_plays(rules: dict[str, Any], events: list[SignedEvent], call_share: float = 0.25) -> dict[int, str]:
    """Seat index (0-based) -> the dumping play seen, for a stored hold'em hand's events
    (round.open first). Empty for other variants or when nobody played so."""
    if rules.get("variant") not in JUDGED_VARIANTS:
        return {}
    st = _ENGINE.start(rules)
    found: dict[int, str] = {}
    for ev in events[1:]:
        if ev.kind == "poker.action.v1" and len(st.hole[ev.payload["seat"] - 1]) == 2:
            i = ev.payload["seat"] - 1
            hole, board = list(st.hole[i]), list(st.board)
            if ev.payload["action"] == "fold" and st.paid[i] > st.antes[i] + st.blinds[i] and _strong(hole, board):
                found.setdefault(i, f"folded {''.join(hole)} {'preflop' if not board else 'on ' + ''.join(board)}"
                                    f" after putting in {st.paid[i]}")
            elif (ev.payload["action"] == "call" and st.to_call(i) >= call_share * st.start_stacks[i]
                  and _weak(hole, board)):
                found.setdefault(i, f"called {st.to_call(i)} with {''.join(hole)}"
                                    f" {'preflop' if not board else 'on ' + ''.join(board)}")
        if ev.kind == "round.close.v1":
            break
        try:
            st = _ENGINE.apply_in_place(st, ev.kind, ev.payload)
        except RuleViolation:  # an altered round: reconciliation names it; judge the play up to there
            break
    return found

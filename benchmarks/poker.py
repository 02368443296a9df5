"""Poker benchmarks: one JSON object of figures and same-run ratios (``measure`` is
also called by ``benchmarks/run.py``).

    python benchmarks/poker.py [--quick] --json

- replay_from_phh_text_hands_per_s: single-hand corpus files (../shared/corpus/phh) from
  their PHH text: TOML parsed, amounts scaled, events built and judged by the engine
  (``ledger.importers.phh.hand_events``); baseline_pokerkit_from_phh_text_hands_per_s:
  pokerkit's ``HandHistory.loads`` on the same texts, every state of the hand built. Like
  for like; GC frozen after set-up for both (``gc.freeze``), runs alternated, best of 3.
  Goal: at least 10x pokerkit.
- replay_stored_events_hands_per_s: the same hands as the ledger replays a stored round
  (the engine over the stored events, no parsing): for scale, against the same baseline.
- eval7_replay_path_per_s: 7-card high-hand evaluations as the engine makes them at a
  showdown (``ledger.games.poker.high_hand_key``: a seat's hole-card ids and the board's,
  kept by the engine since the cards were dealt, joined and passed to phevaluator's C
  function); baseline: phevaluator's C ``evaluate_7cards`` on integer card ids (its
  fastest entry point), the seven ids already in one list. Goal: at least 0.5.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import random
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ledger.games.cards import deck  # noqa: E402
from ledger.games.poker import PokerEngine, PokerState, high_hand_key  # noqa: E402
from ledger.games.poker_hands import CARD_ID  # noqa: E402
from ledger.importers.phh import PhhError, hand_events, load_hands  # noqa: E402
from ledger.native import modules as native_modules  # noqa: E402

ENGINE = PokerEngine()
CORPUS_CANDIDATES = [os.environ.get("PITBOSS_PHH_CORPUS", ""),
                     str(Path(__file__).resolve().parents[2] / "shared" / "corpus" / "phh"), "/work/shared/corpus/phh"]


def _corpus_root() -> Path:
    root = next((Path(c) for c in CORPUS_CANDIDATES if c and (Path(c) / "MANIFEST.tsv").exists()), None)
    if root is None:
        raise SystemExit("no PHH corpus found (set PITBOSS_PHH_CORPUS)")
    return root


def corpus_texts(limit: int) -> list[str]:
    """PHH texts of single-hand files (.phh) that both replayers take: a supported variant,
    finite stacks, as recorded (another room's showdown order)."""
    root = _corpus_root()
    with open(root / "MANIFEST.tsv", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["path"].endswith(".phh")]
    random.Random(1).shuffle(rows)
    texts: list[str] = []
    for row in rows:
        text = (root / row["path"]).read_text(encoding="utf-8")
        (_, hand), = load_hands(text, False)
        if not all(isinstance(s, int) for s in hand.get("starting_stacks", [None])):
            continue
        try:
            hand_events({**hand, "showdown": "as_recorded"})
        except PhhError:
            continue
        texts.append(text)
        if len(texts) == limit:
            break
    return texts


def _timed(fn: Any) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _showdown_seat(hole: tuple[int, ...], board: tuple[int, ...]) -> PokerState:
    """An engine state holding what ``high_hand_key`` reads at a showdown: seat 1's hole
    card ids and the board's, as the engine keeps them (tuples); the rest of a hand's state
    plays no part in the call."""
    st = PokerState.__new__(PokerState)
    st.hole_ids, st.board_ids = [hole], board
    return st


def measure(quick: bool) -> dict[str, Any]:
    """Poker figures and their same-run baselines (module docstring)."""
    import phevaluator._pheval as ph_eval  # the C module: evaluate_7cards on card ids, no Python wrapper
    import pokerkit

    texts = corpus_texts(300 if quick else 2000)
    parsed = [load_hands(t, False)[0][1] for t in texts]
    stored = [hand_events({**h, "showdown": "as_recorded"})[:2] for h in parsed]  # what the ledger holds

    def ours_text() -> None:  # from the PHH text: TOML parsed, events built and judged
        for t in texts:
            hand_events({**load_hands(t, False)[0][1], "showdown": "as_recorded"})

    def theirs_text() -> None:  # pokerkit from the same text: TOML parsed, every state built
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for t in texts:
                for _ in pokerkit.HandHistory.loads(t):
                    pass

    def ours_stored() -> None:
        for rules, events in stored:
            st = ENGINE.start(rules)
            for kind, payload in events:
                st = ENGINE.apply_in_place(st, kind, payload)
            assert st.phase == "done"

    rng = random.Random(7)
    cards = deck()
    n_eval = 20_000 if quick else 100_000
    sevens = [rng.sample(cards, 7) for _ in range(n_eval)]
    ids = {c: "23456789TJQKA".index(c[0]) * 4 + "cdhs".index(c[1]) for c in cards}  # phevaluator's card ids
    assert ids == CARD_ID  # the engine's numbering is phevaluator's
    seven_ids = [[ids[c] for c in h] for h in sevens]
    # what the engine evaluates at a hold'em showdown: a seat's two hole cards and the five
    # board cards, kept as ids beside the cards since they were dealt
    seats = [_showdown_seat(tuple(h[:2]), tuple(h[2:])) for h in seven_ids]

    def eval_ours() -> None:  # the engine's own call, the concatenation of hole and board included
        for st in seats:
            high_hand_key(st, 0)

    def eval_ph_fastest() -> None:  # the C function itself, on card ids: no string parsing, no dispatch
        f = ph_eval.evaluate_7cards
        for a, b, c, d, e, g, k in seven_ids:
            f(a, b, c, d, e, g, k)

    repeats = 3
    gc.collect()
    gc.freeze()  # the set-up's objects out of the collector's way, for both sides alike
    try:
        t_text, t_pk, t_stored, e_ours, e_ph = ([] for _ in range(5))
        for _ in range(repeats):  # alternated, so both sides see the machine alike
            t_text.append(_timed(ours_text))
            t_pk.append(_timed(theirs_text))
            t_stored.append(_timed(ours_stored))
            e_ours.append(_timed(eval_ours))
            e_ph.append(_timed(eval_ph_fastest))
    finally:
        gc.unfreeze()
    n = len(texts)
    return {
        "hands": n,
        "engine": native_modules().get("ledger.games.poker", "python"),  # compiled (setup.py, ledger.native) or the source
        "variants": sorted({h["variant"] for h in parsed}),
        "replay_from_phh_text_hands_per_s": round(n / min(t_text)),
        "baseline_pokerkit_from_phh_text_hands_per_s": round(n / min(t_pk)),
        "replay_stored_events_hands_per_s": round(n / min(t_stored)),
        "eval7_replay_path_per_s": round(n_eval / min(e_ours)),
        "baseline_phevaluator_c_evaluate_7cards_ids_per_s": round(n_eval / min(e_ph)),
        "ratios": {
            "replay_from_phh_text_vs_pokerkit": round(min(t_pk) / min(t_text), 2),
            "replay_stored_vs_pokerkit_from_text": round(min(t_pk) / min(t_stored), 2),
            "eval7_replay_path_vs_phevaluator_fastest": round(min(e_ph) / min(e_ours), 3),
        },
        "goals": {"replay_from_phh_text_vs_pokerkit": 10, "eval7_replay_path_vs_phevaluator_fastest": 0.5},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = measure(args.quick)
    print(json.dumps(out, indent=2, sort_keys=True) if args.json else out)


if __name__ == "__main__":
    main()

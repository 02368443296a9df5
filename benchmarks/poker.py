"""Poker benchmarks (issue #3): one JSON object of figures and same-run ratios.

    python benchmarks/poker.py [--quick] --json

- replay_hands_per_s: corpus hands (../shared/corpus/phh) replayed the way the ledger
  replays a stored round: the engine started from the round's rules and every stored
  event (deal, action, show, award) judged in order, pots and awards derived. Rules only:
  no signatures, no storage.
- replay_from_phh_text_hands_per_s: the same hands from their PHH action strings
  (``ledger.importers.phh.hand_events``: strings parsed, amounts scaled, events built and judged).
- baseline_pokerkit_replay_hands_per_s: the same hands, from the same parsed TOML, through
  ``pokerkit.HandHistory`` (every state of the hand built), measured in the same run.
  Ratio goal: at least 10x pokerkit.
- eval7_per_s: 7-card high-hand evaluations (``ledger.games.poker_hands.high_rank``) of
  random hands; baseline_phevaluator_eval7_per_s: the same hands through phevaluator
  (a C extension: the fastest evaluator on PyPI we found), and pokerkit's
  ``StandardHighHand.from_game`` for scale.
"""

from __future__ import annotations

import argparse
import csv
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
from ledger.games.poker import PokerEngine  # noqa: E402
from ledger.games.poker_hands import high_rank  # noqa: E402
from ledger.importers.phh import hand_events, load_hands  # noqa: E402

ENGINE = PokerEngine()
CORPUS_CANDIDATES = [os.environ.get("PITBOSS_PHH_CORPUS", ""),
                     str(Path(__file__).resolve().parents[2] / "shared" / "corpus" / "phh"), "/work/shared/corpus/phh"]


def corpus_hands(limit: int) -> list[dict[str, Any]]:
    root = next((Path(c) for c in CORPUS_CANDIDATES if c and (Path(c) / "MANIFEST.tsv").exists()), None)
    if root is None:
        raise SystemExit("no PHH corpus found (set PITBOSS_PHH_CORPUS)")
    with open(root / "MANIFEST.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    hands: list[dict[str, Any]] = []
    for row in rows:  # every variant first, then fill with the (mostly NT) rest
        path = root / row["path"]
        for _, hand in load_hands(path.read_text(encoding="utf-8"), path.suffix == ".phhs"):
            if all(isinstance(s, int) for s in hand["starting_stacks"]):  # pokerkit's replay needs finite stacks
                hands.append({**hand, "showdown": "as_recorded"})  # another room's showdown, as the history has it
    random.Random(1).shuffle(hands)
    return hands[:limit]


def best_of(fn: Any, repeats: int) -> float:
    return min(fn() for _ in range(repeats))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    import phevaluator
    import pokerkit

    n_hands = 300 if args.quick else 2000
    hands = corpus_hands(n_hands)

    def ours() -> float:
        t = time.perf_counter()
        for h in hands:
            hand_events(h)
        return time.perf_counter() - t

    stored = [hand_events(h)[:2] for h in hands]  # what the ledger holds: rules and events

    def ours_stored() -> float:
        t = time.perf_counter()
        for rules, events in stored:
            st = ENGINE.start(rules)
            for kind, payload in events:
                st = ENGINE.apply_in_place(st, kind, payload)
            assert st.phase == "done"
        return time.perf_counter() - t

    def theirs() -> float:
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for h in hands:
                for _ in pokerkit.HandHistory(**{k: v for k, v in h.items() if k in PK_FIELDS}):
                    pass
        return time.perf_counter() - t

    rng = random.Random(7)
    cards = deck()
    n_eval = 20_000 if args.quick else 100_000
    sevens = [rng.sample(cards, 7) for _ in range(n_eval)]

    def eval_ours() -> float:
        t = time.perf_counter()
        for h in sevens:
            high_rank(h)
        return time.perf_counter() - t

    def eval_ph() -> float:
        t = time.perf_counter()
        for h in sevens:
            phevaluator.evaluate_cards(*h)
        return time.perf_counter() - t

    def eval_pk() -> float:
        sample = sevens[: n_eval // 10]
        t = time.perf_counter()
        for h in sample:
            pokerkit.StandardHighHand.from_game("".join(h))
        return (time.perf_counter() - t) * 10

    repeats = 2 if args.quick else 3
    t_ours, t_pk = best_of(ours, repeats), best_of(theirs, 1 if args.quick else 2)
    t_stored = best_of(ours_stored, repeats)
    e_ours, e_ph, e_pk = best_of(eval_ours, repeats), best_of(eval_ph, repeats), best_of(eval_pk, 1)
    out = {
        "hands": len(hands),
        "variants": sorted({h["variant"] for h in hands}),
        "replay_hands_per_s": round(len(hands) / t_stored),
        "replay_from_phh_text_hands_per_s": round(len(hands) / t_ours),
        "baseline_pokerkit_replay_hands_per_s": round(len(hands) / t_pk),
        "eval7_per_s": round(n_eval / e_ours),
        "baseline_phevaluator_eval7_per_s": round(n_eval / e_ph),
        "baseline_pokerkit_eval7_per_s": round(n_eval / e_pk),
        "ratios": {
            "replay_vs_pokerkit": round(t_pk / t_stored, 2),
            "replay_from_phh_text_vs_pokerkit": round(t_pk / t_ours, 2),
            "eval7_vs_phevaluator": round(e_ph / e_ours, 3),
            "eval7_vs_pokerkit": round(e_pk / e_ours, 2),
        },
        "goals": {"replay_vs_pokerkit": 10},
    }
    print(json.dumps(out, indent=2, sort_keys=True) if args.json else out)


PK_FIELDS = {"variant", "ante_trimming_status", "antes", "blinds_or_straddles", "bring_in", "small_bet", "big_bet",
             "min_bet", "starting_stacks", "actions"}


if __name__ == "__main__":
    main()

"""The PHH corpus (../shared/corpus/phh, MANIFEST.tsv) through the PHH reader and the poker
engine: every hand of a supported variant converts, and replays to its recorded
finishing_stacks where the file has them (issue #3 acceptance)."""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

import pytest

from ledger.games.poker import VARIANTS
from ledger.phh import PhhError, check_finishing_stacks, hand_events, load_hands

_CANDIDATES = [os.environ.get("PITBOSS_PHH_CORPUS", ""),
               str(Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "phh"),  # ../shared
               "/work/shared/corpus/phh"]
CORPUS = next((Path(c) for c in _CANDIDATES if c and (Path(c) / "MANIFEST.tsv").exists()), Path(_CANDIDATES[1]))


def manifest() -> list[dict[str, str]]:
    if not (CORPUS / "MANIFEST.tsv").exists():
        pytest.skip(f"no PHH corpus at {CORPUS}")
    with open(CORPUS / "MANIFEST.tsv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_every_manifest_hand_of_a_supported_variant_imports_and_matches_its_finishing_stacks() -> None:
    counts: Counter[str] = Counter()
    failures: list[str] = []
    for row in manifest():
        path = CORPUS / row["path"]
        hands = load_hands(path.read_text(encoding="utf-8"), path.suffix == ".phhs")
        assert len(hands) == int(row["hands"]), row["path"]
        for section, hand in hands:
            key = row["path"] + (f"#{section}" if section else "")
            if row["variant"] not in VARIANTS:
                with pytest.raises(PhhError, match="is not supported yet"):
                    hand_events(hand)
                counts["unsupported variant (refused, named)"] += 1
                continue
            try:
                rules, _, st = hand_events(hand)
            except PhhError as exc:
                failures.append(f"{key}: {exc}")
                continue
            problem = check_finishing_stacks(hand, rules, st)
            if problem:
                failures.append(f"{key}: {problem}")
            counts["matched finishing_stacks" if "finishing_stacks" in hand else "imported (no finishing_stacks)"] += 1
    print(dict(counts))
    assert not failures, failures[:10]
    assert counts["matched finishing_stacks"] >= 7535

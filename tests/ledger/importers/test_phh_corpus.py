"""The PHH corpus (../shared/corpus/phh, MANIFEST.tsv) through the PHH reader and the poker
engine: every hand of a supported variant converts, and replays to its recorded
finishing_stacks where the file has them (issue #3 acceptance)."""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

import pytest

from ledger.games.poker_kinds import VARIANTS
from ledger.importers.phh import PhhError, check_finishing_stacks, hand_events, load_hands
from tests.helpers import ROOT

_CANDIDATES = [os.environ.get("PITBOSS_PHH_CORPUS", ""),
               str(ROOT.parent / "shared" / "corpus" / "phh"),  # ../shared
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
            assert row["variant"] in VARIANTS, row
            try:
                rules, _, st = hand_events({"showdown": "as_recorded", **hand})  # another room's showdown, as recorded
            except PhhError as exc:
                failures.append(f"{key}: {exc}")
                continue
            problem = check_finishing_stacks(hand, rules, st)
            if problem:
                failures.append(f"{key}: {problem}")
            counts["matched finishing_stacks" if "finishing_stacks" in hand else "imported (no finishing_stacks)"] += 1
    print(dict(counts))
    assert not failures, failures[:10]
    assert counts["matched finishing_stacks"] == 7573
    assert counts["imported (no finishing_stacks)"] == 9813 - 7573


EXPECTED_FAILURES = {
    # pokerkit-fails/ (FAILURES.tsv): what the ledger does with each, and why
    "truncated": "the history stops before the hand is over",  # 23 HandHQ hands cut off mid-betting: refused
    "half-chip": "split a chip in halves",  # 6 Pluribus hands whose recorded stacks hold x.5 chips
    "illegal": "the fixed-limit limits here are",  # WSOP razz #85: a raise short of the fixed size
}


def test_pokerkit_failures_are_replayed_or_refused_with_a_precise_reason() -> None:
    """Each hand pokerkit 0.7.7 fails on is either replayed correctly or refused with the
    reason (FAILURES.tsv lists why pokerkit fails)."""
    if not (CORPUS / "FAILURES.tsv").exists():
        pytest.skip(f"no PHH corpus at {CORPUS}")
    with open(CORPUS / "FAILURES.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    outcomes: Counter[str] = Counter()
    for row in rows:
        path = CORPUS / row["data_file"]
        section = row["key"].split("#")[1] if "#" in row["key"] else None
        hand = dict(load_hands(path.read_text(encoding="utf-8"), path.suffix == ".phhs"))[section]
        try:
            rules, _, st = hand_events({"showdown": "as_recorded", **hand})  # another room's showdown, as recorded
        except PhhError as exc:
            if "history truncated" in row["reason"]:
                assert EXPECTED_FAILURES["truncated"] in str(exc), (row, exc)
                outcomes["refused: truncated history"] += 1
            else:
                assert "Unable to repair" in row["reason"] and EXPECTED_FAILURES["illegal"] in str(exc), (row, exc)
                outcomes["refused: an action the rules do not allow"] += 1
            continue
        problem = check_finishing_stacks(hand, rules, st)
        if problem is None:
            outcomes["replayed correctly"] += 1
        else:
            assert "odd-chip" in row["reason"] and EXPECTED_FAILURES["half-chip"] in problem, (row, problem)
            outcomes["replayed; the file's stacks split the odd chip in halves"] += 1
    print(dict(outcomes))
    assert sum(outcomes.values()) == len(rows) == 30


def _same(a: object, b: object) -> bool:
    """Equal values of equal types, floats to the last bit (their repr is what amounts are scaled from)."""
    if isinstance(a, float) and isinstance(b, float):
        return repr(a) == repr(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_the_fast_toml_reader_reads_every_corpus_file_as_the_standard_library_does() -> None:
    """``load_hands`` reads PHH with rtoml (pyproject.toml says why): on every file of the
    corpus, .phh and .phhs alike, it gives exactly tomllib's values and types."""
    import tomllib

    import rtoml

    if not (CORPUS / "MANIFEST.tsv").exists():
        pytest.skip(f"no PHH corpus at {CORPUS}")
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".phh", ".phhs"))
    assert len(files) > 1000
    differ = [p for p in files if not _same(rtoml.loads(t := p.read_text(encoding="utf-8")), tomllib.loads(t))]
    assert differ == []


@pytest.mark.parametrize("text", ['variant = "NT"\nvariant = "FT"\n', "a = [1, 2\n", 'x = "\\q"\n', "= 1\n"])
def test_a_text_that_is_not_toml_is_refused_with_the_standard_librarys_reason(text: str) -> None:
    import tomllib

    with pytest.raises(tomllib.TOMLDecodeError) as reference:
        tomllib.loads(text)
    with pytest.raises(PhhError, match="not valid TOML") as refused:
        load_hands(text, False)
    assert str(reference.value) in str(refused.value)

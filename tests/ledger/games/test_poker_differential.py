"""Differential test against pokerkit 0.7.7 (issue #3): 10,000 random legal hands per
variant (every variant of the PHH corpus), both engines judging every action (legal and
deliberately illegal ones) and agreeing on the final stacks. The harness is
tests/poker_differential.py; it notes where pokerkit itself departs from the variant's
rules (fixed-limit Omaha hi/lo is built pot-limit in pokerkit 0.7.7).

The 110,000 hands are the slowest part of the suite, so they are played on every core: the
first variant's test hands all of them, in chunks of 1,000 hands with their own seeds, to
a process pool, and each variant's test collects and judges its own chunks."""

from __future__ import annotations

import os
import random
import warnings
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import pytest

from tests.ledger.games.poker_differential import PK_VARIANTS, play_hand

HANDS = 10_000
CHUNK = 1_000


def _play_chunk(variant: str, chunk: int) -> dict[str, int]:
    """CHUNK hands of one variant, seeded by variant and chunk (the same hands every run)."""
    import pokerkit

    rng = random.Random(f"pitboss-{variant}-{chunk}")
    total = {"hands": 0, "actions": 0, "refusals": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit warns on its own automations
        for _ in range(CHUNK):
            checked = play_hand(pokerkit, variant, rng)
            total["hands"] += 1
            total["actions"] += checked["actions"]
            total["refusals"] += checked["refusals"]
    return total


@pytest.fixture(scope="module")
def chunks() -> Iterator[dict[str, list[Future[dict[str, int]]]]]:
    pytest.importorskip("pokerkit")
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures: dict[str, list[Future[dict[str, int]]]] = {v: [] for v in sorted(PK_VARIANTS)}
        for chunk in range(HANDS // CHUNK):
            for variant in futures:
                futures[variant].append(pool.submit(_play_chunk, variant, chunk))
        yield futures
        for fs in futures.values():
            for f in fs:
                f.cancel()


@pytest.mark.parametrize("variant", sorted(PK_VARIANTS))
def test_random_hands_agree_with_pokerkit(variant: str, chunks: dict[str, Any]) -> None:
    results = [f.result() for f in chunks[variant]]  # a disagreement re-raises its AssertionError here
    hands = sum(r["hands"] for r in results)
    actions = sum(r["actions"] for r in results)
    refusals = sum(r["refusals"] for r in results)
    print(f"{variant}: {hands} hands, {actions} actions agreed, {refusals} illegal attempts refused by both")
    assert hands == HANDS
    assert actions > HANDS and refusals > HANDS // 20

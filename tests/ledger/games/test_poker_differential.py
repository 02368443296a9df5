"""Differential test against pokerkit 0.7.7 (issue #3): 10,000 random legal hands per
variant (every variant of the PHH corpus), both engines judging every action (legal and
deliberately illegal ones) and agreeing on the final stacks. The harness is
tests/poker_differential.py; it notes where pokerkit itself departs from the variant's
rules (fixed-limit Omaha hi/lo is built pot-limit in pokerkit 0.7.7)."""

from __future__ import annotations

import random
import warnings

import pytest

from tests.ledger.games.poker_differential import PK_VARIANTS, play_hand

HANDS = 10_000


@pytest.mark.parametrize("variant", sorted(PK_VARIANTS))
def test_random_hands_agree_with_pokerkit(variant: str) -> None:
    pokerkit = pytest.importorskip("pokerkit")
    rng = random.Random(f"pitboss-{variant}")
    actions = refusals = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit warns on its own automations
        for _ in range(HANDS):
            checked = play_hand(pokerkit, variant, rng)
            actions += checked["actions"]
            refusals += checked["refusals"]
    print(f"{variant}: {HANDS} hands, {actions} actions agreed, {refusals} illegal attempts refused by both")
    assert actions > HANDS and refusals > HANDS // 20

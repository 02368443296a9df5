"""The engine contract (ledger/games/__init__.py, docs/architecture.md): every registered
engine goes through the same checks, so a new game module is held to them by being
added. Each plays rounds of its own demo play (``Engine.demo_round``) from a seeded
source: start, a legal sequence with a snapshot after every event, an illegal event
refused with a rule, the outcome, money that nets to zero as the engine's banking says,
and what the engine declares about equipment, house edges and the demo tables."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import orjson
import pytest

from ledger.games import ENGINES, Engine, RuleViolation, play_events
from ledger.games.cards import deck
from ledger.kinds import KINDS

ENGINE_NAMES = sorted(ENGINES)


def rounds(engine: Engine, n: int = 25) -> list[tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]]:
    rng = random.Random(f"contract-{engine.game}")
    out = []
    for _ in range(n):
        low, high = engine.demo_tables[0].players if engine.demo_tables else (2, 5)
        players = [f"P{k}" for k in range(rng.randint(low, high))]
        try:  # the shoe the game's default rules deal from; one deck where the rules have no default
            spec = engine.draws(engine.start({}))[0]
        except RuleViolation:
            spec = ("cards", 1)
        decks = spec[1] if spec[0] == "cards" else 1
        cards = iter(rng.sample([c for _ in range(decks) for c in deck()], decks * 52))
        out.append(engine.demo_round(rng, players, cards))
    return out


def test_every_game_of_the_demo_and_the_house_edge_command_has_an_engine() -> None:
    assert {"baccarat", "blackjack", "dragon-tiger", "high-card-flush", "poker", "roulette", "sicbo"} <= set(ENGINES)


@pytest.mark.parametrize("game", ENGINE_NAMES)
def test_a_legal_round_plays_through_with_a_snapshot_after_every_event(game: str) -> None:
    engine = ENGINES[game]
    for rules, events in rounds(engine):
        st = engine.start(rules)
        orjson.dumps(engine.snapshot(st))
        for kind, payload in events:
            assert kind in engine.kinds and KINDS[kind].stream_type == "round"
            before = orjson.dumps(engine.snapshot(st))
            after = engine.apply(st, kind, payload)
            assert orjson.dumps(engine.snapshot(st)) == before  # apply returns a new state, the old one unchanged
            st = after
            orjson.dumps(engine.snapshot(st))  # JSON-able at every step (replay)
        assert engine.close_problem(st) is None
        spec, draws, complete = engine.draws(st)
        assert isinstance(spec, tuple) and isinstance(draws, list) and isinstance(complete, bool)


@pytest.mark.parametrize("game", ENGINE_NAMES)
def test_an_illegal_event_is_refused_with_the_rule(game: str) -> None:
    engine = ENGINES[game]
    rules, events = rounds(engine, 1)[0]
    st = play_events(engine, rules, events)
    kind, payload = events[-1]
    with pytest.raises(RuleViolation) as again:  # the round's last event, once more
        engine.apply(st, kind, payload)
    assert again.value.check == "rule" and again.value.reason
    foreign = next(k for k in sorted(KINDS) if KINDS[k].stream_type == "round" and k not in engine.kinds
                   and not k.startswith(("round.", "rng.", "ruling")))
    with pytest.raises(RuleViolation):  # another game's event
        engine.apply(engine.start(rules), foreign, {})
    assert engine.rules_model.model_validate(rules)  # the house options the round was played with
    with pytest.raises(RuleViolation, match="no_such_option"):  # options are strict: an unknown one is refused
        engine.start({**rules, "no_such_option": 1})
    unfinished = play_events(engine, rules, events[:1])
    assert engine.close_problem(unfinished)  # a round that has barely begun cannot close complete
    with pytest.raises(RuleViolation):
        engine.rule_on(st, {"effect": "dead_hand", "seat": 1, "rule": "002 TDA 57", "acts_on": ["round:x#1"],
                            "reason": "a finished round has no live hand to kill"})


@pytest.mark.parametrize("game", ENGINE_NAMES)
def test_the_outcome_nets_to_zero_as_the_banking_says(game: str) -> None:
    engine = ENGINES[game]
    for rules, events in rounds(engine):
        money = engine.money(engine.outcome(play_events(engine, rules, events)))
        assert sum(money.nets.values()) + money.house_net == 0  # conservation: what players lose, someone wins
        if engine.banking == "house":  # every player's net is what was handed back less what was staked
            assert money.paid - money.staked == sum(money.nets.values()) == -money.house_net and money.rake == 0
        elif engine.banking == "player":
            assert money.house_net == 0 and money.rake == 0
        else:  # a pool: the pots are paid out less the rake, which is the house's
            assert money.paid == money.staked - money.rake and money.house_net == money.rake >= 0


@pytest.mark.parametrize("game", ENGINE_NAMES)
def test_equipment_house_edges_and_demo_tables_are_declared(game: str) -> None:
    engine = ENGINES[game]
    assert engine.banking in ("house", "player", "pool")
    assert engine.equipment in ("shoe", "wheel", "dice", None)
    if engine.equipment != "shoe":
        assert engine.cut_problem(8, 7) is None
    for t in engine.demo_tables:
        assert t.dealing != "live" or engine.equipment is not None
        assert t.dealing != "live" or engine.equipment != "shoe" or (t.decks and 0 < t.cut < t.decks * 52)
        assert t.dealing != "live" or engine.equipment != "shoe" or engine.cut_problem(t.decks, t.cut) is None
    for name in engine.house_edges:
        edges = engine.house_edge(name)
        assert edges and all(isinstance(e["edge"], Fraction | float) and -1 < e["edge"] < 1 for e in edges.values())
    assert engine.banking != "house" or engine.house_edges  # a house-banked game states its edge


@pytest.mark.parametrize("game", ENGINE_NAMES)
def test_states_copied_by_evolve_equal_dataclasses_replace_and_the_old_state_is_unchanged(game: str) -> None:
    """``ledger.games.evolve`` (the engines' fast ``dataclasses.replace``) on every state of
    legal rounds: the same value as ``replace`` field by field, the original untouched, and
    a field the state does not have refused."""
    from dataclasses import fields, replace

    from ledger.games import evolve

    engine = ENGINES[game]
    for rules, events in rounds(engine):
        st = engine.start(rules)
        for kind, payload in events:
            st = engine.apply(st, kind, payload)
            before = replace(st)
            for f in fields(st):
                value = None
                try:
                    expected = replace(st, **{f.name: value})
                except TypeError:  # a compiled state (setup.py: mypyc) takes only its field's own type
                    value = getattr(st, f.name)
                    expected = replace(st, **{f.name: value})
                assert evolve(st, **{f.name: value}) == expected
            assert st == before and evolve(st) == st and evolve(st) is not st
            with pytest.raises(AssertionError, match="no field"):
                evolve(st, no_such_field=1)

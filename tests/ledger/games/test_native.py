"""The compiled modules (setup.py: mypyc; ``ledger.native.COMPILED``: the poker engine and
the PHH importer) are the same source, compiled, and run only while they are
(``ledger.native.NativeGuard``).

- an install compiles them unless told not to (``PITBOSS_PURE_PYTHON=1``), and records the
  source each was built from (``ledger/_native.json``);
- a module in use is the compiled one exactly when its source is the one recorded: a
  source edited since, or an extension with no record, runs as Python;
- compiled and Python judge alike: the same hands give the same stacks, pots and winners,
  and the same illegal events the same refusals, word for word; the same PHH hands, well
  formed or not (wrong types and values where the importer takes any value), give the
  same events or the same refusal, word for word (mypyc checks a typed value's type where
  Python does not: a difference would show here).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ledger.native import COMPILED, source_of
from ledger.native import modules as native_modules

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "ledger" / "_native.json"

PROBE = r"""
import hashlib, json, random, sys
from ledger.games import RuleViolation
from ledger.native import modules as native_modules
from ledger.games.poker import PokerEngine, final_stacks, random_hand
from ledger.importers.phh import PhhError, hand_events, load_hands

out = hashlib.sha256()
refusals = []
engine = PokerEngine()
for seed in range(250):  # random no-limit hold'em, six seats, uneven stacks (side pots)
    rng = random.Random(seed)
    rules, events = random_hand(rng, [f"p{i}" for i in range(6)], [rng.randrange(200, 20_000) for _ in range(6)])
    st = engine.start(rules)
    for kind, payload in events:
        st = engine.apply(st, kind, payload)
    out.update(json.dumps([final_stacks(st), engine.outcome(st), engine.snapshot(st)], sort_keys=True,
                          default=str).encode())
    # the same hand with one event spoiled: a seat acting out of turn, or a chip too many
    k = rng.randrange(len(events))
    kind, payload = events[k]
    bad = dict(payload, seat=payload.get("seat", 0) % 6 + 1) if "seat" in payload else dict(payload, amount=1)
    st = engine.start(rules)
    try:
        for kind2, p2 in events[:k] + [(kind, bad)] + events[k + 1:]:
            st = engine.apply(st, kind2, p2)
        refusals.append(None)
    except RuleViolation as exc:
        refusals.append(exc.reason)
BASE = {"variant": "NT", "antes": [0, 0, 0], "blinds_or_straddles": [1, 2, 0], "min_bet": 2,
        "starting_stacks": [200, 200, 200], "players": ["a", "b", "c"], "showdown": "as_recorded",
        "actions": ["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 2c7d", "p3 f", "p1 cc", "p2 cc", "d db 2h3h4h",
                    "p1 cbr 10", "p2 cc", "d db 5s", "p1 cc", "p2 cc", "d db 9s", "p1 cc", "p2 cc", "p1 sm AcAd",
                    "p2 sm KcKd"]}
ODD = [None, True, 0, -1, 2**70, 1.5, 0.25, float("inf"), float("nan"), "7", "", "p1", [], [1, 2], {}, {"a": 1},
       ["a", 1, None], [1.5, 2, 3], [2**63, 0, 0]]
WORDS = ["", "p1", "p1 f x", "p4 f", "p0 cc", "p12 cc", "px cc", "d dh p1", "d dh p9 AcAd", "d db", "d db AcA",
         "d db 2h3h4h5h", "p1 cbr", "p1 cbr x", "p1 cbr 1e3", "p1 cbr 10.5", "p1 cbr -4", "p1 cbr 99999999999999999999",
         "p1 sd AcAd", "p1 sm", "p1 sm -", "p1 sm AcK", "p1 pb", "d zz 1", "p1 cc # a comment", "p2 cbr 2.", 7, None]
malformed = []
for key in ["variant", "antes", "blinds_or_straddles", "min_bet", "starting_stacks", "players", "actions",
            "finishing_stacks", "small_bet", "ante_trimming_status"]:
    for value in ODD:
        malformed.append({**BASE, key: value})
for k in range(len(BASE["actions"])):
    for word in WORDS:
        malformed.append({**BASE, "actions": BASE["actions"][:k] + [word] + BASE["actions"][k + 1:]})
        malformed.append({**BASE, "actions": BASE["actions"][:k] + [word]})
for hand in malformed:
    try:
        rules, events, st = hand_events(hand)
        out.update(json.dumps([rules, events, final_stacks(st)], sort_keys=True, default=str).encode())
    except PhhError as exc:
        refusals.append(str(exc))
    except Exception as exc:  # not a refusal: compiled and source must still fail alike
        refusals.append(f"{type(exc).__name__}: {exc}")
for path in sys.argv[1:]:  # corpus hands of every variant, when the corpus is here
    (_, hand), = load_hands(open(path, encoding="utf-8").read(), False)
    try:
        rules, events, st = hand_events({**hand, "showdown": "as_recorded"})
    except PhhError as exc:
        refusals.append(str(exc))
        continue
    out.update(json.dumps([rules, events, final_stacks(st)], sort_keys=True, default=str).encode())
out.update(json.dumps(refusals).encode())
from ledger.native import COMPILED
print(json.dumps({"modules": native_modules(), "files": {name: sys.modules[name].__file__ for name in COMPILED},
                  "digest": out.hexdigest(), "refused": sum(r is not None for r in refusals),
                  "refusals": [r for r in refusals if r is not None]}))
"""


def _corpus_sample(n: int) -> list[str]:
    root = os.environ.get("PITBOSS_PHH_CORPUS")
    if not root or not (Path(root) / "MANIFEST.tsv").exists():
        return []
    files = sorted(str(p) for p in Path(root).rglob("*.phh"))
    step = max(1, len(files) // n)
    return files[::step][:n]


def _copy(tmp: Path, name: str) -> Path:
    """The package as installed here (its compiled modules and their record included)."""
    root = tmp / name
    root.mkdir()
    shutil.copytree(ROOT / "ledger", root / "ledger", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _probe(root: Path, corpus: list[str]) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-c", PROBE, *corpus], cwd=root, env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    out: dict[str, object] = json.loads(res.stdout)
    return out


def test_an_install_compiles_the_engine_and_records_its_source() -> None:
    """setup.py: compiled unless PITBOSS_PURE_PYTHON=1 was given to the install."""
    if os.environ.get("PITBOSS_PURE_PYTHON") == "1":
        pytest.skip("installed with PITBOSS_PURE_PYTHON=1: nothing is compiled")
    assert MANIFEST.exists(), "pip install -e . did not compile the poker engine (setup.py)"
    built = json.loads(MANIFEST.read_text())
    assert set(built) == set(COMPILED) == {"ledger.games.poker", "ledger.importers.phh"}
    assert all(len(d) == 64 for d in built.values())


def test_the_module_in_use_is_compiled_exactly_when_its_source_is_the_one_built() -> None:
    loaded = {name: importlib.import_module(name) for name in COMPILED}
    if not MANIFEST.exists():  # no record of a build: the source runs, even beside an earlier build's extension
        assert native_modules() == dict.fromkeys(COMPILED, "python")
        assert all(str(m.__file__).endswith(".py") for m in loaded.values())
        return
    built = json.loads(MANIFEST.read_text())
    for name, module in loaded.items():
        same = hashlib.sha256(source_of(name).read_bytes()).hexdigest() == built[name]
        assert native_modules()[name] == ("compiled" if same else "python")
        assert str(module.__file__).endswith(".so") == same


def test_an_edited_source_runs_as_python_and_both_judge_alike(tmp_path: Path) -> None:
    """A line added to each compiled module's source after the build: the copy runs the
    sources, not the stale compiled modules; and compiled and source give the same stacks,
    pots, snapshots, events and refusals (word for word) on the same hands."""
    if not MANIFEST.exists():
        pytest.skip("nothing compiled here (PITBOSS_PURE_PYTHON=1)")
    corpus = _corpus_sample(120)
    as_built = _copy(tmp_path, "built")
    edited = _copy(tmp_path, "edited")
    for name in COMPILED:
        with (edited / source_of(name).relative_to(ROOT)).open("a", encoding="utf-8") as fh:
            fh.write("\n# edited after the build\n")
    unrecorded = _copy(tmp_path, "unrecorded")  # an extension with no record of its source (a later pure install)
    (unrecorded / "ledger" / "_native.json").unlink()
    compiled = _probe(as_built, corpus)
    source = _probe(edited, corpus)
    assert compiled["modules"] == dict.fromkeys(COMPILED, "compiled")
    assert source["modules"] == dict.fromkeys(COMPILED, "python")
    unrecorded_run = _probe(unrecorded, [])
    for name in COMPILED:
        assert str(compiled["files"][name]).endswith(".so")  # type: ignore[index]
        for run in (source, unrecorded_run):
            assert str(run["files"][name]).endswith(source_of(name).name)  # type: ignore[index]
    assert compiled["refusals"] == source["refusals"]  # word for word, in order
    assert compiled["digest"] == source["digest"]
    assert compiled["refused"] == source["refused"]
    assert isinstance(compiled["refused"], int) and compiled["refused"] > 400  # spoiled and malformed hands refused


def test_a_hand_imported_or_replayed_leaves_no_cycle_for_the_garbage_collector() -> None:
    """A hand's state is freed when the hand is done, as the module in use runs (compiled or
    not): nothing of it waits for the garbage collector. A closure in a compiled module
    keeps its variables in an environment object that its functions point back to, a
    cycle: the PHH importer's closures over the hand's state did, and every imported hand's
    state (about a hundred objects) waited for a collection, which cost more than
    compiling the importer saved (``ledger.importers.phh._apply``)."""
    import gc

    from ledger.games.poker import PokerEngine, random_hand
    from ledger.importers.phh import PhhError, hand_events, load_hands

    hands = [load_hands(Path(path).read_text(encoding="utf-8"), False)[0][1] for path in _corpus_sample(40)]
    engine = PokerEngine()
    gc.collect()
    flags = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds is kept in gc.garbage rather than freed
    try:
        refused = 0
        for hand in hands:
            try:
                hand_events({**hand, "showdown": "as_recorded"})
            except PhhError:
                refused += 1
        for seed in range(40):
            rng = random.Random(seed)
            rules, events = random_hand(rng, [f"p{i}" for i in range(6)], [rng.randrange(200, 20_000) for _ in range(6)])
            st = engine.start(rules)
            for kind, payload in events:
                st = engine.apply_in_place(st, kind, payload)
        del st
        gc.collect()
        cyclic = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
    assert refused < len(hands) or not hands
    assert cyclic == [], cyclic[:20]

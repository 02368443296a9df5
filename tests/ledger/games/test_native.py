"""The compiled poker engine (setup.py: mypyc) is the same source, compiled, and runs only
while it is (``ledger.native.NativeGuard``).

- an install compiles it unless told not to (``PITBOSS_PURE_PYTHON=1``), and records the
  source it was built from (``ledger/_native.json``);
- the module in use is the compiled one exactly when its source is the one recorded: a
  source edited since, or an extension with no record, runs as Python;
- compiled and Python judge alike: the same hands give the same stacks, pots and winners,
  and the same illegal events the same refusals, word for word.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ledger.games.poker as poker
from ledger.native import COMPILED
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
for path in sys.argv[1:]:  # corpus hands of every variant, when the corpus is here
    (_, hand), = load_hands(open(path, encoding="utf-8").read(), False)
    try:
        rules, events, st = hand_events({**hand, "showdown": "as_recorded"})
    except PhhError as exc:
        refusals.append(str(exc))
        continue
    out.update(json.dumps([rules, events, final_stacks(st)], sort_keys=True, default=str).encode())
out.update(json.dumps(refusals).encode())
import ledger.games.poker as poker
print(json.dumps({"modules": native_modules(), "file": poker.__file__, "digest": out.hexdigest(),
                  "refused": sum(r is not None for r in refusals)}))
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
    assert set(built) == set(COMPILED) == {"ledger.games.poker"}
    assert all(len(d) == 64 for d in built.values())


def test_the_module_in_use_is_compiled_exactly_when_its_source_is_the_one_built() -> None:
    if not MANIFEST.exists():  # no record of a build: the source runs, even beside an earlier build's extension
        assert native_modules() == {"ledger.games.poker": "python"} and poker.__file__.endswith(".py")
        return
    built = json.loads(MANIFEST.read_text())["ledger.games.poker"]
    same = hashlib.sha256((ROOT / "ledger" / "games" / "poker.py").read_bytes()).hexdigest() == built
    assert native_modules() == {"ledger.games.poker": "compiled" if same else "python"}
    assert poker.__file__.endswith(".so") == same


def test_an_edited_source_runs_as_python_and_both_judge_alike(tmp_path: Path) -> None:
    """A byte added to poker.py after the build: the copy runs the source, not the stale
    compiled module; and the compiled engine and the source give the same stacks, pots,
    snapshots and refusals (word for word) on the same hands."""
    if not MANIFEST.exists():
        pytest.skip("nothing compiled here (PITBOSS_PURE_PYTHON=1)")
    corpus = _corpus_sample(120)
    as_built = _copy(tmp_path, "built")
    edited = _copy(tmp_path, "edited")
    with (edited / "ledger" / "games" / "poker.py").open("a", encoding="utf-8") as fh:
        fh.write("\n# edited after the build\n")
    unrecorded = _copy(tmp_path, "unrecorded")  # an extension with no record of its source (a later pure install)
    (unrecorded / "ledger" / "_native.json").unlink()
    compiled = _probe(as_built, corpus)
    source = _probe(edited, corpus)
    assert compiled["modules"] == {"ledger.games.poker": "compiled"}
    assert str(compiled["file"]).endswith(".so")
    assert source["modules"] == {"ledger.games.poker": "python"}
    assert str(source["file"]).endswith("poker.py")
    assert str(_probe(unrecorded, [])["file"]).endswith("poker.py")
    assert compiled["digest"] == source["digest"]
    assert compiled["refused"] == source["refused"]
    assert isinstance(compiled["refused"], int) and compiled["refused"] > 100  # the spoiled hands were refused

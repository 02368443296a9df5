"""Build: the modules in ``COMPILED`` are compiled to C by mypyc (pyproject.toml says why),
every other module stays plain Python.

The compiled module is the same source, compiled: ``ledger/games/_native.json`` records
the SHA-256 of each source it was built from, and ``ledger.games`` imports a compiled
module only while its source is byte for byte the one it was built from; a source edited
since runs as Python (``ledger.games.NativeGuard``) until the next ``pip install``.
``PITBOSS_PURE_PYTHON=1 pip install ...`` builds nothing: every module runs as Python,
with the same results (the tests pass either way), slower.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
COMPILED = ["ledger/games/poker.py"]
"""The poker engine: the judge of every poker event at ingest, and the replay of every
stored or imported hand (benchmarks/poker.py: about 1.6x as fast compiled)."""
MANIFEST = HERE / "ledger" / "games" / "_native.json"


def _extensions() -> list[object]:
    MANIFEST.unlink(missing_ok=True)  # nothing claims to be compiled until the build below is
    if os.environ.get("PITBOSS_PURE_PYTHON") == "1":
        return []
    from mypyc.build import mypycify

    # group_name: the compiled group's shared library is ledger/games/_native__mypyc*.so, a
    # name the game-module listing skips (ledger.games._modules: names starting with "_")
    modules = mypycify(COMPILED, opt_level="3", group_name="ledger.games._native")
    sources = {path[:-3].replace("/", "."): hashlib.sha256((HERE / path).read_bytes()).hexdigest() for path in COMPILED}
    MANIFEST.write_text(json.dumps(sources, indent=1, sort_keys=True) + "\n")
    return list(modules)


setup(ext_modules=_extensions())

"""The compiled modules (``setup.py``: mypyc), and the guard that runs each only as the
source it was built from.

``COMPILED`` names the modules an install compiles to C (``setup.py`` reads it from this
file); the build records the SHA-256 of each source it compiled in ``_native.json`` beside
this file. ``NativeGuard``, installed by ``ledger/__init__.py`` before any of them can be
imported, lets the usual finders import a compiled module only while its source is byte
for byte the one recorded; otherwise (the source edited since the last ``pip install``,
or no record: a ``PITBOSS_PURE_PYTHON=1`` install, which may leave an earlier build's
extension in place) the module is imported from its source. So what runs is always the
code that is read. A source is hashed once, when its module is first imported.

Plain Python, standard library only: ``setup.py`` loads this file before anything else of
the project is installed.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

COMPILED = ("ledger.games.poker", "ledger.importers.phh")
"""The poker engine: the judge of every poker event at ingest and the replay of every
stored or imported hand, about 1.6 times as fast compiled; and the PHH importer, which
turns a hand history's actions into events and has the engine judge each: a hand read
from its PHH text about 1.24 times as fast with it compiled too (``benchmarks/poker.py``;
alternated in one process, 2-core AMD EPYC). A compiled module keeps no closure over
per-call state: mypyc's closure environments form reference cycles, which left every
imported hand for the garbage collector and cost more than compiling saved
(``tests/ledger/games/test_native.py``)."""
HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "_native.json"


def source_of(name: str) -> Path:
    """The source file of a module of this package (``ledger.games.poker`` -> ledger/games/poker.py)."""
    return HERE.joinpath(*name.split(".")[1:]).with_suffix(".py")


class NativeGuard(importlib.abc.MetaPathFinder):
    """The compiled module of a name in ``COMPILED`` while its source is the one it was
    built from (``built``: name -> SHA-256 of the source, from ``_native.json``), else the
    source (module doc)."""

    def __init__(self, built: dict[str, str]):
        self.built = built

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name not in COMPILED:
            return None
        source = source_of(name)
        try:
            if hashlib.sha256(source.read_bytes()).hexdigest() == self.built.get(name):
                return None  # the compiled module, found by the usual finders (an extension comes first)
        except OSError:
            return None
        return importlib.util.spec_from_file_location(name, source)


def install() -> NativeGuard:
    """Put the guard first among the import system's finders, once."""
    for finder in sys.meta_path:
        if isinstance(finder, NativeGuard):
            return finder
    try:
        built: dict[str, str] = json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        built = {}
    guard = NativeGuard(built)
    sys.meta_path.insert(0, guard)
    return guard


def modules() -> dict[str, str]:
    """Each module of ``COMPILED`` imported so far, as it runs: "compiled" or "python"
    (the benchmarks print it)."""
    return {name: "compiled" if str(getattr(sys.modules[name], "__file__", "")).endswith((".so", ".pyd")) else "python"
            for name in COMPILED if name in sys.modules}

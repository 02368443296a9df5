"""Which game module registers each event kind, and the roles that may sign it, known
without importing the module (issue 16 points 5 and 7).

Reading a key ring checks every ``key.register`` against the roles of each kind the key
lists (``ledger.keyring``), and a dealer key lists the kinds of every game: without this
index, ``pitboss evidence`` for one Dragon Tiger round built the pydantic models of all
seven games to answer "may a dealer sign ``baccarat.card.v1``?" (about a seventh of the
command, docs/benchmarks.md).

``_kinds.json`` beside this file is written from the modules themselves
(``python -m ledger.games._index``): each game kind's module and roles, and the SHA-256
of the sources it was written from (every module of ``ledger.games`` and
``ledger/kinds.py``, where the roles are named). It is read only while that digest is the
one of the sources on disk, as ``ledger.native`` runs a compiled module only as the
source it was built from; otherwise it is as if there were none, and the registry
imports the game modules to answer. So a stale index costs time, never a wrong answer.
``tests/ledger/test_lazy_imports.py`` fails while the committed index and the modules
disagree.

    python -m ledger.games._index            # write _kinds.json
    python -m ledger.games._index --check    # exit 1 if it is not the modules' own
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
INDEX = HERE / "_kinds.json"


def sources_digest() -> str:
    """SHA-256 over the name and bytes of every module of ``ledger.games`` and of
    ``ledger/kinds.py``, in name order (a few milliseconds, once a process)."""
    h = hashlib.sha256()
    for path in sorted(HERE.glob("*.py")) + [HERE.parent / "kinds.py"]:
        data = path.read_bytes()
        h.update(f"{path.parent.name}/{path.name} {len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


@functools.cache
def declared() -> dict[str, tuple[str, frozenset[str]]]:
    """kind -> (the game module that registers it, the roles that may sign it), from
    ``_kinds.json`` when it was written from the sources on disk; else empty."""
    try:
        index = json.loads(INDEX.read_text())
        if index.get("digest") != sources_digest():
            return {}
        return {kind: (entry["module"], frozenset(entry["roles"])) for kind, entry in index["kinds"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def module_of(kind: str) -> str | None:
    entry = declared().get(kind)
    return None if entry is None else entry[0]


def roles_of(kind: str) -> frozenset[str] | None:
    entry = declared().get(kind)
    return None if entry is None else entry[1]


def build() -> dict[str, object]:
    """The index as the modules declare it, in an interpreter that has imported only
    ``ledger`` (``python -m ledger.games._index``): each game module imported in name
    order and the kinds it adds to the registry credited to it (a module another
    imports, ``poker_kinds`` by ``poker``, to the first). What ``import ledger`` already
    registered needs no index: it is never loaded lazily."""
    from ledger.games import _modules
    from ledger.kinds import KINDS

    kinds: dict[str, dict[str, object]] = {}
    for module in sorted(_modules()):
        before = set(KINDS.loaded())
        importlib.import_module(f"{__package__}.{module}")
        for kind in sorted(set(KINDS.loaded()) - before):
            kinds[kind] = {"module": module, "roles": sorted(KINDS.loaded()[kind].roles)}
    return {"digest": sources_digest(), "kinds": dict(sorted(kinds.items()))}


def text(index: dict[str, object]) -> str:
    return json.dumps(index, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    want = text(build())
    if "--check" in argv:
        have = INDEX.read_text() if INDEX.exists() else ""
        if have != want:
            print(f"{INDEX} is not the game modules' own: run 'python -m ledger.games._index' and commit it",
                  file=sys.stderr)
            return 1
        return 0
    INDEX.write_text(want)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

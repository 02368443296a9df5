"""The layers of docs/architecture.md, enforced over every import in the source (module
level and inside functions alike): a module imports only from its own layer and the
layers below it. The write side (``ledger``) never imports the read side
(``projections``) or the command line (``cli``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CORE = ("ledger.canonical", "ledger.timeutil", "ledger.collector", "ledger.forking", "ledger.native", "ledger.keys", "ledger.kinds",
        "ledger.events", "ledger.refs", "ledger.chain", "ledger.scope", "ledger.keyring", "ledger.clock", "ledger.producer", "ledger.store")
# the core without storage: what the pure layers (games, the log's maths) build on
PURE = ("ledger.canonical", "ledger.timeutil", "ledger.collector", "ledger.forking", "ledger.native", "ledger.kinds", "ledger.events",
        "ledger.refs", "ledger.chain", "ledger.keys", "ledger.scope")
LOG = ("ledger.log.merkle", "ledger.log.note", "ledger.log.proofs", "ledger.log.tiles", "ledger.log.witness")
TRUST = ("ledger.trust",)  # the roots a verifier pins and its own state: on the log's notes only
GAMES = ("ledger.games",)
RULES = GAMES + ("ledger.judges", "ledger.rng")
SERVICES = ("ledger.ingest", "ledger.verify", "ledger.house", "ledger.log.checkpoints")
WRITE = ("ledger",)
READ = ("projections",)

# module prefix -> the prefixes it may import from (its own layer and those below); first match wins
ALLOWED: list[tuple[str, tuple[str, ...]]] = [
    ("ledger.log.checkpoints", CORE + LOG + RULES + SERVICES),
    ("ledger.log", PURE + LOG),
    ("ledger.games", PURE + GAMES),
    ("ledger.judges", CORE + RULES),
    ("ledger.rng", CORE + RULES),
    ("ledger.ingest", CORE + RULES + ("ledger.ingest",)),
    ("ledger.trust", PURE + LOG + TRUST),
    ("ledger.verify", CORE + LOG + RULES + TRUST + ("ledger.verify",)),
    ("ledger.house", CORE + LOG + RULES + SERVICES),
    ("ledger.importers", WRITE),
    ("ledger.sim", WRITE),
    ("ledger", CORE),  # the core itself (ledger/__init__.py, which registers the rules, is exempt below)
    ("projections", WRITE + READ),
    ("cli", WRITE + READ + ("cli",)),
]
EXEMPT = {"ledger"}  # ledger/__init__.py imports the registries so every kind is known


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """Every (line, module) the file imports, ``from a import b`` as ``a.b`` too, so a
    submodule imported by name counts."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def violations(root: Path = ROOT) -> list[str]:
    out = []
    for package in ("ledger", "projections", "cli"):
        for path in sorted((root / package).rglob("*.py")):
            mod = module_name(path, root)
            if mod in EXEMPT:
                continue
            allowed = next(a for prefix, a in ALLOWED if within(mod, (prefix,)))
            for line, name in imports(path):
                if not within(name, ("ledger", "projections", "cli")) or within(name, (mod,)):
                    continue
                if name in ("ledger", "projections", "cli"):  # "from ledger import x": judged as ledger.x
                    continue
                if not within(name, allowed):
                    out.append(f"{path.relative_to(root)}:{line}: {mod} imports {name}")
    return out


def test_every_import_respects_the_layers_of_docs_architecture_md() -> None:
    assert violations() == []


def test_the_check_fails_when_the_write_side_imports_the_read_side(tmp_path: Path) -> None:
    """The deliberate violation of the acceptance: a write-side module importing a view."""
    for package in ("ledger", "projections", "cli"):
        (tmp_path / package).mkdir()
    (tmp_path / "ledger" / "ingest.py").write_text("from projections.views import VIEWS\n")
    (tmp_path / "ledger" / "games").mkdir()
    (tmp_path / "ledger" / "games" / "dice.py").write_text("def f():\n    import ledger.store\n")
    (tmp_path / "projections" / "views.py").write_text("import cli.main\n")
    assert violations(tmp_path) == [
        "ledger/games/dice.py:2: ledger.games.dice imports ledger.store",
        "ledger/ingest.py:1: ledger.ingest imports projections.views",
        "ledger/ingest.py:1: ledger.ingest imports projections.views.VIEWS",
        "projections/views.py:1: projections.views imports cli.main",
    ]


@pytest.mark.parametrize("path", ["docs/architecture.md"])
def test_the_architecture_page_names_every_layer(path: str) -> None:
    text = (ROOT / path).read_text()
    for prefix, _ in ALLOWED:
        assert f"`{prefix}" in text, prefix

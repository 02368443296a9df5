"""Issue 16 point 7: psycopg only for PostgreSQL URLs, the game engines and their kinds on
first use, ``cryptography`` (signing and key files) only where something is signed; and
a lazily filled registry never misses a game or kind the package has.

Each check runs in a fresh interpreter: what a module imported is only visible there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ENGINE_MODULES = {"baccarat", "blackjack", "dragon_tiger", "high_card_flush", "poker", "roulette", "sicbo"}


def _fresh(code: str, cwd: Path | None = None, args: tuple[str, ...] = ()) -> dict[str, object]:
    """Run ``code`` in a new interpreter (``args`` its ``sys.argv[1:]``); it leaves its
    answer in ``out`` (a dict), to which the game modules (not the package's own
    ``_index``) and psycopg modules then imported are added."""
    prog = code + (
        "\nimport json, sys\n"
        "out['games'] = sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('ledger.games.')\n"
        "                      and not m.startswith('ledger.games._'))\n"
        "out['psycopg'] = any(m == 'psycopg' or m.startswith('psycopg.') for m in sys.modules)\n"
        "out['cryptography'] = 'cryptography' in sys.modules\n"
        "print(json.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", prog, *args], capture_output=True, text=True, cwd=cwd, check=True)
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_importing_the_ledger_imports_no_game_and_no_psycopg() -> None:
    out = _fresh("import ledger, ledger.ingest, ledger.verify, ledger.store, ledger.log.witness, cli.main\nout = {}")
    assert out["games"] == ["cards"]  # the deck, which the RNG protocol deals from
    assert out["psycopg"] is False
    assert out["cryptography"] is False  # verification is libsodium's; signing loads it when it signs


def test_a_kind_lookup_imports_its_game_only() -> None:
    out = _fresh("from ledger.kinds import KINDS\nout = {'roles': sorted(KINDS['baccarat.bet.v1'].roles)}")
    assert out["games"] == ["baccarat", "cards"]
    assert out["roles"]


def test_an_engine_lookup_imports_its_game_only() -> None:
    out = _fresh("from ledger.games import ENGINES\nout = {'game': ENGINES['dragon-tiger'].game}")
    assert out == {"game": "dragon-tiger", "games": ["cards", "dragon_tiger"], "psycopg": False, "cryptography": False}


def test_a_kind_whose_family_names_no_module_is_found_through_the_index() -> None:
    """High card flush's kinds are ``hcf.*`` in the module ``high_card_flush``: the kinds
    index (``ledger.games._index``) names the module, which alone is imported; a kind
    nobody registers is looked for everywhere and not found."""
    out = _fresh("from ledger.kinds import KINDS\nout = {'found': 'hcf.bet.v1' in KINDS}")
    assert out["found"] is True and out["games"] == ["cards", "high_card_flush"]
    out = _fresh("from ledger.kinds import KINDS\nout = {'unknown': 'fan.tan.v1' in KINDS}")
    assert out["unknown"] is False and ENGINE_MODULES <= set(out["games"])  # type: ignore[arg-type]


_STALE = ("import ledger.games._index as index, pathlib, sys\n"
          "index.INDEX = pathlib.Path(sys.argv[1])\n")
"""Points the index at a file given as the program's argument (a stale or broken copy)."""


def _fresh_with_index(code: str, index: str, tmp_path: Path) -> dict[str, object]:
    path = tmp_path / "_kinds.json"
    path.write_text(index)
    return _fresh(_STALE + code, args=(str(path),))


def test_the_kinds_index_is_the_game_modules_own() -> None:
    """The committed ``ledger/games/_kinds.json`` is what the modules declare, written
    from the sources on disk (``python -m ledger.games._index --check``, in a fresh
    interpreter as it must be)."""
    done = subprocess.run([sys.executable, "-m", "ledger.games._index", "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    index = json.loads((Path(__file__).parents[2] / "ledger" / "games" / "_kinds.json").read_text())
    assert {e["module"] for e in index["kinds"].values()} == ENGINE_MODULES
    assert index["kinds"]["hcf.bet.v1"]["module"] == "high_card_flush"


def test_reading_a_dealers_key_builds_no_game(tmp_path: Path) -> None:
    """Issue 16 point 7: a key ring holding a dealer's key, which lists every game's kinds,
    is read and checked (each kind's roles against the key's role) in a fresh interpreter
    without importing any game's module: the roles come from the kinds index, and they
    are the ones the modules register."""
    url = f"sqlite:///{tmp_path / 'p.db'}"
    subprocess.run([sys.executable, "-c",
                    "import sys\n"
                    "from ledger.house import PublicDir, create_key, init_ledger\n"
                    "from ledger.keys import KeyDirectory\n"
                    "from ledger.store import Store\nfrom pathlib import Path\n"
                    "store, keys = Store.open(sys.argv[1], create=True), KeyDirectory(Path(sys.argv[2]) / 'keys')\n"
                    "init_ledger(store, keys, PublicDir(Path(sys.argv[2]) / 'public'), 'lazy.pitboss/ledger')\n"
                    "create_key(store, keys, 'dealer-1', 'dealer', scope=['table:t1'])\n",
                    url, str(tmp_path)], check=True, capture_output=True, text=True)
    out = _fresh("from ledger.keyring import load_keyring\nfrom ledger.store import Store\n"
                 f"ring = load_keyring(Store.open({url!r}))\n"
                 "dealer = next(e for e in ring.keys.values() if e.role == 'dealer')\n"
                 "out = {'kinds': sorted(dealer.kinds)}\n")
    assert out["games"] == ["cards"]
    families = {k.split(".", 1)[0] for k in out["kinds"]}  # type: ignore[union-attr]
    assert {"baccarat", "blackjack", "dragon_tiger", "hcf", "poker", "roulette", "sicbo"} <= families
    names = ["baccarat.card.v1", "hcf.bet.v1", "poker.timeout.v1", "roulette.result.v1"]
    indexed = _fresh(f"from ledger.kinds import roles_of\nout = {{'roles': {{n: sorted(roles_of(n)) for n in {names!r}}}}}\n")
    loaded = _fresh(f"from ledger.kinds import KINDS\nout = {{'roles': {{n: sorted(KINDS[n].roles) for n in {names!r}}}}}\n")
    assert indexed["games"] == ["cards"] and indexed["roles"] == loaded["roles"]
    assert _fresh("from ledger.kinds import roles_of\nout = {'none': roles_of('fan.tan.v1')}\n")["none"] is None


def test_a_stale_or_broken_index_is_not_read(tmp_path: Path) -> None:
    """An index written from other sources (its digest is not theirs) or unreadable is
    as if there were none: the registry imports the modules to answer, and the answers
    are the same. A stale index costs time, never a wrong role."""
    real = json.loads((Path(__file__).parents[2] / "ledger" / "games" / "_kinds.json").read_text())
    lying = {**real, "digest": "0" * 64,
             "kinds": {**real["kinds"], "baccarat.card.v1": {"module": "baccarat", "roles": ["dealer", "cage"]}}}
    code = ("from ledger.kinds import roles_of\n"
            "out = {'roles': sorted(roles_of('baccarat.card.v1')), 'hcf': sorted(roles_of('hcf.card.v1'))}\n")
    for text in (json.dumps(lying), "{not json", json.dumps({"digest": real["digest"]})):
        out = _fresh_with_index(code, text, tmp_path)
        assert "cage" not in out["roles"]  # type: ignore[operator]
        assert "baccarat" in out["games"]  # type: ignore[operator]  # the module itself answered
        assert out["hcf"] and "high_card_flush" in out["games"]  # type: ignore[operator]
    honest = _fresh_with_index(code, json.dumps(real), tmp_path)
    assert honest["games"] == ["cards"] and honest["roles"] == out["roles"]


def test_iterating_the_registries_sees_every_game_and_kind() -> None:
    """``sorted(KINDS)`` before any lookup equals the kinds after importing every game
    module by hand: laziness never hides a kind (schemas, docs and the roles matrix
    iterate the registry)."""
    lazy = _fresh("from ledger.kinds import KINDS\nfrom ledger.games import ENGINES\n"
                  "out = {'kinds': sorted(KINDS), 'n': len(KINDS), 'engines': sorted(ENGINES)}")
    eager = _fresh("import importlib\nfrom ledger.kinds import KINDS\n"
                   + "".join(f"importlib.import_module('ledger.games.{m}')\n" for m in sorted(ENGINE_MODULES))
                   + "out = {'kinds': sorted(KINDS._items)}")
    assert lazy["kinds"] == eager["kinds"] and lazy["n"] == len(eager["kinds"])  # type: ignore[arg-type]
    assert lazy["engines"] == ["baccarat", "blackjack", "dragon-tiger", "high-card-flush", "poker", "roulette", "sicbo"]
    assert any(k.startswith("hcf.") for k in lazy["kinds"])  # type: ignore[union-attr]


def test_verify_on_a_sqlite_ledger_imports_no_psycopg(tmp_path: Path) -> None:
    """A whole command on the SQLite default: ``pitboss init`` then ``pitboss verify``
    in one fresh interpreter, psycopg never imported."""
    db = tmp_path / "p.db"
    init = subprocess.run([str(Path(sys.executable).with_name("pitboss")), "--db", str(db), "init", "--parents",
                           "--trust-config", str(tmp_path / "trust.toml")], capture_output=True, text=True, cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    out = _fresh(
        "import os, sys\n"
        f"os.environ['PITBOSS_DB'] = {str(db)!r}\n"
        "from cli.main import run\n"
        f"sys.argv = ['pitboss', 'verify', '--trust', {str(tmp_path / 'trust.toml')!r}, '--json']\n"
        "try:\n    run()\nexcept SystemExit as e:\n    code = e.code\n"
        "out = {'code': code}\n", cwd=tmp_path)
    assert out["code"] == 5  # UNVERIFIED: no checkpoint yet; the command ran through
    assert out["psycopg"] is False
    assert out["cryptography"] is False  # a verifier signs nothing
    assert out["games"] == ["cards"]  # the ledger holds key-ring events only: no game needed


def test_threads_looking_up_kinds_and_engines_at_once_all_find_them() -> None:
    """``pitboss serve`` answers in threads: a lookup that misses while another thread is
    importing games waits for it, and never answers "unknown kind" for a kind a game
    registers."""
    out = _fresh(
        "import threading\n"
        "from ledger.kinds import KINDS\nfrom ledger.games import ENGINES\n"
        "names = ['baccarat.bet.v1', 'hcf.bet.v1', 'roulette.bet.v1', 'sicbo.bet.v1', 'blackjack.bet.v1',\n"
        "         'dragon_tiger.bet.v1', 'poker.action.v1'] * 4\n"
        "games = ['poker', 'sicbo', 'high-card-flush', 'dragon-tiger'] * 4\n"
        "barrier = threading.Barrier(len(names) + len(games))\n"
        "found = []\n"
        "def kind(n):\n    barrier.wait(); found.append(('k', n, KINDS.get(n) is not None))\n"
        "def game(g):\n    barrier.wait(); found.append(('g', g, ENGINES.get(g) is not None))\n"
        "ts = [threading.Thread(target=kind, args=(n,)) for n in names] + [threading.Thread(target=game, args=(g,)) for g in games]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "out = {'missing': sorted({(w, n) for w, n, ok in found if not ok}), 'n': len(found),\n"
        "       'unknown': 'fan.tan.v1' in KINDS}\n")
    assert out["n"] == 44
    assert out["missing"] == []
    assert out["unknown"] is False

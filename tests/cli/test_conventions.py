"""The command line's conventions (issue 17 point 5) and finding rounds (point 2), run as
the real ``pitboss`` program on a real SQLite ledger (PostgreSQL: ``test_rounds_on_postgres``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from cli.main import EXIT_CODES, ROLE_NAMES, SUMMARIES, main
from tests.helpers import ROOT

EXE = str(Path(sys.executable).with_name("pitboss"))


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None,
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], cwd=cwd, capture_output=True, text=True, timeout=300, input=stdin,
                          env={**os.environ, "PITBOSS_DB": str(cwd / "pitboss.db"), **(env or {})})


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo night on a SQLite ledger (one per module: the commands below only read it)."""
    d = tmp_path_factory.mktemp("night")
    assert _run(["init"], d).returncode == 0
    demo = _run(["demo", "--hands", "40", "--json"], d)
    assert demo.returncode == 0, demo.stderr
    return d


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command, click.Group]]:
    out = []
    for name, cmd in group.commands.items():
        out.append((prefix + name, cmd, group))
        if isinstance(cmd, click.Group):
            out += _commands(cmd, prefix + name + " ")
    return out


def test_version_is_the_installed_package_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    res = _run(["--version"], tmp_path)
    assert res.returncode == 0 and res.stdout.strip() == f"pitboss {version('pitboss')}"


def test_every_summary_fits_its_groups_help_and_every_command_has_one() -> None:
    """click cuts a summary longer than 80 columns minus the widest command name (its
    '...'): each group's listing shows each whole."""
    for path, cmd, group in _commands(main):
        limit = 80 - 6 - max(len(n) for n in group.commands)
        short = cmd.get_short_help_str(limit)
        assert short and not short.endswith("..."), (path, short)
    assert set(SUMMARIES) <= {path for path, _, _ in _commands(main)}  # no summary of a command that is gone


def test_help_lists_exit_codes_and_environment_variables_for_every_command(tmp_path: Path) -> None:
    for path, _, _ in _commands(main)[:6] + [("rounds", None, None), ("verify", None, None)]:
        res = _run([*path.split(), "--help"], tmp_path)
        assert res.returncode == 0, path
        for code, _ in EXIT_CODES:
            assert f"  {code:>3}  " in res.stdout, (path, code)
        assert "PITBOSS_DB" in res.stdout and "PITBOSS_TRUST" in res.stdout, path


def test_every_json_flag_and_option_has_help_text() -> None:
    for path, cmd, _ in _commands(main):
        for p in cmd.params:
            if isinstance(p, click.Option):
                assert p.help, f"{path} {p.opts} has no help"


def test_every_environment_variable_the_code_reads_is_in_help() -> None:
    import re

    from cli.main import ENVIRONMENT

    root = Path(__file__).resolve().parents[2]
    used = set()
    for package in ("ledger", "projections", "cli"):
        for path in (root / package).rglob("*.py"):
            used |= set(re.findall(r"PITBOSS_[A-Z_]+", path.read_text()))
    listed = {name for names, _ in ENVIRONMENT for name in names.split(", ")}
    # _PITBOSS_COMPLETE: click's completion; PITBOSS_PURE_PYTHON: read by setup.py at install, never by the program
    # (ledger.native names it), so it is in the README's install section rather than in a command's help
    assert used - {"PITBOSS_COMPLETE", "PITBOSS_PURE_PYTHON"} <= listed, sorted(used - listed)
    assert "PITBOSS_PURE_PYTHON" in (root / "README.md").read_text() and "PITBOSS_PURE_PYTHON" in (root / "setup.py").read_text()


def test_role_choices_are_the_ledgers_roles() -> None:
    from ledger.kinds import ROLES

    assert ROLE_NAMES == ROLES


def test_real_types_refuse_bad_dates_times_and_roles_with_exit_2(tmp_path: Path) -> None:
    assert _run(["init"], tmp_path).returncode == 0
    for args, words in ((["reconcile", "--day", "2026-13-45"], "not a real date"),
                        (["rounds", "--day", "yesterday"], "YYYY-MM-DD"),
                        (["keys", "create", "x", "--role", "croupier"], "croupier"),
                        (["keys", "revoke", "0123456789abcdef", "--from", "2026-01-01 10:00", "--reason", "r"],
                         "naive timestamp"),
                        (["table", "T1", "--at", "noon"], "not UTC")):
        res = _run(args, tmp_path)
        assert res.returncode == 2 and words in res.stderr and "Traceback" not in res.stderr, (args, res.stderr)


def test_a_missing_input_file_is_exit_2_in_every_command(tmp_path: Path) -> None:
    """One exit code per kind of error: a file that is not there is a usage error (2)."""
    assert _run(["init"], tmp_path).returncode == 0
    for args in (["ingest", "nope.jsonl"], ["import", "phh", "nope.phh"], ["verify-bundle", "nope"],
                 ["verify", "--trust", "nope.toml"], ["proof", "check-inclusion", "nope", "--vkey", "nope"]):
        res = _run(args, tmp_path)
        assert res.returncode == 2 and "Traceback" not in res.stderr, (args, res.returncode, res.stderr)


def test_init_creates_no_missing_parent_directory_without_parents(tmp_path: Path) -> None:
    db = tmp_path / "no" / "such" / "dir" / "x.db"
    res = _run(["--db", str(db), "init"], tmp_path)
    assert res.returncode == 2 and "--parents" in res.stderr and not (tmp_path / "no").exists()
    ok = _run(["--db", str(db), "init", "--parents", "--trust-config", str(tmp_path / "t" / "trust.toml")], tmp_path)
    assert ok.returncode == 0 and db.exists() and (tmp_path / "t" / "trust.toml").exists()


def test_dash_writes_to_stdout_and_reads_from_stdin(tmp_path: Path) -> None:
    assert _run(["init"], tmp_path).returncode == 0
    batch = _run(["sample", "-o", "-"], tmp_path)
    assert batch.returncode == 0 and not (tmp_path / "-").exists()
    lines = batch.stdout.splitlines()
    assert len(lines) > 5 and all(json.loads(line)["sig"] for line in lines)
    stored = _run(["ingest", "--json", "-"], tmp_path, stdin=batch.stdout)
    assert stored.returncode == 0 and json.loads(stored.stdout)["stored"] == len(lines)
    assert _run(["checkpoint"], tmp_path).returncode == 0
    first = json.loads(lines[0])
    proof = _run(["proof", "inclusion", first["stream"], str(first["seq"]), "-o", "-"], tmp_path)
    assert proof.returncode == 0 and proof.stdout.startswith("c2sp.org/tlog-proof@v1")


def test_evidence_refuses_a_non_empty_output_directory(night: Path) -> None:
    taken = night / "taken"
    taken.mkdir(exist_ok=True)
    (taken / "notes.txt").write_text("mine")
    rid = json.loads(_run(["rounds", "--limit", "1", "--json"], night).stdout)["rounds"][0]["round"]
    res = _run(["evidence", rid, "-o", str(taken)], night)
    assert res.returncode == 2 and "not empty" in res.stderr and sorted(os.listdir(taken)) == ["notes.txt"]
    deep = night / "a" / "b"
    res = _run(["evidence", rid, "-o", str(deep)], night)
    assert res.returncode == 2 and "--parents" in res.stderr and not (night / "a").exists()


def test_no_progress_output_when_stderr_is_not_a_terminal_or_with_q(night: Path) -> None:
    """Cron mails whatever a job prints: a job's stderr is empty when all is well."""
    for args in (["verify"], ["projections", "rebuild"], ["-q", "projections", "run"], ["rounds", "--limit", "1"]):
        res = _run(args, night)
        assert res.stderr == "", (args, res.stderr)


def test_progress_bars_are_shown_on_a_terminal(night: Path) -> None:
    """On a terminal (a pseudo-terminal here) a long command draws a bar with counts; -q silences it."""
    import pty

    def on_tty(args: list[str]) -> str:
        pid, fd = pty.fork()
        if pid == 0:  # the child: stdin, stdout and stderr are the terminal, 24 x 100
            import fcntl
            import struct
            import termios

            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
            os.environ["PITBOSS_DB"] = str(night / "pitboss.db")
            os.execv(EXE, [EXE, *args])
        out = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.waitpid(pid, 0)
        return out.decode(errors="replace")

    shown = on_tty(["projections", "rebuild", "accounts"])
    assert "rebuilding" in shown and "events" in shown and "%" in shown
    assert "rebuilding" not in on_tty(["-q", "projections", "rebuild", "accounts"])


# --- finding rounds (point 2) -----------------------------------------------------------

def _rounds(night: Path, *args: str) -> dict:  # type: ignore[type-arg]
    res = _run(["rounds", "--json", *args], night)
    assert res.returncode in (0, 6), res.stderr
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def test_rounds_lists_every_closed_round_a_page_at_a_time(night: Path) -> None:
    everything = _rounds(night, "--limit", "10000")
    total = everything["total"]
    assert total == len(everything["rounds"]) >= 40
    seen = []
    offset: int | None = 0
    while offset is not None:
        page = _rounds(night, "--limit", "7", "--offset", str(offset))
        assert page["total"] == total and len(page["rounds"]) <= 7
        seen += [r["round"] for r in page["rounds"]]
        offset = page["next_offset"]
    assert seen == [r["round"] for r in everything["rounds"]]
    closed = [r["closed_at"] for r in everything["rounds"]]
    assert closed == sorted(closed)


def test_rounds_filters_agree_with_the_full_list(night: Path) -> None:
    rows = _rounds(night, "--limit", "10000")["rounds"]
    some = rows[3]
    player = some["players"][0]["player"]
    for args, keep in ((["--game", some["game"]], lambda r: r["game"] == some["game"]),
                       (["--table", some["table_id"]], lambda r: r["table_id"] == some["table_id"]),
                       (["--day", some["day"]], lambda r: r["day"] == some["day"]),
                       (["--status", "void"], lambda r: r["status"] == "void"),
                       (["--player", player], lambda r: player in {p["player"] for p in r["players"]}),
                       (["--player", player, "--game", some["game"]],
                        lambda r: r["game"] == some["game"] and player in {p["player"] for p in r["players"]})):
        got = _rounds(night, "--limit", "10000", *args)
        assert [r["round"] for r in got["rounds"]] == [r["round"] for r in rows if keep(r)], args
        assert got["total"] == len(got["rounds"]) > 0, args


def test_rounds_text_shows_money_in_major_units_and_fits_100_columns(night: Path) -> None:
    res = _run(["rounds", "--limit", "12"], night)
    assert res.returncode == 0
    lines = res.stdout.splitlines()
    assert all(len(line) <= 100 for line in lines) and "€" in res.stdout and "next page: --offset 12" in lines[-1]
    rows = _rounds(night, "--limit", "1")["rounds"]
    assert isinstance(rows[0]["staked"], int)  # JSON keeps integer minor units


def test_ids_prints_only_round_ids_for_scripts(night: Path) -> None:
    res = _run(["rounds", "--ids", "--game", "baccarat", "--limit", "3"], night)
    want = [r["round"] for r in _rounds(night, "--game", "baccarat", "--limit", "3")["rounds"]]
    assert res.returncode == 0 and res.stdout.split() == want and len(want) == 3


def test_no_round_matches_is_exit_6(night: Path) -> None:
    res = _run(["rounds", "--player", "nobody-at-all"], night)
    assert res.returncode == 6 and "no rounds" in res.stdout


@pytest.mark.postgres
def test_rounds_on_postgres(tmp_path: Path) -> None:
    from tests.conftest import drop_pg_schema, pg_url_or_skip

    pg_url = pg_url_or_skip()
    try:
        _rounds_on(pg_url, tmp_path)
    finally:
        drop_pg_schema(pg_url)


def _rounds_on(pg_url: str, tmp_path: Path) -> None:
    env = {"PITBOSS_DB": pg_url, "PITBOSS_KEYS": str(tmp_path / "keys"), "PITBOSS_PUBLIC": str(tmp_path / "pub")}
    assert _run(["init"], tmp_path, env).returncode == 0
    assert _run(["demo", "--hands", "14", "-o", str(tmp_path)], tmp_path, env).returncode == 0
    res = _run(["rounds", "--json", "--limit", "5", "--offset", "2"], tmp_path, env)
    page = json.loads(res.stdout)
    assert res.returncode == 0 and len(page["rounds"]) == 5 and page["total"] >= 14 and page["next_offset"] == 7
    player = page["rounds"][0]["players"][0]["player"]
    mine = json.loads(_run(["rounds", "--json", "--player", player, "--limit", "1000"], tmp_path, env).stdout)
    assert mine["total"] >= 1 and all(player in {p["player"] for p in r["players"]} for r in mine["rounds"])


def test_a_pydantic_plugin_installed_beside_pitboss_is_never_loaded(tmp_path: Path) -> None:
    """Any package in the environment may declare a pydantic plugin (an entry point of the
    "pydantic" group), which pydantic imports on the first schema it builds and hooks into
    every validation after it. pitboss's commands load none: the verdicts on events are
    pitboss's and pydantic's alone. The control: a plain pydantic program in the same
    environment loads it."""
    site = tmp_path / "site"
    info = site / "sneaky_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sneaky-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nsneaky = sneaky_plugin:plugin\n")
    marker = tmp_path / "loaded"
    (site / "sneaky_plugin.py").write_text(
        f"open({str(marker)!r}, 'a').write('loaded')\n"
        "class Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        "        return None, None, None\n"
        "plugin = Plugin()\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    subprocess.run([sys.executable, "-c", "import pydantic\nclass M(pydantic.BaseModel):\n    x: int\nM(x=1)"],
                   env=env, check=True)
    assert marker.read_text() == "loaded"
    marker.unlink()
    res = subprocess.run([sys.executable, "-m", "cli.main", "--db", f"sqlite:///{tmp_path / 'none.db'}", "verify",
                          "--json"], env=env, capture_output=True, text=True)
    assert res.returncode == 2 and json.loads(res.stdout)["ok"] is False, res.stdout + res.stderr
    assert not marker.exists()

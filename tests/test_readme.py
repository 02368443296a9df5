"""The README is a product page whose commands work (issue 17 point 1): at most about 250
lines, no development history, and every quick start runs as written, in order, in one
shell on the ledger the set-up command makes (its install step excepted: the tests run
inside that install)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _blocks(heading_prefix: str) -> list[str]:
    out = []
    for section in re.split(r"\n## ", README):
        if section.startswith(heading_prefix):
            out += re.findall(r"```sh\n(.*?)```", section, re.S)
    return out


def test_the_readme_is_a_product_page() -> None:
    assert len(README.splitlines()) <= 250
    for history in (r"\bissue\b", r"#\d+", r"\b[0-9a-f]{7,12}\b(?![0-9a-f])", r"\brun [A-F]\b", r"product brief",
                    r"\bthe seed\b"):
        assert not re.search(history, README, re.I), history
    for part in ("## Set up", "## Quick start: a regulator", "## Quick start: support", "## Quick start: the operator",
                 "## Commands", "## Exit codes"):
        assert part in README, part


def test_every_command_in_the_commands_table_exists() -> None:
    from cli.main import main

    for name in re.findall(r"^\| `([a-z-]+)", README.split("## Commands")[1].split("## Exit codes")[0], re.M):
        assert name in main.commands, name


def test_the_exit_code_table_is_the_programs() -> None:
    from cli.main import EXIT_CODES

    table = re.findall(r"^\| (\d+) \|", README.split("## Exit codes")[1], re.M)
    assert [int(c) for c in table] == [c for c, _ in EXIT_CODES]


def test_the_quick_starts_run_as_written(tmp_path: Path) -> None:
    setup = _blocks("Set up")[0]
    after_install = setup.split("pip install -e '.[test]'", 1)[1].lstrip(" \\\n&")
    script = "\n".join(["set -euo pipefail", after_install, *_blocks("Quick start")])
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("PITBOSS_DB", None)
    res = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    assert "OK: the recorded round agrees with the engine" in res.stdout
    assert res.stdout.count("OK: ") >= 3 and "exit 0" in res.stdout  # verify, verify-bundle and the reconcile
    assert (tmp_path / "dispute" / "manifest.json").exists() and (tmp_path / "reconcile.json").exists()

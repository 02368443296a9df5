"""Generated documentation: ``docs/cli.md`` from the click commands, ``docs/schemas/``
from the event models (``ledger.schemas``).

    python -m cli.docs            # rewrite both
    python -m cli.docs --check    # exit 1 if either differs from the code (tests/test_docs.py)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from cli.main import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

_HEAD = """# pitboss command reference

Generated from the commands themselves by `python -m cli.docs` (a test fails when this file
and the code disagree). Every command takes `-h`/`--help`; every command that reports takes
`--json` (one JSON document on standard output, integers for money). The exit codes and
environment variables are the same for every command (end of this page).

## Shell completion

click completes commands, options and choices for bash, zsh and fish:

```sh
eval "$(_PITBOSS_COMPLETE=bash_source pitboss)"   # in ~/.bashrc
eval "$(_PITBOSS_COMPLETE=zsh_source pitboss)"    # in ~/.zshrc
_PITBOSS_COMPLETE=fish_source pitboss > ~/.config/fish/completions/pitboss.fish
```
"""


def _help(cmd: click.Command, path: list[str]) -> str:
    ctx = click.Context(cmd, info_name=" ".join(path), terminal_width=100, max_content_width=100,
                        help_option_names=["-h", "--help"])  # as every command has them (the group passes them on)
    text = cmd.get_help(ctx)
    if cmd.epilog:  # the exit codes and environment, once at the end of the page
        text = text.split("\n  Exit codes (every command):")[0].rstrip()
    return text


def _walk(cmd: click.Command, path: list[str], out: list[str]) -> None:
    level = "#" * min(len(path) + 1, 4)
    out += [f"{level} `{' '.join(path)}`", "", "```text", _help(cmd, path), "```", ""]
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            _walk(cmd.commands[name], path + [name], out)


def cli_markdown() -> str:
    from cli.main import _ENV_EPILOG, _EPILOG

    out = [_HEAD]
    _walk(main, ["pitboss"], out)
    out += ["## Exit codes and environment", "", "```text",
            _EPILOG.replace("\b\n", "").rstrip(), "", _ENV_EPILOG.replace("\b\n", "").rstrip(), "```", ""]
    return "\n".join(out)


def schema_files() -> dict[str, str]:
    from ledger.schemas import all_schemas

    return {f"schemas/{name}": json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
            for name, schema in all_schemas().items()}


def generated() -> dict[str, str]:
    """Path under docs/ -> its text."""
    return {"cli.md": cli_markdown(), **schema_files()}


def differences() -> list[str]:
    problems = []
    files = generated()
    for rel, text in files.items():
        path = DOCS / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            problems.append(f"docs/{rel} differs from the code")
    for path in sorted((DOCS / "schemas").rglob("*.json")):
        rel = str(path.relative_to(DOCS))
        if rel not in files:
            problems.append(f"docs/{rel} is not generated from any kind (a kind was removed?)")
    return problems


def write() -> None:
    files: dict[str, Any] = generated()
    for path in (DOCS / "schemas").rglob("*.json"):
        if str(path.relative_to(DOCS)) not in files:
            path.unlink()
    for rel, text in files.items():
        path = DOCS / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        found = differences()
        print("\n".join(found) or "docs/cli.md and docs/schemas match the code")
        sys.exit(1 if found else 0)
    write()
    print(f"wrote docs/cli.md and {len(schema_files())} schemas in docs/schemas")

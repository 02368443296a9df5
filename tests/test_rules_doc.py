"""docs/rules.md names a test for every rule it says the ledger checks: each name must be
a test that exists (``*`` and ``…`` stand for any characters), and each of the five seed
texts has its section (issue 15 point 8)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_test_the_rules_table_cites_exists() -> None:
    doc = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    defined = set()
    for path in (ROOT / "tests").rglob("*.py"):
        defined |= set(re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), flags=re.M))
    cited = {m.group(1) for m in re.finditer(r"(test_[\w*…]+)(\*?\.py)?", doc) if not m.group(2)}
    missing = []
    for name in sorted(cited):
        pattern = re.compile("^" + re.escape(name).replace(r"\*", ".*").replace("…", ".*") + "$")
        if not any(pattern.match(d) for d in defined):
            missing.append(name)
    assert not missing, f"docs/rules.md cites tests that do not exist: {missing}"


def test_the_rules_table_covers_the_five_seed_texts() -> None:
    doc = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for seed in ("000", "001", "002", "003", "004"):
        assert re.search(rf"^## {seed} ", doc, flags=re.M), f"no section for seed {seed}"

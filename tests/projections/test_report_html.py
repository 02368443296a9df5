"""The evidence page a player opens (issue 17 point 4), in a real headless Chromium
(Debian's ``chromium``; ``.ci/run`` installs it): it loads with the network off and
re-checks its bundle in the browser (hashes, Ed25519 by WebCrypto, chains, key ring,
inclusion proofs, checkpoint, witness cosignatures); a one-byte change in its embedded
data turns it red; so does a signature WebCrypto alone would accept but pitboss refuses
(a small-order R, docs/spec.md); and it shows the round in plain language.

Where no Chromium is installed these tests skip, saying so; with PITBOSS_REQUIRE_BROWSER=1
(CI) they fail instead."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> str:
    if CHROMIUM is None:
        if os.environ.get("PITBOSS_REQUIRE_BROWSER") == "1":
            pytest.fail("PITBOSS_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
        pytest.skip("no chromium on PATH: the evidence page's browser tests need Debian's chromium")
    return CHROMIUM


def run_page(browser: str, page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """The page in headless Chromium with the network off: every host name resolves to
    nothing and every proxied request goes to a closed port."""
    args = [browser, "--headless", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
            f"--user-data-dir={tmp / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=http://127.0.0.1:9", "--virtual-time-budget=15000", *extra, page.as_uri()]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def verdict(browser: str, page: Path, tmp: Path) -> tuple[str, str]:
    res = run_page(browser, page, tmp, "--dump-dom")
    found = re.search(r'data-verdict="([A-Z]+)"', res.stdout)
    assert found, (res.stdout[:500], res.stderr[-1500:])
    status = re.search(r'<div id="status".*?</div>', res.stdout, re.S)
    return found.group(1), re.sub(r"<[^>]+>", " ", status.group(0) if status else "")


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("page")
    args = ["--db", f"sqlite:///{tmp}/d.db", "--keys", str(tmp / "k"), "--public", str(tmp / "p")]
    assert CliRunner().invoke(main, args + ["init"]).exit_code == 0
    demo = CliRunner().invoke(main, args + ["demo", "--hands", "30", "-o", str(tmp / "o"), "--json"])
    assert demo.exit_code == 0, demo.output
    anchor = (tmp / "p" / "house.pub").read_text().strip()
    return {"args": args, "tmp": tmp, "demo": json.loads(demo.stdout), "anchor": anchor}


def _bundle(night: dict[str, Any], name: str, *extra: str, exit_code: int = 0) -> Path:
    out = night["tmp"] / name
    rid = json.loads(CliRunner().invoke(main, night["args"] + ["rounds", "--game", "baccarat", "--limit", "50",
                                                               "--json"]).stdout)["rounds"]
    with_commission = next(r["round"] for r in rid if r["commission"])
    res = CliRunner().invoke(main, night["args"] + ["evidence", with_commission, "-o", str(out), "--anchor",
                                                    night["anchor"], "--dispute", "I was paid too little", *extra])
    assert res.exit_code == exit_code, res.output
    return out


def test_the_page_is_one_self_contained_file_that_forbids_the_network(night: dict[str, Any]) -> None:
    page = (_bundle(night, "static") / "report.html").read_text()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)  # nothing loaded from anywhere
    for words in ("I was paid too little", "beats", "after €", "commission", "Video references", "Cards drawn"):
        assert words in page, words


def test_the_page_checks_out_in_the_browser_with_the_network_off(browser: str, night: dict[str, Any],
                                                                tmp_path: Path) -> None:
    page = _bundle(night, "good") / "report.html"
    got, status = verdict(browser, page, tmp_path)
    assert got == "PASS", status
    for check in ("canonical form and SHA-256", "signature", "inclusion proof", "checkpoint"):
        assert check in status, check


def _flip_in_data(page: Path, pattern: str) -> None:
    """Change one byte of the page's embedded bundle: the first digit or hex digit after ``pattern``."""
    text = page.read_text()
    start = text.index('id="bundle"')
    at = text.index(pattern, start) + len(pattern)
    while not text[at].isalnum():
        at += 1
    new = {"0": "1"}.get(text[at], "0") if text[at].isdigit() else ("a" if text[at] != "a" else "b")
    page.write_text(text[:at] + new + text[at + 1:])


# an amount in an event, a signature, an inclusion proof's event, the checkpoint note
ONE_BYTE = {"amount": '\\"amount\\":', "sig": '\\"sig\\":', "proof": "tlog-proof@v1\\nextra ", "note": '"note": "'}


@pytest.mark.parametrize("where", sorted(ONE_BYTE))
def test_a_one_byte_change_in_the_embedded_data_turns_it_red(browser: str, night: dict[str, Any], tmp_path: Path,
                                                              where: str) -> None:
    page = _bundle(night, f"flip-{where}") / "report.html"
    _flip_in_data(page, ONE_BYTE[where])
    got, status = verdict(browser, page, tmp_path)
    assert got == "FAILED" and "FAILED" in status, status


def test_a_small_order_r_signature_that_webcrypto_accepts_is_refused_on_the_page(browser: str, night: dict[str, Any],
                                                                                   tmp_path: Path) -> None:
    """The event's own signer makes a second signature of the same hash with R of small
    order: it satisfies the cofactorless equation (BoringSSL's WebCrypto accepts it) but
    libsodium, and so pitboss, refuses it (docs/spec.md "Ed25519 acceptance rules")."""
    from ledger.keys import KeyDirectory
    from tests.ledger.test_ed25519 import _seed, small_order_r_signature

    page = _bundle(night, "small-order") / "report.html"
    text = page.read_text()
    start = text.index('id="bundle"')
    data = json.loads(text[text.index(">", start) + 1:text.index("</script>", start)])
    line = next(x for x in data["events"] if '"kind":"baccarat.bet.v1"' in x)
    ev = json.loads(line)
    signer = KeyDirectory(night["tmp"] / "k").load(ev["key_id"], ev["actor"])
    forged = small_order_r_signature(_seed(signer), signer.public_key, bytes.fromhex(ev["hash"])).hex()
    data["events"][data["events"].index(line)] = line.replace(ev["sig"], forged)
    embedded = json.dumps(data, sort_keys=True, ensure_ascii=True).replace("<", "\\u003c")
    page.write_text(text[:text.index(">", start) + 1] + embedded + text[text.index("</script>", start):])
    got, status = verdict(browser, page, tmp_path)
    assert got == "FAILED" and "signature does not verify" in status, status


def test_witness_cosignatures_are_checked_against_the_keys_printed_on_the_page(browser: str, night: dict[str, Any],
                                                                               tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from ledger.log.note import COSIGNATURE_TYPE, cosign, note_parts, verifier_key

    assert CliRunner().invoke(main, night["args"] + ["checkpoint"]).exit_code == 0
    published = sorted((night["tmp"] / "p").glob("checkpoint-*.note"))[-1]
    witness = Ed25519PrivateKey.generate()
    pub = witness.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    vkey = verifier_key("regulator.example/w", pub, COSIGNATURE_TYPE)
    body = note_parts(published.read_text())[0]
    published.write_text(published.read_text() + cosign(body, "regulator.example/w", witness, 1_790_000_000))
    good = _bundle(night, "witnessed", "--witness", vkey) / "report.html"
    assert vkey in good.read_text()
    got, status = verdict(browser, good, tmp_path)
    assert got == "PASS" and "cosigned by 1" in status, status
    other = Ed25519PrivateKey.generate().public_key().public_bytes(serialization.Encoding.Raw,
                                                                  serialization.PublicFormat.Raw)
    stranger = verifier_key("regulator.example/w", other, COSIGNATURE_TYPE)
    page = _bundle(night, "unwitnessed", "--witness", stranger, exit_code=5)  # UNVERIFIED: no quorum
    assert base64.b64encode(b"\x04" + other).decode() in (page / "report.html").read_text()
    got, status = verdict(browser, page / "report.html", tmp_path)
    assert got == "FAILED" and "0 of the 1 cosignatures" in status, status


def test_a_screenshot_shows_the_summary(browser: str, night: dict[str, Any], tmp_path: Path) -> None:
    page = _bundle(night, "shot") / "report.html"
    shot = tmp_path / "report.png"
    run_page(browser, page, tmp_path, "--window-size=1200,1400", f"--screenshot={shot}")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000
    assert (Path(__file__).resolve().parents[2] / "docs" / "report-screenshot.png").exists()

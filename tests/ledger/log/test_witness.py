"""A regulator's witness (issue 14 point 2; c2sp.org/tlog-witness, c2sp.org/tlog-cosignature):
it cosigns only checkpoints consistent with the one it holds, the operator collects its
cosignature over real HTTP, and a verifier that pins it accepts only witnessed
checkpoints. An independent implementation (Node, from the spec text) accepts the note."""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.log.checkpoints import LeafIndex, create_checkpoint
from ledger.log.note import Checkpoint, note_parts, sign_note
from ledger.log.witness import Witness
from tests.conftest import Ledger
from tests.helpers import ingest, make_producers, night_batch

HERE = Path(__file__).parent


def _request(old: int, proof: list[bytes], note: str) -> str:
    return f"old {old}\n" + "".join(base64.b64encode(h).decode() + "\n" for h in proof) + "\n" + note


def test_the_witness_cosigns_only_what_extends_what_it_holds(ledger: Ledger, tmp_path: Path) -> None:
    w = Witness.create(tmp_path / "w", "regulator.example/witness")
    first = create_checkpoint(ledger.store, ledger.keys, ledger.public)
    assert w.add_checkpoint(_request(0, [], first.note)).status == 404  # not a log it follows
    w.follow(ledger.public.vkey_file.read_text())
    a = w.add_checkpoint(_request(0, [], first.note))
    assert a.status == 200 and a.body.startswith("\u2014 regulator.example/witness ")
    assert w.add_checkpoint(_request(0, [], first.note)).body == f"{first.checkpoint.size}\n"  # 409: it holds more now
    p = make_producers(ledger)
    assert ingest(ledger.store, night_batch(ledger.store, p, rounds=2).lines()).status == "stored"
    second = create_checkpoint(ledger.store, ledger.keys, ledger.public)
    tree = LeafIndex.read(ledger.store).tree()
    good = tree.consistency_proof(first.checkpoint.size, second.checkpoint.size)
    wrong = [bytes(32)] * len(good)
    assert w.add_checkpoint(_request(first.checkpoint.size, wrong, second.note)).status == 422
    assert w.add_checkpoint(_request(second.checkpoint.size + 1, [], second.note)).status == 400
    forged = second.note.replace("\u2014", "-", 1)
    assert w.add_checkpoint(_request(first.checkpoint.size, good, forged)).status == 403
    # the log key signs another history of the same size (a split view): refused
    log = next(k for k in ledger.keys.path.glob("*.pem"))
    assert log  # the operator holds it; the equivocating note:
    from ledger.house import active_signer
    from ledger.keyring import load_keyring

    signer = active_signer(load_keyring(ledger.store), ledger.keys, "ledger")
    other = Checkpoint(second.checkpoint.origin, first.checkpoint.size, bytes(32))
    split = sign_note(other.body(), signer.actor, signer.private_key)
    assert w.add_checkpoint(_request(first.checkpoint.size, [], split)).status == 409
    assert w.add_checkpoint(_request(first.checkpoint.size, good, second.note)).status == 200
    assert w.latest(second.checkpoint.origin) == second.checkpoint


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def witness(tmp_path: Path, ledger: Ledger) -> Iterator[tuple[str, str, Path]]:
    """`pitboss witness serve` as a separate process on a free port: (URL, its verifier key, its directory)."""
    exe = Path(sys.executable).with_name("pitboss")
    d = tmp_path / "witness"
    out = subprocess.run([str(exe), "witness", "init", str(d), "--name", "regulator.example/w1", "--json"],
                         capture_output=True, text=True, check=True)
    vkey = json.loads(out.stdout)["vkey"]
    subprocess.run([str(exe), "witness", "follow", str(d), str(ledger.public.vkey_file)], check=True,
                   capture_output=True)
    port = _free_port()
    proc = subprocess.Popen([str(exe), "witness", "serve", str(d), "--port", str(port)], stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "the witness did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/add-checkpoint", vkey, d
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_verify_needs_the_witness_quorum_and_names_a_forged_cosignature(ledger: Ledger, witness) -> None:  # type: ignore[no-untyped-def]
    url, vkey, _ = witness
    run = CliRunner()
    assert run.invoke(main, ledger.cli_args() + ["checkpoint"]).exit_code == 0  # not witnessed
    p = make_producers(ledger)
    assert ingest(ledger.store, night_batch(ledger.store, p, rounds=2).lines()).status == "stored"
    res = run.invoke(main, ledger.cli_args() + ["checkpoint", "--witness", url, "--json"])
    assert res.exit_code == 0, res.output
    note = json.loads(res.stdout)["note"]
    assert "regulator.example/w1" in note
    res = run.invoke(main, ledger.cli_args() + ["verify", "--witness", vkey, "--json"])
    report = json.loads(res.stdout)
    assert res.exit_code == 0 and report["checkpoints_accepted"] == 1, report
    assert any("0 of the 1 witness cosignatures" in n for n in report["notes"])  # the unwitnessed one, refused
    # a second checkpoint: the witness holds the first, the log proves consistency from it (after a 409)
    assert ingest(ledger.store, night_batch(ledger.store, p, rounds=1).lines()).status == "stored"
    assert run.invoke(main, ledger.cli_args() + ["checkpoint", "--witness", url]).exit_code == 0
    from ledger.log.note import COSIGNATURE_TYPE, verifier_key

    other = verifier_key("regulator.example/w2", bytes(range(32)), COSIGNATURE_TYPE)
    res = run.invoke(main, ledger.cli_args() + ["verify", "--witness", vkey, "--witness", other, "--json"])
    assert res.exit_code == 5 and json.loads(res.stdout)["verdict"] == "UNVERIFIED"
    res = run.invoke(main, ledger.cli_args() + ["verify", "--witness", vkey, "--witness", other,
                                                "--witness-quorum", "1", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["checkpoints_accepted"] == 2
    # a cosignature line altered in the published note is named, not skipped
    published = sorted(ledger.public.path.glob("checkpoint-*.note"))[-1]
    text, sigs = note_parts(published.read_text())
    name, blob = sigs[-1]
    bad = blob[:-1] + bytes([blob[-1] ^ 1])
    published.write_text(published.read_text().replace(base64.b64encode(blob).decode(),
                                                       base64.b64encode(bad).decode()))
    res = run.invoke(main, ledger.cli_args() + ["verify", "--witness", vkey, "--json"])
    assert res.exit_code == 1 and any("cosignature by witness" in p["reason"] for p in json.loads(res.stdout)["problems"])


def test_an_independent_implementation_accepts_the_cosigned_note(ledger: Ledger, witness, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Node's crypto (OpenSSL) and a verifier written from the C2SP texts, sharing no code
    with pitboss. Go's golang.org/x/mod/sumdb/note is not on these machines, and checks
    only the log's signature, not cosignature/v1."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the independent check (tests/ledger/log/cosig_check.mjs) needs it")
    url, vkey, _ = witness
    res = CliRunner().invoke(main, ledger.cli_args() + ["checkpoint", "--witness", url, "--json"])
    assert res.exit_code == 0, res.output
    note = tmp_path / "cosigned.note"
    note.write_text(json.loads(res.stdout)["note"])
    (tmp_path / "w.vkey").write_text(vkey)
    out = subprocess.run([node, str(HERE / "cosig_check.mjs"), str(note), ledger.public.vkey_file.read_text(), vkey],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("ok test.pitboss/ledger "), out.stdout + out.stderr
    body, _ = note_parts(note.read_text())
    (tmp_path / "other.note").write_text(note.read_text().replace(body.split("\n")[1], str(int(body.split("\n")[1]) + 1), 1))
    out = subprocess.run([node, str(HERE / "cosig_check.mjs"), str(tmp_path / "other.note"),
                          ledger.public.vkey_file.read_text(), vkey], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and out.stdout.startswith("FAIL")

"""Issue 2 acceptance: inclusion and consistency proofs exported to files verify with a
standalone function that takes only the proof, the checkpoint and the public key; forged
proofs and checkpoints are refused (see shared/notes/transparency-log.md)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import main
from ledger.keys import Signer
from ledger.log.checkpoints import create_checkpoint
from ledger.log.merkle import ProofError
from ledger.log.note import NoteError, sign_note, verifier_key
from ledger.log.proofs import verify_consistency_proof, verify_inclusion_proof
from tests.helpers import ingest, make_producers, night_batch


@pytest.fixture
def exported(ledger):  # type: ignore[no-untyped-def]
    p = make_producers(ledger)
    ingest(ledger.store, night_batch(ledger.store, p, rounds=5).lines())
    old = create_checkpoint(ledger.store, ledger.keys, ledger.public).checkpoint.size
    ingest(ledger.store, night_batch(ledger.store, p, rounds=7).lines())
    new = create_checkpoint(ledger.store, ledger.keys, ledger.public).checkpoint.size
    target = next(r for r in ledger.store.rows() if r.stream.startswith("round:"))
    out = ledger.tmp / "out"
    out.mkdir()
    run = CliRunner()
    args = ledger.cli_args()
    r1 = run.invoke(main, args + ["proof", "inclusion", target.stream, str(target.seq), "-o", str(out / "inc.proof")])
    r2 = run.invoke(main, args + ["proof", "consistency", str(old), str(new), "-o", str(out / "cons.proof")])
    assert r1.exit_code == 0 and r2.exit_code == 0, (r1.output, r2.output)
    return out, ledger.public.vkey_file.read_text(), target, old, new


def test_inclusion_proof_verifies_offline(exported) -> None:  # type: ignore[no-untyped-def]
    out, vkey, target, _, new = exported
    res = verify_inclusion_proof((out / "inc.proof").read_text(), None, vkey)
    assert (res.event["stream"], res.event["seq"]) == (target.stream, target.seq)
    assert res.checkpoint.size == new


def test_consistency_proof_verifies_offline(exported) -> None:  # type: ignore[no-untyped-def]
    out, vkey, _, old, new = exported
    o, n = verify_consistency_proof((out / "cons.proof").read_text(), (out / "cons.proof.old.note").read_text(),
                                    (out / "cons.proof.new.note").read_text(), vkey)
    assert (o.size, n.size) == (old, new)


def test_cli_checks_proofs_without_a_database(exported, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out, vkey, _, _, _ = exported
    (tmp_path / "log.vkey").write_text(vkey)
    run = CliRunner()
    r = run.invoke(main, ["--db", str(tmp_path / "absent.db"), "proof", "check-inclusion", str(out / "inc.proof"),
                          "--vkey", str(tmp_path / "log.vkey")])
    assert r.exit_code == 0 and "OK" in r.output
    r = run.invoke(main, ["proof", "check-consistency", str(out / "cons.proof"), str(out / "cons.proof.old.note"),
                          str(out / "cons.proof.new.note"), "--vkey", str(tmp_path / "log.vkey")])
    assert r.exit_code == 0 and "OK" in r.output
    assert not (tmp_path / "absent.db").exists()


def test_altered_event_in_inclusion_proof_is_refused(exported) -> None:  # type: ignore[no-untyped-def]
    out, vkey, _, _, _ = exported
    text = (out / "inc.proof").read_text()
    extra = next(line for line in text.splitlines() if line.startswith("extra "))
    event = base64.b64decode(extra[6:]).replace(b'"complete"', b'"void"').replace(b'"decks":8', b'"decks":6')
    forged = text.replace(extra, "extra " + base64.b64encode(event).decode())
    with pytest.raises(ProofError, match="altered"):
        verify_inclusion_proof(forged, None, vkey)


def test_forged_proof_hash_is_refused(exported) -> None:  # type: ignore[no-untyped-def]
    out, vkey, _, _, _ = exported
    lines = (out / "inc.proof").read_text().split("\n")
    lines[3] = base64.b64encode(b"\x00" * 32).decode()
    with pytest.raises(ProofError):
        verify_inclusion_proof("\n".join(lines), None, vkey)


def test_checkpoint_signed_by_another_key_is_refused(exported) -> None:  # type: ignore[no-untyped-def]
    out, vkey, _, _, _ = exported
    text = (out / "inc.proof").read_text()
    head, _, note = text.partition("\n\n")
    body = note[: note.rfind("\n\n") + 1]
    mallory = Signer.generate("m")
    origin = body.split("\n")[0]
    forged = head + "\n\n" + sign_note(body, origin, mallory.private_key)
    with pytest.raises(NoteError, match="not signed by"):
        verify_inclusion_proof(forged, None, vkey)
    with pytest.raises(NoteError):  # the forger's own key, but under the real name: key hash differs
        verify_inclusion_proof(forged, None, verifier_key(origin, Signer.generate("z").public_key))


def test_proof_against_a_different_trusted_checkpoint_is_refused(exported) -> None:  # type: ignore[no-untyped-def]
    out, vkey, _, _, _ = exported
    with pytest.raises(ProofError, match="not the given checkpoint"):
        verify_inclusion_proof((out / "inc.proof").read_text(), (out / "cons.proof.old.note").read_text(), vkey)


def test_consistency_proof_with_swapped_checkpoints_is_refused(exported) -> None:  # type: ignore[no-untyped-def]
    out, vkey, _, _, _ = exported
    with pytest.raises(ProofError):
        verify_consistency_proof((out / "cons.proof").read_text(), (out / "cons.proof.new.note").read_text(),
                                 (out / "cons.proof.old.note").read_text(), vkey)

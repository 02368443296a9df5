"""Keys and roles (issue #7 point 5), on SQLite and PostgreSQL: every role against every
event kind through ingest; the key-compromise drill (revoke, verify lists the untrusted
events, reconciliation fails until a ruling confirms them); private keys never in the
database, the outputs or the error text."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization

from cli.main import main
from ledger.house import create_key
from ledger.kinds import KEYRING_STREAM, KINDS, ROLES, single_stream_of
from ledger.producer import BatchBuilder
from ledger.scope import PRODUCER_ROLES
from ledger.store import Store
from ledger.timeutil import utc_now
from tests.helpers import checkpointed, ingest, scope_for

NOW = utc_now()
# Payloads for the kinds the demo night does not record (schema-valid; context may refuse them)
EXTRA_PAYLOADS: dict[str, dict[str, Any]] = {
    "key.revoke.v1": {"key_id": "0" * 16, "revoked_from": NOW, "reason": "drill"},
    "key.scope.v1": {"key_id": "0" * 16, "scope": ["table:T"]},
    "ledger.receipt.v1": {"received": NOW},
    "key.rotate.v1": {"key_id": "0" * 16, "new_key_id": "1" * 16, "new_public_key": "a" * 64, "effective": NOW},
    "penalty.v1": {"offence": "warning", "rule": "002 TDA 58 B", "acts_on": ["seat:X#1"], "reason": "drill"},
    "poker.burn.v1": {"card": "As"},
    "poker.draw.v1": {"seat": 1, "discard": ["As"]},
    "poker.timeout.v1": {"seat": 1, "waited_s": 60},
    "round.disconnect.v1": {"player": "P1"},
    "shoe.cut_card.v1": {"round": "R1"},
    "seat.join.v1": {"table": "T", "blind_level": "50/100"},
    "seat.leave.v1": {"table": "T", "blind_level": "50/100", "hands_played": 3, "others_seated": 2},
    "seat.sit_out.v1": {"table": "T"},
    "seat.return.v1": {"table": "T"},
    "shoe.deck_replaced.v1": {"deck": 1, "reason": "drill",
                              "video": {"camera": "c", "start": NOW, "end": NOW, "sha256": "0" * 64}},
    "tournament.cancel.v1": {"paid": {}},
    "tournament.chip_race.v1": {"denomination": 100, "odd": {"A": 25}, "others": {}, "cards": {"A": ["As"]},
                                "won": {"A": 1}},
    "tournament.disqualify.v1": {"player": "A", "penalty": "penalty:A#1"},
    "tournament.unregister.v1": {"player": "A"},
    "import.source.v1": {"round": "round:R1", "table": "T", "format": "phh", "file": "x.phh", "sha256": "0" * 64},
    "ruling.key_compromise.v1": {"key_id": "0" * 16, "acts_on": ["account:X#1"], "decision": "confirmed",
                                 "basis": "video", "reason": "drill"},
}


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One real payload of every kind, from a demo night on a scratch ledger."""
    tmp = tmp_path_factory.mktemp("examples")
    args = ["--db", f"sqlite:///{tmp}/d.db", "--keys", str(tmp / "k"), "--public", str(tmp / "p")]
    assert CliRunner().invoke(main, args + ["init"]).exit_code == 0
    assert CliRunner().invoke(main, args + ["demo", "--hands", "14", "-o", str(tmp / "o")]).exit_code == 0
    out: dict[str, dict[str, Any]] = {}
    with Store.open(f"sqlite:///{tmp}/d.db") as store:
        for row in store.rows():
            out.setdefault(row.kind, orjson.loads(row.state)["payload"])
    out.update({k: v for k, v in EXTRA_PAYLOADS.items() if k not in out})
    out["table.open.v1"].pop("config", None)  # a configuration is the floor's only: tests/ledger/judges/test_table_config.py
    assert set(out) == set(KINDS), f"no example payload for {sorted(set(KINDS) - set(out))}"
    return out


def _stream(kind: str, n: int) -> str:
    return single_stream_of(kind) or f"{KINDS[kind].stream_type}:matrix-{n}"


def test_every_role_against_every_kind_only_allowed_pairs_pass_the_key_check(ledger, examples) -> None:  # type: ignore[no-untyped-def]
    """9 roles x every kind, each as its own batch. A pair the kind does not allow is
    refused on the role, nothing stored; an allowed pair is never refused on key or
    role (it may still be refused by the kind's own rules, e.g. a round event with no
    round open) and the context-free ones are stored."""
    signers = {role: create_key(ledger.store, ledger.keys, f"{role}:matrix", role, scope=scope_for(role)) for role in ROLES}
    stored_anywhere = {"cash.deposit.v1", "cash.withdrawal.v1", "account.location.v1", "incident.server_crash.v1",
                       "seat.join.v1", "table.open.v1"}
    outcomes: dict[tuple[str, str], str] = {}
    for n, kind in enumerate(sorted(KINDS)):
        for role, signer in signers.items():
            b = BatchBuilder.for_store(ledger.store)
            b.add(signer, _stream(kind, n * 100 + ROLES.index(role)), kind, examples[kind])
            before = ledger.store.count()
            report = ingest(ledger.store, b.lines())
            allowed = role in KINDS[kind].roles
            if not allowed:
                assert report.status == "rejected" and report.rejections[0].check == "role", (role, kind, report)
                assert ledger.store.count() == before
            else:
                assert report.status == "stored" or report.rejections[0].check not in ("role", "key"), (
                    role, kind, str(report.rejections[0]))
                if kind in stored_anywhere:
                    assert report.status == "stored", (role, kind, str(report.rejections[:1]))
            outcomes[(role, kind)] = report.status
    assert len(outcomes) == len(ROLES) * len(KINDS)
    assert sum(1 for (r, k) in outcomes if r in KINDS[k].roles) == sum(len(s.roles) for s in KINDS.values())


def test_keys_by_scope_a_producer_key_is_refused_outside_its_scope_for_every_kind_it_may_sign(ledger, examples) -> None:  # type: ignore[no-untyped-def]
    """The matrix's keys x scope dimension (issue 13 point 1): a key of every producer role,
    scoped to table, equipment, tournament and account IN, signs every kind its role allows
    on the stream at OUT (a round or seat event naming table OUT): refused on its scope,
    nothing stored. The same event at IN is never refused on its scope."""
    inside = ["table:IN", "shoe:IN", "wheel:IN", "dice:IN", "tournament:IN", "account:IN"]
    signers = {role: create_key(ledger.store, ledger.keys, f"{role}:scoped", role, scope=inside)
               for role in sorted(PRODUCER_ROLES)}
    checked = 0
    for kind, spec in sorted(KINDS.items()):
        for role in sorted(spec.roles & PRODUCER_ROLES):
            for where in ("OUT", "IN"):
                payload = dict(examples[kind])
                if "table" in payload and spec.stream_type in ("round", "seat", "import"):
                    payload["table"] = where
                b = BatchBuilder.for_store(ledger.store)
                ident = f"{where}-{checked}" if spec.stream_type in ("round", "seat", "import") else where  # a place is its id
                b.add(signers[role], f"{spec.stream_type}:{ident}", kind, payload)
                before = ledger.store.count()
                report = ingest(ledger.store, b.lines())
                first = report.rejections[0] if report.rejections else None
                if where == "OUT":
                    assert report.status == "rejected" and first is not None and first.check == "scope", (role, kind, report)
                    assert ledger.store.count() == before
                elif kind == "round.open.v1" or spec.stream_type != "round":
                    # at IN the scope lets it through (a later round event has no round open here: its round's
                    # table is unknown, so only the round.open is tried at IN)
                    assert first is None or first.check != "scope", (role, kind, str(first))
            checked += 1
    assert checked == sum(len(spec.roles & PRODUCER_ROLES) for spec in KINDS.values())


@pytest.mark.usefixtures("past_dated")
def test_key_compromise_drill_untrusted_until_a_ruling_confirms(ledger) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    p = SimpleNamespace(cage=create_key(ledger.store, ledger.keys, "cage:drill", "cage", valid_from="2026-11-01T00:00:00Z"))
    b = BatchBuilder.for_store(ledger.store, clock=lambda: "2026-11-20T10:00:00Z")
    b.add(p.cage, "account:P1", "cash.deposit.v1", {"amount": 5, "currency": "EUR", "method": "cash", "reference": "a"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    b = BatchBuilder.for_store(ledger.store, clock=lambda: "2026-11-20T12:00:00Z")
    for k in range(3):
        b.add(p.cage, "account:P1", "cash.deposit.v1",
              {"amount": 6 + k, "currency": "EUR", "method": "cash", "reference": f"b{k}"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    cli = ledger.cli_args()
    res = CliRunner().invoke(main, cli + ["keys", "revoke", p.cage.key_id, "--from", "2026-11-20T11:00:00Z",
                                          "--reason", "cage terminal stolen"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, cli + ["verify", "--json"])
    untrusted = [(x["stream"], x["seq"]) for x in json.loads(res.stdout)["problems"]]
    assert res.exit_code == 1 and untrusted == [("account:P1", 2), ("account:P1", 3), ("account:P1", 4)]
    res = CliRunner().invoke(main, checkpointed(cli) + ["reconcile", "--day", "2026-11-20", "--json"])
    assert res.exit_code == 1 and len(json.loads(res.stdout)["discrepancies"]) == 3
    floor = create_key(ledger.store, ledger.keys, "floor:security", "floor")
    ruling = {"key_id": p.cage.key_id, "decision": "confirmed", "basis": "cage video 10:55-12:05, till count",
              "reason": "the deposits were made in person; the key was stolen later"}
    b = BatchBuilder.for_store(ledger.store)
    b.add(floor, "ruling:compromise-1", "ruling.key_compromise.v1", {**ruling, "acts_on": ["account:P1#1"]})
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and "not untrusted" in report.rejections[0].reason  # before the revocation
    b = BatchBuilder.for_store(ledger.store)
    b.add(floor, "ruling:compromise-1", "ruling.key_compromise.v1", {**ruling, "acts_on": ["account:P1#2",
                                                                                          "account:P1#3"]})
    assert ingest(ledger.store, b.lines()).status == "stored"
    res = CliRunner().invoke(main, checkpointed(cli) + ["reconcile", "--day", "2026-11-20", "--json"])
    report_json = json.loads(res.stdout)
    assert res.exit_code == 1 and [(d["stream"], d["seq"]) for d in report_json["discrepancies"]] == [("account:P1", 4)]
    b = BatchBuilder.for_store(ledger.store)
    b.add(floor, "ruling:compromise-2", "ruling.key_compromise.v1", {**ruling, "acts_on": ["account:P1#4"]})
    assert ingest(ledger.store, b.lines()).status == "stored"
    res = CliRunner().invoke(main, checkpointed(cli) + ["reconcile", "--day", "2026-11-20", "--json"])
    assert res.exit_code == 0 and len(json.loads(res.stdout)["untrusted_confirmed"]) == 3


def _secrets(keys_dir: Path) -> list[bytes]:
    """Every private key of the key directory in the forms it could leak as."""
    out = []
    for pem in keys_dir.glob("*.pem"):
        data = pem.read_bytes()
        key = serialization.load_pem_private_key(data, password=None)
        raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                serialization.NoEncryption())
        body = b"".join(line for line in data.splitlines() if not line.startswith(b"-----"))
        out += [raw, raw.hex().encode(), base64.b64encode(raw), base64.urlsafe_b64encode(raw).rstrip(b"="), body]
    return out


def test_private_keys_never_appear_in_the_database_outputs_or_errors(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli = ledger.cli_args()
    outputs: list[bytes] = []

    def run(*args: str) -> None:
        res = CliRunner().invoke(main, cli + list(args))
        outputs.append(res.stdout_bytes + (res.stderr_bytes or b"") + repr(res.exception).encode())

    for role in ("cage", "floor", "dealer"):
        run("keys", "create", f"{role}:scan", "--role", role, "--json")
    run("demo", "--hands", "14", "-o", str(tmp_path / "out"), "--json")
    run("verify", "--json")
    run("keys", "list", "--json")
    run("balances", "--json")
    run("reconcile", "--day", NOW[:10], "--json")
    run("keys", "create", "bad:role", "--role", "nobody", "--json")  # errors, too
    pem = next(ledger.keys.path.glob("*.pem"))
    pem.chmod(0o644)  # a key file others could read is refused, without printing it
    run("keys", "create", "x:y", "--role", "cage", "--json")
    pem.chmod(0o600)
    haystack = b"".join(outputs)
    if ledger.store.url.backend == "sqlite":
        haystack += Path(ledger.store.url.path).read_bytes()
        haystack += Path(str(ledger.store.url.path) + ".views.db").read_bytes()
    else:
        haystack += b"".join(r.state for r in ledger.store.rows())
    haystack += b"".join(f.read_bytes() for f in (tmp_path / "out").rglob("*") if f.is_file())
    secrets = _secrets(ledger.keys.path)
    assert len(secrets) >= 5 * 5
    assert not [s for s in secrets if s in haystack]


@pytest.mark.usefixtures("past_dated")
def test_attack_4_a_revoked_key_does_not_absolve_itself(ledger) -> None:  # type: ignore[no-untyped-def]
    """Issue 13 attack 4: after a floor key was revoked, the thief signed with that same
    key a key-compromise ruling dated before the revocation, "confirming" its own events.
    A ruling about key K is signed by a floor or house key other than K, valid when the
    ledger receives it. On SQLite and PostgreSQL; nothing stored from a refused batch."""
    from tests.conftest import dump_rows

    stolen = create_key(ledger.store, ledger.keys, "floor:night", "floor", valid_from="2026-11-01T00:00:00Z")
    b = BatchBuilder.for_store(ledger.store, clock=lambda: "2026-11-20T12:00:00Z")
    b.add(stolen, "table:T9", "table.open.v1", {"game": "fan-tan", "seats": 7, "currency": "EUR"})
    assert ingest(ledger.store, b.lines()).status == "stored"
    ruling = {"key_id": stolen.key_id, "acts_on": ["table:T9#1"], "decision": "confirmed", "basis": "none",
              "reason": "self-absolution"}
    revoke = ["keys", "revoke", stolen.key_id, "--from", "2026-11-20T11:00:00Z", "--reason", "badge stolen"]
    # before the revocation is recorded the key may not rule on itself; after it, it signs nothing more
    for why, then in (("rules on its own compromise", revoke), ("was revoked (key ring seq", None)):
        b = BatchBuilder.for_store(ledger.store, clock=lambda: "2026-11-20T10:30:00Z")  # dated before the revocation
        b.add(stolen, "ruling:absolve", "ruling.key_compromise.v1", ruling)
        before = dump_rows(ledger.store)
        report = ingest(ledger.store, b.lines())
        assert report.status == "rejected" and why in report.rejections[0].reason, report.rejections
        assert dump_rows(ledger.store) == before
        if then:
            res = CliRunner().invoke(main, ledger.cli_args() + then)
            assert res.exit_code == 0, res.output
    accomplice = create_key(ledger.store, ledger.keys, "floor:accomplice", "floor", valid_from="2026-11-01T00:00:00Z")
    res = CliRunner().invoke(main, ledger.cli_args() + ["keys", "revoke", accomplice.key_id, "--from",
                                                        "2026-11-21T00:00:00Z", "--reason", "also stolen"])
    assert res.exit_code == 0, res.output
    b = BatchBuilder.for_store(ledger.store, clock=lambda: "2026-11-20T10:30:00Z")
    b.add(accomplice, "ruling:absolve", "ruling.key_compromise.v1", ruling)  # a key itself revoked by now
    report = ingest(ledger.store, b.lines())
    assert report.status == "rejected" and "was revoked (key ring seq" in report.rejections[0].reason
    honest = create_key(ledger.store, ledger.keys, "floor:security", "floor")
    b = BatchBuilder.for_store(ledger.store)
    b.add(honest, "ruling:confirm", "ruling.key_compromise.v1", {**ruling, "basis": "video", "reason": "seen"})
    assert ingest(ledger.store, b.lines()).status == "stored"  # another valid floor key may rule


def test_attack_5_an_event_signed_for_one_ledger_is_refused_by_another(ledger, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 13 attack 5: a 25,000.00 deposit signed for ledger A was accepted by ledger B,
    where the same cage key is registered. Events are ``pitboss.event.v2``: the signed hash
    covers ``ledger``, the origin of the ledger they were signed for, and a ledger refuses
    any other origin (at ingest, and verify names it). On SQLite and PostgreSQL (B)."""
    from ledger.house import PublicDir, init_ledger
    from ledger.keys import KeyDirectory
    from ledger.kinds import kinds_for_role
    from ledger.store import Store
    from tests.conftest import dump_rows

    other = Store.open(f"sqlite:///{tmp_path}/a.db", create=True)
    other_keys = KeyDirectory(tmp_path / "a-keys")
    init_ledger(other, other_keys, PublicDir(tmp_path / "a-public"), "casino-a.example/ledger")
    cage = create_key(other, other_keys, "cage:main", "cage")
    # the same cage key registered in ledger B by B's house
    from ledger.house import _house

    _, b_house = _house(ledger.store, ledger.keys)
    b = BatchBuilder.for_store(ledger.store)
    b.add(b_house, KEYRING_STREAM, "key.register.v2", {
        "key_id": cage.key_id, "actor": cage.actor, "role": "cage", "public_key": cage.public_key.hex(),
        "kinds": kinds_for_role("cage"), "valid_from": utc_now(), "scope": ["*"]})
    assert ingest(ledger.store, b.lines()).status == "stored"
    deposit = BatchBuilder.for_store(other)
    deposit.add(cage, "account:P1", "cash.deposit.v1", {"amount": 2_500_000, "currency": "EUR", "method": "cash",
                                                        "reference": "a-1"})
    assert ingest(other, deposit.lines()).status == "stored"  # where it was signed for
    other.close()
    before = dump_rows(ledger.store)
    report = ingest(ledger.store, deposit.lines())  # replayed to ledger B
    assert report.status == "rejected" and dump_rows(ledger.store) == before
    assert report.rejections[0].check == "ledger" and "casino-a.example/ledger" in report.rejections[0].reason
    from ledger.verify import verify_ledger
    from tests.conftest import execute_sql

    ev = deposit.events[0]  # written behind ingest's back: verify names it
    execute_sql(ledger.store, f"INSERT INTO {ledger.store.events_table} (originator_id, originator_version, topic, state)"
                              " VALUES (?,?,?,?)", (ev.stream, ev.seq, ev.kind, ev.encoded()))
    problems = verify_ledger(ledger.store, public_dir=ledger.public.path).problems
    assert [(p.check, p.stream) for p in problems] == [("ledger", "account:P1")]

"""What a verifier trusts, and where it got it: the pinned roots and its own last checkpoint.

Issue 14 point 1: verify, reconcile, evidence and verify-bundle take the operator's house
key (the key ring's anchor) and the log's verifier key only from what the person running
them pins, never from the operator's writable storage and never from the current
directory. In order, the first that gives a value wins:

1. an option (``--anchor``, ``--log-key``, ``--witness``, ``--witness-quorum``, ``--state``);
2. an environment variable (``PITBOSS_ANCHOR``, ``PITBOSS_LOG_KEY``, ``PITBOSS_WITNESSES``
   separated by ``;``, ``PITBOSS_WITNESS_QUORUM``, ``PITBOSS_STATE``);
3. a verifier configuration file named by path (``--trust FILE`` or ``PITBOSS_TRUST``),
   TOML, as ``pitboss init --trust-config FILE`` writes it::

       anchor = "<64 hex digits: the house key>"
       log_key = "<origin>+<key hash>+<base64 key>"
       witnesses = ["<name>+<key hash>+<base64 key>", ...]   # optional
       witness_quorum = 1                                      # optional
       state = "/var/lib/pitboss-verifier"                    # optional

Every verdict names the roots it used and where each came from (``describe``). Without a
pinned anchor and log key the verdict is UNVERIFIED, never OK.

Issue 14 point 2: a verifier keeps the last checkpoint it accepted (``ClientState``, as
transparency-log and immudb clients do) and requires the ledger to extend it; a
witness's cosignature (c2sp.org/tlog-cosignature) on a checkpoint is required from a
quorum of the pinned witnesses when any are pinned.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger.log.note import COSIGNATURE_TYPE, Checkpoint, NoteError, VerifierKey, cosignature_time, open_checkpoint


class TrustError(ValueError):
    """A pinned root that cannot be read: the message names the option, variable or file."""


def parse_anchor(text: str, where: str) -> bytes:
    """A house key: 64 hex digits (a file holding them is read by the caller)."""
    token = text.strip()
    try:
        raw = bytes.fromhex(token) if len(token) == 64 and token.isascii() else b""
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise TrustError(f"{where}: the anchor must be the house key's 64 hex digits")
    return raw


def _text_or_file(value: str, where: str) -> str:
    """An option's value, or the text of the file it names (a path with a slash or that exists)."""
    path = Path(value)
    if path.is_file():
        try:
            return path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise TrustError(f"{where}: cannot read {value}: {exc}") from None
    return value.strip()


@dataclass(frozen=True)
class TrustRoots:
    anchor: bytes | None = None
    log_key: VerifierKey | None = None
    witnesses: tuple[VerifierKey, ...] = ()
    quorum: int = 0
    state_dir: Path | None = None
    sources: Mapping[str, str] = field(default_factory=dict)
    """root -> where it came from (an option, a variable, a configuration file)."""

    @property
    def pinned(self) -> bool:
        return self.anchor is not None and self.log_key is not None

    def missing(self) -> list[str]:
        """What is not pinned, in words (empty when the roots are complete)."""
        out = []
        if self.anchor is None:
            out.append("no pinned anchor (the house key: --anchor, PITBOSS_ANCHOR or the verifier configuration)")
        if self.log_key is None:
            out.append("no pinned log key (--log-key, PITBOSS_LOG_KEY or the verifier configuration)")
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "anchor": self.anchor.hex() if self.anchor else None,
            "anchor_from": self.sources.get("anchor"),
            "log_key": self.log_key.text() if self.log_key else None,
            "log_key_from": self.sources.get("log_key"),
            "witnesses": [w.text() for w in self.witnesses],
            "witnesses_from": self.sources.get("witnesses"),
            "witness_quorum": self.quorum,
            "state": str(self.state_dir) if self.state_dir else None,
            "state_from": self.sources.get("state"),
        }

    def lines(self) -> list[str]:
        """The roots as a person reads them under a verdict."""
        d = self.describe()
        out = [f"trust anchor {d['anchor'] or 'NOT PINNED'}" + (f" (from {d['anchor_from']})" if d["anchor"] else ""),
               f"log key {d['log_key'] or 'NOT PINNED'}" + (f" (from {d['log_key_from']})" if d["log_key"] else "")]
        if self.witnesses:
            out.append(f"witnesses {', '.join(w.name for w in self.witnesses)}, quorum {self.quorum}"
                       f" (from {d['witnesses_from']})")
        if self.state_dir:
            out.append(f"last accepted checkpoint kept in {self.state_dir} (from {d['state_from']})")
        return out

    def cosigners(self, note: str) -> list[str]:
        """The pinned witnesses whose valid cosignature ``note`` carries (a forged one raises NoteError)."""
        return [w.name for w in self.witnesses if cosignature_time(note, w) is not None]


def default_state_dir() -> Path:
    """The verifier's own state: $XDG_STATE_HOME/pitboss, or ~/.local/state/pitboss. Never
    the ledger's directories, which the operator can write."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "pitboss"


def resolve(*, anchor: str | None = None, log_key: str | None = None, witnesses: tuple[str, ...] = (),
            quorum: int | None = None, config: str | None = None, state: str | None = None,
            environ: Mapping[str, str] | None = None) -> TrustRoots:
    """The roots from options, then environment variables, then the configuration file."""
    env = os.environ if environ is None else environ
    config = config or env.get("PITBOSS_TRUST") or None
    cfg: dict[str, Any] = {}
    cfg_where = ""
    if config:
        cfg_where = f"verifier configuration {config}"
        try:
            cfg = tomllib.loads(Path(config).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise TrustError(f"{cfg_where}: {exc}") from None
        unknown = set(cfg) - {"anchor", "log_key", "witnesses", "witness_quorum", "state"}
        if unknown:
            raise TrustError(f"{cfg_where}: unknown settings {sorted(unknown)}")
    sources: dict[str, str] = {}

    def pick(name: str, option: Any, option_name: str, var: str) -> Any:
        if option not in (None, (), ""):
            sources[name] = option_name
            return option
        if env.get(var):
            sources[name] = var
            return env[var]
        if name in cfg:
            sources[name] = cfg_where
            return cfg[name]
        return None

    a = pick("anchor", anchor, "--anchor", "PITBOSS_ANCHOR")
    pinned_anchor = parse_anchor(_text_or_file(str(a), sources["anchor"]), sources["anchor"]) if a else None
    k = pick("log_key", log_key, "--log-key", "PITBOSS_LOG_KEY")
    pinned_log = None
    if k:
        try:
            pinned_log = VerifierKey.parse(_text_or_file(str(k), sources["log_key"]))
        except NoteError as exc:
            raise TrustError(f"{sources['log_key']}: {exc}") from None
    w = pick("witnesses", witnesses, "--witness", "PITBOSS_WITNESSES")
    if isinstance(w, str):
        w = [x for x in w.split(";") if x.strip()]
    pinned_witnesses = []
    for text in w or []:
        try:
            pinned_witnesses.append(VerifierKey.parse(_text_or_file(str(text), sources["witnesses"]), COSIGNATURE_TYPE))
        except NoteError as exc:
            raise TrustError(f"{sources['witnesses']}: {exc}") from None
    q = pick("witness_quorum", quorum, "--witness-quorum", "PITBOSS_WITNESS_QUORUM")
    try:
        n = len(pinned_witnesses) if q is None else int(q)
    except (TypeError, ValueError):
        raise TrustError(f"{sources.get('witness_quorum')}: the witness quorum must be a whole number") from None
    if pinned_witnesses and not 1 <= n <= len(pinned_witnesses):
        raise TrustError(f"witness quorum {n} must be between 1 and the {len(pinned_witnesses)} witnesses pinned")
    if not pinned_witnesses and q is not None and n:
        raise TrustError("a witness quorum needs witnesses (--witness)")
    s = pick("state", state, "--state", "PITBOSS_STATE")
    if s is None:
        state_dir = default_state_dir()
        sources["state"] = "the default ($XDG_STATE_HOME/pitboss or ~/.local/state/pitboss)"
    else:
        state_dir = Path(str(s))
    return TrustRoots(pinned_anchor, pinned_log, tuple(pinned_witnesses), n if pinned_witnesses else 0, state_dir,
                      sources)


def config_text(anchor: bytes, log_key: str, state: str | None = None) -> str:
    """A verifier configuration for ``resolve`` (TOML; every value a basic string)."""
    lines = ["# pitboss verifier configuration: the roots a verifier pins (ledger/trust.py).",
             "# Keep it where the ledger's operator cannot write it.",
             f'anchor = "{anchor.hex()}"', f'log_key = "{_toml_escape(log_key)}"']
    if state:
        lines.append(f'state = "{_toml_escape(state)}"')
    return "\n".join(lines) + "\n"


def _toml_escape(text: str) -> str:
    return "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in text)


# --- the verifier's own last accepted checkpoint ----------------------------------------

@dataclass(frozen=True)
class ClientState:
    """Where a verifier keeps the last checkpoint it accepted for a log: one note file per
    log key, in a directory of the person running it."""

    directory: Path

    def _file(self, key: VerifierKey) -> Path:
        tag = hashlib.sha256(key.text().encode()).hexdigest()[:16]
        safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in key.name)[:64]
        return self.directory / f"{safe}-{tag}.checkpoint"

    def load(self, key: VerifierKey) -> tuple[Checkpoint, str] | None:
        path = self._file(key)
        if not path.is_file():
            return None
        try:
            note = path.read_text(encoding="utf-8")
            return open_checkpoint(note, key), note
        except (OSError, UnicodeDecodeError, NoteError) as exc:
            raise TrustError(f"the last accepted checkpoint in {path} cannot be read ({exc}): the verifier's own"
                             " state was damaged; restore it, or remove it knowingly to start over") from None

    def save(self, key: VerifierKey, note: str) -> Path:
        path = self._file(key)
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(note, encoding="utf-8")
        os.replace(tmp, path)
        return path

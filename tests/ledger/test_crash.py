"""Crash safety of ingest (issue #7 point 1), on a SQLite file and on PostgreSQL: the
ingest process (`pitboss ingest FILE --batch-size N`) is killed with SIGKILL at random
points, 50 times per backend. After each kill the store holds only whole batches and
`pitboss verify` passes; re-sending the file then stores the interrupted batch exactly
once. (The projection process is killed likewise in test_projections.py.)"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from cli.main import main
from ledger.ingest import ingest_batches
from ledger.sim.sample import write_sample_batch
from ledger.verify import verify_ledger
from tests.conftest import produced
from tests.helpers import ROOT, checkpointed

KILLS = 50
BATCH = 25
CHILD = "import sys; from cli.main import main; sys.argv[0] = 'pitboss'; main()"


def test_sigkill_during_ingest_leaves_whole_batches_and_resending_stores_once(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The producer re-sends from its last acknowledged batch (here: the last batch it
    knows stored, so every restart re-sends one stored batch: it must come back as a
    duplicate). When a night is all in, the next night is written and the kills go on."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rng = random.Random(7)
    kills = mid_run = nights = 0
    lines: list[str] = []
    done = 0  # lines of the current night known stored
    while kills < KILLS:
        assert nights <= KILLS, f"{nights} nights written for {kills} kills: the kills are not landing"
        if done >= len(lines):  # a new night, chained after everything stored
            path = tmp_path / f"night{nights}.jsonl"
            write_sample_batch(ledger.store, ledger.keys, path, 40)
            lines, done, nights = path.read_text().splitlines(), 0, nights + 1
            base = produced(ledger.store)
        resend = max(0, done - BATCH)  # the last acknowledged batch goes again
        part = tmp_path / "resend.jsonl"
        part.write_text("\n".join(lines[resend:]) + "\n")
        args = ledger.cli_args() + ["ingest", str(part), "--batch-size", str(BATCH), "--json"]
        proc = subprocess.Popen([sys.executable, "-c", CHILD, *args], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        # The kill lands by construction, not by guessing the child's speed: wait until it has
        # stored `ahead` new batches, then a random few milliseconds more, into the next batch
        # (ahead 0: while it starts or re-sends the acknowledged batch; ahead = every batch
        # left: no kill, the night goes in whole and the next one is written).
        left = -(-(len(lines) - done) // BATCH)
        ahead = rng.randrange(0, left + 1)
        deadline = time.monotonic() + 120
        while proc.poll() is None and produced(ledger.store) - base < done + ahead * BATCH:
            assert time.monotonic() < deadline, "the ingest child stored nothing new for 120 s"
            time.sleep(0.002)
        if ahead == left:
            assert proc.wait(timeout=120) == 0, "the ingest child failed on a night it was let finish"
        time.sleep(rng.uniform(0, 1.0) if ahead == 0 else rng.uniform(0, 0.05))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        stored = produced(ledger.store) - base
        assert stored == len(lines) or (stored - resend) % BATCH == 0, (
            f"{stored} events of the night stored: not whole batches of {BATCH} from {resend}")
        mid_run += done < stored < len(lines)
        done = stored
        assert verify_ledger(ledger.store, public_dir=ledger.public.path).clean
    print(f"kills={kills} mid_run={mid_run} nights={nights} events={ledger.store.count()}")
    assert mid_run >= 5, f"only {mid_run} of {kills} kills landed while batches were being stored"
    total = produced(ledger.store)
    again = ingest_batches(ledger.store, [lines[i:i + BATCH] for i in range(0, done, BATCH)])
    assert all(r.status == "duplicate" for r in again) and produced(ledger.store) == total  # exactly once
    reports = ingest_batches(ledger.store, [lines[i:i + BATCH] for i in range(0, len(lines), BATCH)])
    assert all(r.ok for r in reports) and produced(ledger.store) == base + len(lines)
    res = CliRunner().invoke(main, checkpointed(ledger.cli_args()) + ["verify", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["events"] == ledger.store.count()

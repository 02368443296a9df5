"""pitboss ledger: the write side (event schema, signing, chaining, checkpoints, storage).

The stable entry points:

- ``ledger.events.sign_event`` / ``ledger.producer.BatchBuilder``: producers build and sign.
- ``ledger.store.Store.open(url)``: SQLite file or PostgreSQL.
- ``ledger.ingest.ingest_lines`` / ``ingest_signed``: check and append a batch atomically.
- ``ledger.verify.verify_ledger``: re-prove the whole ledger.
- ``ledger.log.checkpoints``: signed checkpoints, inclusion and consistency proofs.
- ``ledger.log.proofs.verify_inclusion_proof`` / ``verify_consistency_proof``: offline checks.

The layers and what may import what: ``docs/architecture.md``.
"""

from ledger.native import install

install()  # before any compiled module can be imported: each runs only as the source it was built from

import ledger.games  # noqa: F401,E402  (the game engines and their event kinds)
import ledger.judges  # noqa: F401,E402  (the judges of every stream type and their event kinds)
import ledger.rng  # noqa: F401,E402  (the RNG protocol's kinds)

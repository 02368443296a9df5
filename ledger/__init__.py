"""pitboss ledger: the write side (event schema, signing, chaining, checkpoints, storage).

The stable entry points:

- ``ledger.events.sign_event`` / ``ledger.producer.BatchBuilder``: producers build and sign.
- ``ledger.store.Store.open(url)``: SQLite file or PostgreSQL.
- ``ledger.ingest.ingest_lines`` / ``ingest_signed``: check and append a batch atomically.
- ``ledger.verify.verify_ledger``: re-prove the whole ledger.
- ``ledger.log.checkpoints``: signed checkpoints, inclusion and consistency proofs.
- ``ledger.log.proofs.verify_inclusion_proof`` / ``verify_consistency_proof``: offline checks.
"""

import ledger.equipment  # noqa: F401,E402  (every kind is registered before any key is made)
import ledger.games  # noqa: F401  (registers the game engines and their event kinds)
import ledger.penalties  # noqa: F401,E402
import ledger.rng  # noqa: F401,E402
import ledger.rulings  # noqa: F401,E402
import ledger.tournaments  # noqa: F401,E402

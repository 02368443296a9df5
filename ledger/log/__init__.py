"""The transparency log: a global Merkle tree over every event hash (RFC 9162 hashing),
signed checkpoints in the C2SP signed-note format, and inclusion and consistency proofs
that anyone can check offline (``docs/architecture.md``)."""

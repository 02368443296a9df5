"""pitboss projections: the read side, rebuilt from the ledger's notification log.

Empty until the projections issue lands; nothing here is claimed to work yet.
"""

"""pitboss command line: thin click commands over ``ledger`` and ``projections``."""

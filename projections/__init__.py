"""pitboss projections: the read side, rebuilt from the ledger's notification log.

Views (``views``, run by ``runner``: rows and tracking position in one transaction),
balances, reconciliation of a gaming day (``reconcile``, with ``table_chips``, ``cage``
and ``rulings_check``), AML flags (``aml``, ``aml_poker``), replay of a round
(``replay``), a table as it stood (``table_state``) and evidence bundles (``evidence``).
The read side imports the write side, never the other way (``docs/architecture.md``).
"""

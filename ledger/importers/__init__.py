"""Hand histories written elsewhere, read into signed ledger events (PHH)."""

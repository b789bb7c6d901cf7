"""Following files as they grow, and merging what they gain into the ledger."""

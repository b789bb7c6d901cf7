"""Broken and hostile inputs, each with its expected outcome in `expectations.toml`."""

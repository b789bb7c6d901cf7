"""ledger-tui: tokens per accepted result, with failures kept.

The core (schema, load, importers, ledger, query, checks, report) is plain Python and polars and
never imports textual; the interactive app lives in `tui_ledger.tui`.
"""

__version__ = "0.1.0"

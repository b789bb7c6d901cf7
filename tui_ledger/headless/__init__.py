"""The headless commands `summary`, `check` and `convert`, one module each, and what they
share (`prepare`: load, price, filter, cap; open the input on Spark). `ledger-tui` (cli.py)
reads the first argument and hands the rest to one of them; `trace` and `grader` are in
`cli_trace`.

Nothing here imports polars, textual or pyspark at the top: each command imports what it
needs once its arguments are read, so `--help` answers at once.
"""

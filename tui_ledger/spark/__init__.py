"""ledger-tui on Apache Spark, through Spark Connect: the same figures, computed by the engine.

Importing this package imports no pyspark: `require_spark()` checks the `spark` extra is
installed, and the engine modules (`session`, `inputs`, `cells`, `opening`, `engine`,
`aggregate`, `filters`, `paging`, ...) import pyspark when they are imported themselves, which
only the Spark path does. See docs/SPARK.md.
"""

from __future__ import annotations

import importlib.util

from tui_ledger.spark.errors import (
    SparkCellError,
    SparkEngineError,
    SparkExtraMissing,
    SparkInputError,
    SparkQueryCancelled,
    SparkUnreachable,
)

__all__ = [
    "EXTRA_HINT",
    "SparkCellError",
    "SparkEngineError",
    "SparkExtraMissing",
    "SparkInputError",
    "SparkQueryCancelled",
    "SparkUnreachable",
    "require_spark",
]

EXTRA_HINT = "pip install 'ledger-tui[spark]'"


def require_spark() -> None:
    """Raise `SparkExtraMissing` (one line, naming the extra) unless the Spark Connect client
    is installed. Looks the package up without importing it."""
    if importlib.util.find_spec("pyspark") is None:
        raise SparkExtraMissing(
            f"--spark needs the Spark Connect client; install it with {EXTRA_HINT}."
        )
    if importlib.util.find_spec("pyspark.sql.connect") is None:
        raise SparkExtraMissing(
            f"the installed pyspark has no Spark Connect client; install {EXTRA_HINT}."
        )

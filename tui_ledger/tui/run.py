"""Running the interactive ledger: `run_app` (what `ledger-tui FILE` calls, from cli.py) and
`python -m tui_ledger.tui.run FILE...` (no FILE: the bundled demo).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.vouching import Accepted

if TYPE_CHECKING:
    from tui_ledger.accounting.prices import PriceTable
    from tui_ledger.load.early import EarlyLoad


def run_app(
    paths: list[str],
    *,
    demo: bool = False,
    load_options: dict[str, Any] | None = None,
    prices: PriceTable | None = None,
    watch_files: bool = False,
    spark: Any = None,
    present: bool = False,
    early: EarlyLoad | None = None,
    accepted: Accepted = "graded",
) -> int:
    """Open the interactive ledger; returns the exit code (2 when the file could not be read).

    `load_options` are `load.load`'s keyword arguments; `prices` prices every attempt once
    loaded; `watch_files` follows the files and shows appended attempts as they arrive
    (`--watch`); `spark` (`--spark`): the input opened on a Spark Connect server
    (`spark.commands.SparkInput`), which then computes every figure, page and check;
    `present` (`--present`): the presenter's steps over the app (`tui/presenter.py`), which
    Enter on the last step leaves for the app itself. `early`: the files' load, already
    started (`load.early`), which the app's first load takes its ledger from. `accepted`
    (`--accepted`): "graded", or "vouched" by the grader's audit (`v` toggles it).
    """
    app_class = LedgerApp
    if present:
        from tui_ledger.tui.presenter import PresentingApp

        app_class = PresentingApp
    app = app_class(
        paths,
        demo=demo,
        load_options=load_options,
        prices=prices,
        watch_files=watch_files,
        spark=spark,
        early=early,
        accepted=accepted,
    )
    app.run()
    if app.error_message:
        print(app.error_message, file=sys.stderr)
    return app.return_code or 0


def _main(argv: Sequence[str]) -> int:
    """`python -m tui_ledger.tui.run FILE...` (no FILE: the bundled demo)."""
    from importlib import resources

    paths = list(argv)
    demo = not paths
    if demo:
        paths = [str(resources.files("tui_ledger.sample_data").joinpath("demo.csv"))]
    return run_app(paths, demo=demo)


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

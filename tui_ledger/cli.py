"""The `ledger-tui` command: reads the first argument and runs the interactive app, or one of
the headless commands (`summary`, `check`, `convert`: one module each in `headless`; `trace`
and `grader`: `cli_trace`); and turns bad input into one line and exit 2.

The headless commands never import textual (the app is imported only when it is opened), so
`ledger-tui summary` starts fast and runs where no terminal UI could. The options the commands
share (and `serve` too) are in `cli_options`.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from tui_ledger import __version__
from tui_ledger.allocator import use_fewer_arenas
from tui_ledger.cli_options import (
    UsageError,
    add_accepted_option,
    add_load_options,
    add_price_options,
    add_spark_option,
    add_watch_option,
    check_paths,
    demo_path,
    load_options,
    price_table,
    spark_url,
)
from tui_ledger.cli_trace import run_grader, run_trace
from tui_ledger.headless.check import run_check
from tui_ledger.headless.convert import run_convert
from tui_ledger.headless.summary import run_summary

COMMANDS = ("summary", "check", "convert", "trace", "grader", "serve")
EXIT_BAD_INPUT = 2


def _app_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ledger-tui",
        description="Open attempt ledgers in the interactive ledger (no FILE: the bundled demo). "
        f"Headless commands: {', '.join(COMMANDS)} (ledger-tui COMMAND --help).",
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="files or folders of attempts")
    parser.add_argument("--version", action="version", version=f"ledger-tui {__version__}")
    parser.add_argument(
        "--present",
        action="store_true",
        help="presenter mode: one idea per screen in large text (keep, drop, the flip, what "
        "dropping hides); Space/→ next, ← back, Enter on the last opens the app, q quits",
    )
    add_accepted_option(parser)
    add_watch_option(parser)
    add_load_options(parser)
    add_price_options(parser)
    add_spark_option(parser)
    return parser


def run_app(argv: Sequence[str]) -> int:
    """`ledger-tui [FILE...]`: the interactive ledger (the demo when no file is given)."""
    args = _app_parser().parse_args(argv)
    url = spark_url(args)
    if url is not None:
        return _spark_app(args, url)
    demo = not args.files
    paths = [str(demo_path())] if demo else list(args.files)
    check_paths(paths)
    # The price table is not a `load()` argument: the app applies it after loading.
    prices = price_table(args.prices, args.flat_price)
    options = load_options(args)
    # A file the app reads whole in about the time its interface takes to start is read
    # beside that start (load/early.py): the first frame then shows its final figures.
    from tui_ledger.load.early import EarlyLoad, worth_reading_early

    early = EarlyLoad(paths, options) if not args.watch and worth_reading_early(paths) else None
    from tui_ledger.tui.run import run_app as run_interactive

    return run_interactive(
        paths,
        demo=demo,
        load_options=options,
        prices=prices,
        watch_files=args.watch,
        present=args.present,
        early=early,
        accepted=args.accepted,
    )


def _spark_app(args: argparse.Namespace, url: str) -> int:
    """`ledger-tui --spark URL INPUT`: open (connect, map, validate) the input on the server
    before the screen appears, so an unreachable server, a missing table or a bad cell is one
    line and exit 2, as with the headless commands; then the app computes on it."""
    if not args.files:
        raise UsageError("--spark needs an input: a path, glob or folder, or table:NAME")
    from tui_ledger.spark import require_spark

    require_spark()
    from tui_ledger.spark.commands import on_engine, open_input
    from tui_ledger.tui.run import run_app as run_interactive

    opened = on_engine(lambda: open_input(url or None, args.files, load_options=load_options(args)))
    try:
        return run_interactive(
            list(args.files), load_options=load_options(args), spark=opened, present=args.present
        )
    finally:
        # What it cached goes; the session stays warm for the next run (`session.leave`;
        # a server already gone has nothing left to release).
        opened.leave()


def _fail(message: str) -> NoReturn:
    from tui_ledger.text.textsafe import safe_text

    print(f"ledger-tui: error: {safe_text(message)}", file=sys.stderr)
    sys.exit(EXIT_BAD_INPUT)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ledger-tui` console script.

    Nothing here imports polars or textual before the arguments are read: `--version`,
    `--help` and a usage error answer at once, and each command imports what it needs.
    """
    use_fewer_arenas()  # before polars loads: nothing above this line imports it
    arguments = list(sys.argv[1:] if argv is None else argv)
    handlers = {
        "summary": run_summary,
        "check": run_check,
        "convert": run_convert,
        "trace": run_trace,
        "grader": run_grader,
    }
    try:
        if arguments and arguments[0] == "serve":
            from tui_ledger.tui.serve.serve import run_serve

            return run_serve(arguments[1:])
        if arguments and arguments[0] in handlers:
            return handlers[arguments[0]](arguments[1:])
        return run_app(arguments)
    except BrokenPipeError:
        # `ledger-tui summary big.csv | head` is fine; say nothing.
        return 0
    except KeyboardInterrupt:
        # A second Ctrl+C (polars raises its own after ours) must not become a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("ledger-tui: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        message = _bad_input_message(error)
        if message is None:
            raise
        _fail(message)


def _bad_input_message(error: Exception) -> str | None:
    """The one line for an error that bad input causes (a file, a filter, an option), or None
    for a bug. Its classes are imported here, once an error is raised: a module that raised
    one is loaded already, and `--version` never pays for them."""
    if isinstance(error, UsageError):
        return str(error)
    from tui_ledger.accounting.prices import PriceError
    from tui_ledger.exports.export_files import ExportError, TargetExists
    from tui_ledger.filtering.query import FilterError
    from tui_ledger.load import LoadError
    from tui_ledger.spark.errors import SparkEngineError
    from tui_ledger.trajectory import TrajectoryError

    if isinstance(error, FilterError):
        return f"--where: {error.message} (at character {error.position + 1})"
    if isinstance(error, TargetExists):  # convert -o, summary --pareto-svg: both take --force
        return f"{error.target}: already exists; choose another name, or --force to replace it"
    if isinstance(error, (LoadError, ExportError, PriceError, SparkEngineError, TrajectoryError)):
        return str(error)
    return None


if __name__ == "__main__":
    sys.exit(main())

"""The command-line options the `ledger-tui` commands share, and their inverse.

Both front ends read them: `cli` (the app and the headless commands) and `tui.serve` (the
app in a browser, whose every tab runs the app's own command line again). Neither imports
the other; each option group sits beside the function that turns parsed options back into
arguments (`load_argv`, `price_argv`, `watch_argv`, all of them: `app_argv`), so an option
and its serialisation change together. Importing this module imports no textual and no
polars.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui_ledger.accounting.prices import PriceTable
    from tui_ledger.importers import ImportOptions

# The environment variable through which `ledger-tui serve` tells each session's app
# (`tui_ledger.serve_child`) the server's pid, so the app dies with the server.
SERVER_PID_VARIABLE = "LEDGER_TUI_SERVER_PID"


class UsageError(Exception):
    """A command line that cannot be acted on; the message is one line for people."""


def sample_path(name: str) -> Path:
    """A bundled sample file, in an installed copy as in a source checkout."""
    try:
        bundled = Path(str(resources.files("tui_ledger.sample_data").joinpath(name)))
    except ModuleNotFoundError:  # a checkout on sys.path: sample_data/ sits beside the package
        bundled = Path(__file__).resolve().parent.parent / "sample_data" / name
    return bundled


def demo_path() -> Path:
    """The bundled synthetic demo ledger opened by `ledger-tui` with no file."""
    return sample_path("demo.csv")


def column_mapping(values: Sequence[str]) -> dict[str, str]:
    """`--col CANONICAL=SOURCE` values (each may hold several, comma-separated) as a mapping."""
    from tui_ledger.schema import ALIASES

    mapping: dict[str, str] = {}
    for value in values:
        for item in value.split(","):
            canonical, sep, source = item.partition("=")
            canonical = canonical.strip()
            if not sep or not canonical or not source.strip():
                raise UsageError(f"--col {item!r}: expected CANONICAL=SOURCE, e.g. tokens=usage")
            if canonical not in ALIASES:
                raise UsageError(
                    f"--col {item!r}: {canonical!r} is not a canonical column; "
                    f"use one of: {', '.join(ALIASES)}"
                )
            mapping[canonical] = source.strip()
    return mapping


def add_load_options(parser: argparse.ArgumentParser) -> None:
    """`--col`, `--zero-usage-is-missing`, `--input-format`, the importers' options
    (`--pass-threshold`, `--report`, `--outcome-attribute`) and `--outcomes` with
    `--outcomes-key`: how the files are read."""
    parser.add_argument(
        "--col",
        action="append",
        default=[],
        metavar="CANONICAL=SOURCE",
        help="map a file column to a canonical one (beats the aliases); repeatable",
    )
    parser.add_argument(
        "--zero-usage-is-missing",
        action="store_true",
        help="read an attempt that reports exactly 0 tokens as missing usage",
    )
    parser.add_argument(
        "--input-format",
        dest="fmt",
        metavar="FORMAT",
        help="force the input format (csv, tsv, parquet, json, jsonl, or a harness: "
        "terminal-bench, harbor, swe-bench, openhands, aider, claude-code, codex, otel, "
        "inspect, promptfoo) instead of detecting it",
    )
    parser.add_argument(
        "--pass-threshold",
        type=float,
        metavar="REWARD",
        help="accept a fractional reward or score at or above this (0 < REWARD <= 1; "
        "default 1: only a full reward passes)",
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="the SWE-bench harness report (or a folder of them) when it is not beside the run",
    )
    parser.add_argument(
        "--outcome-attribute",
        metavar="NAME",
        help="the OpenTelemetry span attribute that holds the verdict (true/false, a "
        "pass/fail word, or a score read against --pass-threshold)",
    )
    parser.add_argument(
        "--outcomes",
        metavar="FILE",
        help="a grading file (CSV, TSV, JSON or JSONL with a key column and passed and/or "
        "status, optionally task) joined onto the attempts of every input",
    )
    parser.add_argument(
        "--outcomes-key",
        metavar="COL",
        help="the column --outcomes joins on (default: the first of session_id, trace_id, "
        "conversation_id, span_id, trial_uuid, task that both have)",
    )


def load_argv(args: argparse.Namespace) -> list[str]:
    """The inverse of `add_load_options`: the parsed options as command-line arguments."""
    argv: list[str] = []
    for mapping in args.col:
        argv += ["--col", mapping]
    if args.zero_usage_is_missing:
        argv.append("--zero-usage-is-missing")
    if args.fmt:
        argv += ["--input-format", args.fmt]
    if args.pass_threshold is not None:
        argv += ["--pass-threshold", repr(args.pass_threshold)]
    for option, value in (
        ("--report", args.report),
        ("--outcome-attribute", args.outcome_attribute),
        ("--outcomes", args.outcomes),
        ("--outcomes-key", args.outcomes_key),
    ):
        if value is not None:
            argv += [option, value]
    return argv


def add_watch_option(parser: argparse.ArgumentParser) -> None:
    """`--watch`: follow the files."""
    parser.add_argument(
        "--watch",
        action="store_true",
        help="follow the files: show attempts appended to them (and folders' new trials) "
        "within a second; a rewritten file is read again",
    )


def watch_argv(args: argparse.Namespace) -> list[str]:
    """The inverse of `add_watch_option`."""
    return ["--watch"] if args.watch else []


def add_price_options(parser: argparse.ArgumentParser) -> None:
    """`--prices`, `--flat-price`: the price table behind the cost figures."""
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help="TOML price table (USD per million tokens per model and bucket) for cost figures",
    )
    parser.add_argument(
        "--flat-price",
        type=float,
        metavar="USD_PER_MTOK",
        help="one price per million tokens for attempts the table does not price by bucket",
    )


def price_argv(args: argparse.Namespace) -> list[str]:
    """The inverse of `add_price_options`."""
    argv: list[str] = []
    if args.prices:
        argv += ["--prices", args.prices]
    if args.flat_price is not None:
        argv += ["--flat-price", repr(args.flat_price)]
    return argv


SPARK_REMOTE_VARIABLE = "SPARK_REMOTE"


def add_spark_option(parser: argparse.ArgumentParser) -> None:
    """`--spark [URL]`: compute on a Spark Connect server instead of in this process."""
    parser.add_argument(
        "--spark",
        nargs="?",
        const="",
        metavar="URL",
        help="compute on Apache Spark through Spark Connect (sc://HOST:PORT; without a URL, "
        f"${SPARK_REMOTE_VARIABLE}); the input is then one path, glob or folder the cluster "
        "reads, or table:catalog.schema.name (needs pip install 'ledger-tui[spark]')",
    )


def spark_url(args: argparse.Namespace) -> str | None:
    """The Spark Connect URL `--spark` asks for ('' when $SPARK_REMOTE is meant), or None
    when the command runs locally. Refuses, in one line, the options the Spark path lacks."""
    url: str | None = getattr(args, "spark", None)
    if url is None:
        return None
    local_only = {
        "--prices": getattr(args, "prices", None) is not None,
        "--flat-price": getattr(args, "flat_price", None) is not None,
        "--matched-tasks": getattr(args, "matched_tasks", False),
        "--watch": getattr(args, "watch", False),
        "--accepted vouched": getattr(args, "accepted", "graded") == "vouched",
    }
    refused = [option for option, given in local_only.items() if given]
    if refused:
        raise UsageError(
            f"{refused[0]} is not computed on Spark yet; leave it out with --spark, or run "
            "without --spark on a local copy."
        )
    return url or os.environ.get(SPARK_REMOTE_VARIABLE) or ""


def add_query_options(parser: argparse.ArgumentParser) -> None:
    """`--by`, `--where`, `--matched-tasks`: what `summary` and `check` compare."""
    parser.add_argument(
        "--by",
        default="workflow",
        metavar="COL[,COL]",
        help="group by these columns (default: workflow)",
    )
    parser.add_argument(
        "--where",
        default="",
        metavar="EXPR",
        help='keep attempts matching the filter language, e.g. "model:a -task:smoke tokens>0"',
    )
    parser.add_argument(
        "--matched-tasks",
        action="store_true",
        help="count only tasks that every group attempted (a fair comparison of task sets)",
    )


FILTER_OPTIONS = ("--where", "--attempt")
"""The options whose value is a filter, which starts with `-` when its first term is negated."""


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """`parser.parse_args`, reading a filter option's value that starts with `-` as the
    filter it is: `--where -failed` as `--where=-failed` (argparse alone takes `-failed` for an
    option and stops with its usage text)."""
    return parser.parse_args(filter_values_joined(parser, argv))


def filter_values_joined(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """`argv` with each filter option (`FILTER_OPTIONS`, or an abbreviation argparse would
    take for one) joined to a next argument that starts with `-`, as `OPTION=VALUE`.

    A next argument the parser knows as an option (`--where --by task`: the filter was left
    out) stays apart, for argparse to say the value is missing; nothing after `--` changes.
    """
    options = [name for action in parser._actions for name in action.option_strings]
    out: list[str] = []
    index = 0
    while index < len(argv):
        argument = argv[index]
        if argument == "--":
            return [*out, *argv[index:]]
        following = argv[index + 1] if index + 1 < len(argv) else None
        if (
            following is not None
            and following.startswith("-")
            and _option_named(argument, options) in FILTER_OPTIONS
            and _option_named(following.split("=", 1)[0], options) is None
            and following != "--"
        ):
            out.append(f"{argument}={following}")
            index += 2
            continue
        out.append(argument)
        index += 1
    return out


def _option_named(argument: str, options: Sequence[str]) -> str | None:
    """The option `argument` names: itself, or the one long option it abbreviates (argparse
    takes unique prefixes); None when it names none."""
    if argument in options:
        return argument
    if argument.startswith("--") and len(argument) > 2:
        named = [option for option in options if option.startswith(argument)]
        if len(named) == 1:
            return named[0]
    return None


def add_accepted_option(parser: argparse.ArgumentParser) -> None:
    """`--accepted graded|vouched`: the verdicts as given, or only those the grader can vouch
    for (each attempt's logs read: README, "Can the grader vouch for it?")."""
    parser.add_argument(
        "--accepted",
        choices=("graded", "vouched"),
        default="graded",
        help="graded (default): every verdict as given; vouched: an accepted attempt whose log "
        "shows it touched the grader, looked up the answer or contradicts its verdict counts "
        "as a failure (its tokens kept); reads every attempt's log",
    )


def add_cap_options(parser: argparse.ArgumentParser, *, sweep: bool = False) -> None:
    """`--cap N` (a stopping rule replayed: `accounting/cap.py`); for `summary` (`sweep`) also
    `--cap-sweep` and `--cap-svg OUT.svg`."""
    parser.add_argument(
        "--cap",
        metavar="N",
        help="replay a hard cap on each attempt's spend: N tokens (1m, 250k, 1,000,000, 1e6) "
        "or $N with prices ($2.50); every figure is then the capped one",
    )
    if not sweep:
        return
    parser.add_argument(
        "--cap-sweep",
        action="store_true",
        help="print, per group, the best token cap and tokens per accepted result against "
        "the cap (JSON with --format json)",
    )
    parser.add_argument(
        "--cap-svg",
        metavar="OUT.svg",
        help="also write a chart of tokens per accepted result against the token cap, one "
        "line per group, the best cap marked (--force replaces it)",
    )


def cap_from_args(args: argparse.Namespace, columns: Sequence[str]) -> Any:
    """The `--cap` asked for (an `accounting.cap.Cap`), or None; UsageError for a cap that
    cannot be read or replayed (a dollar cap without prices)."""
    text = getattr(args, "cap", None)
    if text is None:
        return None
    from tui_ledger.accounting.cap import needs_cost
    from tui_ledger.filtering.cap_value import CapError, parse_cap

    try:
        cap = parse_cap(text)
    except CapError as error:
        raise UsageError(f"--{error}") from None
    problem = needs_cost(cap, columns)
    if problem is not None:
        raise UsageError(f"--cap {text!r}: {problem}")
    return cap


def load_options(args: argparse.Namespace) -> dict[str, Any]:
    """The `load.load` keyword arguments the command line asks for (`imports` only when an
    importer or outcomes option is given)."""
    options: dict[str, Any] = {
        "columns": column_mapping(args.col),
        "zero_usage_is_missing": args.zero_usage_is_missing,
        "fmt": args.fmt,
    }
    imports = import_options(args)
    if imports is not None:
        options["imports"] = imports
    return options


def import_options(args: argparse.Namespace) -> ImportOptions | None:
    """What `--pass-threshold`, `--report`, `--outcome-attribute`, `--outcomes` and
    `--outcomes-key` tell the loader, or None when none is given. Raises `UsageError` for a
    value that cannot be used."""
    given = (
        args.pass_threshold,
        args.report,
        args.outcome_attribute,
        args.outcomes,
        args.outcomes_key,
    )
    if all(value is None for value in given):
        return None
    threshold = args.pass_threshold
    if threshold is not None and not 0 < threshold <= 1:
        raise UsageError(
            f"--pass-threshold {threshold:g}: give a reward between 0 (excluded) and 1, "
            "e.g. 0.5 to accept half credit"
        )
    if args.outcomes_key is not None and args.outcomes is None:
        raise UsageError("--outcomes-key names the key of --outcomes FILE; give the file too")
    for option, value in (("--report", args.report), ("--outcomes", args.outcomes)):
        if value is not None and not os.path.exists(value):
            raise UsageError(f"{option} {value}: no such file or folder; check the path")
    if args.outcome_attribute is not None and not args.outcome_attribute.strip():
        raise UsageError("--outcome-attribute: give the span attribute's name")
    from tui_ledger.importers import ImportOptions

    return ImportOptions(
        pass_threshold=threshold,
        report=None if args.report is None else Path(args.report),
        outcome_attribute=args.outcome_attribute,
        outcomes=None if args.outcomes is None else Path(args.outcomes),
        outcomes_key=args.outcomes_key,
    )


def price_table(prices: str | None, flat_price: float | None) -> PriceTable | None:
    """The price table `--prices` and `--flat-price` ask for, or None for neither.

    Raises `prices.PriceError` (one line for people) for a file that cannot be used.
    """
    from tui_ledger.accounting.prices import PriceTable, load_prices

    if prices is None and flat_price is None:
        return None
    table = load_prices(prices) if prices is not None else PriceTable()
    return table.with_flat(flat_price)


def check_paths(paths: Sequence[str]) -> None:
    """Refuse, before any screen is drawn, a path that is not there, a link that leads nowhere,
    a pipe or a device, in the loader's own words."""
    from tui_ledger.load import check_path_kind

    for path in paths:
        if not os.path.lexists(path):
            raise UsageError(f"{path}: no such file or folder")
        check_path_kind(path)


def app_argv(args: argparse.Namespace) -> list[str]:
    """The interactive app's command line for parsed options: its files, then every load,
    price, watch and accepted option as `add_load_options`, `add_price_options`,
    `add_watch_option` and `add_accepted_option` read them (what each browser tab of
    `ledger-tui serve` runs)."""
    return [
        *args.files,
        *load_argv(args),
        *price_argv(args),
        *watch_argv(args),
        *accepted_argv(args),
    ]


def accepted_argv(args: argparse.Namespace) -> list[str]:
    """The inverse of `add_accepted_option` (nothing for the default, as graded)."""
    accepted = getattr(args, "accepted", "graded")
    return [] if accepted == "graded" else ["--accepted", accepted]

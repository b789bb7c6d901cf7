"""`ledger-tui serve`: the same interactive ledger in a browser, through textual-serve.

textual-serve runs one command per browser session (here `python -m tui_ledger.cli FILE...`
with the options given, so each tab gets its own app) and draws its terminal with xterm.js.
It binds to 127.0.0.1 unless `--host` says otherwise. Only `ledger-tui serve` imports this
module; the headless commands never load textual or textual-serve.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from textual_serve.server import Server

from tui_ledger.cli_options import (
    UsageError,
    add_load_options,
    add_price_options,
    add_watch_option,
    app_argv,
    check_paths,
    column_mapping,
    price_table,
)

__all__ = ["app_command", "run_serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def _serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ledger-tui serve",
        description="Serve the interactive ledger to a web browser (one app per browser tab). "
        "No FILE: the bundled demo.",
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="files or folders of attempts")
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default {DEFAULT_HOST}: this machine only)",
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="the address browsers use, when it is not http://HOST:PORT (e.g. behind a proxy)",
    )
    add_watch_option(parser)
    add_load_options(parser)
    add_price_options(parser)
    return parser


def app_command(args: argparse.Namespace) -> str:
    """The shell command each browser session runs: this Python, the app, the same options.

    Every argument is quoted with `shlex`, so file names with spaces or shell characters
    reach the app as they are.
    """
    return shlex.join([sys.executable, "-m", "tui_ledger.cli", *app_argv(args)])


class _LedgerServer(Server):
    """textual-serve's server, announcing itself in one line instead of a banner."""

    async def on_startup(self, app: object) -> None:
        """Say where to point the browser."""
        print(f"ledger-tui: serving on {self.public_url}  (Ctrl+C stops)", flush=True)


def run_serve(argv: Sequence[str]) -> int:
    """`ledger-tui serve [FILE...] [--host H] [--port P]`: serve until Ctrl+C."""
    args = _serve_parser().parse_args(argv)
    # Say what is wrong here, once, rather than in every browser tab.
    check_paths(args.files)
    column_mapping(args.col)
    price_table(args.prices, args.flat_price)
    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: use a port between 1 and 65535")
    server = _LedgerServer(
        app_command(args),
        host=args.host,
        port=args.port,
        title="ledger-tui",
        public_url=args.public_url,
    )
    try:
        server.serve()
    except OSError as error:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port} ({error.strerror or error}); "
            "pick another --port, or stop what uses it"
        ) from None
    return 0

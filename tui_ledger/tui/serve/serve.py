"""`ledger-tui serve`: the same interactive ledger in a browser, through textual-serve.

textual-serve runs one app process per browser session and draws its terminal with xterm.js.
This module builds on its `Server` (and `serve_session` on its `AppService`) so that only the
owner gets in and nothing grows without bound:

- **only its owner**: a random token per run, in the printed URL, checked (or its cookie) on
  every request; the Host header checked on every request; a websocket's Origin checked; a
  middleware does it before any textual-serve handler runs (rules in `serve_guard`);
- **bounded**: at most `--max-sessions` app processes, a clear page or message when full;
  every `resize` clamped (`serve_guard.clamp_terminal_size`); an idle timeout; a websocket
  heartbeat that notices a browser gone silent; every app ended and reaped when its browser
  goes and when the server stops (`serve_session.LedgerSession.end`);
- **exports to the browser**: each app learns from Textual that it runs on the web and sends
  exports there, or writes them inside `--export-dir` when the owner named one
  (`tui_ledger.exports.export_policy`).

docs/SECURITY.md says what this guarantees and what it does not. Only `ledger-tui serve`
imports this module; the headless commands never load textual or textual-serve.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import secrets
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp_jinja2
from aiohttp import WSCloseCode, WSMsgType, hdrs, web
from aiohttp.helpers import content_disposition_header
from textual_serve.server import Server

from tui_ledger.cli_options import (
    SERVER_PID_VARIABLE,
    UsageError,
    add_accepted_option,
    add_load_options,
    add_price_options,
    add_watch_option,
    app_argv,
    check_paths,
    column_mapping,
    price_table,
)
from tui_ledger.exports.export_policy import EXPORT_DIR_VARIABLE, export_dir_problem
from tui_ledger.tui.serve.serve_guard import (
    Gate,
    build_gate,
    clamp_terminal_size,
    is_loopback,
    is_wildcard,
    token_problem,
)
from tui_ledger.tui.serve.serve_session import LedgerSession

__all__ = ["app_command", "run_serve", "session_argv"]

log = logging.getLogger("textual-serve")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 4
DEFAULT_IDLE_SECONDS = 3600
HEARTBEAT_SECONDS = 5.0  # a silent browser is noticed within 1.5 heartbeats
MAX_MESSAGE_BYTES = 1024 * 1024  # one websocket message from a browser: keys, a paste, a resize
SLOT_WAIT_SECONDS = 5.0  # a reload at the cap waits this long for its old session to end
CLOSE_WAIT_SECONDS = 2.0

# Sent with every page: the token in its URL never leaves in a Referer, the page is never
# framed by another site, nor kept in a cache.
_PAGE_HEADERS = {
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


def _serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ledger-tui serve",
        description="Serve the interactive ledger to a web browser (one app per browser tab), "
        "to whoever opens the printed address with its token. No FILE: the bundled demo. "
        "See docs/SECURITY.md.",
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
        help="the address browsers use, when it is not http://HOST:PORT (behind a proxy, or "
        "the name other machines use with --host 0.0.0.0)",
    )
    access = parser.add_mutually_exclusive_group()
    access.add_argument(
        "--token",
        metavar="TOKEN",
        help="use this token instead of a random one (other users of this machine can see "
        "command lines)",
    )
    access.add_argument(
        "--no-token",
        action="store_true",
        help="let in anyone who can reach the address (not recommended)",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help=f"browser tabs served at once, one app process each (default {DEFAULT_MAX_SESSIONS})",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=DEFAULT_IDLE_SECONDS,
        metavar="SECONDS",
        help=f"end a session after this long without input (default {DEFAULT_IDLE_SECONDS}; "
        "0: never)",
    )
    parser.add_argument(
        "--export-dir",
        metavar="DIR",
        help="let sessions write exports into DIR (and only there); without it, exports are "
        "downloaded by the browser and nothing is written on this machine",
    )
    add_accepted_option(parser)
    add_watch_option(parser)
    add_load_options(parser)
    add_price_options(parser)
    return parser


def session_argv(args: argparse.Namespace) -> list[str]:
    """The command each browser session runs: this Python, the app, the same options.

    Files are made absolute, so none can be mistaken for an option or a subcommand.
    `serve_child` runs the ordinary command line, tied to this server's life.
    """
    absolute = argparse.Namespace(
        **{**vars(args), "files": [os.path.abspath(p) for p in args.files]}
    )
    return [sys.executable, "-m", "tui_ledger.serve_child", *app_argv(absolute)]


def app_command(args: argparse.Namespace) -> str:
    """`app_argv` as one shell-quoted line (what textual-serve shows as the served command)."""
    return shlex.join(session_argv(args))


def _full_text(limit: int) -> str:
    return (
        f"ledger-tui: {limit} session{'s are' if limit != 1 else ' is'} open, "
        "the most --max-sessions allows; close a tab, then reload"
    )


class _LedgerServer(Server):
    """textual-serve's server, letting in only its owner and keeping every session bounded."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        host: str,
        port: int,
        public_url: str | None,
        gate: Gate,
        max_sessions: int,
        idle_seconds: float,
        export_dir: Path | None,
    ) -> None:
        # textual-serve writes http://HOST:PORT, which an IPv6 address needs in brackets.
        bracketed = f"[{host}]" if ":" in host else host
        super().__init__(
            shlex.join(argv),
            host=host,
            port=port,
            title="ledger-tui",
            public_url=public_url or f"http://{bracketed}:{port}",
        )
        self.argv = list(argv)
        self.gate = gate
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.own_public_url = public_url is not None
        self.environment: dict[str, str | None] = {
            SERVER_PID_VARIABLE: str(os.getpid()),
            # Never inherited from the owner's shell: only `--export-dir` names a folder.
            EXPORT_DIR_VARIABLE: str(export_dir) if export_dir else None,
        }
        self.sessions: set[LedgerSession] = set()
        self._claimed = 0

    @property
    def address(self) -> str:
        """The URL to open: with the token, when there is one."""
        if self.gate.token is None:
            return f"{self.public_url}/"
        return f"{self.public_url}/?token={quote(self.gate.token)}"

    # ------------------------------------------------------------------ textual-serve hooks

    def initialize_logging(self) -> None:
        """textual-serve's logging, without aiohttp's access log: it would print every request
        line, the token in the first page's URL included."""
        super().initialize_logging()
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    async def _make_app(self) -> web.Application:
        """textual-serve's routes, behind the gate: no handler runs for a refused request."""
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    def serve(self, debug: bool = False) -> None:
        """textual-serve's `serve`, announcing the address once it listens (not before, as
        textual-serve's banner does), and stopping cleanly on SIGHUP too (the terminal closed)."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signal_number, self.request_exit)
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            handle_signals=False,
            loop=loop,
            print=lambda *_: print(
                f"ledger-tui: serving on {self.address}  (Ctrl+C stops)", flush=True
            ),
        )

    async def on_startup(self, app: web.Application) -> None:
        """Nothing to say yet: the address is printed once the server listens (`serve`)."""

    async def on_shutdown(self, app: web.Application) -> None:
        """End every app before the server goes: none outlives it."""
        await asyncio.gather(*(session.end() for session in list(self.sessions)))

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        upgrade = request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"
        admission = self.gate.admit(
            host=request.headers.get(hdrs.HOST),
            origin=request.headers.get(hdrs.ORIGIN),
            websocket=upgrade or request.path == "/ws",
            query_token=request.query.get("token"),
            cookie_token=request.cookies.get(self.gate.cookie_name),
        )
        if not admission.allowed:
            log.warning(
                "ledger-tui: refused %s %s from %s: %s",
                request.method,
                request.path,
                request.remote,
                admission.reason.removeprefix("ledger-tui: "),
            )
            return web.Response(
                status=admission.status, text=admission.reason + "\n", headers=_PAGE_HEADERS
            )
        response = await handler(request)
        if not response.prepared:  # a websocket has sent its headers already
            response.headers.update(_PAGE_HEADERS)
            if admission.set_cookie and self.gate.token is not None:
                response.set_cookie(
                    self.gate.cookie_name,
                    self.gate.token,
                    httponly=True,
                    samesite="Strict",
                    secure=self.public_url.startswith("https:") or None,
                    path="/",
                )
        return response

    async def handle_index(self, request: web.Request) -> Any:
        """The page, or a plain page saying the server is full.

        The page's websocket and static URLs use the address the browser came in by (any
        name the gate allows), so the token's cookie, set for that name, goes with them.
        """
        if self._full():
            return web.Response(status=503, text=_full_text(self.max_sessions) + "\n")
        base = self.public_url if self.own_public_url else f"http://{request.host}"
        websocket_base = ("wss:" if base.startswith("https:") else "ws:") + base.split(":", 1)[1]
        font_size = request.query.get("fontsize", "16")
        context = {
            "font_size": int(font_size) if font_size.isdigit() else 16,
            "app_websocket_url": f"{websocket_base}/ws",
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        """textual-serve's download, always as an attachment whose file name is quoted."""
        key = request.match_info["key"]
        try:
            download = await self.download_manager.get_download_metadata(key)
        except KeyError:
            raise web.HTTPNotFound(text="ledger-tui: no such download (it may be over)") from None
        response = web.StreamResponse()
        content_type = download.mime_type or "application/octet-stream"
        if download.encoding:
            content_type += f"; charset={download.encoding}"
        response.headers[hdrs.CONTENT_TYPE] = content_type
        # Always a download, never shown inline: an SVG (a chart, Textual's screenshot) opened
        # on this origin could run script with the session's cookie.
        response.headers[hdrs.CONTENT_DISPOSITION] = content_disposition_header(
            "attachment", filename=download.file_name
        )
        response.headers.update(_PAGE_HEADERS)
        await response.prepare(request)
        async for chunk in self.download_manager.download(key):
            await response.write(chunk)
        await response.write_eof()
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One browser tab: claim a slot, start its app, relay, and always end the app."""
        websocket = web.WebSocketResponse(
            heartbeat=HEARTBEAT_SECONDS, max_msg_size=MAX_MESSAGE_BYTES
        )
        size = clamp_terminal_size(
            request.query.get("width", "80"), request.query.get("height", "24")
        )
        await websocket.prepare(request)
        if not await self._claim_slot():
            log.warning("ledger-tui: refused a session from %s: full", request.remote)
            await self._refuse_full(websocket, request)
            return websocket
        session = LedgerSession(
            self.argv,
            send_bytes=websocket.send_bytes,
            send_text=websocket.send_str,
            close_browser=lambda: self._close_websocket(websocket, request),
            download_manager=self.download_manager,
            environment=self.environment,
        )
        self.sessions.add(session)
        why = ""
        try:
            await session.start(*(size or (80, 24)))
            why = await self._relay(websocket, session)
        except Exception:
            log.exception("ledger-tui: a session failed")
        finally:
            # Shielded: a handler cancelled at shutdown still ends and reaps its app.
            await asyncio.shield(self._finish(websocket, request, session, why))
        return websocket

    # ------------------------------------------------------------------ sessions

    def _full(self) -> bool:
        """No room for another session, counting those already ending as gone."""
        ending = sum(1 for session in self.sessions if session.ending)
        return self._claimed - ending >= self.max_sessions

    async def _claim_slot(self) -> bool:
        """Take one of `max_sessions` slots, waiting a little for a session that is ending."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SLOT_WAIT_SECONDS
        while self._claimed >= self.max_sessions:
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.1)
        self._claimed += 1  # no await between the check and this: no two tasks take one slot
        return True

    async def _refuse_full(self, websocket: web.WebSocketResponse, request: web.Request) -> None:
        text = _full_text(self.max_sessions)
        with contextlib.suppress(Exception):
            await websocket.send_bytes(f"\r\n  {text}\r\n".encode())
        await self._close_websocket(
            websocket, request, code=WSCloseCode.TRY_AGAIN_LATER, message=text
        )

    async def _relay(self, websocket: web.WebSocketResponse, session: LedgerSession) -> str:
        """Browser to app, until the browser closes or stays idle; returns why it stopped.

        textual-serve's `_process_messages`, with every size clamped, malformed messages
        ignored, and a deadline for input.
        """
        loop = asyncio.get_running_loop()
        last_input = loop.time()
        while True:
            timeout: float | None = None
            if self.idle_seconds > 0:
                timeout = last_input + self.idle_seconds - loop.time()
                if timeout <= 0:
                    return f"idle for {self.idle_seconds:g} s"
            try:
                message = await websocket.receive(timeout=max(timeout, 0.05) if timeout else None)
            except asyncio.TimeoutError:
                continue
            if message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED):
                return ""
            if message.type == WSMsgType.ERROR:
                return "browser gone"
            if message.type != WSMsgType.TEXT:
                continue
            envelope = _envelope(message.data)
            if envelope is None:
                continue
            kind, data = envelope
            if kind == "stdin" and isinstance(data, str):
                last_input = loop.time()
                await session.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                size = clamp_terminal_size(data.get("width"), data.get("height"))
                if size is not None:
                    last_input = loop.time()
                    await session.set_terminal_size(*size)
            elif kind == "ping" and isinstance(data, str) and len(data) <= 64:
                with contextlib.suppress(Exception):
                    await websocket.send_json(["pong", data])
            elif kind == "focus":
                last_input = loop.time()
                await session.focus()
            elif kind == "blur":
                await session.blur()

    async def _finish(
        self,
        websocket: web.WebSocketResponse,
        request: web.Request,
        session: LedgerSession,
        why: str,
    ) -> None:
        session.browser_gone = True
        if why:
            log.info("ledger-tui: ending a session: %s", why)
        await self._close_websocket(websocket, request, message=why)
        try:
            await session.end()
        finally:
            self.sessions.discard(session)
            self._claimed -= 1

    async def _close_websocket(
        self,
        websocket: web.WebSocketResponse,
        request: web.Request,
        *,
        code: int = WSCloseCode.OK,
        message: str = "",
    ) -> None:
        """Close politely, for a little while; then drop the connection if data is stuck in it
        (a browser that stopped reading never takes the close frame)."""
        if not websocket.closed:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    websocket.close(code=code, message=message.encode()[:120]),
                    CLOSE_WAIT_SECONDS,
                )
        transport = request.transport
        if transport is not None and transport.get_write_buffer_size() > 0:
            transport.abort()

    def kill_all(self) -> None:
        """SIGKILL every app still running (the last resort after the event loop has ended)."""
        for session in list(self.sessions):
            session.kill()


def _envelope(text: str) -> tuple[str, Any] | None:
    """textual.js's `[type, data]` message, or None for anything else."""
    import json

    try:
        envelope = json.loads(text)
    except ValueError:
        return None
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        return None
    return envelope[0], envelope[1] if len(envelope) > 1 else None


def _warn(message: str) -> None:
    print(f"ledger-tui: warning: {message}", file=sys.stderr, flush=True)


def _checked(args: argparse.Namespace) -> tuple[Gate, Path | None]:
    """Every option checked before listening, so a mistake is said once, here, not in every
    browser tab; the gate and the export folder they describe."""
    check_paths(args.files)
    column_mapping(args.col)
    price_table(args.prices, args.flat_price)
    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: use a port between 1 and 65535")
    if args.max_sessions < 1:
        raise UsageError(f"--max-sessions {args.max_sessions}: serve at least 1 session")
    if args.idle_timeout < 0:
        raise UsageError(f"--idle-timeout {args.idle_timeout:g}: use 0 (never) or more seconds")
    if args.token is not None and (problem := token_problem(args.token)):
        raise UsageError(problem)
    if is_wildcard(args.host) and not args.public_url:
        raise UsageError(
            f"--host {args.host or '(every address)'} listens on every address: name the one "
            "browsers will use with --public-url http://NAME:PORT"
        )
    export_dir: Path | None = None
    if args.export_dir is not None:
        problem = export_dir_problem(args.export_dir, args.files)
        if problem:
            raise UsageError(problem)
        export_dir = Path(args.export_dir).resolve()
    token = None if args.no_token else (args.token or secrets.token_urlsafe(32))
    try:
        gate = build_gate(args.host, args.port, args.public_url, token)
    except ValueError as error:
        raise UsageError(str(error)) from None
    return gate, export_dir


def run_serve(argv: Sequence[str]) -> int:
    """`ledger-tui serve [FILE...] [--host H] [--port P] ...`: serve until Ctrl+C."""
    args = _serve_parser().parse_args(argv)
    gate, export_dir = _checked(args)
    if not is_loopback(args.host):
        _warn(
            f"--host {args.host} can be reached from other machines; they still need the "
            "token, and nothing is encrypted (put a TLS proxy in front: docs/SECURITY.md)"
        )
    if args.no_token:
        _warn("--no-token: anyone who can reach this address can read the ledger")
    server = _LedgerServer(
        session_argv(args),
        host=args.host,
        port=args.port,
        public_url=args.public_url.rstrip("/") if args.public_url else None,
        gate=gate,
        max_sessions=args.max_sessions,
        idle_seconds=args.idle_timeout,
        export_dir=export_dir,
    )
    try:
        server.serve()
    except OSError as error:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port} ({error.strerror or error}); "
            "pick another --port, or stop what uses it"
        ) from None
    finally:
        server.kill_all()
    return 0

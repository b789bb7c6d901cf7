"""One browser tab's app process, on textual-serve's `AppService`, and how it always ends.

textual-serve's `AppService.run` stops reading the app's stdout as soon as a write to the
browser fails (the websocket closed: aiohttp raises `ConnectionResetError`), and its `stop`
only asks the app to quit and waits. An app caught mid-frame then blocks in `os.write` on a
full pipe that nobody reads, for ever: Textual's WebDriver writes from the app's event-loop
thread, and its SIGTERM handler runs on that loop, so the `quit` request and SIGTERM both wait
behind the blocked write. The process is also never killed nor reaped.

`LedgerSession` fixes that by owning the reading and the ending:

- `run` reads the app's output until end of file, whatever happens to the browser: once the
  browser is gone, packets are read and dropped (in chunks, never held whole), so the app is
  never left blocked on its pipe; a send that stalls past `SEND_STALL_SECONDS` counts as gone;
- `end` asks the app to quit, waits a grace period while still draining, then SIGKILLs the
  app's process group (it runs in a session of its own) and reaps it; it is idempotent and
  shielded, so a cancelled handler or a server shutdown cannot leave it half done;
- the app is started without a shell (argv, not a command line), tied to the server's life
  with `serve_child` (see there), with a bounded tail of its stderr kept for the server's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
import sys
from asyncio.subprocess import Process
from collections.abc import Awaitable, Callable, Mapping, Sequence

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

__all__ = ["GRACE_SECONDS", "SEND_STALL_SECONDS", "LedgerSession"]

log = logging.getLogger("textual-serve")

GRACE_SECONDS = 3.0  # from "quit" to SIGKILL: Textual exits in well under a second when it can
SEND_STALL_SECONDS = 30.0  # one frame not taken by the browser in this long: the browser is gone
_KILL_WAIT_SECONDS = 5.0
_READER_WAIT_SECONDS = 2.0
_DRAIN_CHUNK = 64 * 1024
_STDERR_TAIL = 16 * 1024  # the end of the app's stderr, for the server's log
_PRELUDE = b"__GANGLION__\n"  # Textual's WebDriver writes this first: it is a Textual app


class LedgerSession(AppService):
    """The app process behind one websocket: started, relayed, and always ended and reaped."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        send_bytes: Callable[[bytes], Awaitable[None]],
        send_text: Callable[[str], Awaitable[None]],
        close_browser: Callable[[], Awaitable[object]],
        download_manager: DownloadManager,
        environment: Mapping[str, str | None] | None = None,
        grace: float = GRACE_SECONDS,
    ) -> None:
        super().__init__(
            shlex.join(argv),
            write_bytes=self._to_browser_bytes,
            write_str=self._to_browser_text,
            close=self._close_browser,
            download_manager=download_manager,
        )
        self.argv = list(argv)
        self._send_bytes = send_bytes
        self._send_text = send_text
        self._close = close_browser
        self._extra_environment = dict(environment or {})
        self._grace = grace
        self.browser_gone = False
        self.stderr_tail = b""
        self._ending: asyncio.Future[None] | None = None
        self._background: set[asyncio.Task[object]] = set()

    # ------------------------------------------------------------------ the process

    @property
    def process(self) -> Process | None:
        """The app's process, once started."""
        return self._process

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        for name, value in self._extra_environment.items():
            if value is None:
                environment.pop(name, None)
            else:
                environment[name] = value
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        """Start the app from its argv (no shell to quote for, nor to outlive it), in a session
        of its own: its process group is killed as one, and the server's terminal's Ctrl+C
        reaches the server, which ends the apps in order."""
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    # ------------------------------------------------------------------ towards the browser

    async def _to_browser_bytes(self, data: bytes) -> None:
        await self._to_browser(self._send_bytes(data))

    async def _to_browser_text(self, text: str) -> None:
        await self._to_browser(self._send_text(text))

    async def _to_browser(self, sending: Awaitable[None]) -> None:
        """Send, unless the browser is gone; a failed or stalled send means it is gone.

        Never raises: the reader must keep reading the app whatever the browser does.
        """
        if self.browser_gone:
            if asyncio.iscoroutine(sending):
                sending.close()
            return
        try:
            await asyncio.wait_for(sending, SEND_STALL_SECONDS)
        except Exception:  # closed, reset, stalled: whatever it was, stop sending
            self.browser_gone = True

    async def _close_browser(self) -> None:
        """The app said it exited: close the websocket, without holding up the reader."""
        self._in_background(self._close())

    def _in_background(self, work: Awaitable[object]) -> None:
        task: asyncio.Task[object] = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------------ reading the app

    async def run(self) -> None:
        """Relay the app's packets to the browser until the app's output ends.

        Replaces textual-serve's `AppService.run`, which stops reading when the browser goes.
        """
        process = self._process
        assert process is not None and process.stdout is not None and process.stderr is not None
        stdout = process.stdout
        stderr_task = asyncio.create_task(self._keep_stderr_tail(process.stderr))
        try:
            if await self._wait_for_prelude(stdout):
                await self._relay_packets(stdout)
            else:
                log.error("ledger-tui: the app did not start; its last words follow")
                await self._drain(stdout)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the app's stdout closed: it exited or was killed
        finally:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(stderr_task, _READER_WAIT_SECONDS)
            if self.stderr_tail:
                sys.stdout.write(self.stderr_tail.decode("utf-8", "replace"))
                sys.stdout.flush()
            if not self.browser_gone:
                # The app is gone (it quit, crashed, or never started): so is the session.
                await self._close_browser()

    async def _wait_for_prelude(self, stdout: asyncio.StreamReader) -> bool:
        for _ in range(10):
            try:
                line = await stdout.readline()
            except ValueError:  # a line past the reader's limit: not Textual's prelude
                return False
            if not line:
                return False
            if line == _PRELUDE:
                return True
        return False

    async def _relay_packets(self, stdout: asyncio.StreamReader) -> None:
        readexactly = stdout.readexactly
        handlers = {b"D": self.on_data, b"M": self.on_meta, b"P": self.on_packed}
        while True:
            kind = await readexactly(1)
            size = int.from_bytes(await readexactly(4), "big")
            handler = handlers.get(kind)
            if handler is None:
                log.error("ledger-tui: the app wrote a packet of unknown type %r", kind)
                await self._drain(stdout)
                return
            if self.browser_gone:
                await self._skip(stdout, size)
                continue
            await handler(await readexactly(size))

    async def _skip(self, stdout: asyncio.StreamReader, size: int) -> None:
        """Read and drop `size` bytes a chunk at a time (a frame may be large)."""
        while size > 0:
            chunk = await stdout.read(min(size, _DRAIN_CHUNK))
            if not chunk:
                raise asyncio.IncompleteReadError(b"", size)
            size -= len(chunk)

    async def _drain(self, stdout: asyncio.StreamReader) -> None:
        while await stdout.read(_DRAIN_CHUNK):
            pass

    async def _keep_stderr_tail(self, stderr: asyncio.StreamReader) -> None:
        while chunk := await stderr.read(_DRAIN_CHUNK):
            self.stderr_tail = (self.stderr_tail + chunk)[-_STDERR_TAIL:]

    # ------------------------------------------------------------------ ending

    @property
    def ending(self) -> bool:
        """True once `end` was called: the session is on its way out."""
        return self._ending is not None

    async def stop(self) -> None:
        """textual-serve's name for ending a session: see `end`."""
        await self.end()

    async def end(self) -> None:
        """End the app: ask it to quit, give it `grace` seconds, then SIGKILL; always reap.

        Safe to call more than once and from several tasks; a cancelled caller does not
        cancel the ending.
        """
        if self._ending is None:
            self._ending = asyncio.ensure_future(self._end())
        await asyncio.shield(self._ending)

    async def _end(self) -> None:
        self.browser_gone = True
        await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        process = self._process
        if process is not None:
            if process.returncode is None:
                # The reader keeps draining meanwhile, so an app caught mid-write can get to
                # the quit request.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.send_meta({"type": "quit"}), 1.0)
                try:
                    await asyncio.wait_for(process.wait(), self._grace)
                except asyncio.TimeoutError:
                    log.warning("ledger-tui: an app did not quit in %.0f s; killed", self._grace)
                    self.kill()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(process.wait(), _KILL_WAIT_SECONDS)
            if self._stdin is not None:
                self._stdin.close()
        task = self._task
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), _READER_WAIT_SECONDS)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                task.cancel()
            self._task = None

    def kill(self) -> None:
        """SIGKILL the app's process group now (from anywhere, even outside the event loop)."""
        process = self._process
        if process is None or process.returncode is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                process.kill()

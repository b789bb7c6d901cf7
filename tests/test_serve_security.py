"""`ledger-tui serve` as an attacker and as a careless browser meet it.

Each test starts the real command on 127.0.0.1 on a free port and speaks to it with aiohttp's
websocket client (textual-serve's own dependency): without the token, with a wrong one, from a
foreign Origin, under a rebinding Host name, one session too many, a 50000x20000 resize, a
client that dies mid-frame, one that stops reading. The app processes of a server are its child
processes (read from /proc); every wait is for a condition, with a generous deadline, so a busy
2-core machine makes the tests slower, not flaky.

The rules themselves (`serve_guard`, `export_policy`) are also checked directly, at the end.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from textual_serve.download_manager import DownloadManager

from tests.test_serve import free_port, ledger_command, stop
from tui_ledger.exports.export_policy import decide_export, delivery_name, export_dir_problem
from tui_ledger.tui.serve.serve_guard import build_gate, clamp_terminal_size, token_problem
from tui_ledger.tui.serve.serve_session import LedgerSession
from tui_ledger.tui.serve.served_exports import STAGING_PREFIX

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads app processes from /proc"
)

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "sample_data" / "runs.csv"
WANTED = (b"KEEP FAILURES", b"lean", b"steady")
START_DEADLINE = 60.0  # a server up, or an app's first screen, on a busy machine
GONE_DEADLINE = 15.0  # the bar: no app of a vanished browser alive 15 s later
ONE_GB_KB = 1024 * 1024
_ESCAPE = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


# ---------------------------------------------------------------------------------- processes


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces


def children(pid: int) -> list[int]:
    """The live (not zombie) child processes of `pid`: a server's app processes."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields and fields[1] == str(pid) and fields[0] != "Z":
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def peak_rss_kb(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in KiB; 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def wait_until(condition: Callable[[], object], deadline: float, what: str) -> float:
    """Poll `condition` until true; the seconds it took. Fails with `what` at the deadline."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < deadline, f"not within {deadline:.0f} s: {what}"
        time.sleep(0.1)
    return time.monotonic() - start


async def wait_until_async(condition: Callable[[], object], deadline: float, what: str) -> float:
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < deadline, f"not within {deadline:.0f} s: {what}"
        await asyncio.sleep(0.1)
    return time.monotonic() - start


# ---------------------------------------------------------------------------------- a server


@dataclass
class Served:
    """A running `ledger-tui serve`: its process, port, printed URL and token."""

    process: subprocess.Popen[bytes]
    port: int
    url: str
    token: str
    log: Path
    temp: Path  # the server's TMPDIR, and so its apps'

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, token: str | None = None, width: int = 160, height: int = 50) -> str:
        query = f"width={width}&height={height}"
        if token is not None:
            query += f"&token={token}"
        return f"ws://127.0.0.1:{self.port}/ws?{query}"

    def apps(self) -> list[int]:
        return children(self.process.pid)

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def serving(
    tmp_path: Path, *options: str, files: tuple[str, ...] = (str(RUNS),)
) -> Iterator[Served]:
    """Start `ledger-tui serve` and wait for its printed URL; stop it, and check that it took
    its apps with it, afterwards."""
    port = free_port()
    log = tmp_path / f"serve-{port}.log"
    # A temporary folder of its own: what it stages there is this test's alone to look for,
    # whatever the tests running beside it (pytest-xdist's other workers) stage.
    temp = tmp_path / f"serve-{port}-tmp"
    temp.mkdir()
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*ledger_command(), "serve", *files, "--port", str(port), *options],
            cwd=tmp_path,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "TMPDIR": str(temp)},
        )
    url = ""

    def printed() -> bool:
        nonlocal url
        assert process.poll() is None, f"serve exited early: {log.read_text()}"
        found = re.search(r"serving on (\S+)", log.read_text(errors="replace"))
        url = found.group(1) if found else ""
        return bool(url)

    apps: list[int] = []
    try:
        wait_until(printed, START_DEADLINE, "serve printed its address")
        token = parse_qs(urlsplit(url).query).get("token", [""])[0]
        served = Served(process, port, url, token, log, temp)
        yield served
        apps = served.apps()
    finally:
        stop(process)
        for pid in apps:  # the server must have ended them; never leave one behind regardless
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    left = [pid for pid in apps if alive(pid)]
    assert not left, f"apps {left} outlived the server"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the tests that only knock on the door."""
    with serving(tmp_path_factory.mktemp("serve")) as served:
        yield served


def screen_text(data: bytes) -> bytes:
    """Terminal output without its escape sequences."""
    return _ESCAPE.sub(b"", data)


async def read_until(
    ws: aiohttp.ClientWebSocketResponse, done: Callable[[bytes], bool], deadline: float
) -> bytes:
    """Collect the app's output until `done(all of it)`; fail at the deadline."""
    received = b""
    start = time.monotonic()
    while not done(received):
        left = deadline - (time.monotonic() - start)
        assert left > 0, f"the app's output never got there: {screen_text(received)[-2000:]!r}"
        try:
            message = await ws.receive(timeout=min(left, 1.0))
        except asyncio.TimeoutError:
            continue
        if message.type == aiohttp.WSMsgType.BINARY:
            received += message.data
        elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            raise AssertionError(f"closed by the server: {message.extra}")
    return received


def shows_ledger(data: bytes) -> bool:
    text = screen_text(data)
    return all(word in text for word in WANTED)


async def refused_status(url: str, headers: dict[str, str]) -> int:
    """The HTTP status a websocket handshake got, or 101 if it was let in."""
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, headers=headers):
                return 101
        except aiohttp.WSServerHandshakeError as error:
            return error.status


async def page_status(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, headers=headers or {}, allow_redirects=False) as response,
    ):
        return response.status, await response.text()


# ---------------------------------------------------------------------------------- the door


async def test_no_token_never_reaches_the_app(shared: Served) -> None:
    status, text = await page_status(f"http://127.0.0.1:{shared.port}/")
    assert status == 403 and "token" in text
    assert await refused_status(shared.ws_url(), {"Origin": shared.origin}) == 403
    assert shared.apps() == []


async def test_a_wrong_token_never_reaches_the_app(shared: Served) -> None:
    wrong = shared.token[:-1] + ("A" if shared.token[-1] != "A" else "B")
    status, _ = await page_status(f"http://127.0.0.1:{shared.port}/?token={wrong}")
    assert status == 403
    assert await refused_status(shared.ws_url(wrong), {"Origin": shared.origin}) == 403
    cookie = {"Origin": shared.origin, "Cookie": f"ledger-tui-token-{shared.port}={wrong}"}
    assert await refused_status(shared.ws_url(), cookie) == 403
    # Static files and downloads are behind the token too.
    status, _ = await page_status(f"http://127.0.0.1:{shared.port}/static/js/textual.js")
    assert status == 403
    assert shared.apps() == []


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",  # another site open in the owner's browser
        "null",  # a file:// page
        "http://127.0.0.1:1",  # another server on this machine
        "http://localhost.evil.example:{port}",
        "",  # no Origin at all: browsers always send one on a websocket
    ],
)
async def test_a_foreign_origin_never_reaches_the_app(shared: Served, origin: str) -> None:
    headers = {"Origin": origin.format(port=shared.port)} if origin else {}
    assert await refused_status(shared.ws_url(shared.token), headers) == 403
    assert shared.apps() == []


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1:1", ""])
async def test_a_rebinding_host_name_is_refused(shared: Served, host: str) -> None:
    # A DNS-rebinding page reaches 127.0.0.1 under a name of its own, and that name is the Host.
    headers = {"Host": host.format(port=shared.port)}
    status, _ = await page_status(f"http://127.0.0.1:{shared.port}/?token={shared.token}", headers)
    assert status == 403
    headers["Origin"] = f"http://{headers['Host']}"
    assert await refused_status(shared.ws_url(shared.token), headers) == 403
    assert shared.apps() == []


async def test_the_printed_url_and_the_served_origin_reach_the_ledger(shared: Served) -> None:
    assert shared.url.startswith(f"http://127.0.0.1:{shared.port}/?token=")
    assert len(shared.token) >= 32
    # The page with the token sets the cookie; the page's websocket then needs only it.
    jar = aiohttp.CookieJar(unsafe=True)  # unsafe: lets the jar keep cookies of an IP address
    async with aiohttp.ClientSession(cookie_jar=jar) as session:
        async with session.get(shared.url) as page:
            assert page.status == 200
            assert "xterm" in await page.text()
            cookie = page.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert page.headers["Referrer-Policy"] == "no-referrer"
        async with session.ws_connect(shared.ws_url(), headers={"Origin": shared.origin}) as ws:
            shown = await read_until(ws, shows_ledger, START_DEADLINE)
            assert shows_ledger(shown)
            assert len(shared.apps()) == 1
    # The token in the query works without a cookie, and under the other loopback name.
    async with aiohttp.ClientSession() as session:
        url = f"ws://localhost:{shared.port}/ws?token={shared.token}&width=160&height=50"
        headers = {"Origin": f"http://localhost:{shared.port}"}
        async with session.ws_connect(url, headers=headers) as ws:
            await read_until(ws, shows_ledger, START_DEADLINE)
    await wait_until_async(lambda: not shared.apps(), GONE_DEADLINE, "closed sessions end")


# ---------------------------------------------------------------------------------- bounds


async def keep_reading(ws: aiohttp.ClientWebSocketResponse) -> None:
    """Read on, as a browser tab does (which also answers the server's pings)."""
    async for _ in ws:
        pass


async def test_one_session_too_many_is_told_so_and_starts_nothing(tmp_path: Path) -> None:
    with serving(tmp_path, "--max-sessions", "2") as served:
        headers = {"Origin": served.origin}
        async with aiohttp.ClientSession() as session:
            first = await session.ws_connect(served.ws_url(served.token), headers=headers)
            second = await session.ws_connect(served.ws_url(served.token), headers=headers)
            for ws in (first, second):
                await read_until(ws, shows_ledger, START_DEADLINE)
            tabs = [asyncio.create_task(keep_reading(ws)) for ws in (first, second)]
            assert len(served.apps()) == 2
            status, text = await page_status(served.url)
            assert status == 503 and "--max-sessions" in text
            async with session.ws_connect(served.ws_url(served.token), headers=headers) as third:
                message = await third.receive(timeout=START_DEADLINE)
                assert b"--max-sessions" in message.data
                closing = await third.receive(timeout=START_DEADLINE)
                assert closing.type == aiohttp.WSMsgType.CLOSE
                assert closing.data == aiohttp.WSCloseCode.TRY_AGAIN_LATER
                assert "--max-sessions" in str(closing.extra)
            assert len(served.apps()) == 2
            # A freed slot is taken again.
            tabs[0].cancel()
            await first.close()
            await wait_until_async(lambda: len(served.apps()) == 1, GONE_DEADLINE, "one ends")
            async with session.ws_connect(served.ws_url(served.token), headers=headers) as again:
                await read_until(again, shows_ledger, START_DEADLINE)
            tabs[1].cancel()
            await second.close()


async def test_a_huge_resize_is_clamped_and_the_app_stays_small(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(
                served.ws_url(served.token), headers={"Origin": served.origin}, max_msg_size=0
            ) as ws,
        ):
            await read_until(ws, shows_ledger, START_DEADLINE)
            (app,) = served.apps()
            await ws.send_json(["resize", {"width": 50000, "height": 20000}])
            # The clamped screen is 500x200: its last row is drawn, and nothing beyond it.
            drawn = await read_until(ws, lambda data: b"\x1b[200;" in data, START_DEADLINE)
            assert b"\x1b[201;" not in drawn
            peak = peak_rss_kb(app)
            print(f"\npeak memory of a session after a 50000x20000 resize: {peak / 1024:.0f} MB")
            assert 0 < peak < ONE_GB_KB


def wchan(pid: int) -> str:
    """Where in the kernel the process's main thread waits ("anon_pipe_write": a full pipe)."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return ""


def _client_dying_mid_frame(served: Served) -> subprocess.Popen[bytes]:
    """A browser in a process of its own: a small receive window and no compression, a
    50000x20000 resize, then a resize every 50 ms that redraws the whole screen, read by
    nobody. It dies (without a word: the kernel resets the connection) when told to on stdin."""
    script = f"""
import asyncio, os, re, socket, sys, aiohttp

def small_window(address):
    family, kind, proto, _, _ = address
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return sock

async def main():
    connector = aiohttp.TCPConnector(socket_factory=small_window)
    async with aiohttp.ClientSession(connector=connector) as session:
        ws = await session.ws_connect({served.ws_url(served.token)!r}, compress=0,
                                      headers={{"Origin": {served.origin!r}}}, max_msg_size=0)
        seen = b""
        while b"KEEP FAILURES" not in re.sub(rb"\x1b\\[[0-9;?]*[A-Za-z]", b"", seen):
            message = await ws.receive()
            seen += message.data if isinstance(message.data, bytes) else b""
        told = asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        step = 0
        while not told.done():
            height = 20000 if step % 2 == 0 else 199
            await ws.send_json(["resize", {{"width": 50000, "height": height}}])
            if step == 0:
                print("resized", flush=True)
            step += 1
            await asyncio.sleep(0.05)
        os._exit(0)

asyncio.run(main())
"""
    return subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )


def test_a_client_that_dies_mid_frame_leaves_no_app_behind(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        client = _client_dying_mid_frame(served)
        try:
            assert client.stdout is not None and client.stdin is not None
            assert client.stdout.readline() == b"resized\n"
            (app,) = served.apps()
            # Mid-frame: the app is blocked writing a frame into its full pipe, as it was in
            # the reported bug, because the browser takes nothing.
            wait_until(lambda: "pipe_write" in wchan(app), START_DEADLINE, "a frame in flight")
            peak = peak_rss_kb(app)
            client.stdin.write(b"die\n")
            client.stdin.flush()
            assert client.wait(timeout=START_DEADLINE) == 0
            took = wait_until(
                lambda: not alive(app), GONE_DEADLINE, "the app of a client that died mid-frame"
            )
            print(f"\napp gone {took:.1f} s after its client died mid-frame; peak {peak} KiB")
            assert 0 < peak < ONE_GB_KB
        finally:
            stop(client)


async def test_a_client_that_stops_reading_is_ended(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(
                served.ws_url(served.token), headers={"Origin": served.origin}, max_msg_size=0
            ) as ws,
        ):
            await read_until(ws, shows_ledger, START_DEADLINE)
            apps = served.apps()
            await ws.send_json(["resize", {"width": 50000, "height": 20000}])
            # Never read again, never answer a ping: a browser tab frozen, a laptop shut.
            took = await wait_until_async(
                lambda: not any(alive(pid) for pid in apps),
                GONE_DEADLINE + 10,  # the heartbeat's 7.5 s come before the 3 s grace
                "the app of a client that stopped reading is gone",
            )
            print(f"\napp gone {took:.1f} s after its client stopped reading")


async def test_an_idle_session_is_ended(tmp_path: Path) -> None:
    with serving(tmp_path, "--idle-timeout", "3") as served:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(
                served.ws_url(served.token), headers={"Origin": served.origin}
            ) as ws,
        ):
            await wait_until_async(served.apps, START_DEADLINE, "the session's app started")
            apps = served.apps()
            while True:  # the app's frames, whatever it has drawn by then, then the close
                message = await ws.receive(timeout=START_DEADLINE)
                if message.type != aiohttp.WSMsgType.BINARY:
                    break
            assert message.type == aiohttp.WSMsgType.CLOSE and "idle" in str(message.extra)
        await wait_until_async(
            lambda: not any(alive(pid) for pid in apps), GONE_DEADLINE, "idle app gone"
        )


def test_stopping_the_server_ends_its_apps(tmp_path: Path) -> None:
    async def open_sessions(served: Served) -> None:
        async with aiohttp.ClientSession() as session:
            headers = {"Origin": served.origin}
            sockets = [
                await session.ws_connect(served.ws_url(served.token), headers=headers)
                for _ in range(2)
            ]
            for ws in sockets:
                await read_until(ws, shows_ledger, START_DEADLINE)
            tabs = [asyncio.create_task(keep_reading(ws)) for ws in sockets]
            apps = served.apps()
            assert len(apps) == 2
            served.process.send_signal(signal.SIGTERM)
            await wait_until_async(
                lambda: not any(alive(pid) for pid in apps), GONE_DEADLINE, "apps end with serve"
            )
            assert served.process.wait(timeout=GONE_DEADLINE) == 0
            for tab in tabs:
                tab.cancel()

    with serving(tmp_path) as served:
        asyncio.run(open_sessions(served))


def test_a_killed_server_takes_its_apps_with_it(tmp_path: Path) -> None:
    async def kill_server(served: Served) -> None:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(
                served.ws_url(served.token), headers={"Origin": served.origin}
            ) as ws,
        ):
            await read_until(ws, shows_ledger, START_DEADLINE)
            apps = served.apps()
            served.process.send_signal(signal.SIGKILL)
            await wait_until_async(
                lambda: not any(alive(pid) for pid in apps), GONE_DEADLINE, "apps die with serve"
            )

    with serving(tmp_path) as served:
        asyncio.run(kill_server(served))


# ---------------------------------------------------------------------------------- exports

ENTER, CLEAR_LEFT = "\r", "\x15"  # Enter; ctrl+u empties an Input left of its cursor


async def _export(
    ws: aiohttp.ClientWebSocketResponse, done: Callable[[str], bool], summary: str | None = None
) -> str:
    """e, optionally a new summary name, then Enter until `done(what the server sent as text,
    and the screen)` holds; returns that.

    Each step waits for the screen to show the last one took: keys sent faster than the app
    handles them land out of order (ctrl+u's action ran after the letters typed behind it).
    The first Enter moves from the summary name to the attempts name and the next exports;
    the screen gives no sure sign of the focus having moved, so Enter is pressed again until
    the export shows (an extra Enter only moves the table's cursor)."""
    await ws.send_json(["focus"])  # as the page does once its terminal has the focus
    await ws.send_json(["stdin", "e"])
    await read_until(ws, lambda data: b"failures included" in screen_text(data), START_DEADLINE)
    if summary is not None:
        await ws.send_json(["stdin", CLEAR_LEFT])
        await read_until(ws, lambda data: b"leave empty" in screen_text(data), START_DEADLINE)
        # Pasted (bracketed, as xterm.js pastes): drawn in one frame, so read back whole.
        await ws.send_json(["stdin", f"\x1b[200~{summary}\x1b[201~"])
        await read_until(ws, lambda data: summary.encode() in screen_text(data), START_DEADLINE)
    seen = ""
    start = time.monotonic()
    while not done(seen):
        assert time.monotonic() - start < START_DEADLINE, f"the export never showed: {seen[-500:]}"
        await ws.send_json(["stdin", ENTER])
        pressed = time.monotonic()
        while time.monotonic() - pressed < 2 and not done(seen):
            try:
                message = await ws.receive(timeout=0.5)
            except asyncio.TimeoutError:
                continue
            if message.type == aiohttp.WSMsgType.TEXT:
                seen += message.data
            elif message.type == aiohttp.WSMsgType.BINARY:
                seen += screen_text(message.data).decode(errors="replace")
    return seen


async def test_a_served_export_is_downloaded_by_the_browser_not_written(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        headers = {"Origin": served.origin}
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(served.ws_url(served.token), headers=headers) as ws,
        ):
            await read_until(ws, shows_ledger, START_DEADLINE)
            said = await _export(
                ws, lambda seen: seen.count("deliver_file_start") >= 2, "../../escape-summary.md"
            )
            keys = re.findall(r'"deliver_file_start", "([0-9a-f]+)"', said)
            files = {}
            for key in keys:
                url = f"http://127.0.0.1:{served.port}/download/{key}?token={served.token}"
                async with session.get(url) as response:
                    assert response.status == 200
                    disposition = response.headers["Content-Disposition"]
                    assert disposition.startswith("attachment")
                    files[disposition] = await response.read()
            # Offered under the name's last component: a download has no folders.
            summary = next(body for name, body in files.items() if "escape-summary.md" in name)
            attempts = next(body for name, body in files.items() if "ledger-attempts.csv" in name)
            assert b"lean" in summary and b"steady" in summary
            assert attempts.startswith(b"workflow") and attempts.count(b"\n") == 7
            # Downloads are behind the token too.
            status, _ = await page_status(f"http://127.0.0.1:{served.port}/download/{keys[0]}")
            assert status == 403
    # Nothing on the server's disk: not where the name pointed, not in its folder, not staged.
    assert not (tmp_path.parent.parent / "escape-summary.md").exists()
    assert not list(tmp_path.glob("*.md")) and not list(tmp_path.glob("ledger-*"))
    assert not list(served.temp.glob(f"{STAGING_PREFIX}*"))


async def test_an_export_folder_confines_served_exports(tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    # The served ledger sits in the export folder under the dialog's own attempts name.
    ledger = exports / "ledger-attempts.csv"
    ledger.write_bytes(RUNS.read_bytes())
    with serving(tmp_path, "--export-dir", str(exports), files=(str(ledger),)) as served:
        headers = {"Origin": served.origin}
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(served.ws_url(served.token), headers=headers) as ws,
        ):
            await read_until(ws, shows_ledger, START_DEADLINE)
            said = await _export(ws, lambda seen: "not allowed" in seen, "../escape.md")
            said = await _export(ws, lambda seen: "that is" in seen)
            assert "deliver_file_start" not in said
    assert ledger.read_bytes() == RUNS.read_bytes()  # never replaced, not even asked
    assert sorted(path.name for path in exports.iterdir()) == ["ledger-attempts.csv"]
    assert not (tmp_path / "escape.md").exists()


async def test_a_served_export_lands_in_the_export_folder(tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    with serving(tmp_path, "--export-dir", str(exports)) as served:
        headers = {"Origin": served.origin}
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(served.ws_url(served.token), headers=headers) as ws,
        ):
            await read_until(ws, shows_ledger, START_DEADLINE)
            await _export(ws, lambda seen: (exports / "ledger-attempts.csv").exists())
            await wait_until_async(
                lambda: (
                    (exports / "ledger-attempts.csv").exists()
                    and (exports / "ledger-summary.md").exists()
                ),
                START_DEADLINE,
                "the exports written inside the export folder",
            )
    # The server's folder (the app's working directory) got nothing.
    assert sorted(
        path.name for path in tmp_path.iterdir() if path not in (exports, served.temp)
    ) == [f"serve-{served.port}.log"]


# ---------------------------------------------------------------------------------- one session


def _session(script: str, sent: list[bytes]) -> LedgerSession:
    async def send(data: bytes | str) -> None:
        sent.append(data if isinstance(data, bytes) else data.encode())

    async def close() -> None:
        return None

    return LedgerSession(
        [sys.executable, "-c", script],
        send_bytes=send,
        send_text=send,
        close_browser=close,
        download_manager=DownloadManager(),
        grace=1.0,
    )


async def test_an_app_that_ignores_quit_and_sigterm_is_killed_after_the_grace() -> None:
    script = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "sys.stdout.write('__GANGLION__\\n'); sys.stdout.flush(); time.sleep(600)"
    )
    session = _session(script, [])
    await session.start(80, 24)
    assert session.process is not None
    pid = session.process.pid
    start = time.monotonic()
    await session.end()
    took = time.monotonic() - start
    assert not alive(pid)
    assert session.process.returncode == -signal.SIGKILL
    assert took < 1.0 + 10  # the grace, then the kill and the reaping


async def test_an_app_writing_to_a_browser_that_is_gone_is_drained_not_blocked() -> None:
    # 64 frames of 1 MB, far past any pipe: the app gets to its end only if they are read.
    script = (
        "import os, sys; os.write(1, b'__GANGLION__\\n'); frame = b'x' * 2**20; "
        "packet = b'D' + len(frame).to_bytes(4, 'big') + frame\n"
        "for _ in range(64): os.write(1, packet)"
    )
    sent: list[bytes] = []
    session = _session(script, sent)
    session.browser_gone = True
    await session.start(80, 24)
    process = session.process
    assert process is not None
    assert await asyncio.wait_for(process.wait(), START_DEADLINE) == 0
    assert sent == []  # read and dropped, never held for a browser that is not there
    await session.end()


# ---------------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--host", "0.0.0.0"], "--public-url"),
        (["--token", "short"], "at least 8"),
        (["--token", "has space in it"], "letters, digits"),
        (["--max-sessions", "0"], "at least 1"),
        (["--public-url", "ftp://x"], "http(s)://HOST"),
        (["--export-dir", "nowhere"], "no such folder"),
        (["--token", "abcdefgh12", "--no-token"], "not allowed with"),
    ],
)
def test_serve_refuses_unsafe_or_broken_options_before_listening(
    options: list[str], message: str, tmp_path: Path
) -> None:
    result = subprocess.run(
        [*ledger_command(), "serve", str(RUNS), "--port", str(free_port()), *options],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=START_DEADLINE,
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_no_token_and_a_public_host_are_warned_about(tmp_path: Path) -> None:
    with serving(tmp_path, "--no-token") as served:
        assert "?token=" not in served.url
        wait_until(lambda: "--no-token" in served.output(), START_DEADLINE, "the warning")
    with serving(
        tmp_path, "--host", "0.0.0.0", "--public-url", "http://ledger.example:8000"
    ) as served:
        assert served.url.startswith("http://ledger.example:8000/?token=")
        wait_until(lambda: "other machines" in served.output(), START_DEADLINE, "the warning")


def test_an_export_folder_inside_a_served_folder_is_refused(tmp_path: Path) -> None:
    inputs = tmp_path / "runs"
    (inputs / "exports").mkdir(parents=True)
    (inputs / "runs.csv").write_bytes(RUNS.read_bytes())
    result = subprocess.run(
        [*ledger_command(), "serve", str(inputs), "--export-dir", str(inputs / "exports")],
        capture_output=True,
        text=True,
        timeout=START_DEADLINE,
    )
    assert result.returncode == 2 and "a folder being served" in result.stderr


# ---------------------------------------------------------------------------------- the rules


def test_gate_for_a_loopback_bind() -> None:
    gate = build_gate("127.0.0.1", 8000, None, "t" * 43)

    def admit(host: str, origin: str | None = None, token: str | None = "t" * 43) -> int:
        return gate.admit(
            host=host,
            origin=origin,
            websocket=origin is not None,
            query_token=token,
            cookie_token=None,
        ).status

    for host in ("127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "[::1]:8000"):
        assert admit(host) == 200
    for host in ("127.0.0.1", "evil.example:8000", "127.0.0.1:8001", "0.0.0.0:8000"):
        assert admit(host) == 403
    assert admit("localhost:8000", "http://localhost:8000") == 200
    assert admit("localhost:8000", "http://localhost:8000/") == 200
    assert admit("localhost:8000", "https://evil.example") == 403
    assert admit("localhost:8000", None, token="t" * 42) == 403
    assert admit("localhost:8000", None, token=None) == 403


def test_gate_behind_a_proxy_and_without_a_token() -> None:
    gate = build_gate("127.0.0.1", 8000, "https://ledger.example", None)
    assert "ledger.example" in gate.hosts and "ledger.example:443" in gate.hosts
    assert "https://ledger.example" in gate.origins
    verdict = gate.admit(
        host="ledger.example",
        origin="https://ledger.example",
        websocket=True,
        query_token=None,
        cookie_token=None,
    )
    assert verdict.allowed and not verdict.set_cookie


def test_resize_is_clamped_and_nonsense_ignored() -> None:
    assert clamp_terminal_size(50000, 20000) == (500, 200)
    assert clamp_terminal_size("120", "40") == (120, 40)
    assert clamp_terminal_size(0, -5) == (1, 1)
    assert clamp_terminal_size(True, 3) is None
    assert clamp_terminal_size("1e9", 3) is None
    assert clamp_terminal_size(None, {}) is None


def test_tokens_the_owner_chooses() -> None:
    assert token_problem("abcdefgh") is None
    assert token_problem("abc") is not None
    assert token_problem("abcdefgh;") is not None


def test_export_policy_keeps_writes_inside_the_folder(tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    served_folder = tmp_path / "runs"
    served_folder.mkdir()
    ledger = exports / "ledger.csv"  # the owner serves a file that sits in the export folder
    ledger.write_text("workflow,tokens,passed\n")
    inputs = [str(ledger), str(served_folder)]
    (exports / "outside").symlink_to(tmp_path)
    (exports / "input-link.csv").symlink_to(ledger)
    os.link(ledger, exports / "hard-link.csv")

    allowed = decide_export("summary.md", exports, inputs)
    assert allowed.allowed and allowed.path == exports.resolve() / "summary.md"
    assert decide_export(str(exports / "a.csv"), exports, inputs).allowed
    for requested, reason in [
        ("../escape.csv", "'..'"),
        ("sub/../../escape.csv", "'..'"),
        (str(tmp_path / "escape.csv"), "outside the export folder"),
        ("/etc/passwd", "outside the export folder"),
        ("outside/escape.csv", "outside the export folder"),
        ("ledger.csv", "which this ledger reads"),
        ("input-link.csv", "which this ledger reads"),
        ("hard-link.csv", "which this ledger reads"),
        ("", "no file name"),
        ("bad\nname.csv", "control characters"),
        (".", "is a folder"),
    ]:
        verdict = decide_export(requested, exports, inputs)
        assert not verdict.allowed, requested
        assert reason in verdict.reason, (requested, verdict.reason)
        assert "\n" not in verdict.reason.replace(repr("bad\nname.csv"), "")
    # An export folder that is also where the ledger lives: never inside the served folder.
    assert "reads" in decide_export(str(served_folder / "x.csv"), tmp_path, inputs).reason
    assert export_dir_problem(served_folder, inputs) is not None
    assert export_dir_problem(exports, inputs) is None


def test_a_delivered_export_is_offered_under_its_last_name_only() -> None:
    assert delivery_name("../../etc/ledger.csv", "x") == "ledger.csv"
    assert delivery_name("C:\\Users\\me\\ledger.csv", "x") == "ledger.csv"
    assert delivery_name("a/b/", "default.md") == "b"
    assert delivery_name("..", "default.md") == "default.md"
    assert delivery_name("bad\x1bname.csv", "x") == "badname.csv"

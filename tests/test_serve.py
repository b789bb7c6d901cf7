"""`ledger-tui serve` as a person meets it: a browser tab that shows the ledger.

The test starts the real command on a free port, opens the address it printed (with its token)
in headless Chromium and reads
the terminal xterm.js drew, through the DevTools protocol: a script added before the page's own
catches the xterm `Terminal` object when textual-serve's page stores it (`this.terminal = ...`),
and the test reads that terminal's buffer, row by row, until the article's figures are there.
Skipped only when Chromium is not installed (`apt-get install chromium`; .ci/run installs it).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tui_ledger.cli import main

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "sample_data" / "runs.csv"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WANTED = ("KEEP FAILURES", "lean", "steady", "3,000")
BUDGET = 25.0  # seconds for the whole test, server and browser included

# Runs before the page's scripts: keep the xterm Terminal that textual-serve's page stores as
# `this.terminal`, and let the page keep it as an ordinary property.
CATCH_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  get() { return undefined; },
  set(value) {
    Object.defineProperty(this, "terminal", {
      value, writable: true, configurable: true, enumerable: true,
    });
    if (value && value.buffer) { window.__ledgerTerminal = value; }
  },
});
"""
READ_TERMINAL = """
(() => {
  const terminal = window.__ledgerTerminal;
  if (!terminal) { return ""; }
  const buffer = terminal.buffer.active;
  const rows = [];
  for (let index = 0; index < buffer.length; index++) {
    const line = buffer.getLine(index);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
})()
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_address(log: Path, deadline: float, process: subprocess.Popen[bytes]) -> str:
    """The address `ledger-tui serve` printed (with its token), once it listens."""
    while time.monotonic() < deadline:
        output = log.read_text(errors="replace") if log.exists() else ""
        if process.poll() is not None:
            pytest.fail(f"ledger-tui serve exited early ({process.returncode}): {output}")
        printed = re.search(r"serving on (\S+)", output)
        if printed:
            return printed.group(1)
        time.sleep(0.1)
    pytest.fail("ledger-tui serve printed no address")


def stop(process: subprocess.Popen[bytes] | None) -> None:
    """End a process this test started, and everything it started (its own process group)."""
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)


def ledger_command() -> list[str]:
    """The installed `ledger-tui` beside this Python, else the module."""
    script = Path(sys.executable).with_name("ledger-tui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui_ledger.cli"]


async def read_terminal(devtools: int, url: str, deadline: float, screenshot: Path) -> str:
    """Open `url` in the browser's first tab; the terminal's text once WANTED is all there."""
    import aiohttp  # textual-serve's own dependency

    counter = itertools.count(1)
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{devtools}/json/list") as response:
            targets = await response.json()
        page = next(target for target in targets if target["type"] == "page")
        async with session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as socket_:

            async def call(method: str, **params: Any) -> dict[str, Any]:
                number = next(counter)
                await socket_.send_json({"id": number, "method": method, "params": params})
                async for message in socket_:
                    reply = json.loads(message.data)
                    if reply.get("id") == number:
                        return dict(reply.get("result", {}))
                raise AssertionError("the DevTools connection closed")

            await call("Network.enable")
            # The page asks for a web font: nothing may leave this machine.
            await call("Network.setBlockedURLs", urls=["*fonts.googleapis.com*"])
            await call("Page.enable")
            await call("Page.addScriptToEvaluateOnNewDocument", source=CATCH_TERMINAL)
            await call("Page.navigate", url=url)
            text = ""
            while time.monotonic() < deadline:
                result = await call(
                    "Runtime.evaluate", expression=READ_TERMINAL, returnByValue=True
                )
                text = str(result.get("result", {}).get("value") or "")
                if all(word in text for word in WANTED):
                    break
                await asyncio.sleep(0.25)
            shot = await call("Page.captureScreenshot", format="png")
            if "data" in shot:
                import base64

                screenshot.write_bytes(base64.b64decode(shot["data"]))
            return text


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_serve_shows_the_ledger_in_a_browser(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    deadline = time.monotonic() + BUDGET
    port = free_port()
    server: subprocess.Popen[bytes] | None = None
    browser: subprocess.Popen[bytes] | None = None
    log = tmp_path / "serve.log"
    try:
        # The log goes to a file: a pipe nobody reads would block the server once full.
        with log.open("wb") as sink:
            server = subprocess.Popen(
                [*ledger_command(), "serve", str(RUNS), "--port", str(port)],
                cwd=tmp_path,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        address = wait_for_address(log, deadline, server)
        assert address.startswith(f"http://127.0.0.1:{port}/?token=")
        profile = tmp_path / "chromium-profile"
        browser = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                "--window-size=1500,900",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        active = profile / "DevToolsActivePort"
        while not active.exists() or not active.read_text().strip():
            assert time.monotonic() < deadline, "Chromium did not open its DevTools port"
            time.sleep(0.1)
        devtools = int(active.read_text().split()[0])
        screenshot = tmp_path / "serve.png"
        text = asyncio.run(read_terminal(devtools, address, deadline, screenshot))
        missing = [word for word in WANTED if word not in text]
        assert not missing, f"the browser's terminal lacks {missing}:\n{text}"
    finally:
        stop(browser)
        stop(server)


def test_serve_command_quotes_paths_and_passes_options(tmp_path: Path) -> None:
    from tui_ledger.tui.serve.serve import _serve_parser, app_command

    odd = tmp_path / "runs; rm -rf $HOME 'x'.csv"
    args = _serve_parser().parse_args(
        [str(odd), "--col", "tokens=usage", "--watch", "--flat-price", "2.5", "--port", "9"]
    )
    argv = shlex.split(app_command(args))
    assert argv[:3] == [sys.executable, "-m", "tui_ledger.serve_child"]
    assert argv[3:] == [str(odd), "--col", "tokens=usage", "--flat-price", "2.5", "--watch"]


def test_serve_refuses_a_missing_file_before_listening(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["serve", str(tmp_path / "nope.csv"), "--port", str(free_port())])
    assert exit_.value.code == 2
    assert "nope.csv: no such file or folder" in capsys.readouterr().err

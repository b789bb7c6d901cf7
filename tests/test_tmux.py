"""The installed `ledger-tui` command in a real terminal (tmux), driven like a person would."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.pilot_helpers import SETTLE_SECONDS

pytestmark = pytest.mark.tmux

COMMAND = Path(sys.executable).parent / "ledger-tui"
ARTICLE = "workflow,tokens,passed\n" + "".join(
    f"{w},{t},{p}\n"
    for w, t, p in [
        ("lean", 1000, "true"),
        ("lean", 1000, "false"),
        ("lean", 1000, "false"),
        ("steady", 1600, "true"),
        ("steady", 1600, "true"),
        ("steady", 1600, "true"),
    ]
)


class Pane:
    """One tmux session on its own server socket, running one command."""

    def __init__(self, command: list[str], cwd: Path, size: tuple[int, int] = (180, 50)) -> None:
        self.socket = f"ledger-tui-test-{uuid.uuid4().hex[:8]}"
        self.name = "ledger"
        quoted = " ".join(_quote(part) for part in command)
        width, height = (str(cells) for cells in size)
        self._tmux("new-session", "-d", "-s", self.name, "-x", width, "-y", height, "-c", str(cwd))
        self._tmux("send-keys", "-t", self.name, f"exec {quoted}", "Enter")

    def _tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name).stdout

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def title(self) -> str:
        return self._tmux("display-message", "-p", "-t", self.name, "#{pane_title}").stdout

    def alive(self) -> bool:
        return self._tmux("has-session", "-t", self.name).returncode == 0

    def wait_for(self, ready: Callable[[str], bool], seconds: float = SETTLE_SECONDS) -> str:
        deadline = time.monotonic() + seconds
        screen = self.screen()
        while time.monotonic() < deadline:
            screen = self.screen()
            if ready(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"the screen never became ready:\n{screen}")

    def close(self) -> None:
        self._tmux("kill-server")


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


@pytest.fixture
def pane_for(tmp_path: Path) -> Iterator[Callable[..., Pane]]:
    if shutil.which("tmux") is None or not COMMAND.exists():
        pytest.skip("needs tmux and the installed ledger-tui command (.ci/run installs both)")
    panes: list[Pane] = []

    def start(csv_text: str, size: tuple[int, int] = (180, 50)) -> Pane:
        ledger = tmp_path / "runs.csv"
        ledger.write_text(csv_text)
        pane = Pane([str(COMMAND), "runs.csv"], cwd=tmp_path, size=size)
        panes.append(pane)
        return pane

    yield start
    for pane in panes:
        pane.close()


def header(screen: str) -> str:
    """The app's header: the first two lines, where the view is named."""
    return "\n".join(screen.splitlines()[:2])


def attempt_lines(screen: str, workflow: str) -> list[str]:
    """Table rows (the left pane) whose first cell is the workflow."""
    return [line for line in screen.splitlines() if line.startswith(f"│ {workflow} ")]


def test_toggle_filter_and_quit_in_a_real_terminal(pane_for: Callable[[str], Pane]) -> None:
    pane = pane_for(ARTICLE)
    # No bound on how long that took: speed is benchmarks/'s to print, and a bound here failed
    # on a loaded machine (11.4 s) with nothing wrong.
    screen = pane.wait_for(
        lambda s: "KEEP FAILURES" in header(s) and "3,000" in s and "steady" in s and "lean" in s
    )
    assert sum(line.count("✘ failed") for line in attempt_lines(screen, "lean")) == 2

    pane.keys("t")
    # The header may turn a frame before the table: wait for both.
    screen = pane.wait_for(
        lambda s: "DROP FAILURES" in header(s) and len(attempt_lines(s, "lean")) == 1
    )
    assert "✘" not in "".join(attempt_lines(screen, "lean"))
    assert "1,000" in screen

    pane.keys("t")
    screen = pane.wait_for(
        lambda s: "KEEP FAILURES" in header(s) and len(attempt_lines(s, "lean")) == 3
    )

    pane.keys("/")
    pane.keys("steady")
    screen = pane.wait_for(lambda s: not attempt_lines(s, "lean") and attempt_lines(s, "steady"))
    assert len(attempt_lines(screen, "steady")) == 3
    pane.keys("Enter")
    screen = pane.wait_for(lambda s: "3 of 6 attempts" in s)

    pane.keys("q")
    deadline = time.monotonic() + SETTLE_SECONDS
    while pane.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pane.alive(), f"q did not quit the app:\n{pane.screen()}"


def test_hostile_workflow_names_show_literally(pane_for: Callable[[str], Pane]) -> None:
    hostile = (
        "workflow,tokens,passed\n"
        '"[bold]lean[/bold]",1000,true\n'
        '"[/]",1000,false\n'
        '"a[b]c",1600,true\n'
        '"\x1b]0;pwned\x07title",5,true\n'
    )
    pane = pane_for(hostile)
    screen = pane.wait_for(lambda s: "KEEP FAILURES" in header(s) and "a[b]c" in s)
    assert "[bold]lean[/bold]" in screen
    assert "[/]" in screen
    assert "\\x1b]0;pwned\\x07title" in screen
    pane.keys("j", "j", "t", "t", "G", "gg")
    screen = pane.wait_for(lambda s: "KEEP FAILURES" in header(s) and "[bold]lean[/bold]" in s)
    assert pane.alive()
    assert "pwned" not in pane.title()  # the OSC title change never reached the terminal
    pane.keys("q")


def summary_rows(screen: str, groups: int) -> tuple[str, list[str]]:
    """The attempts pane's heading line, and the summary table's rows (the right pane)."""
    lines = screen.splitlines()
    for index, line in enumerate(lines):
        left, _, right = line.partition("││")
        if right.startswith("  workflow"):
            return left, [row.partition("││")[2] for row in lines[index + 1 : index + 1 + groups]]
    raise AssertionError(f"no summary table on screen:\n{screen}")


@pytest.mark.parametrize("size", [(120, 40), (160, 45)], ids=["120x40", "160x45"])
def test_real_shaped_names_read_apart_and_the_attempts_show_outcome_and_tokens(
    pane_for: Callable[..., Pane], tmp_path: Path, size: tuple[int, int]
) -> None:
    from tests import real_shaped

    csv_text = real_shaped.write_csv(tmp_path / "real.csv").read_text()
    pane = pane_for(csv_text, size)
    groups = len(real_shaped.GROUPS)

    def ready(screen: str) -> bool:
        lines = [line.partition("││")[2] for line in screen.splitlines()]
        return "KEEP FAILURES" in header(screen) and any(
            line.startswith("  workflow") for line in lines
        )

    screen = pane.wait_for(ready)
    heading, rows = summary_rows(screen, groups)
    labels = [row.split()[0] for row in rows]
    assert len(set(labels)) == groups, labels  # no two groups read the same
    # The attempts pane shows the outcome and the tokens of every row on screen.
    assert "outcome" in heading and "tokens" in heading
    assert any("✔ passed" in line.partition("││")[0] for line in screen.splitlines())
    # The group under focus (the first row) is named whole.
    assert real_shaped.OPUS_1 in screen or real_shaped.SONNET in screen
    # Unrecorded usage is never a free lower bound.
    assert "≥ 0" not in screen and "not recorded" in screen
    pane.keys("q")

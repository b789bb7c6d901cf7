"""Every committed corpus file through the real app in a real terminal (tmux).

A file that should load opens the ledger with its attempts counted in the header and quits
cleanly; a file that should not load ends with exactly the corpus's one-line error on stderr,
exit code 2 and no traceback. The file's bytes are the same afterwards.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from tests.pilot_helpers import SETTLE_SECONDS
from tests.test_corpus import _input
from tests.test_tmux import COMMAND, Pane, header
from tui_ledger.text.textsafe import safe_text

pytestmark = pytest.mark.tmux

CORPUS = Path(__file__).parent / "corpus"
# Root reads a chmod 000 file anyway; tests/test_corpus.py checks that case without the
# capability, which a program in a tmux pane cannot shed.
ROOT_ONLY = {"unreadable_in_folder"}
CASES = [
    case
    for case in tomllib.loads((CORPUS / "expectations.toml").read_text())["case"]
    if case["name"] not in ROOT_ONLY
]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _wait(predicate: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_corpus_file_in_the_app(case: dict[str, Any], tmp_path: Path) -> None:
    if shutil.which("tmux") is None or not COMMAND.exists():
        pytest.skip("needs tmux and the installed ledger-tui command (.ci/run installs both)")
    source = _input(case, tmp_path)
    before = _digest(source) if source.is_file() and source.stat().st_size < 2**30 else None
    pane = Pane(
        ["sh", "-c", '"$0" "$1"; echo "EXIT=$?"; sleep 120', str(COMMAND), str(source)],
        cwd=tmp_path,
    )

    def joined() -> str:  # the pane with wrapped lines joined, as the program wrote them
        return pane._tmux("capture-pane", "-p", "-J", "-t", pane.name).stdout

    def exit_status() -> str | None:
        found = re.search(r"^EXIT=(\d+)$", joined(), re.MULTILINE)
        return found.group(1) if found else None

    try:
        if "attempts" in case:
            count = re.compile(rf"\b{case['attempts']:,} attempts?\b")
            assert _wait(
                lambda: (
                    "KEEP FAILURES" in header(pane.screen()) and count.search(header(pane.screen()))
                ),
                SETTLE_SECONDS,
            ), pane.screen()
            pane.keys("t", "t", "q")
            assert _wait(exit_status, SETTLE_SECONDS), joined()
            assert exit_status() == "0"
        else:
            assert _wait(exit_status, SETTLE_SECONDS), joined()
            assert exit_status() == "2"
            screen = joined()
            assert "Traceback" not in screen
            # The message may follow the echoed command on its line (no screen was drawn).
            errors = re.findall(r"ledger-tui: error: (.*)$", screen, re.MULTILINE)
            assert len(errors) == 1, screen
            message = errors[0]
            if "error" in case:
                expected = case["error"].replace("{path}", str(source))
                assert message in (expected, safe_text(expected))
            else:
                expected = case["error_starts"].replace("{path}", str(source))
                assert message.startswith((expected, safe_text(expected)))
    finally:
        pane.close()
    if before is not None:
        assert _digest(source) == before

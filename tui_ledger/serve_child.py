"""`python -m tui_ledger.serve_child FILE...`: one served session's app, tied to the server.

`ledger-tui serve` ends every app it started when a browser goes away and when it shuts down.
If the server itself is killed outright (SIGKILL, the OOM killer), it cannot: an app idle in a
browser-less session would write nothing, so never meet the broken pipe that would end it.
On Linux this module asks the kernel to SIGKILL the app when the server dies
(PR_SET_PDEATHSIG), then runs the ordinary `ledger-tui` command line. Elsewhere it only runs it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Sequence

from tui_ledger.cli_options import SERVER_PID_VARIABLE

__all__ = ["main"]

_PR_SET_PDEATHSIG = 1


def _die_with_server() -> None:
    """SIGKILL this process when the server dies; exit now if it already has."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    server = os.environ.get(SERVER_PID_VARIABLE, "")
    # The server may have died between starting this process and the prctl above.
    if server.isdigit() and os.getppid() != int(server):
        os._exit(1)


def main(argv: Sequence[str]) -> int:
    """Tie this process to the server, then run `ledger-tui ARGV...`."""
    _die_with_server()
    from tui_ledger.cli import main as ledger_main

    return ledger_main(list(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

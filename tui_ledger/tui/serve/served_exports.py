"""Exports of a served app: sent to the browser, or kept inside the owner's export folder.

In a terminal the app writes an export where the user says, as it always has. Served by
`ledger-tui serve` (Textual reports `App.is_web`), a typed file name comes from whoever holds
the browser tab, so the app never writes where it says:

- without `--export-dir` the export is written into a private temporary folder (0700, named
  `ledger-tui-export-*`), opened, removed from the disk, and delivered to the browser with
  Textual's `App.deliver_binary`; the browser saves it under the name's last component;
- with `--export-dir` (passed to the app in `LEDGER_TUI_EXPORT_DIR`) the name is placed
  inside that folder, or refused, by `tui_ledger.exports.export_policy.decide_export`.

The app calls `place_exports` before asking about replacing files (and writes to the paths it
returns), then `deliver_staged` on its own thread once the writing worker has written.
"""

from __future__ import annotations

import atexit
import mimetypes
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, Protocol

from tui_ledger.exports.export_policy import decide_export, delivery_name, export_dir_from

__all__ = ["STAGING_PREFIX", "deliver_staged", "discard_staged", "place_exports"]

STAGING_PREFIX = "ledger-tui-export-"
_staged_folders: set[Path] = set()


class _Delivers(Protocol):
    def deliver_binary(
        self,
        path_or_file: BinaryIO,
        *,
        save_filename: str | None = None,
        mime_type: str | None = None,
    ) -> str | None: ...


def place_exports(
    requested: Sequence[str],
    *,
    is_web: bool,
    inputs: Sequence[str],
    environ: Mapping[str, str] | None = None,
) -> list[str] | str:
    """Where to write each requested export (an empty name stays empty: skipped), or a
    one-line reason to write none of them."""
    if not is_web:
        return list(requested)
    export_dir = export_dir_from(os.environ if environ is None else environ)
    placed: list[str] = []
    for path in requested:
        if not path:
            placed.append(path)
        elif export_dir is None:
            folder = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX))
            _staged_folders.add(folder)
            placed.append(str(folder / delivery_name(path, "ledger-export")))
        else:
            decision = decide_export(path, export_dir, inputs)
            if not decision.allowed:
                discard_staged(placed)
                return decision.reason
            placed.append(str(decision.path))
    return placed


def _staged_folder(path: str) -> Path | None:
    folder = Path(path).parent
    return folder if folder in _staged_folders else None


def deliver_staged(app: _Delivers, written: Sequence[str]) -> str | None:
    """Send every staged export among `written` to the browser (call on the app's thread);
    what to tell the user, or None when nothing was staged (the files were written)."""
    sent: list[str] = []
    for path in written:
        folder = _staged_folder(path) if path else None
        if folder is None:
            continue
        name = Path(path).name
        # The open handle keeps the bytes after the folder is gone: nothing stays on the disk
        # while the browser fetches it, nor after (Textual closes the handle when done).
        handle = open(path, "rb")  # noqa: SIM115
        _remove(folder)
        mime_type, _ = mimetypes.guess_type(name)
        app.deliver_binary(
            handle, save_filename=name, mime_type=mime_type or "application/octet-stream"
        )
        sent.append(name)
    return f"sent {', '.join(sent)} to the browser" if sent else None


def discard_staged(paths: Sequence[str]) -> None:
    """Remove the staging folders of `paths` (an export that failed or was cancelled)."""
    for path in paths:
        folder = _staged_folder(path) if path else None
        if folder is not None:
            _remove(folder)


def _remove(folder: Path) -> None:
    _staged_folders.discard(folder)
    shutil.rmtree(folder, ignore_errors=True)


@atexit.register
def _remove_all() -> None:
    """A clean exit leaves no staging folder behind, delivered or not."""
    for folder in list(_staged_folders):
        _remove(folder)
